# collect/baselines/: the GPU library of collect (CUDA, built only when nvcc
# is found): input generation (gen.cu), output comparison (compare.cu), the
# fp32 and tf32 reference baselines of every problem (baseline.cu,
# problems/*.cu, contest.cu) and the baseline benchmark (kbv-baseline-bench,
# libkbv_baseline.so for tests/parity/parity.py).  Depends on suite/ and
# common/; programs that use it link $(GPU_LIB) $(SUITE_LIB) $(COMMON_LIB)
# and $(GPU_LDLIBS).
BASELINES_INC := -Icollect/baselines -Icollect/baselines/problems $(SUITE_INC)
ifeq ($(HAVE_NVCC),1)
GPU_SRCS   := collect/baselines/gen.cu collect/baselines/compare.cu collect/baselines/baseline.cu \
              $(wildcard collect/baselines/problems/*.cu)
GPU_LIB    := $(BUILD)/libkbv_gpu.a
GPU_LDLIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublasLt -lcublas -lcurand \
              -lcudart -ldl -lpthread -lstdc++
$(call objs,$(GPU_SRCS)): ALL_NVCCFLAGS += $(BASELINES_INC)

$(GPU_LIB): $(call objs,$(GPU_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# A baseline benchmark (kbv-only timing) and a shared library with a small
# C API (collect/baselines/bench_api.h) that tests/parity/parity.py loads
# with ctypes to run kbv's generator and baselines on PyTorch's buffers.
PROGRAMS += $(BUILD)/kbv-baseline-bench
all: $(BUILD)/libkbv_baseline.so
$(OBJ)/collect/baselines/bench_main.o: CPPFLAGS += $(BASELINES_INC) -I$(CUDA_HOME)/include
$(BUILD)/kbv-baseline-bench: $(OBJ)/collect/baselines/bench_main.o $(GPU_LIB) $(SUITE_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(GPU_LDLIBS) $(LDLIBS_COMMON)

# Position-independent copies of the C objects the library needs.
BENCH_PIC_SRCS := collect/baselines/bench_api.c $(SUITE_SRCS) common/err.c common/sbuf.c
BENCH_PIC_OBJS := $(patsubst %.c,$(OBJ)/pic/%.o,$(BENCH_PIC_SRCS))
$(OBJ)/pic/%.o: %.c
	$(call msg,CC,$< [pic])
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC $(BASELINES_INC) -MMD -MP -c $< -o $@
$(BUILD)/libkbv_baseline.so: $(BENCH_PIC_OBJS) $(call objs,$(GPU_SRCS))
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared -o $@ $^ $(GPU_LDLIBS) -lm
endif
