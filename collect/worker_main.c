/* kbv-worker: runs one (set, problem) pair of a collect, in a process of its
 * own (DESIGN.md 5a steps 3 to 8), and sends its records as JSON lines on fd
 * 3.  kbv-collect starts it; it is not meant to be run by hand, though it
 * can be (records then go to stdout when fd 3 is not open).
 *
 *   kbv-worker --device-info     the compute capability of GPU 0
 *   kbv-worker --calibrate       device facts, copy bandwidth, GEMM rates
 *   kbv-worker --run --so SO --problem ID [--seed N] [--trials T] ...
 *
 * After the first error the worker reports a status and exits: a sticky
 * CUDA error leaves the context unusable, and the next pair gets a fresh
 * process anyway.  Exit status: 0 when a status was sent, 3 after a
 * launch-error status, 1 when the worker itself could not run.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "cli.h"
#include "cstat.h"
#include "err.h"
#include "gpu.h"
#include "jio.h"
#include "log.h"
#include "memtrack.h"
#include "nvmlx.h"
#include "prng.h"
#include "suite.h"
#include "verdict.h"
#include "worker_gpu.h"

typedef int (*forward_fn)(const kbv_call *);
typedef int (*setup_fn)(const kbv_call *);
typedef void (*teardown_fn)(void);

enum { V_FP32 = 0, V_TF32 = 1, V_CAND = 2, N_VARIANTS = 3 };
static const char *const variant_names[N_VARIANTS] = {"fp32", "tf32", "candidate"};

/* Evidence for the probes, gathered during the checks. */
typedef struct {
    uint64_t *out_fp, *ref_fp;  /* per check call */
    char (*label)[32];          /* "D2 trial 1" */
    int n;
    int identity_hit;           /* output equalled an input the reference did not */
    char identity_detail[256];
    int mutation_hit;
    char mutation_detail[256];
    int deferred_fp_hit;        /* output changed between stream and device sync */
    char deferred_detail[256];
} evidence;

typedef struct {
    /* arguments */
    const char *so;
    const char *problem_id;
    double t_start;           /* log_now() at main's start */
    uint64_t seed;
    int trials;
    double atol, rtol;
    double copy_gbps, fp32_tflops, tf32_tflops;
    double max_s;
    /* state */
    int fd;
    const suite_problem *p;
    cudaStream_t s;
    void *lib;
    forward_fn fwd;
    setup_fn setup;
    teardown_fn teardown;
    base_ctx *base;
    nvmlx *nv;
    double *attrs;
    kbv_tensor *in, *out;
    size_t *in_bytes, *out_bytes;
    size_t io_bytes;
    size_t l2_bytes;
    int cand_threads;       /* host threads alive after a candidate call that were not before */
    char cand_threads_where[64];
    evidence ev;
    double med_gpu[N_VARIANTS], med_wall[N_VARIANTS];
    /* Free device memory (cudaMemGetInfo) before the baselines were created
     * and before kbv_setup: memory that libraries allocate outside the
     * interposed calls (cuBLAS and cuDNN link the runtime statically) shows
     * only there. */
    size_t free_before_base, free_before_setup;
    long long base_untracked;
} worker;

/* --- records ------------------------------------------------------------------ */

static void emit(worker *w, cJSON *rec)
{
    char *s = jio_line(rec);
    cJSON_Delete(rec);
    if (!s) return;
    size_t n = strlen(s);
    s[n] = '\n'; /* jio_line's NUL becomes the newline; the write carries n + 1 bytes */
    size_t done = 0;
    while (done < n + 1) {
        ssize_t k = write(w->fd, s + done, n + 1 - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        done += (size_t)k;
    }
    free(s);
}

static cJSON *rec(const char *type)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", type);
    return o;
}

static void emit_status(worker *w, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void emit_status(worker *w, const char *status, const char *fmt, ...)
{
    char detail[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    cJSON *o = rec("status");
    cJSON_AddStringToObject(o, "status", status);
    cJSON_AddStringToObject(o, "detail", detail);
    emit(w, o);
}

/* Ends the worker with a launch-error status.  A failed candidate
 * allocation is named, so that out of memory reads as such. */
static void die_launch(worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die_launch(worker *w, const char *fmt, ...)
{
    char msg[3000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mt_counts c;
    mt_get(MT_CANDIDATE, &c);
    if (c.failed > 0)
        emit_status(w, "launch-error", "out of memory: a candidate allocation of %lld bytes failed (%s); %s",
                    c.failed_bytes, cudaGetErrorString((cudaError_t)c.last_error), msg);
    else
        emit_status(w, "launch-error", "%s", msg);
    _exit(3);
}

static void die_cuda(worker *w, const char *what, cudaError_t ce) __attribute__((noreturn));
static void die_cuda(worker *w, const char *what, cudaError_t ce)
{
    die_launch(w, "%s%s: %s (%s)", ce == cudaErrorMemoryAllocation ? "out of memory: " : "", what,
               cudaGetErrorString(ce), cudaGetErrorName(ce));
}

/* A harness step failed: when the CUDA context is broken (a sticky error the
 * candidate caused), that is the candidate's launch error; otherwise it is
 * still reported, as a launch-error naming the harness. */
static void die_harness(worker *w, const char *what, const kbv_err *e) __attribute__((noreturn));
static void die_harness(worker *w, const char *what, const kbv_err *e)
{
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce == cudaSuccess) ce = cudaGetLastError();
    if (ce != cudaSuccess) die_cuda(w, what, ce);
    die_launch(w, "harness: %s: %s", what, e && e->msg[0] ? e->msg : "failed");
}

/* --- buffers ------------------------------------------------------------------ */

static void *dalloc(worker *w, size_t n, const char *what)
{
    void *p = NULL;
    cudaError_t ce = mt_real_malloc(&p, n ? n : 1);
    if (ce != cudaSuccess) die_cuda(w, what, ce);
    return p;
}

static void dfree(void *p)
{
    if (p) mt_real_free(p);
}

static void poison(worker *w, void *p, size_t bytes)
{
    kbv_err e = {0};
    size_t words = bytes / 4;
    if (words && gen_poison_f32(p, words, w->s, &e)) die_harness(w, "poison", &e);
    if (bytes % 4 && gen_fill_bytes((char *)p + words * 4, bytes % 4, 0xff, w->s, &e))
        die_harness(w, "poison", &e);
}

static void alloc_inputs(worker *w, void **bufs)
{
    for (int i = 0; i < w->p->n_inputs; i++) bufs[i] = dalloc(w, w->in_bytes[i], "input buffer");
}

static void fill_inputs(worker *w, void **bufs, suite_dist d, int trial)
{
    kbv_err e = {0};
    for (int i = 0; i < w->p->n_inputs; i++)
        if (gen_fill(w->p, i, d, w->seed, trial, bufs[i], w->s, &e)) die_harness(w, "input generation", &e);
}

static void alloc_outputs(worker *w, void **bufs)
{
    for (int i = 0; i < w->p->n_outputs; i++) {
        bufs[i] = dalloc(w, w->out_bytes[i], "output buffer");
        poison(w, bufs[i], w->out_bytes[i]);
    }
}

static void free_bufs(void **bufs, int n)
{
    for (int i = 0; i < n; i++) {
        dfree(bufs[i]);
        bufs[i] = NULL;
    }
}

static void make_call(worker *w, kbv_call *c, void **in, void **out)
{
    for (int i = 0; i < w->p->n_inputs; i++) w->in[i].data = in[i];
    for (int i = 0; i < w->p->n_outputs; i++) w->out[i].data = out[i];
    c->inputs = w->in;
    c->n_inputs = w->p->n_inputs;
    c->outputs = w->out;
    c->n_outputs = w->p->n_outputs;
    c->attrs = w->attrs;
    c->n_attrs = w->p->n_attrs;
    c->stream = w->s;
}

/* The reference buffers get fresh tensor descriptors so that the
 * candidate's (which it may have kept) never point at them. */
static void make_ref_call(worker *w, kbv_call *c, kbv_tensor *outs, void **in, void **ref)
{
    for (int i = 0; i < w->p->n_inputs; i++) w->in[i].data = in[i];
    for (int i = 0; i < w->p->n_outputs; i++) {
        outs[i] = w->out[i];
        outs[i].data = ref[i];
    }
    c->inputs = w->in;
    c->n_inputs = w->p->n_inputs;
    c->outputs = outs;
    c->n_outputs = w->p->n_outputs;
    c->attrs = w->attrs;
    c->n_attrs = w->p->n_attrs;
    c->stream = w->s;
}

static uint64_t fingerprint(worker *w, void **bufs, const size_t *bytes, int n)
{
    uint64_t h = 0x84222325cbf29ce4ull;
    kbv_err e = {0};
    for (int i = 0; i < n; i++) {
        uint64_t f = 0;
        if (cmp_fingerprint(bufs[i], bytes[i], w->s, &f, &e)) die_harness(w, "fingerprint", &e);
        h = prng_mix(h ^ f);
    }
    return h;
}

/* The value fingerprint of all outputs, signs of zeros ignored (input
 * independence compares these). */
static uint64_t value_fingerprint(worker *w, void **bufs)
{
    uint64_t h = 0x2545f4914f6cdd1dull;
    kbv_err e = {0};
    for (int i = 0; i < w->p->n_outputs; i++) {
        uint64_t f = 0;
        if (wg_fingerprint(bufs[i], suite_numel(&w->p->outputs[i]), w->p->outputs[i].dtype, w->s, &f, &e))
            die_harness(w, "fingerprint", &e);
        h = prng_mix(h ^ f);
    }
    return h;
}

/* --- calls -------------------------------------------------------------------- */

static void sync_check(worker *w, const char *what)
{
    cudaError_t ce = cudaStreamSynchronize(w->s);
    if (ce == cudaSuccess) ce = cudaGetLastError();
    if (ce != cudaSuccess) die_cuda(w, what, ce);
}

static void device_sync_check(worker *w, const char *what)
{
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce == cudaSuccess) ce = cudaGetLastError();
    if (ce != cudaSuccess) die_cuda(w, what, ce);
}

static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* Threads are counted around candidate code (not in timing): no harness
 * code runs meanwhile, so a thread that appeared and is still alive after
 * the call is the candidate's. */
static void note_threads(worker *w, int before, const char *what)
{
    int after = count_threads();
    if (before > 0 && after > before) {
        if (!w->cand_threads)
            snprintf(w->cand_threads_where, sizeof w->cand_threads_where, "%s", what);
        w->cand_threads += after - before;
    }
}

static void cand_call(worker *w, const kbv_call *c, const char *what)
{
    int timed = strcmp(what, "timing") == 0;
    int before = timed ? 0 : count_threads();
    mt_set_owner(MT_CANDIDATE);
    int rc = w->fwd(c);
    mt_set_owner(MT_HARNESS);
    if (!timed) note_threads(w, before, what);
    if (rc != 0) {
        cudaError_t ce = cudaGetLastError();
        die_launch(w, "kbv_forward returned %d (%s)%s%s", rc, what, ce != cudaSuccess ? "; CUDA: " : "",
                   ce != cudaSuccess ? cudaGetErrorString(ce) : "");
    }
}

static void base_call(worker *w, int v, const kbv_call *c)
{
    kbv_err e = {0};
    mt_set_owner(MT_BASELINE);
    int rc = base_run(w->base, v == V_TF32 ? BASE_TF32 : BASE_FP32, c, &e);
    mt_set_owner(MT_HARNESS);
    if (rc) die_harness(w, "baseline", &e);
}

/* --- setup -------------------------------------------------------------------- */

/* Host memory a candidate may add to the worker's data, beyond what CUDA,
 * the harness and the libraries hold when the limit is set. */
#define HOST_DATA_HEADROOM ((rlim_t)16 << 30)

/* Caps the worker's writable private memory (RLIMIT_DATA: heap and
 * private writable mappings) at its present size plus the headroom, so
 * that a candidate that allocates host memory without end gets NULL from
 * malloc instead of driving the host into the OOM killer, which may pick
 * kbv-collect.  RLIMIT_AS would be the literal "address space" limit, but
 * the CUDA driver reserves hundreds of GiB of virtual addresses
 * (PROT_NONE, not counted here) and device memory is mapped shared (not
 * counted either), so only this limit separates a host leak from what
 * CUDA needs.  Called after CUDA is initialised and before the candidate
 * is loaded; libraries loaded later (cuDNN, cuBLAS) fit in the headroom. */
static void limit_host_data(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmData: %llu kB", &kib) == 1) break;
    fclose(f);
    if (!kib) return;
    struct rlimit rl;
    if (getrlimit(RLIMIT_DATA, &rl) != 0) return;
    rlim_t want = (rlim_t)kib * 1024 + HOST_DATA_HEADROOM;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) want = rl.rlim_max;
    /* Both limits: a candidate cannot raise the hard one again (unless it
     * runs as root, where nothing short of a container holds). */
    rl.rlim_cur = rl.rlim_max = want;
    setrlimit(RLIMIT_DATA, &rl);
}


static void load_candidate(worker *w)
{
    int before = count_threads();
    mt_set_owner(MT_CANDIDATE); /* static constructors may allocate */
    w->lib = dlopen(w->so, RTLD_NOW | RTLD_LOCAL);
    mt_set_owner(MT_HARNESS);
    note_threads(w, before, "loading");
    if (!w->lib) die_launch(w, "cannot load the candidate: %s", dlerror());
    void *f = dlsym(w->lib, "kbv_forward");
    if (!f) die_launch(w, "the candidate does not define kbv_forward (extern \"C\")");
    memcpy(&w->fwd, &f, sizeof f);
    f = dlsym(w->lib, "kbv_setup");
    if (f) memcpy(&w->setup, &f, sizeof f);
    f = dlsym(w->lib, "kbv_teardown");
    if (f) memcpy(&w->teardown, &f, sizeof f);
}

static void describe_tensors(worker *w)
{
    const suite_problem *p = w->p;
    w->in = calloc((size_t)p->n_inputs + 1, sizeof *w->in);
    w->out = calloc((size_t)p->n_outputs + 1, sizeof *w->out);
    w->in_bytes = calloc((size_t)p->n_inputs + 1, sizeof *w->in_bytes);
    w->out_bytes = calloc((size_t)p->n_outputs + 1, sizeof *w->out_bytes);
    w->attrs = calloc((size_t)p->n_attrs + 1, sizeof *w->attrs);
    if (!w->in || !w->out || !w->in_bytes || !w->out_bytes || !w->attrs)
        die_launch(w, "harness: out of host memory");
    w->io_bytes = 0;
    for (int i = 0; i < p->n_inputs; i++) {
        const suite_tensor *t = &p->inputs[i];
        w->in[i].dtype = t->dtype;
        w->in[i].ndim = t->ndim;
        memcpy(w->in[i].shape, t->shape, sizeof t->shape);
        w->in_bytes[i] = (size_t)suite_bytes(t);
        w->io_bytes += w->in_bytes[i];
    }
    for (int i = 0; i < p->n_outputs; i++) {
        const suite_tensor *t = &p->outputs[i];
        w->out[i].dtype = t->dtype;
        w->out[i].ndim = t->ndim;
        memcpy(w->out[i].shape, t->shape, sizeof t->shape);
        w->out_bytes[i] = (size_t)suite_bytes(t);
        w->io_bytes += w->out_bytes[i];
    }
    for (int i = 0; i < p->n_attrs; i++) w->attrs[i] = p->attrs[i].value;
}

/* --- correctness (step 5) ----------------------------------------------------- */

typedef struct {
    cmp_stats st;
    int tier;
} cmp_all;

static void compare_outputs(worker *w, void **out, void **ref, cmp_all *r)
{
    memset(r, 0, sizeof *r);
    kbv_err e = {0};
    for (int i = 0; i < w->p->n_outputs; i++) {
        cmp_stats st;
        int64_t n = suite_numel(&w->p->outputs[i]);
        if (cmp_tensors(out[i], ref[i], n, w->p->outputs[i].dtype, w->atol, w->rtol, w->s, &st, &e))
            die_harness(w, "comparison", &e);
        if (i == 0 || st.max_abs_err > r->st.max_abs_err || isnan(st.max_abs_err)) r->st.max_abs_err = st.max_abs_err;
        if (i == 0 || st.max_rel_err > r->st.max_rel_err || isnan(st.max_rel_err)) r->st.max_rel_err = st.max_rel_err;
        r->st.mismatches += st.mismatches;
        r->st.nonfinite += st.nonfinite;
        r->st.unwritten += st.unwritten;
        r->st.count += st.count;
        r->tier = i == 0 ? st.tier : verdict_tier_worse(r->tier, st.tier);
    }
}

/* 1 when the reference holds non-finite values (the distribution is then
 * skipped, as DESIGN.md 5 says). */
static int64_t ref_nonfinite(worker *w, void **ref)
{
    kbv_err e = {0};
    int64_t total = 0;
    for (int i = 0; i < w->p->n_outputs; i++) {
        int64_t c = 0;
        if (wg_count_nonfinite(ref[i], suite_numel(&w->p->outputs[i]), w->p->outputs[i].dtype, w->s, &c, &e))
            die_harness(w, "reference check", &e);
        total += c;
    }
    return total;
}

/* Identity: an output bitwise equal to an input of the same size, where the
 * reference output is not. */
static void check_identity(worker *w, void **in, void **out, void **ref, const char *label)
{
    kbv_err e = {0};
    for (int o = 0; o < w->p->n_outputs && !w->ev.identity_hit; o++)
        for (int i = 0; i < w->p->n_inputs; i++) {
            if (w->in_bytes[i] != w->out_bytes[o]) continue;
            int eq = 0, ref_eq = 0;
            if (cmp_equal(out[o], in[i], w->out_bytes[o], w->s, &eq, &e)) die_harness(w, "identity", &e);
            if (!eq) continue;
            if (cmp_equal(ref[o], in[i], w->out_bytes[o], w->s, &ref_eq, &e)) die_harness(w, "identity", &e);
            if (ref_eq) continue;
            w->ev.identity_hit = 1;
            snprintf(w->ev.identity_detail, sizeof w->ev.identity_detail,
                     "on %s, output %d is a bitwise copy of input %d (%s), which the reference output is not",
                     label, o, i, w->p->inputs[i].name);
            break;
        }
}

static void checks(worker *w, void **slot_in)
{
    const suite_problem *p = w->p;
    int max_calls = 5 * w->trials;
    w->ev.out_fp = calloc((size_t)max_calls, sizeof *w->ev.out_fp);
    w->ev.ref_fp = calloc((size_t)max_calls, sizeof *w->ev.ref_fp);
    w->ev.label = calloc((size_t)max_calls, sizeof *w->ev.label);
    if (!w->ev.out_fp || !w->ev.ref_fp || !w->ev.label) die_launch(w, "harness: out of host memory");
    void *prev[64] = {0}, *cur[64] = {0}, *out[64] = {0}, *ref[64] = {0};
    uint64_t in_fp[64];
    kbv_tensor ref_t[64];
    for (int i = 0; i < p->n_inputs; i++) prev[i] = slot_in[i];
    for (int d = SUITE_D1; d <= SUITE_D5; d++) {
        if (!suite_has_dist(p, (suite_dist)d)) continue;
        const char *dn = suite_dist_name((suite_dist)d);
        int skipped = 0;
        for (int t = 0; t < w->trials; t++) {
            char label[32];
            snprintf(label, sizeof label, "%s trial %d", dn, t);
            cJSON *r = rec("check");
            cJSON_AddStringToObject(r, "dist", dn);
            cJSON_AddNumberToObject(r, "trial", t);
            cJSON_AddNumberToObject(r, "seed", (double)w->seed);
            if (skipped) {
                cJSON_AddBoolToObject(r, "pass", 1);
                cJSON_AddBoolToObject(r, "skipped", 1);
                cJSON_AddStringToObject(r, "detail", "the fp32 reference is not finite on this distribution");
                emit(w, r);
                continue;
            }
            /* Fresh input buffers at addresses that differ from the previous
             * call's (those are still held), so that a candidate keyed on the
             * previous call's pointers computes instead of failing here; the
             * caching probe is what tests same pointers, new contents. */
            alloc_inputs(w, cur);
            fill_inputs(w, cur, (suite_dist)d, t);
            for (int i = 0; i < p->n_inputs; i++) in_fp[i] = fingerprint(w, &cur[i], &w->in_bytes[i], 1);
            alloc_outputs(w, out);
            kbv_call c;
            make_call(w, &c, cur, out);
            sync_check(w, "before the candidate");
            cand_call(w, &c, label);
            sync_check(w, label);
            /* Deferred work: a fingerprint right after the stream is done and
             * one after the whole device is. */
            uint64_t fp_stream = fingerprint(w, out, w->out_bytes, p->n_outputs);
            device_sync_check(w, label);
            uint64_t fp_dev = fingerprint(w, out, w->out_bytes, p->n_outputs);
            if (fp_stream != fp_dev && !w->ev.deferred_fp_hit) {
                w->ev.deferred_fp_hit = 1;
                snprintf(w->ev.deferred_detail, sizeof w->ev.deferred_detail,
                         "on %s the output changed after the stream had synchronised (work outside the given stream)",
                         label);
            }
            /* Input mutation: inputs hashed before and after; a mutated input
             * is regenerated so that the reference sees the real input. */
            int mutated = 0;
            for (int i = 0; i < p->n_inputs; i++) {
                uint64_t f = fingerprint(w, &cur[i], &w->in_bytes[i], 1);
                if (f != in_fp[i]) {
                    if (!w->ev.mutation_hit)
                        snprintf(w->ev.mutation_detail, sizeof w->ev.mutation_detail,
                                 "on %s the candidate changed input %d (%s)", label, i, p->inputs[i].name);
                    w->ev.mutation_hit = 1;
                    mutated = 1;
                }
            }
            if (mutated) fill_inputs(w, cur, (suite_dist)d, t);
            /* The reference, into buffers of its own. */
            for (int i = 0; i < p->n_outputs; i++) {
                ref[i] = dalloc(w, w->out_bytes[i], "reference buffer");
                poison(w, ref[i], w->out_bytes[i]);
            }
            kbv_call rc_call;
            make_ref_call(w, &rc_call, ref_t, cur, ref);
            base_call(w, V_FP32, &rc_call);
            sync_check(w, "fp32 reference");
            int64_t bad_ref = ref_nonfinite(w, ref);
            if (bad_ref > 0) {
                skipped = 1;
                cJSON_AddBoolToObject(r, "pass", 1);
                cJSON_AddBoolToObject(r, "skipped", 1);
                char det[160];
                snprintf(det, sizeof det, "the fp32 reference has %lld non-finite values", (long long)bad_ref);
                cJSON_AddStringToObject(r, "detail", det);
                emit(w, r);
            } else {
                cmp_all ca;
                compare_outputs(w, out, ref, &ca);
                int pass = verdict_check_pass(ca.st.mismatches, ca.st.nonfinite, ca.st.unwritten);
                cJSON_AddBoolToObject(r, "pass", pass);
                jio_add_num(r, "max_abs_err", ca.st.max_abs_err);
                jio_add_num(r, "max_rel_err", ca.st.max_rel_err);
                cJSON_AddNumberToObject(r, "mismatches", (double)ca.st.mismatches);
                cJSON_AddNumberToObject(r, "nonfinite", (double)ca.st.nonfinite);
                cJSON_AddNumberToObject(r, "unwritten", (double)ca.st.unwritten);
                cJSON_AddNumberToObject(r, "count", (double)ca.st.count);
                cJSON_AddStringToObject(r, "tier", verdict_tier_name(ca.tier));
                emit(w, r);
                int k = w->ev.n++;
                w->ev.out_fp[k] = value_fingerprint(w, out);
                w->ev.ref_fp[k] = value_fingerprint(w, ref);
                snprintf(w->ev.label[k], sizeof w->ev.label[k], "%s", label);
                if (!w->ev.identity_hit) check_identity(w, cur, out, ref, label);
            }
            /* The expected output leaves device memory before any further
             * candidate call. */
            for (int i = 0; i < p->n_outputs; i++) poison(w, ref[i], w->out_bytes[i]);
            sync_check(w, "poison");
            free_bufs(ref, p->n_outputs);
            free_bufs(out, p->n_outputs);
            free_bufs(prev, p->n_inputs);
            for (int i = 0; i < p->n_inputs; i++) prev[i] = cur[i];
        }
    }
    for (int i = 0; i < p->n_inputs; i++) slot_in[i] = prev[i];
}

/* --- probes (step 6) ---------------------------------------------------------- */

static void emit_probe(worker *w, const char *name, int pass, const char *detail)
{
    cJSON *r = rec("probe");
    cJSON_AddStringToObject(r, "probe", name);
    cJSON_AddBoolToObject(r, "pass", pass);
    cJSON_AddStringToObject(r, "detail", detail);
    emit(w, r);
}

static void probes_from_checks(worker *w)
{
    char det[512];
    int a = 0, b = 0;
    if (w->ev.n < 2) {
        emit_probe(w, "input-independence", 1, "fewer than two checked calls; nothing to compare");
    } else if (verdict_independence(w->ev.out_fp, w->ev.ref_fp, w->ev.n, &a, &b)) {
        snprintf(det, sizeof det, "%d calls on different inputs gave different outputs wherever the references differed",
                 w->ev.n);
        emit_probe(w, "input-independence", 1, det);
    } else {
        snprintf(det, sizeof det, "the output on %s is bitwise the output on %s although the references differ",
                 w->ev.label[b], w->ev.label[a]);
        emit_probe(w, "input-independence", 0, det);
    }
    if (w->ev.identity_hit) emit_probe(w, "identity", 0, w->ev.identity_detail);
    else emit_probe(w, "identity", 1, "no output equalled an input where the reference output does not");
    if (w->ev.mutation_hit) emit_probe(w, "input-mutation", 0, w->ev.mutation_detail);
    else {
        snprintf(det, sizeof det, "inputs hashed before and after all %d checked calls were unchanged", w->ev.n);
        emit_probe(w, "input-mutation", 1, det);
    }
}

/* Puts D1 trial 1's values into a run of 256 elements of every floating
 * input of at least 2048 elements, inside the first 128 Ki elements, at a
 * seeded offset of 256 mod 1024: a run that holds no index divisible by
 * 1024, so that a memo keyed on a sample of the contents (the first
 * elements, or evenly spaced ones) does not see the change.  Returns the
 * number of inputs changed. */
static int change_a_little(worker *w, void **in, char *where, size_t wn)
{
    const suite_problem *p = w->p;
    int changed = 0;
    where[0] = 0;
    prng r;
    prng_seed(&r, prng_hash_str(w->seed ^ 0x63616368ull, p->id));
    for (int i = 0; i < p->n_inputs; i++) {
        int64_t n = suite_numel(&p->inputs[i]);
        if (p->inputs[i].dtype != KBV_F32 || n < 2048) continue;
        int64_t span = n < 131072 ? n : 131072;
        int64_t off = 256 + 1024 * (int64_t)prng_below(&r, (uint64_t)(span / 1024 - 1));
        void *tmp = dalloc(w, w->in_bytes[i], "caching probe buffer");
        kbv_err e = {0};
        if (gen_fill(p, i, SUITE_D1, w->seed, 1, tmp, w->s, &e)) die_harness(w, "input generation", &e);
        cudaError_t ce = cudaMemcpyAsync((char *)in[i] + off * 4, (char *)tmp + off * 4, 256 * 4,
                                         cudaMemcpyDeviceToDevice, w->s);
        if (ce != cudaSuccess) die_cuda(w, "caching probe", ce);
        sync_check(w, "caching probe");
        dfree(tmp);
        size_t l = strlen(where);
        snprintf(where + l, wn - l, "%s%s[%lld..%lld]", l ? ", " : "", p->inputs[i].name, (long long)off,
                 (long long)off + 255);
        changed++;
    }
    return changed;
}

/* One call on the inputs as they are now, into out (re-poisoned), checked
 * against the fp32 reference: 1 when right, else 0 with the counts. */
static int caching_call(worker *w, void **in, void **out, const char *what, cmp_all *ca)
{
    const suite_problem *p = w->p;
    void *ref[64] = {0};
    kbv_tensor ref_t[64];
    kbv_call c, rc_call;
    /* The reference needs the inputs as the candidate got them, in case it
     * changes them: kept in a copy. */
    void *keep[64] = {0};
    for (int i = 0; i < p->n_inputs; i++) {
        keep[i] = dalloc(w, w->in_bytes[i], "caching probe copy");
        cudaError_t ce = cudaMemcpyAsync(keep[i], in[i], w->in_bytes[i], cudaMemcpyDeviceToDevice, w->s);
        if (ce != cudaSuccess) die_cuda(w, "caching probe", ce);
    }
    for (int i = 0; i < p->n_outputs; i++) poison(w, out[i], w->out_bytes[i]);
    make_call(w, &c, in, out);
    sync_check(w, "caching probe");
    cand_call(w, &c, what);
    device_sync_check(w, what);
    for (int i = 0; i < p->n_outputs; i++) {
        ref[i] = dalloc(w, w->out_bytes[i], "reference buffer");
        poison(w, ref[i], w->out_bytes[i]);
    }
    make_ref_call(w, &rc_call, ref_t, keep, ref);
    base_call(w, V_FP32, &rc_call);
    sync_check(w, "fp32 reference");
    compare_outputs(w, out, ref, ca);
    for (int i = 0; i < p->n_outputs; i++) poison(w, ref[i], w->out_bytes[i]);
    sync_check(w, "poison");
    free_bufs(ref, p->n_outputs);
    /* The candidate's later calls see its own input, as it left it. */
    free_bufs(keep, p->n_inputs);
    return verdict_check_pass(ca->st.mismatches, ca->st.nonfinite, ca->st.unwritten);
}

static void probe_caching(worker *w, void **in)
{
    const suite_problem *p = w->p;
    void *out[64] = {0};
    kbv_call c;
    /* Call 1, then calls with the same input and output pointers and new
     * contents: first a small change that a memo keyed on a sample of the
     * contents misses, then every element redrawn (a memo keyed on the
     * pointers alone). */
    fill_inputs(w, in, SUITE_D1, 0);
    alloc_outputs(w, out);
    make_call(w, &c, in, out);
    sync_check(w, "caching probe");
    cand_call(w, &c, "caching probe, first call");
    device_sync_check(w, "caching probe, first call");
    uint64_t fp1 = fingerprint(w, out, w->out_bytes, p->n_outputs);

    char where[512], det[1200];
    cmp_all a, b;
    int pass_a = 1, pass_b;
    int changed = change_a_little(w, in, where, sizeof where);
    if (changed) pass_a = caching_call(w, in, out, "caching probe, second call", &a);
    fill_inputs(w, in, SUITE_D1, 1);
    pass_b = caching_call(w, in, out, "caching probe, third call", &b);
    uint64_t fp3 = fingerprint(w, out, w->out_bytes, p->n_outputs);
    free_bufs(out, p->n_outputs);
    if (pass_a && pass_b) {
        snprintf(det, sizeof det,
                 "calls with the same pointers and new input contents gave the right output%s%s%s",
                 changed ? ", after 256 elements changed (" : "", changed ? where : "",
                 changed ? ") and after every element was redrawn" : " after every element was redrawn");
    } else if (!pass_a) {
        snprintf(det, sizeof det,
                 "after 256 input elements changed (%s) with the same pointers, the output had %lld "
                 "mismatching elements (%lld unwritten): a result kept from the previous call",
                 where, (long long)a.st.mismatches, (long long)a.st.unwritten);
    } else {
        snprintf(det, sizeof det,
                 "a call with the same pointers and every input element redrawn (D1 trial 1 after trial 0) "
                 "gave %lld mismatching elements (%lld unwritten)%s",
                 (long long)b.st.mismatches, (long long)b.st.unwritten,
                 fp1 == fp3 ? "; the output is bitwise the first call's" : "");
    }
    emit_probe(w, "caching", pass_a && pass_b, det);
}

/* Fills most of the free device memory with a pattern and gives it back,
 * so that a candidate reading memory it never wrote sees something else. */
static void scrub_free_memory(worker *w, unsigned char pattern)
{
    size_t free_b = 0, total = 0;
    if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) return;
    size_t margin = (size_t)512 << 20;
    if (free_b <= margin) return;
    size_t n = free_b - margin;
    void *p = NULL;
    for (int k = 0; k < 8 && n > ((size_t)64 << 20); k++) {
        if (mt_real_malloc(&p, n) == cudaSuccess) break;
        cudaGetLastError();
        p = NULL;
        n = n / 8 * 7;
    }
    if (!p) return;
    kbv_err e = {0};
    if (gen_fill_bytes(p, n, pattern, w->s, &e)) die_harness(w, "scrub", &e);
    sync_check(w, "scrub");
    mt_real_free(p);
}

static void probe_determinism(worker *w, void **in)
{
    const suite_problem *p = w->p;
    void *o1[64] = {0}, *o2[64] = {0};
    kbv_call c;
    fill_inputs(w, in, SUITE_D1, 0);
    alloc_outputs(w, o1);
    make_call(w, &c, in, o1);
    sync_check(w, "determinism probe");
    cand_call(w, &c, "determinism probe, first call");
    device_sync_check(w, "determinism probe, first call");
    scrub_free_memory(w, 0x5a);
    fill_inputs(w, in, SUITE_D1, 0);
    alloc_outputs(w, o2);
    make_call(w, &c, in, o2);
    sync_check(w, "determinism probe");
    cand_call(w, &c, "determinism probe, second call");
    device_sync_check(w, "determinism probe, second call");
    int all_eq = 1;
    kbv_err e = {0};
    for (int i = 0; i < p->n_outputs; i++) {
        int eq = 0;
        if (cmp_equal(o1[i], o2[i], w->out_bytes[i], w->s, &eq, &e)) die_harness(w, "determinism", &e);
        all_eq &= eq;
    }
    char det[512];
    if (all_eq) {
        snprintf(det, sizeof det, "two calls on the same input, with free memory scrubbed in between, gave bitwise equal outputs");
    } else {
        cmp_all ca;
        compare_outputs(w, o2, o1, &ca);
        snprintf(det, sizeof det,
                 "two calls on the same input (D1 trial 0), with free memory scrubbed in between, differ: "
                 "max abs difference %.3g, %lld elements beyond the tolerance",
                 ca.st.max_abs_err, (long long)ca.st.mismatches);
    }
    free_bufs(o1, p->n_outputs);
    free_bufs(o2, p->n_outputs);
    emit_probe(w, "determinism", all_eq, det);
}

/* --- timing (step 7) ---------------------------------------------------------- */

typedef struct {
    double *gpu, *wall;
    int *round;
    unsigned *mhz;            /* 0: no clock reading */
    int n;
    double gpu_s, wall_s;
    int done;
    int why;
} tvar;

static void run_variant(worker *w, int v, const kbv_call *c)
{
    if (v == V_CAND) cand_call(w, c, "timing");
    else base_call(w, v, c);
}

static void timing(worker *w, void **in)
{
    const suite_problem *p = w->p;
    cstat_rule rule;
    cstat_rule_default(&rule);
    rule.max_s = w->max_s;
    void *out[64] = {0};
    kbv_call c;
    fill_inputs(w, in, SUITE_D1, 0);
    alloc_outputs(w, out);
    make_call(w, &c, in, out);
    size_t flush_bytes = 2 * w->l2_bytes;
    if (flush_bytes < ((size_t)32 << 20)) flush_bytes = (size_t)32 << 20;
    void *flush = dalloc(w, flush_bytes, "L2 flush buffer");
    cudaEvent_t ev0, ev1;
    if (cudaEventCreate(&ev0) != cudaSuccess || cudaEventCreate(&ev1) != cudaSuccess)
        die_cuda(w, "events", cudaGetLastError());
    int last_writer = V_CAND; /* the outputs hold poison now */
    sync_check(w, "timing setup");
    /* Without a matrix product the tf32 baseline is the fp32 one (DESIGN.md
     * 5): it is timed once, and its samples are recorded for both. */
    int tf32_is_fp32 = !p->uses_tf32;

    /* Warm-up: >= 3 calls and >= 25 ms of each variant. */
    for (int v = 0; v < N_VARIANTS; v++) {
        if (v == V_TF32 && tf32_is_fp32) continue;
        double t0 = log_now();
        for (int k = 0; k < 3 || log_now() - t0 < 0.025; k++) {
            if (v == V_CAND && last_writer != V_CAND)
                for (int i = 0; i < p->n_outputs; i++) poison(w, out[i], w->out_bytes[i]);
            run_variant(w, v, &c);
            device_sync_check(w, "warm-up");
            last_writer = v;
            if (k > 100000) break;
        }
    }

    tvar tv[N_VARIANTS];
    memset(tv, 0, sizeof tv);
    int cap = rule.max_samples + 1;
    double *scratch = malloc((size_t)cap * sizeof *scratch);
    for (int v = 0; v < N_VARIANTS; v++) {
        tv[v].gpu = malloc((size_t)cap * sizeof(double));
        tv[v].wall = malloc((size_t)cap * sizeof(double));
        tv[v].round = malloc((size_t)cap * sizeof(int));
        tv[v].mhz = malloc((size_t)cap * sizeof(unsigned));
        if (!tv[v].gpu || !tv[v].wall || !tv[v].round || !tv[v].mhz || !scratch)
            die_launch(w, "harness: out of host memory");
    }
    if (tf32_is_fp32) tv[V_TF32].done = 1;
    prng rng;
    prng_seed(&rng, prng_hash_str(w->seed ^ 0x74696d696e67ull, p->id));
    for (int round = 0;; round++) {
        int order[N_VARIANTS], n_active = 0;
        for (int v = 0; v < N_VARIANTS; v++)
            if (!tv[v].done) order[n_active++] = v;
        if (n_active == 0) break;
        prng_shuffle(&rng, order, n_active);
        double g[N_VARIANTS], wl[N_VARIANTS];
        for (int k = 0; k < n_active; k++) {
            int v = order[k];
            if (v == V_CAND && last_writer != V_CAND)
                for (int i = 0; i < p->n_outputs; i++) poison(w, out[i], w->out_bytes[i]);
            /* The flush runs on the stream before the start event, so it is
             * outside both windows. */
            if (cudaMemsetAsync(flush, round & 0xff, flush_bytes, w->s) != cudaSuccess)
                die_cuda(w, "L2 flush", cudaGetLastError());
            sync_check(w, "L2 flush");
            double t0 = log_now();
            cudaEventRecord(ev0, w->s);
            run_variant(w, v, &c);
            cudaEventRecord(ev1, w->s);
            cudaError_t ce = cudaDeviceSynchronize();
            double t1 = log_now();
            if (ce == cudaSuccess) ce = cudaGetLastError();
            if (ce != cudaSuccess) die_cuda(w, "timing", ce);
            float ms = 0;
            ce = cudaEventElapsedTime(&ms, ev0, ev1);
            if (ce != cudaSuccess) die_cuda(w, "event time", ce);
            last_writer = v;
            g[v] = ms;
            wl[v] = (t1 - t0) * 1e3;
        }
        unsigned mhz = 0;
        int have_mhz = nvmlx_sm_mhz(w->nv, &mhz) == 0;
        for (int k = 0; k < n_active; k++) {
            int v = order[k];
            tvar *t = &tv[v];
            t->gpu[t->n] = g[v];
            t->wall[t->n] = wl[v];
            t->round[t->n] = round;
            t->mhz[t->n] = have_mhz ? mhz : 0;
            t->n++;
            t->gpu_s += g[v] * 1e-3;
            t->wall_s += wl[v] * 1e-3;
            cJSON *r = rec("time");
            cJSON_AddStringToObject(r, "variant", variant_names[v]);
            cJSON_AddNumberToObject(r, "round", round);
            jio_add_num(r, "gpu_ms", g[v]);
            jio_add_num(r, "wall_ms", wl[v]);
            if (have_mhz) cJSON_AddNumberToObject(r, "sm_mhz", mhz);
            emit(w, r);
            int why = cstat_should_stop(&rule, t->gpu, t->n, t->gpu_s, t->wall_s, scratch);
            if (why != CSTAT_GO_ON) {
                t->done = 1;
                t->why = why;
            }
        }
    }
    if (tf32_is_fp32) {
        const tvar *f = &tv[V_FP32];
        for (int k = 0; k < f->n; k++) {
            cJSON *r = rec("time");
            cJSON_AddStringToObject(r, "variant", variant_names[V_TF32]);
            cJSON_AddNumberToObject(r, "round", f->round[k]);
            jio_add_num(r, "gpu_ms", f->gpu[k]);
            jio_add_num(r, "wall_ms", f->wall[k]);
            if (f->mhz[k]) cJSON_AddNumberToObject(r, "sm_mhz", f->mhz[k]);
            cJSON_AddStringToObject(r, "same_as", "fp32");
            emit(w, r);
        }
    }
    for (int v = 0; v < N_VARIANTS; v++) {
        const tvar *t = v == V_TF32 && tf32_is_fp32 ? &tv[V_FP32] : &tv[v];
        w->med_gpu[v] = cstat_median(t->gpu, t->n, scratch);
        w->med_wall[v] = cstat_median(t->wall, t->n, scratch);
    }
    for (int v = 0; v < N_VARIANTS; v++) {
        free(tv[v].gpu);
        free(tv[v].wall);
        free(tv[v].round);
        free(tv[v].mhz);
    }
    free(scratch);
    cudaEventDestroy(ev0);
    cudaEventDestroy(ev1);
    dfree(flush);
    /* A baseline may have written last: its output is poisoned before the
     * memory is given back, since the candidate runs again. */
    for (int i = 0; i < p->n_outputs; i++) poison(w, out[i], w->out_bytes[i]);
    sync_check(w, "poison");
    free_bufs(out, p->n_outputs);
}

static void probes_after_timing(worker *w)
{
    char det[1200];
    /* Deferred work: fingerprints, wall vs event time, host threads. */
    char why[400];
    int t_pass = verdict_deferred_timing(w->med_gpu[V_CAND], w->med_wall[V_CAND], w->med_gpu[V_FP32],
                                         w->med_wall[V_FP32], why, sizeof why);
    int thr_pass = w->cand_threads == 0;
    char thr[160];
    if (thr_pass)
        snprintf(thr, sizeof thr, "no host thread started by the candidate outlived its call");
    else
        snprintf(thr, sizeof thr, "the candidate started %d host thread(s) that outlived its call (first in %s)",
                 w->cand_threads, w->cand_threads_where);
    int pass = t_pass && !w->ev.deferred_fp_hit && thr_pass;
    snprintf(det, sizeof det, "%s%s%s; %s", w->ev.deferred_fp_hit ? w->ev.deferred_detail : "",
             w->ev.deferred_fp_hit ? "; " : "", why, thr);
    emit_probe(w, "deferred-work", pass, det);

    /* Physical floor. */
    double floor_ms = verdict_floor_ms(w->p->min_bytes, w->p->flops, w->copy_gbps, w->tf32_tflops);
    double t = w->med_gpu[V_CAND];
    int fpass = verdict_floor_pass(t, floor_ms);
    snprintf(det, sizeof det,
             "median %.4g ms vs floor %.4g ms = max(%.4g bytes / %.4g GB/s copy bandwidth, %.4g FLOP / (2 x %.4g TFLOP/s tf32))%s",
             t, floor_ms, w->p->min_bytes, w->copy_gbps, w->p->flops, w->tf32_tflops,
             fpass ? "" : ": faster than the hardware can move or compute it");
    cJSON *r = rec("probe");
    cJSON_AddStringToObject(r, "probe", "physical-floor");
    cJSON_AddBoolToObject(r, "pass", fpass);
    cJSON_AddStringToObject(r, "detail", det);
    jio_add_num(r, "floor_ms", floor_ms);
    jio_add_num(r, "time_ms", t);
    emit(w, r);
}

/* --- memory (step 8) ---------------------------------------------------------- */

typedef struct {
    long long peak_bytes;
    long long driver_delta;
    long long untracked;
} memres;

/* Below this, a difference of free-memory figures is noise: the driver's
 * 2 MiB pages, kernel modules loaded lazily, the runtime's pools. */
#define UNTRACKED_FLOOR (8LL << 20)

static void measure_memory(worker *w, void **in, memres *m)
{
    const suite_problem *p = w->p;
    void *out[64] = {0};
    kbv_call c;
    fill_inputs(w, in, SUITE_D1, 0);
    alloc_outputs(w, out);
    make_call(w, &c, in, out);
    for (int v = 0; v < N_VARIANTS; v++) {
        if (v == V_TF32 && !p->uses_tf32) {
            m[v] = m[V_FP32]; /* the same computation (see timing) */
            continue;
        }
        for (int i = 0; i < p->n_outputs; i++) poison(w, out[i], w->out_bytes[i]);
        device_sync_check(w, "memory");
        mt_owner o = v == V_CAND ? MT_CANDIDATE : MT_BASELINE;
        mt_reset_peak(o);
        size_t f0 = 0, f1 = 0, tot = 0;
        cudaMemGetInfo(&f0, &tot);
        long long untracked = w->base_untracked;
        if (v == V_CAND) {
            /* The harness holds the same buffers now as before kbv_setup
             * (one input set, one output set, the baselines): what else is
             * gone from free memory and was not allocated through the
             * interposed calls is the candidate's (library handles and
             * workspaces). */
            mt_counts cc;
            mt_get(MT_CANDIDATE, &cc);
            untracked = (long long)w->free_before_setup - (long long)f0 - cc.live;
            if (untracked <= UNTRACKED_FLOOR) untracked = 0;
        }
        run_variant(w, v, &c);
        device_sync_check(w, "memory");
        cudaMemGetInfo(&f1, &tot);
        mt_counts mc;
        mt_get(o, &mc);
        long long extra = mc.peak;
        /* Baselines: every buffer they hold was allocated through the
         * interposed cudaMalloc; the workspace figure is a floor in case a
         * library allocated it some other way. */
        if (v != V_CAND && (long long)base_workspace_bytes(w->base) > extra)
            extra = (long long)base_workspace_bytes(w->base);
        m[v].peak_bytes = (long long)w->io_bytes + extra + untracked;
        m[v].driver_delta = (long long)f0 - (long long)f1;
        m[v].untracked = untracked;
    }
    for (int i = 0; i < p->n_outputs; i++) poison(w, out[i], w->out_bytes[i]);
    sync_check(w, "poison");
    free_bufs(out, p->n_outputs);
}

/* One "baseline" record per variant whose kernel the baseline chose by
 * timing, so that a reader can tell a change of kernel between the sets
 * of a run (each worker chooses anew) from a change of clock. */
static void emit_choices(worker *w)
{
    for (int v = 0; v < 2; v++) {
        if (v == 1 && !w->p->uses_tf32) continue;
        const char *c = base_choice(w->base, v ? BASE_TF32 : BASE_FP32);
        if (!c || !*c) continue;
        cJSON *r = rec("baseline");
        cJSON_AddStringToObject(r, "variant", v ? "tf32" : "fp32");
        cJSON_AddStringToObject(r, "choice", c);
        emit(w, r);
    }
}

static void emit_memory(worker *w, const memres *m, long long cand_leak, long long base_leak)
{
    for (int v = 0; v < N_VARIANTS; v++) {
        cJSON *r = rec("memory");
        cJSON_AddStringToObject(r, "variant", variant_names[v]);
        cJSON_AddNumberToObject(r, "peak_bytes", (double)m[v].peak_bytes);
        cJSON_AddNumberToObject(r, "io_bytes", (double)w->io_bytes);
        cJSON_AddNumberToObject(r, "leaked_bytes", (double)(v == V_CAND ? cand_leak : base_leak));
        cJSON_AddNumberToObject(r, "driver_delta_bytes", (double)m[v].driver_delta);
        cJSON_AddNumberToObject(r, "untracked_bytes", (double)m[v].untracked);
        emit(w, r);
    }
}

/* --- modes -------------------------------------------------------------------- */

static int run_pair(worker *w)
{
    kbv_err e = {0};
    w->p = suite_find(w->problem_id);
    if (!w->p) {
        emit_status(w, "launch-error", "harness: unknown problem %s", w->problem_id);
        return 3;
    }
    const char *why = NULL;
    if (!base_available(w->p, &why)) die_launch(w, "harness: no baseline here: %s", why ? why : "?");
    cudaError_t ce = cudaSetDevice(0);
    if (ce == cudaSuccess) ce = cudaFree(0);
    if (ce != cudaSuccess) die_cuda(w, "harness: CUDA initialisation", ce);
    struct cudaDeviceProp prop;
    ce = cudaGetDeviceProperties(&prop, 0);
    if (ce != cudaSuccess) die_cuda(w, "harness: device properties", ce);
    w->l2_bytes = (size_t)prop.l2CacheSize;
    char pci[64] = "";
    cudaDeviceGetPCIBusId(pci, sizeof pci, 0);
    w->nv = nvmlx_open(pci);
    /* A non-blocking stream: work a candidate puts on the legacy default
     * stream is not ordered with it, so that the deferred-work probe sees it. */
    ce = cudaStreamCreateWithFlags(&w->s, cudaStreamNonBlocking);
    if (ce != cudaSuccess) die_cuda(w, "harness: stream", ce);

    limit_host_data();
    describe_tensors(w);
    load_candidate(w);

    void *in[64] = {0}, *out[64] = {0};
    if (w->p->n_inputs > 64 || w->p->n_outputs > 64) die_launch(w, "harness: too many tensors");
    alloc_inputs(w, in);
    fill_inputs(w, in, SUITE_D1, 0);
    alloc_outputs(w, out);
    kbv_call example;
    make_call(w, &example, in, out);
    device_sync_check(w, "inputs");
    size_t total_mem = 0;
    cudaMemGetInfo(&w->free_before_base, &total_mem);
    mt_set_owner(MT_BASELINE);
    int rc = base_create(w->p, &example, &w->base, &e);
    mt_set_owner(MT_HARNESS);
    if (rc) die_harness(w, "baseline setup", &e);
    /* One run of each baseline first, so that lazily created library state
     * (and its threads) exists before the candidate's threads are counted. */
    base_call(w, V_FP32, &example);
    base_call(w, V_TF32, &example);
    for (int i = 0; i < w->p->n_outputs; i++) poison(w, out[i], w->out_bytes[i]);
    device_sync_check(w, "baseline warm-up");
    emit_choices(w);
    {
        size_t f = 0;
        mt_counts bc;
        cudaMemGetInfo(&f, &total_mem);
        mt_get(MT_BASELINE, &bc);
        long long u = (long long)w->free_before_base - (long long)f - bc.live;
        w->base_untracked = u > UNTRACKED_FLOOR ? u : 0;
        w->free_before_setup = f;
    }
    if (w->setup) {
        int before = count_threads();
        mt_set_owner(MT_CANDIDATE);
        int src = w->setup(&example);
        mt_set_owner(MT_HARNESS);
        note_threads(w, before, "kbv_setup");
        if (src != 0) die_launch(w, "kbv_setup returned %d", src);
        device_sync_check(w, "kbv_setup");
    }
    free_bufs(out, w->p->n_outputs);

    /* Where the time goes, for the status detail (collect's speed). */
    double t_checks = log_now();
    checks(w, in);
    probes_from_checks(w);
    double t_probes = log_now();
    probe_caching(w, in);
    probe_determinism(w, in);
    double t_timing = log_now();
    timing(w, in);
    probes_after_timing(w);
    double t_memory = log_now();
    memres m[N_VARIANTS];
    measure_memory(w, in, m);

    if (w->teardown) {
        mt_set_owner(MT_CANDIDATE);
        w->teardown();
        mt_set_owner(MT_HARNESS);
        device_sync_check(w, "kbv_teardown");
    }
    mt_counts cc, bc;
    mt_get(MT_CANDIDATE, &cc);
    mt_set_owner(MT_BASELINE);
    base_destroy(w->base);
    mt_set_owner(MT_HARNESS);
    w->base = NULL;
    mt_get(MT_BASELINE, &bc);
    emit_memory(w, m, cc.live, bc.live);
    free_bufs(in, w->p->n_inputs);
    double t_end = log_now();
    emit_status(w, "ok", "seconds: setup %.2f, checks %.2f, probes %.2f, timing %.2f, memory %.2f",
                t_checks - w->t_start, t_probes - t_checks, t_timing - t_probes, t_memory - t_timing,
                t_end - t_memory);
    return 0;
}

static int device_info(worker *w)
{
    int n = 0;
    cudaError_t ce = cudaGetDeviceCount(&n);
    cJSON *r = rec("device-info");
    if (ce != cudaSuccess || n < 1) {
        char msg[256];
        snprintf(msg, sizeof msg, "no CUDA device: %s", ce != cudaSuccess ? cudaGetErrorString(ce) : "none found");
        cJSON_AddStringToObject(r, "error", msg);
        emit(w, r);
        return 1;
    }
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    cJSON_AddNumberToObject(r, "cc", major * 10 + minor);
    cJSON_AddNumberToObject(r, "devices", n);
    emit(w, r);
    return 0;
}

static int calibrate(worker *w)
{
    /* The compute capability first: kbv-collect starts the builds on it
     * while the measurements run. */
    if (device_info(w)) return 1;
    cJSON *r = rec("calibration");
    struct cudaDeviceProp prop;
    cudaError_t ce = cudaSetDevice(0);
    if (ce == cudaSuccess) ce = cudaGetDeviceProperties(&prop, 0);
    if (ce != cudaSuccess) {
        cJSON_AddStringToObject(r, "error", cudaGetErrorString(ce));
        emit(w, r);
        return 1;
    }
    char pci[64] = "";
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
    wg_calib cal;
    kbv_err e = {0};
    if (wg_calibrate(&cal, &e)) {
        cJSON_AddStringToObject(r, "error", e.msg);
        emit(w, r);
        nvmlx_close(nv);
        return 1;
    }
    jio_add_num(r, "copy_bandwidth_gbps", cal.copy_bandwidth_gbps);
    jio_add_num(r, "fp32_tflops", cal.fp32_tflops);
    jio_add_num(r, "tf32_tflops", cal.tf32_tflops);
    emit(w, r);
    nvmlx_close(nv);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: kbv-worker --device-info | --calibrate |\n"
               "       kbv-worker --run --so SO --problem ID [--seed N] [--trials T] [--atol X] [--rtol X]\n"
               "                  [--copy-gbps X] [--fp32-tflops X] [--tf32-tflops X] [--max-time S]\n"
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
    w.fd = fcntl(3, F_GETFD) >= 0 ? 3 : 1;
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
        else rc = err_set(&e, KBV_EUSAGE, "unknown option %s", a);
    }
    if (!rc && !mode) rc = err_set(&e, KBV_EUSAGE, "no mode given (see --help)");
    if (!rc && !strcmp(mode, "--run") && (!w.so || !w.problem_id))
        rc = err_set(&e, KBV_EUSAGE, "--run needs --so and --problem");
    if (rc) {
        err_report("worker", &e);
        return err_exit_status(rc);
    }
    if (!strcmp(mode, "--device-info")) return device_info(&w);
    if (!strcmp(mode, "--calibrate")) return calibrate(&w);
    return run_pair(&w);
}
