# collect/: the suite registry (pure C, always built: `kbv list`, `kbv prompt`,
# CPU tests) and the GPU library of collect (built only when nvcc is found).
SUITE_SRCS := collect/suite.c collect/suite_host.c $(wildcard collect/problems/*.c)
SUITE_LIB  := $(BUILD)/libkbv_suite.a
$(call objs,$(SUITE_SRCS)): CPPFLAGS += -Icollect -Icollect/problems

$(SUITE_LIB): $(call objs,$(SUITE_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# kbv list [--json]: pure C, always built.
PROGRAMS += $(BUILD)/kbv-list
$(OBJ)/collect/list_main.o: CPPFLAGS += -Icollect -Icollect/problems
$(BUILD)/kbv-list: $(OBJ)/collect/list_main.o $(SUITE_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS_COMMON)

# The GPU library: input generation, comparison, baselines.  Programs that
# use it link $(GPU_LIB) $(SUITE_LIB) $(COMMON_LIB) and $(GPU_LDLIBS).
ifeq ($(HAVE_NVCC),1)
GPU_SRCS   := collect/gen.cu collect/compare.cu collect/baseline.cu $(wildcard collect/problems/*.cu)
GPU_LIB    := $(BUILD)/libkbv_gpu.a
GPU_LDLIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublasLt -lcublas -lcurand \
              -lcudart -ldl -lpthread -lstdc++
$(call objs,$(GPU_SRCS)): ALL_NVCCFLAGS += -Icollect -Icollect/problems

$(GPU_LIB): $(call objs,$(GPU_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# A baseline benchmark (kbv-only timing) and a shared library with a small
# C API (collect/bench_api.h) that tests/parity/parity.py loads with ctypes
# to run kbv's generator and baselines on PyTorch's buffers.
PROGRAMS += $(BUILD)/kbv-baseline-bench
all: $(BUILD)/libkbv_baseline.so
$(OBJ)/collect/bench_main.o: CPPFLAGS += -Icollect -I$(CUDA_HOME)/include
$(BUILD)/kbv-baseline-bench: $(OBJ)/collect/bench_main.o $(GPU_LIB) $(SUITE_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(GPU_LDLIBS) $(LDLIBS_COMMON)

# Position-independent copies of the C objects the library needs.
BENCH_PIC_SRCS := collect/bench_api.c $(SUITE_SRCS) common/err.c
BENCH_PIC_OBJS := $(patsubst %.c,$(OBJ)/pic/%.o,$(BENCH_PIC_SRCS))
$(OBJ)/pic/%.o: %.c
	$(call msg,CC,$< [pic])
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -Icollect -Icollect/problems -MMD -MP -c $< -o $@
$(BUILD)/libkbv_baseline.so: $(BENCH_PIC_OBJS) $(call objs,$(GPU_SRCS))
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared -o $@ $^ $(GPU_LDLIBS) -lm
endif

# The suite's unit tests see the registry's private headers.
$(OBJ)/tests/unit/test_suite_%.o: CPPFLAGS += -Icollect -Icollect/problems
