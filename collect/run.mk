# collect/run.mk: kbv-collect and kbv-worker (the verification protocol of
# DESIGN.md 5a).  The host logic (plans, builds, isolation, journal, resume,
# verdicts, statistics) needs no CUDA and lives in libkbv_collecthost.a, which
# the test_collect_* unit tests link; the programs need nvcc and are built
# only with it.
COLLECTHOST_SRCS := collect/cstat.c collect/verdict.c collect/plan.c collect/copts.c \
                    collect/resume.c collect/build.c collect/super.c collect/rec.c \
                    collect/manifest.c collect/chan.c collect/pins.c
COLLECTHOST_LIB  := $(BUILD)/libkbv_collecthost.a
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
# (calibration, small kernels) and the suite's GPU library.  The dynamic
# list exports the allocation interposers of memtrack.c, so that a
# candidate's shared object (built with -cudart shared) binds its cudaMalloc
# to them.
# Full RELRO (-z relro -z now: every symbol bound at start, the GOT read-only
# before a candidate is loaded) and a non-executable stack, so that a
# candidate cannot rewrite the worker's bindings (cudaEventElapsedTime, say)
# without changing page protections, which the static scan flags.
WORKER_C_SRCS  := $(wildcard collect/worker/*.c)
WORKER_CU_SRCS := collect/worker/worker_gpu.cu
# Exports: only the allocation interposers (exports.list), not -rdynamic's
# every global function.
WORKER_LDFLAGS := -Wl,--dynamic-list=collect/worker/exports.list -Wl,-z,relro,-z,now,-z,noexecstack
$(call objs,$(WORKER_C_SRCS)): CPPFLAGS += -Icollect -Icollect/worker -isystem $(CUDA_HOME)/include
$(call objs,$(WORKER_CU_SRCS)): ALL_NVCCFLAGS += -Icollect -Icollect/worker

$(BUILD)/kbv-worker: $(call objs,$(WORKER_C_SRCS) $(WORKER_CU_SRCS)) $(COLLECTHOST_LIB) $(GPU_LIB) $(SUITE_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(WORKER_LDFLAGS) -o $@ $^ $(GPU_LDLIBS) -L$(CUDA_HOME)/lib64 -lcudart -ldl -lpthread -lstdc++ $(LDLIBS_COMMON)
endif
