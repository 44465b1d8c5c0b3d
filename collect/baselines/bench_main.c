/* kbv-baseline-bench - times kbv's baselines on their own, without
 * PyTorch: for each problem, D1 inputs from the keyed generator, then the
 * fp32 and tf32 baselines timed by the cold-L2 method of DESIGN.md 5a.7
 * (an L2 flush by memset of a buffer of twice the L2 size on the same
 * stream outside the event window, then start event, call, stop event),
 * median of --samples after warm-up.  One JSON object per problem on
 * stdout: {"id", "fp32_ms", "tf32_ms", "workspace_bytes"} or
 * {"id", "error"}.  tests/parity/parity.py does the comparison with
 * PyTorch through build/libkbv_baseline.so instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cli.h"
#include "err.h"
#include "gpu.h"
#include "suite.h"

typedef struct {
    const char *glob;
    int samples;
    unsigned long long seed;
} bench_opts;

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int cuda_fail(kbv_err *e, const char *id, const char *what, cudaError_t ce)
{
    return err_set(e, KBV_ERUNTIME, "%s: %s: %s", id, what, cudaGetErrorString(ce));
}

/* Median event time of v over n cold-L2 samples. */
static int time_variant(base_ctx *ctx, base_variant v, const kbv_call *call, void *flush,
                        size_t flush_bytes, int n, double *median_ms, const char *id, kbv_err *e)
{
    cudaEvent_t t0 = NULL, t1 = NULL;
    float *ms = calloc((size_t)n, sizeof *ms);
    int rc = 0;
    cudaError_t ce;
    if (!ms) return err_set(e, KBV_ENOMEM, "out of memory");
    if ((ce = cudaEventCreate(&t0)) != cudaSuccess || (ce = cudaEventCreate(&t1)) != cudaSuccess) {
        rc = cuda_fail(e, id, "events", ce);
        goto cleanup;
    }
    /* warm-up: at least 3 calls */
    for (int i = 0; i < 3 && !rc; i++) rc = base_run(ctx, v, call, e);
    if (rc) goto cleanup;
    for (int i = 0; i < n; i++) {
        if ((ce = cudaMemsetAsync(flush, i & 0xff, flush_bytes, call->stream)) != cudaSuccess) {
            rc = cuda_fail(e, id, "L2 flush", ce);
            goto cleanup;
        }
        cudaEventRecord(t0, call->stream);
        rc = base_run(ctx, v, call, e);
        if (rc) goto cleanup;
        cudaEventRecord(t1, call->stream);
        if ((ce = cudaEventSynchronize(t1)) != cudaSuccess) {
            rc = cuda_fail(e, id, "baseline run", ce);
            goto cleanup;
        }
        cudaEventElapsedTime(&ms[i], t0, t1);
    }
    qsort(ms, (size_t)n, sizeof *ms, cmp_float);
    *median_ms = n % 2 ? ms[n / 2] : 0.5 * ((double)ms[n / 2 - 1] + ms[n / 2]);
cleanup:
    if (t0) cudaEventDestroy(t0);
    if (t1) cudaEventDestroy(t1);
    free(ms);
    return rc;
}

static int bench_problem(const suite_problem *p, const bench_opts *o, void *flush, size_t flush_bytes,
                         cudaStream_t s)
{
    kbv_err e = { 0, "" };
    kbv_tensor in[32], out[4];
    double attrs[64];
    base_ctx *ctx = NULL;
    double fp32 = 0, tf32 = 0;
    int rc = 0;
    const char *why = NULL;
    memset(in, 0, sizeof in);
    memset(out, 0, sizeof out);
    if (p->n_inputs > 32 || p->n_outputs > 4 || p->n_attrs > 64) {
        rc = err_set(&e, KBV_EINPUT, "too many tensors");
        goto cleanup;
    }
    if (!base_available(p, &why)) {
        rc = err_set(&e, KBV_ERUNTIME, "unavailable: %s", why ? why : "?");
        goto cleanup;
    }
    for (int i = 0; i < p->n_inputs; i++) {
        in[i].dtype = p->inputs[i].dtype;
        in[i].ndim = p->inputs[i].ndim;
        memcpy(in[i].shape, p->inputs[i].shape, sizeof in[i].shape);
        cudaError_t ce = cudaMalloc(&in[i].data, (size_t)suite_bytes(&p->inputs[i]));
        if (ce != cudaSuccess) {
            in[i].data = NULL;
            rc = cuda_fail(&e, p->id, "input allocation", ce);
            goto cleanup;
        }
        rc = gen_fill(p, i, SUITE_D1, o->seed, 0, in[i].data, s, &e);
        if (rc) goto cleanup;
    }
    for (int i = 0; i < p->n_outputs; i++) {
        out[i].dtype = p->outputs[i].dtype;
        out[i].ndim = p->outputs[i].ndim;
        memcpy(out[i].shape, p->outputs[i].shape, sizeof out[i].shape);
        cudaError_t ce = cudaMalloc(&out[i].data, (size_t)suite_bytes(&p->outputs[i]));
        if (ce != cudaSuccess) {
            out[i].data = NULL;
            rc = cuda_fail(&e, p->id, "output allocation", ce);
            goto cleanup;
        }
    }
    for (int i = 0; i < p->n_attrs; i++) attrs[i] = p->attrs[i].value;
    kbv_call call = { in, p->n_inputs, out, p->n_outputs, attrs, p->n_attrs, s };
    rc = base_create(p, &call, NULL, &ctx, &e);
    if (rc) goto cleanup;
    rc = time_variant(ctx, BASE_FP32, &call, flush, flush_bytes, o->samples, &fp32, p->id, &e);
    if (!rc) rc = time_variant(ctx, BASE_TF32, &call, flush, flush_bytes, o->samples, &tf32, p->id, &e);
cleanup:
    if (rc) {
        printf("{\"id\": \"%s\", \"error\": \"", p->id);
        for (const char *c = e.msg; *c; c++) {
            if (*c == '"' || *c == '\\') putchar('\\');
            putchar((unsigned char)*c >= 32 ? *c : ' ');
        }
        printf("\"}\n");
    } else {
        printf("{\"id\": \"%s\", \"fp32_ms\": %.6f, \"tf32_ms\": %.6f, \"workspace_bytes\": %zu", p->id, fp32,
               tf32, base_workspace_bytes(ctx));
        /* the kernel choices as pins (scripts/pins.py --bench makes a
         * table of them); pin text holds no quote or backslash */
        printf(", \"fp32_pins\": \"%s\", \"tf32_pins\": \"%s\"}\n", base_pins(ctx, BASE_FP32),
               base_pins(ctx, BASE_TF32));
    }
    fflush(stdout);
    base_destroy(ctx);
    for (int i = 0; i < 32; i++)
        if (in[i].data) cudaFree(in[i].data);
    for (int i = 0; i < 4; i++)
        if (out[i].data) cudaFree(out[i].data);
    /* a sticky error poisons the context: stop rather than report garbage */
    return cudaGetLastError() == cudaSuccess || rc == 0 ? 0 : rc;
}

static void usage(FILE *f)
{
    fputs("usage: kbv-baseline-bench [--problems GLOB] [--samples N] [--seed N]\n\n"
          "Times the fp32 and tf32 baselines of each problem on D1 inputs (cold L2,\n"
          "median of N samples, default 50) and prints one JSON object a line, with\n"
          "the kernel choices as pins (fp32_pins, tf32_pins: scripts/pins.py --bench).\n"
          "GLOB: fnmatch patterns on problem ids, several separated by commas.\n", f);
}

int main(int argc, char **argv)
{
    bench_opts o = { "*", 50, 7 };
    kbv_err e = { 0, "" };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            cli_print_version("kbv-baseline-bench");
            return 0;
        } else if (!strcmp(a, "--problems") && i + 1 < argc) {
            o.glob = argv[++i];
        } else if (!strcmp(a, "--samples") && i + 1 < argc) {
            long v;
            if (cli_parse_long("--samples", argv[++i], 1, 100000, &v, &e)) goto usage_error;
            o.samples = (int)v;
        } else if (!strcmp(a, "--seed") && i + 1 < argc) {
            if (cli_parse_u64("--seed", argv[++i], &o.seed, &e)) goto usage_error;
        } else {
            err_set(&e, KBV_EUSAGE, "unknown argument '%s' (try --help)", a);
            goto usage_error;
        }
    }
    int dev = 0, l2 = 0;
    cudaError_t ce = cudaGetDevice(&dev);
    if (ce == cudaSuccess) ce = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
    if (ce != cudaSuccess) {
        err_set(&e, KBV_ERUNTIME, "no CUDA device: %s", cudaGetErrorString(ce));
        err_report("baseline-bench", &e);
        return 1;
    }
    size_t flush_bytes = (size_t)2 * (size_t)l2;
    if (flush_bytes < ((size_t)256 << 20)) flush_bytes = (size_t)256 << 20;
    void *flush = NULL;
    cudaStream_t s = NULL;
    if ((ce = cudaMalloc(&flush, flush_bytes)) != cudaSuccess || (ce = cudaStreamCreate(&s)) != cudaSuccess) {
        err_set(&e, KBV_ERUNTIME, "setup: %s", cudaGetErrorString(ce));
        err_report("baseline-bench", &e);
        return 1;
    }
    int status = 0, n = suite_count();
    for (int i = 0; i < n; i++) {
        const suite_problem *p = suite_get(i);
        if (!cli_glob_match(o.glob, p->id)) continue;
        if (bench_problem(p, &o, flush, flush_bytes, s)) {
            status = 1;
            break;
        }
    }
    cudaFree(flush);
    cudaStreamDestroy(s);
    return status;
usage_error:
    err_report("baseline-bench", &e);
    return 2;
}
