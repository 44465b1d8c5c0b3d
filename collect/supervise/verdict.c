#include "verdict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *verdict_tier_name(int tier)
{
    static const char *const names[] = {"fp32", "tf32", "half", "none"};
    if (tier < 0 || tier > 3) return "none";
    return names[tier];
}

int verdict_tier_of(double ratio)
{
    if (!(ratio <= 1e-2)) return 3; /* also NaN */
    if (ratio <= 1e-5) return 0;
    if (ratio <= 1e-3) return 1;
    return 2;
}

int verdict_tier_worse(int a, int b) { return a > b ? a : b; }

double verdict_bf16_atol(double tau, double ref_absmax)
{
    double scaled = ref_absmax > 0 ? tau * (ref_absmax < 1.0 ? ref_absmax : 1.0) : 0.0;   /* NaN: 0 */
    return scaled > VERDICT_BF16_ATOL_MIN ? scaled : VERDICT_BF16_ATOL_MIN;
}

int verdict_check_pass(int64_t mismatches, int64_t nonfinite, int64_t unwritten)
{
    return mismatches == 0 && nonfinite == 0 && unwritten == 0;
}

int verdict_independence(const uint64_t *out_fp, const uint64_t *ref_fp, int k, int *a, int *b)
{
    for (int i = 0; i < k; i++)
        for (int j = i + 1; j < k; j++)
            if (out_fp[i] == out_fp[j] && ref_fp[i] != ref_fp[j]) {
                *a = i;
                *b = j;
                return 0;
            }
    return 1;
}

int verdict_deferred_timing(double cand_gpu, double cand_wall, double base_gpu, double base_wall,
                            char *why, size_t n)
{
    double excess = cand_wall - cand_gpu;
    double base_excess = base_wall - base_gpu;
    if (!(base_excess > 0)) base_excess = 0;
    int fail = excess > 0.5 * cand_wall && excess - base_excess > 0.05 &&
               excess - base_excess > 0.25 * cand_wall;
    snprintf(why, n,
             "median wall time (call + device synchronise) %.4g ms vs event time %.4g ms: "
             "%.4g ms outside the stream's window (fp32 baseline: %.4g ms)%s",
             cand_wall, cand_gpu, excess, base_excess,
             fail ? "; the work is not on the given stream" : "");
    return !fail;
}

double verdict_floor_ms(double min_bytes, double flops, double copy_gbps, double tf32_tflops)
{
    double f = 0;
    if (copy_gbps > 0 && min_bytes > 0) f = min_bytes / (copy_gbps * 1e9) * 1e3;
    if (tf32_tflops > 0 && flops > 0) {
        double c = flops / (2.0 * tf32_tflops * 1e12) * 1e3;
        if (c > f) f = c;
    }
    return f;
}

int verdict_floor_pass(double time_ms, double floor_ms)
{
    return !(time_ms < 0.9 * floor_ms);
}

/* --- static scan ------------------------------------------------------------ */

static const char *const flag_names[SCAN_N_FLAGS] = {
    "library:cublas", "library:cublasLt", "library:cudnn",  "library:curand",
    "library:cufft",  "library:cusparse", "library:cusolver", "library:nccl",
    "streams",        "graphs",           "threads",        "dlopen",
    "process-control", "defines:cuda",    "defines:timing", "allocates",
    "device-sync",    "tamper-capable",   "untracked-alloc",
};

const char *verdict_scan_flag_name(int bit)
{
    if (bit < 0 || bit >= SCAN_N_FLAGS) return "?";
    return flag_names[bit];
}

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static int is_any(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0) return 1;
    return 0;
}

unsigned verdict_scan_import(const char *sym)
{
    static const char *const threads[] = {"pthread_create", "thrd_create", "clone", "clone3",
                                          "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
                                          NULL};
    /* The driver's entry points hand out any driver function, past the
     * worker's interposed allocation calls: a dynamic lookup too. */
    static const char *const dl[] = {"dlopen", "dlsym", "dlvsym", "dlmopen", "cudaGetDriverEntryPoint",
                                     "cudaGetDriverEntryPointByVersion", "cuGetProcAddress",
                                     "cuGetProcAddress_v2", NULL};
    /* Not exit: nvcc's host stub of every non-static __device__ function
     * calls it, so most candidates import it; a candidate's own exit()
     * shows in its status ("exited ... without a result"). */
    static const char *const proc[] = {"fork", "vfork", "execv", "execve", "execvp", "execvpe",
                                       "execl", "execlp", "execle", "system", "popen",
                                       "posix_spawn", "posix_spawnp", "kill", "killpg",
                                       "_exit", "_Exit", "quick_exit", "ptrace",
                                       "setsid", "prctl", NULL};
    static const char *const allocs[] = {"cudaMalloc", "cudaMallocAsync", "cudaMallocManaged",
                                         "cudaMallocPitch", "cudaMalloc3D",
                                         "cudaMallocFromPoolAsync", "cuMemAlloc_v2",
                                         "cuMemAllocAsync", "cuMemCreate", "cuMemAllocPitch_v2",
                                         "cuMemAllocManaged", "cuMemAllocFromPoolAsync", "cuMemMap", NULL};
    static const char *const syncs[] = {"cudaDeviceSynchronize", "cuCtxSynchronize", NULL};
    static const char *const tamper[] = {"mprotect", "pkey_mprotect", "dl_iterate_phdr", "dlopen",
                                         "dlmopen", "dlsym", "dlvsym", "dladdr", "dladdr1", "dlinfo",
                                         "syscall", "ptrace", "process_vm_writev", "process_vm_readv",
                                         "prctl", "mremap", "remap_file_pages", "personality", "_r_debug",
                                         "_dl_debug_state", NULL};
    static const char *const untracked[] = {"cudaMallocArray", "cudaMalloc3DArray",
                                            "cudaMallocMipmappedArray", "cuArrayCreate_v2",
                                            "cuArray3DCreate_v2", "cuMipmappedArrayCreate",
                                            "cudaMallocHost", "cudaHostAlloc", "cuMemHostAlloc", NULL};
    unsigned f = 0;
    if (starts(sym, "cublasLt")) f |= SCAN_LIB_CUBLASLT;
    else if (starts(sym, "cublas")) f |= SCAN_LIB_CUBLAS;
    if (starts(sym, "cudnn")) f |= SCAN_LIB_CUDNN;
    if (starts(sym, "curand")) f |= SCAN_LIB_CURAND;
    if (starts(sym, "cufft")) f |= SCAN_LIB_CUFFT;
    if (starts(sym, "cusparse")) f |= SCAN_LIB_CUSPARSE;
    if (starts(sym, "cusolver")) f |= SCAN_LIB_CUSOLVER;
    if (starts(sym, "nccl")) f |= SCAN_LIB_NCCL;
    if (starts(sym, "cudaStreamCreate") || starts(sym, "cuStreamCreate")) f |= SCAN_STREAMS;
    if (starts(sym, "cudaGraph") || starts(sym, "cuGraph") ||
        starts(sym, "cudaStreamBeginCapture") || starts(sym, "cuStreamBeginCapture"))
        f |= SCAN_GRAPHS;
    if (is_any(sym, threads) || starts(sym, "_ZNSt6thread")) f |= SCAN_THREADS;
    if (is_any(sym, dl)) f |= SCAN_DLOPEN;
    if (is_any(sym, proc)) f |= SCAN_PROCESS;
    if (is_any(sym, allocs)) f |= SCAN_ALLOCATES;
    if (is_any(sym, syncs)) f |= SCAN_DEVICE_SYNC;
    if (is_any(sym, tamper)) f |= SCAN_TAMPER;
    if (is_any(sym, untracked)) f |= SCAN_UNTRACKED_ALLOC;
    return f;
}

unsigned verdict_scan_define(const char *sym)
{
    static const char *const timing[] = {"clock_gettime", "gettimeofday", "time", "clock",
                                         "nanosleep", "usleep", NULL};
    unsigned f = 0;
    /* A candidate that defines a CUDA API name would take the worker's and
     * the runtime's calls (the dynamic linker binds the first definition). */
    if (starts(sym, "cuda") || (starts(sym, "cu") && sym[2] >= 'A' && sym[2] <= 'Z') ||
        starts(sym, "nvml") || starts(sym, "cublas") || starts(sym, "cudnn"))
        f |= SCAN_DEFINES_CUDA;
    if (is_any(sym, timing) || starts(sym, "cudaEvent") || starts(sym, "cuEvent"))
        f |= SCAN_DEFINES_TIMING;
    return f;
}

unsigned verdict_scan_bytes(const void *data, size_t n)
{
    /* Any procfs path, not only /proc/self: /proc/<pid>/mem (the pid from
     * getpid) and /proc/thread-self/mem reach the worker's memory past its
     * page protections just as well.  A string built at run time passes;
     * this is a check of what the object says openly. */
    static const char needle[] = "/proc/";
    return data && memmem(data, n, needle, sizeof needle - 1) ? SCAN_TAMPER : 0;
}

int verdict_scan_boring(const char *sym)
{
    static const char *const prefixes[] = {"__cuda", "__cxa", "__gxx", "_Unwind", "_ITM",
                                           "__gmon", "__stack_chk", "_ZNSt", "_ZSt", "_ZdlPv",
                                           "_Znwm", "_Znam", "_ZdaPv", "__dso_handle",
                                           "__fatbinwrap", NULL};
    for (const char *const *p = prefixes; *p; p++)
        if (starts(sym, *p)) {
            /* std::thread is plumbing for the record but not for the flags. */
            return !starts(sym, "_ZNSt6thread");
        }
    return 0;
}
