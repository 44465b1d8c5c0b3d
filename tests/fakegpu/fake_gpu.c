/* fake_gpu.c - gpu.h and worker_gpu.h on host memory for tests (see
 * fakecuda.h).  The fake baseline of every problem is ReLU of input 0 (tanh
 * for a problem whose id names tanh, a function that is the identity at
 * bfloat16 precision near 0), and
 * every operation covers the first FAKE_CAP_ELEMS elements only; the fake
 * candidates in tests/fakegpu/sets follow the same rules. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakecuda.h"
#include "gpu.h"
#include "worker_gpu.h"

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

int gen_fill(const suite_problem *p, int index, suite_dist dist, uint64_t seed, int trial, void *dev,
             cudaStream_t s, kbv_err *e)
{
    (void)s;
    (void)e;
    const suite_tensor *t = &p->inputs[index];
    int64_t n = fake_elems(suite_numel(t));
    uint64_t key = mix(seed ^ mix(hash_str(p->id) ^ mix((uint64_t)dist * 1000 + (uint64_t)trial * 10 + (uint64_t)index)));
    double scale = dist == SUITE_D2 ? 3.0 : dist == SUITE_D3 ? 0.01 : dist == SUITE_D4 ? -1.0 : 1.0;
    if (t->dtype == KBV_I64) {
        int64_t *d = dev;
        for (int64_t i = 0; i < n / 2; i++) d[i] = (int64_t)(mix(key + (uint64_t)i) % 10);
        return 0;
    }
    float *d = dev;
    for (int64_t i = 0; i < n; i++) d[i] = (float)((double)(mix(key + (uint64_t)i) >> 40) / 16777216.0 * scale);
    return 0;
}

int gen_poison_f32(void *dev, size_t n_floats, cudaStream_t s, kbv_err *e)
{
    (void)s;
    (void)e;
    uint32_t *d = dev;
    size_t n = (size_t)fake_elems((int64_t)n_floats);
    for (size_t i = 0; i < n; i++) d[i] = GEN_POISON_F32_BITS;
    return 0;
}

int gen_poison_bf16(void *dev, size_t n, cudaStream_t s, kbv_err *e)
{
    (void)s;
    (void)e;
    uint16_t *d = dev;
    size_t m = (size_t)fake_elems((int64_t)n);
    for (size_t i = 0; i < m; i++) d[i] = (uint16_t)GEN_POISON_BF16_BITS;
    return 0;
}

/* Round to nearest even, as gen.cu's kernel does. */
static uint16_t to_bf16_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu)) return (uint16_t)((b >> 16) | 0x0040u);
    b += 0x7fffu + ((b >> 16) & 1u);
    return (uint16_t)(b >> 16);
}

static float from_bf16_bits(uint16_t h)
{
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

int gen_narrow_bf16(const float *src, void *dst, int64_t n, cudaStream_t s, kbv_err *e)
{
    (void)s;
    (void)e;
    uint16_t *d = dst;
    for (int64_t i = 0; i < fake_elems(n); i++) d[i] = to_bf16_bits(src[i]);
    return 0;
}

int gen_widen_bf16(const void *src, float *dst, int64_t n, cudaStream_t s, kbv_err *e)
{
    (void)s;
    (void)e;
    const uint16_t *h = src;
    for (int64_t i = 0; i < fake_elems(n); i++) dst[i] = from_bf16_bits(h[i]);
    return 0;
}

int gen_fill_bytes(void *dev, size_t n, unsigned char pattern, cudaStream_t s, kbv_err *e)
{
    (void)s;
    (void)e;
    memset(dev, pattern, fake_bytes(n));
    return 0;
}

int cmp_tensors(const void *out, const void *ref, int64_t n, kbv_dtype dtype, double atol, double rtol,
                cudaStream_t s, cmp_stats *st, kbv_err *e)
{
    (void)s;
    (void)e;
    memset(st, 0, sizeof *st);
    st->count = n;
    const float *o = out, *r = ref;
    const uint16_t *o16 = out;
    double worst = 0;
    int tier_fail = 0;
    for (int64_t i = 0; i < fake_elems(n); i++) {
        double ov, rv = r[i];
        int bad;
        if (dtype == KBV_BF16) {
            ov = from_bf16_bits(o16[i]);
            if (o16[i] == GEN_POISON_BF16_BITS) st->unwritten++;
        } else {
            uint32_t bits;
            memcpy(&bits, &o[i], 4);
            ov = o[i];
            if (bits == GEN_POISON_F32_BITS) st->unwritten++;
        }
        if (!isfinite(ov) && isfinite(rv)) {
            st->nonfinite++;
            bad = 1;
            tier_fail = 1;
        } else {
            double d = fabs(ov - rv);
            bad = !(d <= atol + rtol * fabs(rv));
            if (d > st->max_abs_err) st->max_abs_err = d;
            double rel = d / (fabs(rv) > 0 ? fabs(rv) : 1);
            if (rel > st->max_rel_err) st->max_rel_err = rel;
            double t = d / (1 + fabs(rv));
            if (t > worst) worst = t;
        }
        st->mismatches += bad;
    }
    st->tier = tier_fail ? 3 : worst <= 1e-5 ? 0 : worst <= 1e-3 ? 1 : worst <= 1e-2 ? 2 : 3;
    return 0;
}

int cmp_absmax(const float *ref, int64_t n, cudaStream_t s, double *m, kbv_err *e)
{
    (void)s;
    (void)e;
    double best = 0;
    for (int64_t i = 0; i < fake_elems(n); i++)
        if (isfinite(ref[i]) && fabs(ref[i]) > best) best = fabs(ref[i]);
    *m = best;
    return 0;
}

int cmp_fingerprint(const void *dev, size_t bytes, cudaStream_t s, uint64_t *fp, kbv_err *e)
{
    (void)s;
    (void)e;
    /* Eight bytes a step (the tail byte by byte): the worker fingerprints
     * a round's inputs in every timed round, and a byte-wise hash made a
     * 500-round pair on this CPU stand-in a second slower. */
    const unsigned char *b = dev;
    size_t n = fake_bytes(bytes), i = 0;
    uint64_t h = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t word;
        memcpy(&word, b + i, sizeof word);
        h = mix(h ^ word ^ ((uint64_t)i << 8));
    }
    for (; i < n; i++) h = mix(h ^ b[i] ^ ((uint64_t)i << 8));
    *fp = h;
    return 0;
}

int cmp_equal(const void *a, const void *b, size_t bytes, cudaStream_t s, int *equal, kbv_err *e)
{
    (void)s;
    (void)e;
    *equal = memcmp(a, b, fake_bytes(bytes)) == 0;
    return 0;
}

struct base_ctx {
    void *ws;
    int tanh;
};

int base_create(const suite_problem *p, const kbv_call *example, const char *pins, base_ctx **out,
                kbv_err *e)
{
    (void)example;
    (void)pins;
    (void)e;
    base_ctx *b = calloc(1, sizeof *b);
    b->tanh = strstr(p->id, "tanh") != NULL;
    /* A workspace through the (interposed) cudaMalloc, like the real one. */
    cudaMalloc(&b->ws, (size_t)32 << 20);
    *out = b;
    return 0;
}

int base_run(base_ctx *b, base_variant v, const kbv_call *call, kbv_err *e)
{
    (void)e;
    if (b->tanh) {
        /* tanh in float; the bf16 variant on the widened inputs, rounded. */
        int64_t n = fake_elems(kbv_numel(&call->outputs[0]));
        for (int64_t i = 0; i < n; i++) {
            if (v != BASE_BF16) {
                ((float *)call->outputs[0].data)[i] = tanhf(((const float *)call->inputs[0].data)[i]);
                continue;
            }
            float x = from_bf16_bits(((const uint16_t *)call->inputs[0].data)[i]);
            ((uint16_t *)call->outputs[0].data)[i] = to_bf16_bits(tanhf(x));
        }
        return 0;
    }
    if (v == BASE_BF16) {
        /* ReLU on bfloat16 values: exact, as rounding a ReLU of floats. */
        const uint16_t *x = call->inputs[0].data;
        uint16_t *y = call->outputs[0].data;
        int64_t n = fake_elems(kbv_numel(&call->outputs[0]));
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] & 0x8000u) || x[i] == 0 ? 0 : x[i];
        return 0;
    }
    const float *x = call->inputs[0].data;
    float *y = call->outputs[0].data;
    int64_t n = fake_elems(kbv_numel(&call->outputs[0]));
    for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0.0f;
    return 0;
}

/* The ReLU has one exact computation: the reference is the fp32 run. */
int base_run_reference(base_ctx *b, const kbv_call *call, kbv_err *e)
{
    return base_run(b, BASE_FP32, call, e);
}

size_t base_workspace_bytes(const base_ctx *b) { return b ? (size_t)32 << 20 : 0; }

/* A choice for the journal's "baseline" record, as a timed library choice
 * would name it. */
const char *base_choice(const base_ctx *b, base_variant v)
{
    if (!b) return "";
    if (b->tanh) return v == BASE_BF16 ? "fake: host tanh loop on bf16" : "fake: host tanh loop";
    return v == BASE_BF16   ? "fake: host ReLU loop on bf16"
           : v == BASE_TF32 ? "fake: host ReLU loop (tf32 slot)"
                            : "fake: host ReLU loop";
}

void base_destroy(base_ctx *b)
{
    if (!b) return;
    cudaFree(b->ws);
    free(b);
}

int base_available(const suite_problem *p, const char **why)
{
    (void)p;
    if (why) *why = NULL;
    return 1;
}

int wg_count_nonfinite(const void *dev, int64_t n, kbv_dtype dt, cudaStream_t s, int64_t *count, kbv_err *e)
{
    (void)s;
    (void)e;
    *count = 0;
    if (dt != KBV_F32) return 0;
    const float *x = dev;
    for (int64_t i = 0; i < fake_elems(n); i++) *count += !isfinite(x[i]);
    return 0;
}

int wg_fingerprint(const void *dev, int64_t n, kbv_dtype dt, cudaStream_t s, uint64_t *fp, kbv_err *e)
{
    (void)s;
    (void)e;
    const uint32_t *x = dev;
    const uint16_t *x16 = dev;
    uint64_t h = 0;
    for (int64_t i = 0; i < fake_elems(n); i++) {
        uint32_t b = dt == KBV_BF16 ? (uint32_t)x16[i] << 16 : x[i];
        if ((b & 0x7fffffffu) == 0) b = 0;
        h += mix(((uint64_t)i << 32) ^ b);
    }
    *fp = h;
    return 0;
}

int wg_fingerprint_as_bf16(const float *dev, int64_t n, cudaStream_t s, uint64_t *fp, kbv_err *e)
{
    (void)s;
    (void)e;
    const uint32_t *x = (const uint32_t *)dev;
    uint64_t h = 0;
    for (int64_t i = 0; i < fake_elems(n); i++) {
        uint32_t b = x[i];
        /* round to nearest even at bf16, then as wg_fingerprint's bf16 path */
        b = ((b + 0x7fffu + ((b >> 16) & 1u)) >> 16) << 16;
        if ((b & 0x7fffffffu) == 0) b = 0;
        h += mix(((uint64_t)i << 32) ^ b);
    }
    *fp = h;
    return 0;
}

int wg_calibrate(wg_calib *out, kbv_err *e)
{
    (void)e;
    /* Rates that put the fake physical floor of relu at 0.01 ms: a real
     * pass over the fake's elements takes longer, a skipped call less. */
    out->copy_bandwidth_gbps = 12884901888.0 / 1e-5 / 1e9;
    out->fp32_tflops = 1e6;
    out->tf32_tflops = 1e6;
    return 0;
}

int wg_cublas_version(void) { return 130000; }

/* The global timer is the host's monotonic clock, as the fake events are:
 * the two clocks of an honest call agree. */
int wg_stamp(unsigned long long *slot, cudaStream_t s, kbv_err *e)
{
    (void)s;
    (void)e;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *slot = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
    return 0;
}

/* The fake runs one call at a time on the host: there are no SMs to take. */
int wg_occupy(cudaStream_t s, double share, double us, kbv_err *e)
{
    (void)s;
    (void)us;
    if (!(share > 0.0 && share <= 1.0)) return err_set(e, KBV_ERUNTIME, "occupy: share %g is not in (0, 1]", share);
    return 0;
}

/* The fake baselines time no choice: no pins to give or take. */
const char *base_pins(const base_ctx *b, base_variant v)
{
    (void)b;
    (void)v;
    return "";
}

int base_pin(base_ctx *b, const char *pins, kbv_err *e)
{
    (void)b;
    (void)pins;
    (void)e;
    return 0;
}

/* The gate: the fake runs every call at once, so it holds nothing; it
 * writes the release stamp when released, as the real one does. */
struct wg_gate {
    int unused;
};

int wg_gate_open(wg_gate **out, kbv_err *e)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : err_set(e, KBV_ENOMEM, "gate: out of host memory");
}

void wg_gate_close(wg_gate *g) { free(g); }

/* KBV_FAKE_STAMPS=spoil puts every release stamp an hour ahead, as a call
 * that writes over the stamps would leave them: each end stamp is then
 * before its start (tests/cli/collect_stamps.sh). */
int wg_gate_hold(wg_gate *g, cudaStream_t s, unsigned long long *release_stamp, double hold_ms, kbv_err *e)
{
    (void)g;
    (void)hold_ms;
    int rc = wg_stamp(release_stamp, s, e);
    const char *spoil = getenv("KBV_FAKE_STAMPS");
    if (!rc && spoil && strcmp(spoil, "spoil") == 0) *release_stamp += 3600ull * 1000000000ull;
    return rc;
}

void wg_gate_release(wg_gate *g) { (void)g; }

int wg_gate_timed_out(const wg_gate *g)
{
    (void)g;
    return 0;
}
