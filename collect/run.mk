# collect/run.mk: kbv-collect and kbv-worker (the verification protocol of
# DESIGN.md 5a).  The host logic (plans, builds, isolation, journal, resume,
# verdicts, statistics) needs no CUDA and lives in libkbv_collecthost.a, which
# every unit test links; the programs need nvcc and are built only with it.
COLLECTHOST_SRCS := collect/prng.c collect/cstat.c collect/verdict.c collect/plan.c \
                    collect/resume.c collect/build.c collect/super.c collect/rec.c \
                    collect/manifest.c
COLLECTHOST_LIB  := $(BUILD)/libkbv_collecthost.a
TEST_LIBS        := $(COLLECTHOST_LIB) $(TEST_LIBS)
$(call objs,$(COLLECTHOST_SRCS) collect/collect_main.c): CPPFLAGS += -Icollect
$(OBJ)/tests/unit/test_collect_%.o: CPPFLAGS += -Icollect

$(COLLECTHOST_LIB): $(call objs,$(COLLECTHOST_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

ifeq ($(HAVE_NVCC),1)
PROGRAMS += $(BUILD)/kbv-collect $(BUILD)/kbv-worker

$(BUILD)/kbv-collect: $(OBJ)/collect/collect_main.o $(COLLECTHOST_LIB) $(SUITE_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS_COMMON)

# The worker: C host code against the CUDA runtime API, one .cu of its own
# (calibration, small kernels) and the suite's GPU library.  -rdynamic exports
# the allocation interposers of memtrack.c, so that a candidate's shared
# object (built with -cudart shared) binds its cudaMalloc to them.
WORKER_C_SRCS  := collect/worker_main.c collect/memtrack.c collect/nvmlx.c
WORKER_CU_SRCS := collect/worker_gpu.cu
$(call objs,$(WORKER_C_SRCS)): CPPFLAGS += -Icollect -isystem $(CUDA_HOME)/include
$(call objs,$(WORKER_CU_SRCS)): ALL_NVCCFLAGS += -Icollect

$(BUILD)/kbv-worker: $(call objs,$(WORKER_C_SRCS) $(WORKER_CU_SRCS)) $(COLLECTHOST_LIB) $(GPU_LIB) $(SUITE_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -rdynamic -o $@ $^ $(GPU_LDLIBS) -L$(CUDA_HOME)/lib64 -lcudart -ldl -lpthread -lstdc++ $(LDLIBS_COMMON)
endif
