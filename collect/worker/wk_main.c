/* kbv-worker: runs one (set, problem) pair of a collect, in a process of its
 * own (DESIGN.md 5a steps 3 to 8), and sends its records as authenticated
 * JSON lines (chan.h) on fd 3.  kbv-collect starts it; it is not meant to be
 * run by hand, though it can be (records then go to stdout when fd 3 is not
 * open, signed with a zero key).
 *
 *   kbv-worker --device-info     the compute capability of GPU 0
 *   kbv-worker --calibrate       device facts, copy bandwidth, GEMM rates
 *   kbv-worker --run --so SO --problem ID [--seed N] [--trials T] ...
 *
 * Exit status: 0 when a status was sent, 3 after a launch-error status, 1
 * when the worker itself could not run.  The modules are listed in wk.h.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cstat.h"
#include "jio.h"
#include "log.h"
#include "memtrack.h"
#include "sandbox.h"
#include "wk.h"
#include "worker_gpu.h"

/* Landlock before any library starts a thread, so that every thread of
 * the process, the CUDA runtime's callbacks included, holds to it
 * (sandbox.h).  The scratch folder collect made for this worker (a
 * pair's, or the trial's) is the working directory. */
static void enter_sandbox(worker *w)
{
    kbv_err e = {0};
    sandbox_support got;
    if (w->sandbox && sandbox_enter(".", w->sandbox == 2, &got, &e)) wk_die_launch(w, "harness: %s", e.msg);
}

/* The seccomp filter once the CUDA driver has started, since its
 * initialisation may run a helper program, and before the candidate is
 * loaded: from here on no process can be started (sandbox.h). */
static void seal_sandbox(worker *w)
{
    kbv_err e = {0};
    sandbox_support got = {0, 0};
    if (w->sandbox && sandbox_seal(&got, &e)) wk_die_launch(w, "harness: %s", e.msg);
}

static int run_pair(worker *w)
{
    kbv_err e = {0};
    w->p = suite_find(w->problem_id);
    if (!w->p) {
        wk_status(w, "launch-error", "harness: unknown problem %s", w->problem_id);
        return 3;
    }
    const char *why = NULL;
    if (!base_available(w->p, &why)) wk_die_launch(w, "harness: no baseline here: %s", why ? why : "?");
    cudaError_t ce = cudaSetDevice(0);
    if (ce == cudaSuccess) ce = cudaFree(0);
    if (ce != cudaSuccess) wk_die_cuda(w, "harness: CUDA initialisation", ce);
    struct cudaDeviceProp prop;
    ce = cudaGetDeviceProperties(&prop, 0);
    if (ce != cudaSuccess) wk_die_cuda(w, "harness: device properties", ce);
    w->l2_bytes = (size_t)prop.l2CacheSize;
    char pci[WK_MAX_TENSORS] = "";
    cudaDeviceGetPCIBusId(pci, sizeof pci, 0);
    w->nv = nvmlx_open(pci);
    seal_sandbox(w);
    /* A non-blocking stream: work a candidate puts on the legacy default
     * stream is not ordered with it, so that the deferred-work probe sees it. */
    ce = cudaStreamCreateWithFlags(&w->s, cudaStreamNonBlocking);
    if (ce != cudaSuccess) wk_die_cuda(w, "harness: stream", ce);

    wk_limit_host_data();
    wk_describe_tensors(w);
    /* The candidate's constructors run in dlopen, before the baselines are
     * created: a variable they set (the cuDNN library the baselines load,
     * NVIDIA_TF32_OVERRIDE) is taken back before anything reads it. */
    wk_env_save(w);
    wk_l2_save(w);
    wk_load_candidate(w);
    wk_env_guard(w, "loading");

    void *in[WK_MAX_TENSORS] = {0}, *out[WK_MAX_TENSORS] = {0};
    if (w->p->n_inputs > 64 || w->p->n_outputs > 64) wk_die_launch(w, "harness: too many tensors");
    wk_alloc_inputs(w, in);
    wk_fill_inputs(w, in, SUITE_D1, 0);
    wk_alloc_outputs(w, out);
    kbv_call example, rexample;
    wk_make_call(w, &example, in, out);
    /* The baselines are created on the reference's tensors (floats): a
     * family may time its kernels on the example's buffers. */
    void *rin[WK_MAX_TENSORS] = {0}, *rout[WK_MAX_TENSORS] = {0};
    kbv_tensor rt[WK_MAX_TENSORS];
    for (int i = 0; i < w->p->n_inputs; i++) {
        rin[i] = in[i];
        if (w->in[i].dtype != KBV_BF16) continue;
        rin[i] = wk_dalloc(w, w->rin_bytes[i], "reference input");
        if (gen_widen_bf16(in[i], rin[i], suite_numel(&w->p->inputs[i]), w->s, &e))
            wk_die_harness(w, "reference input", &e);
    }
    for (int i = 0; i < w->p->n_outputs; i++) {
        rout[i] = out[i];
        if (w->bf16) rout[i] = wk_dalloc(w, w->rout_bytes[i], "reference output");
    }
    wk_make_ref_call(w, &rexample, rt, rin, rout);
    wk_device_sync(w, "inputs");
    size_t total_mem = 0;
    cudaMemGetInfo(&w->free_before_base, &total_mem);
    mt_set_owner(MT_BASELINE);
    /* Kernel choices made in an earlier run (collect --pins) replace the
     * search and the timing of those choices. */
    int rc = base_create(w->p, &rexample, w->pins, &w->base, &e);
    mt_set_owner(MT_HARNESS);
    if (rc) wk_die_harness(w, "baseline setup", &e);
    /* One run of each baseline and of the reference first, so that lazily
     * created library state (its threads, and the device memory of the
     * kernels the driver loads on first use) exists before the candidate's
     * threads and memory are counted. */
    wk_base_call(w, V_FP32, &rexample);
    wk_base_call(w, V_REF, &rexample);
    wk_base_call(w, w->bf16 ? V_BF16 : V_TF32, &example);
    for (int i = 0; i < w->p->n_outputs; i++) wk_poison_output(w, i, out[i]);
    wk_device_sync(w, "baseline warm-up");
    wk_emit_choices(w);
    /* What the libraries set while the baselines were made is theirs. */
    wk_env_save(w);
    {
        size_t f = 0;
        mt_counts bc;
        cudaMemGetInfo(&f, &total_mem);
        mt_get(MT_BASELINE, &bc);
        long long u = (long long)w->free_before_base - (long long)f - bc.live;
        w->base_untracked = u > WK_UNTRACKED_FLOOR ? u : 0;
        w->free_before_setup = f;
    }
    if (w->bf16) {
        wk_free_wide(w, rin);
        wk_free_bufs(rout, w->p->n_outputs);
        wk_device_sync(w, "reference example");
        cudaMemGetInfo(&w->free_before_setup, &total_mem);
    }
    if (w->setup) {
        int before = wk_count_threads();
        mt_set_owner(MT_CANDIDATE);
        int src = w->setup(&example);
        mt_set_owner(MT_HARNESS);
        wk_note_threads(w, before, "kbv_setup");
        wk_env_guard(w, "kbv_setup");
        if (src != 0) wk_die_launch(w, "kbv_setup returned %d", src);
        wk_device_sync(w, "kbv_setup");
    }
    wk_free_bufs(out, w->p->n_outputs);

    /* Where the time goes, for the status detail (collect's speed). */
    double t_checks = log_now();
    wk_checks(w, in);
    wk_probes_from_checks(w);
    double t_probes = log_now();
    wk_probe_caching(w, in);
    wk_probe_determinism(w, in);
    double t_timing = log_now();
    /* The checks' inputs go before timing, which draws sets of its own;
     * memory is measured on a fresh D1 set after it. */
    wk_free_bufs(in, w->p->n_inputs);
    wk_timing(w);
    wk_probes_after_timing(w);
    double t_memory = log_now();
    wk_memres m[N_VARIANTS];
    wk_alloc_inputs(w, in);
    wk_measure_memory(w, in, m);

    if (w->teardown) {
        mt_set_owner(MT_CANDIDATE);
        w->teardown();
        mt_set_owner(MT_HARNESS);
        wk_device_sync(w, "kbv_teardown");
    }
    mt_counts cc, bc;
    mt_get(MT_CANDIDATE, &cc);
    mt_set_owner(MT_BASELINE);
    base_destroy(w->base);
    mt_set_owner(MT_HARNESS);
    w->base = NULL;
    mt_get(MT_BASELINE, &bc);
    wk_emit_memory(w, m, cc.live, bc.live);
    wk_free_bufs(in, w->p->n_inputs);
    wk_dfree(w->gen_tmp);
    w->gen_tmp = NULL;
    double t_end = log_now();
    wk_status(w, "ok", "seconds: setup %.2f, checks %.2f, probes %.2f, timing %.2f, memory %.2f",
                t_checks - w->t_start, t_probes - t_checks, t_timing - t_probes, t_memory - t_timing,
                t_end - t_memory);
    wk_env_drop(w);
    return 0;
}

/* The device's UUID as nvidia-smi prints it ("GPU-" and the 16 bytes as
 * 8-4-4-4-12 hex digits), so that a run's devices can be told apart: the
 * lent hosts may hand out another physical GPU of the same model. */
static void uuid_text(const struct cudaDeviceProp *p, char *buf, size_t n)
{
    const unsigned char *u = (const unsigned char *)p->uuid.bytes;
    snprintf(buf, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

static int device_info(worker *w)
{
    int n = 0;
    cudaError_t ce = cudaGetDeviceCount(&n);
    cJSON *r = wk_rec("device-info");
    if (ce != cudaSuccess || n < 1) {
        char msg[256];
        snprintf(msg, sizeof msg, "no CUDA device: %s", ce != cudaSuccess ? cudaGetErrorString(ce) : "none found");
        cJSON_AddStringToObject(r, "error", msg);
        wk_emit(w, r);
        return 1;
    }
    if (w->sandbox) {
        /* collect's trial of the sandbox: the driver's context is what a
         * kernel rule can break (cudaErrorOperatingSystem on a host where
         * the runtime needs a write or a call the sandbox refuses). */
        void *p = NULL;
        ce = cudaSetDevice(0);
        if (ce == cudaSuccess) ce = cudaMalloc(&p, 1 << 20);
        if (ce == cudaSuccess) ce = cudaFree(p);
        /* then sealed as a pair's worker is, and allocating again */
        if (ce == cudaSuccess) {
            kbv_err se = {0};
            sandbox_support got = {0, 0};
            if (sandbox_seal(&got, &se)) {
                cJSON_AddStringToObject(r, "error", se.msg);
                wk_emit(w, r);
                return 1;
            }
            ce = cudaMalloc(&p, 1 << 20);
        }
        if (ce == cudaSuccess) ce = cudaFree(p);
        if (ce != cudaSuccess) {
            char msg[256];
            snprintf(msg, sizeof msg, "CUDA initialisation: %s (%s)", cudaGetErrorString(ce), cudaGetErrorName(ce));
            cJSON_AddStringToObject(r, "error", msg);
            wk_emit(w, r);
            return 1;
        }
    }
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    cJSON_AddNumberToObject(r, "cc", major * 10 + minor);
    cJSON_AddNumberToObject(r, "devices", n);
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
        char id[64];
        uuid_text(&prop, id, sizeof id);
        cJSON_AddStringToObject(r, "uuid", id);
    }
    wk_emit(w, r);
    return 0;
}

static int calibrate(worker *w)
{
    /* The compute capability first: kbv-collect starts the builds on it
     * while the measurements run. */
    if (device_info(w)) return 1;
    cJSON *r = wk_rec("calibration");
    struct cudaDeviceProp prop;
    cudaError_t ce = cudaSetDevice(0);
    if (ce == cudaSuccess) ce = cudaGetDeviceProperties(&prop, 0);
    if (ce != cudaSuccess) {
        cJSON_AddStringToObject(r, "error", cudaGetErrorString(ce));
        wk_emit(w, r);
        return 1;
    }
    char pci[WK_MAX_TENSORS] = "";
    cudaDeviceGetPCIBusId(pci, sizeof pci, 0);
    nvmlx *nv = nvmlx_open(pci);
    char buf[128];
    cJSON_AddStringToObject(r, "name", prop.name);
    snprintf(buf, sizeof buf, "%d.%d", prop.major, prop.minor);
    cJSON_AddStringToObject(r, "compute_capability", buf);
    cJSON_AddNumberToObject(r, "sm_count", prop.multiProcessorCount);
    cJSON_AddNumberToObject(r, "l2_bytes", prop.l2CacheSize);
    cJSON_AddNumberToObject(r, "memory_bytes", (double)prop.totalGlobalMem);
    int dv = 0, rv = 0;
    cudaDriverGetVersion(&dv);
    cudaRuntimeGetVersion(&rv);
    char drv[96] = "";
    if (nvmlx_driver(nv, drv, sizeof drv) == 0 && drv[0]) {
        snprintf(buf, sizeof buf, "%s (CUDA %d.%d)", drv, dv / 1000, (dv % 1000) / 10);
    } else {
        snprintf(buf, sizeof buf, "CUDA %d.%d", dv / 1000, (dv % 1000) / 10);
    }
    cJSON_AddStringToObject(r, "driver", buf);
    snprintf(buf, sizeof buf, "%d.%d", rv / 1000, (rv % 1000) / 10);
    cJSON_AddStringToObject(r, "cuda_runtime", buf);
    int bv = wg_cublas_version();
    snprintf(buf, sizeof buf, "%d.%d.%d", bv / 10000, (bv / 100) % 100, bv % 100);
    cJSON_AddStringToObject(r, "cublas", buf);
    unsigned mhz = 0;
    if (nvmlx_sm_max_mhz(nv, &mhz) == 0) cJSON_AddNumberToObject(r, "sm_max_mhz", mhz);
    if (nvmlx_sm_mhz(nv, &mhz) == 0) cJSON_AddNumberToObject(r, "sm_mhz", mhz);
    cJSON_AddStringToObject(r, "pci_bus_id", pci);
    char id[64];
    uuid_text(&prop, id, sizeof id);
    cJSON_AddStringToObject(r, "uuid", id);
    wg_calib cal;
    kbv_err e = {0};
    if (wg_calibrate(&cal, &e)) {
        cJSON_AddStringToObject(r, "error", e.msg);
        wk_emit(w, r);
        nvmlx_close(nv);
        return 1;
    }
    jio_add_num(r, "copy_bandwidth_gbps", cal.copy_bandwidth_gbps);
    jio_add_num(r, "fp32_tflops", cal.fp32_tflops);
    jio_add_num(r, "tf32_tflops", cal.tf32_tflops);
    wk_emit(w, r);
    nvmlx_close(nv);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: kbv-worker --device-info | --calibrate |\n"
               "       kbv-worker --run --so SO --problem ID [--seed N] [--trials T] [--atol X] [--rtol X]\n"
               "                  [--copy-gbps X] [--fp32-tflops X] [--tf32-tflops X] [--max-time S] [--pins TEXT]\n"
               "                  [--preroll MS[:MIN:MAX]] [--precision fp32|bf16] [--sandbox off|auto|require]\n"
               "Runs one candidate for kbv-collect in a process of its own; records go to fd 3.\n");
}

int main(int argc, char **argv)
{
    worker w;
    memset(&w, 0, sizeof w);
    w.seed = 7;
    w.trials = 3;
    w.atol = w.rtol = 1e-3;
    w.max_s = 10;
    w.cand_timed_peak = -1;
    w.fd = fcntl(3, F_GETFD) >= 0 ? 3 : 1;
    /* The channel's key first, before any library or candidate code runs. */
    wk_key_init(&w);
    w.t_start = log_now();
    const char *mode = NULL;
    kbv_err e = {0};
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long lv;
        if (!strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            cli_print_version("kbv-worker");
            return 0;
        } else if (!strcmp(a, "--device-info") || !strcmp(a, "--calibrate") || !strcmp(a, "--run")) {
            mode = a;
            continue;
        }
        if (!v) {
            rc = err_set(&e, KBV_EUSAGE, "%s needs a value", a);
            break;
        }
        i++;
        if (!strcmp(a, "--so")) w.so = v;
        else if (!strcmp(a, "--problem")) w.problem_id = v;
        else if (!strcmp(a, "--seed")) {
            unsigned long long s;
            rc = cli_parse_u64(a, v, &s, &e);
            w.seed = s;
        } else if (!strcmp(a, "--trials")) {
            rc = cli_parse_long(a, v, 1, 100, &lv, &e);
            w.trials = (int)lv;
        } else if (!strcmp(a, "--atol")) rc = cli_parse_double(a, v, 0, 1e6, &w.atol, &e);
        else if (!strcmp(a, "--rtol")) rc = cli_parse_double(a, v, 0, 1e6, &w.rtol, &e);
        else if (!strcmp(a, "--copy-gbps")) rc = cli_parse_double(a, v, 0, 1e9, &w.copy_gbps, &e);
        else if (!strcmp(a, "--fp32-tflops")) rc = cli_parse_double(a, v, 0, 1e9, &w.fp32_tflops, &e);
        else if (!strcmp(a, "--tf32-tflops")) rc = cli_parse_double(a, v, 0, 1e9, &w.tf32_tflops, &e);
        else if (!strcmp(a, "--max-time")) rc = cli_parse_double(a, v, 0.001, 3600, &w.max_s, &e);
        else if (!strcmp(a, "--pins")) w.pins = v;
        else if (!strcmp(a, "--sandbox")) {
            /* collect tried what this kernel offers first (choose_sandbox) */
            if (!strcmp(v, "off")) w.sandbox = 0;
            else if (!strcmp(v, "auto")) w.sandbox = 1;
            else if (!strcmp(v, "require")) w.sandbox = 2;
            else rc = err_set(&e, KBV_EUSAGE, "--sandbox %s: off, auto or require", v);
        }
        else if (!strcmp(a, "--preroll")) {
            cstat_rule check;
            cstat_rule_default(&check);
            if (cstat_parse_preroll(v, &check))
                rc = err_set(&e, KBV_EUSAGE, "--preroll %s: MS or MS:MIN:MAX (0 <= MS <= 1000, 0 <= MIN <= MAX <= 1000)", v);
            w.preroll = v;
        }
        else if (!strcmp(a, "--precision")) {
            if (!strcmp(v, "bf16")) w.bf16 = 1;
            else if (strcmp(v, "fp32")) rc = err_set(&e, KBV_EUSAGE, "--precision %s: fp32 or bf16", v);
        }
        else rc = err_set(&e, KBV_EUSAGE, "unknown option %s", a);
    }
    if (!rc && !mode) rc = err_set(&e, KBV_EUSAGE, "no mode given (see --help)");
    if (!rc && !strcmp(mode, "--run") && (!w.so || !w.problem_id))
        rc = err_set(&e, KBV_EUSAGE, "--run needs --so and --problem");
    if (rc) {
        err_report("worker", &e);
        return err_exit_status(rc);
    }
    /* --device-info under --sandbox is collect's trial of CUDA in it */
    enter_sandbox(&w);
    if (!strcmp(mode, "--device-info")) return device_info(&w);
    if (!strcmp(mode, "--calibrate")) return calibrate(&w);
    return run_pair(&w);
}