# collect/worker/: kbv-worker, the process that runs candidates and
# baselines on the GPU for the supervisor (checks, probes, timing, memory).
# C host code against the CUDA runtime API, one .cu of its own (calibration,
# small kernels) and the GPU library of baselines/; built only with nvcc.
# Depends on supervise/ (the record channel, verdicts, the stopping rule),
# baselines/, suite/ and common/; nothing depends on it.
#
# The dynamic list (exports.list) exports only the allocation interposers of
# memtrack.c, not -rdynamic's every global function, so that a candidate's
# shared object (built with -cudart shared) binds its cudaMalloc to them and
# to nothing else of the worker.  Full RELRO (-z relro -z now: every symbol bound at start, the GOT
# read-only before a candidate is loaded) and a non-executable stack, so
# that a candidate cannot rewrite the worker's bindings (cudaEventElapsedTime,
# say) without changing page protections, which the static scan flags.
ifeq ($(HAVE_NVCC),1)
PROGRAMS += $(BUILD)/kbv-worker
WORKER_INC     := -Icollect/worker $(SUPERVISE_INC) -Icollect/baselines
WORKER_C_SRCS  := $(wildcard collect/worker/*.c)
WORKER_CU_SRCS := collect/worker/worker_gpu.cu
WORKER_LDFLAGS := -Wl,--dynamic-list=collect/worker/exports.list -Wl,-z,relro,-z,now,-z,noexecstack
$(call objs,$(WORKER_C_SRCS)): CPPFLAGS += $(WORKER_INC) -isystem $(CUDA_HOME)/include
$(call objs,$(WORKER_CU_SRCS)): ALL_NVCCFLAGS += $(WORKER_INC)

$(BUILD)/kbv-worker: $(call objs,$(WORKER_C_SRCS) $(WORKER_CU_SRCS)) $(COLLECTHOST_LIB) $(GPU_LIB) $(SUITE_LIB) $(COMMON_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(WORKER_LDFLAGS) -o $@ $^ $(GPU_LDLIBS) -L$(CUDA_HOME)/lib64 -lcudart -ldl -lpthread -lstdc++ $(LDLIBS_COMMON)
endif
