/* wk_core.c - the worker's records, statuses, buffers and calls (wk.h). */
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
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "jio.h"
#include "memtrack.h"
#include "rng.h"
#include "verdict.h"
#include "schema.h"
#include "wk.h"
#include "worker_gpu.h"

const char *const wk_variant_names[N_VARIANTS] = {KBV_VAR_FP32, KBV_VAR_TF32, KBV_VAR_CANDIDATE, KBV_VAR_BF16};

int wk_variant_timed(const worker *w, int v)
{
    if (v == V_CAND) return 1;
    if (w->bf16) return v == V_BF16;
    return v == V_FP32 || (v == V_TF32 && w->p->uses_tf32);
}

int wk_main_baseline(const worker *w)
{
    return w->bf16 ? V_BF16 : V_FP32;
}

void wk_key_init(worker *w)
{
    /* A page of its own, readable only while a line is signed: a candidate
     * that wants the key must change the protection (mprotect, which the
     * static scan flags) or read /proc/self/mem (its path is flagged too). */
    long page = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    madvise(p, (size_t)page, MADV_DONTDUMP);
    w->key = p;
    size_t done = 0;
    while (done < CHAN_KEY_LEN) {
        ssize_t r = read(CHAN_KEY_FD, w->key + done, CHAN_KEY_LEN - done);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        done += (size_t)r;
    }
    if (done != CHAN_KEY_LEN) memset(w->key, 0, CHAN_KEY_LEN);
    close(CHAN_KEY_FD);
    mprotect(w->key, (size_t)page, PROT_NONE);
}

void wk_emit(worker *w, cJSON *rec)
{
    char *s = jio_line(rec);
    cJSON_Delete(rec);
    if (!s) return;
    size_t n = strlen(s);
    char *line = malloc(CHAN_MAC_HEX + n + 2);
    if (!line) {
        free(s);
        return;
    }
    long page = sysconf(_SC_PAGESIZE);
    static const unsigned char zero_key[CHAN_KEY_LEN];
    kbv_err e = {0};
    if (w->key) mprotect(w->key, (size_t)page, PROT_READ);
    int rc = chan_mac(w->key ? w->key : zero_key, w->seq, s, n, line, &e);
    if (w->key) mprotect(w->key, (size_t)page, PROT_NONE);
    w->seq++;
    if (rc) memset(line, '0', CHAN_MAC_HEX);
    line[CHAN_MAC_HEX] = ' ';
    memcpy(line + CHAN_MAC_HEX + 1, s, n);
    line[CHAN_MAC_HEX + 1 + n] = '\n';
    size_t total = CHAN_MAC_HEX + n + 2, done = 0;
    while (done < total) {
        ssize_t k = write(w->fd, line + done, total - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        done += (size_t)k;
    }
    free(line);
    free(s);
}

cJSON *wk_rec(const char *type)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, KBV_K_TYPE, type);
    return o;
}

void wk_status(worker *w, const char *status, const char *fmt, ...)
{
    char detail[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    cJSON *o = wk_rec(KBV_REC_STATUS);
    cJSON_AddStringToObject(o, KBV_K_STATUS, status);
    cJSON_AddStringToObject(o, KBV_K_DETAIL, detail);
    wk_emit(w, o);
    /* Nothing follows the status: the descriptor goes, so that the worker's
     * own later code cannot send, and the collecting process treats any line
     * that still arrives (from a copy of the descriptor the candidate made)
     * as tampering. */
    close(w->fd);
    w->fd = -1;
}

/* Ends the worker with a launch-error status.  A failed candidate
 * allocation is named, so that out of memory reads as such. */
void wk_die_launch(worker *w, const char *fmt, ...)
{
    char msg[3000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mt_counts c;
    mt_get(MT_CANDIDATE, &c);
    if (c.failed > 0)
        wk_status(w, "launch-error", "out of memory: a candidate allocation of %lld bytes failed (%s); %s",
                    c.failed_bytes, cudaGetErrorString((cudaError_t)c.last_error), msg);
    else
        wk_status(w, "launch-error", "%s", msg);
    _exit(3);
}

void wk_die_cuda(worker *w, const char *what, cudaError_t ce)
{
    wk_die_launch(w, "%s%s: %s (%s)", ce == cudaErrorMemoryAllocation ? "out of memory: " : "", what,
               cudaGetErrorString(ce), cudaGetErrorName(ce));
}

/* A harness step failed: when the CUDA context is broken (a sticky error the
 * candidate caused), that is the candidate's launch error; otherwise it is
 * still reported, as a launch-error naming the harness. */
void wk_die_harness(worker *w, const char *what, const kbv_err *e)
{
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce == cudaSuccess) ce = cudaGetLastError();
    if (ce != cudaSuccess) wk_die_cuda(w, what, ce);
    wk_die_launch(w, "harness: %s: %s", what, e && e->msg[0] ? e->msg : "failed");
}

void *wk_dalloc(worker *w, size_t n, const char *what)
{
    void *p = NULL;
    cudaError_t ce = mt_real_malloc(&p, n ? n : 1);
    if (ce != cudaSuccess) wk_die_cuda(w, what, ce);
    return p;
}

void wk_dfree(void *p)
{
    if (p) mt_real_free(p);
}

void wk_poison(worker *w, void *p, size_t bytes)
{
    kbv_err e = {0};
    size_t words = bytes / 4;
    if (words && gen_poison_f32(p, words, w->s, &e)) wk_die_harness(w, "poison", &e);
    if (bytes % 4 && gen_fill_bytes((char *)p + words * 4, bytes % 4, 0xff, w->s, &e))
        wk_die_harness(w, "poison", &e);
}

void wk_poison_output(worker *w, int i, void *p)
{
    kbv_err e = {0};
    if (w->out[i].dtype != KBV_BF16) {
        wk_poison(w, p, w->out_bytes[i]);
        return;
    }
    if (gen_poison_bf16(p, (size_t)suite_numel(&w->p->outputs[i]), w->s, &e)) wk_die_harness(w, "poison", &e);
}

void wk_alloc_inputs(worker *w, void **bufs)
{
    for (int i = 0; i < w->p->n_inputs; i++) bufs[i] = wk_dalloc(w, w->in_bytes[i], "input buffer");
}

void wk_fill_input(worker *w, int i, void *buf, suite_dist d, int trial)
{
    kbv_err e = {0};
    if (w->in[i].dtype != KBV_BF16) {
        if (gen_fill(w->p, i, d, w->seed, trial, buf, w->s, &e)) wk_die_harness(w, "input generation", &e);
        return;
    }
    /* The same floats as the FP32 setting draws, rounded: the reference
     * then sees exactly the candidate's values, widened. */
    if (w->gen_tmp_bytes < w->rin_bytes[i]) {
        wk_sync(w, "input generation");
        wk_dfree(w->gen_tmp);
        w->gen_tmp = wk_dalloc(w, w->rin_bytes[i], "input generation buffer");
        w->gen_tmp_bytes = w->rin_bytes[i];
    }
    if (gen_fill(w->p, i, d, w->seed, trial, w->gen_tmp, w->s, &e) ||
        gen_narrow_bf16(w->gen_tmp, buf, suite_numel(&w->p->inputs[i]), w->s, &e))
        wk_die_harness(w, "input generation", &e);
}

void wk_fill_inputs(worker *w, void **bufs, suite_dist d, int trial)
{
    for (int i = 0; i < w->p->n_inputs; i++) wk_fill_input(w, i, bufs[i], d, trial);
}

void wk_alloc_outputs(worker *w, void **bufs)
{
    for (int i = 0; i < w->p->n_outputs; i++) {
        bufs[i] = wk_dalloc(w, w->out_bytes[i], "output buffer");
        wk_poison_output(w, i, bufs[i]);
    }
}

void wk_free_bufs(void **bufs, int n)
{
    for (int i = 0; i < n; i++) {
        wk_dfree(bufs[i]);
        bufs[i] = NULL;
    }
}

void wk_make_call(worker *w, kbv_call *c, void **in, void **out)
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
void wk_make_ref_call(worker *w, kbv_call *c, kbv_tensor *outs, void **in, void **ref)
{
    for (int i = 0; i < w->p->n_inputs; i++) w->rin[i].data = in[i];
    for (int i = 0; i < w->p->n_outputs; i++) {
        outs[i] = w->rout[i];
        outs[i].data = ref[i];
    }
    c->inputs = w->rin;
    c->n_inputs = w->p->n_inputs;
    c->outputs = outs;
    c->n_outputs = w->p->n_outputs;
    c->attrs = w->attrs;
    c->n_attrs = w->p->n_attrs;
    c->stream = w->s;
}

uint64_t wk_fingerprint(worker *w, void **bufs, const size_t *bytes, int n)
{
    uint64_t h = 0x84222325cbf29ce4ull;
    kbv_err e = {0};
    for (int i = 0; i < n; i++) {
        uint64_t f = 0;
        if (cmp_fingerprint(bufs[i], bytes[i], w->s, &f, &e)) wk_die_harness(w, "fingerprint", &e);
        h = rng_mix(h ^ f);
    }
    return h;
}

/* The value fingerprint of all outputs, signs of zeros ignored (input
 * independence compares these). */
uint64_t wk_value_fingerprint(worker *w, void **bufs, int is_ref)
{
    uint64_t h = 0x2545f4914f6cdd1dull;
    kbv_err e = {0};
    for (int i = 0; i < w->p->n_outputs; i++) {
        uint64_t f = 0;
        kbv_dtype dt = is_ref ? w->rout[i].dtype : w->out[i].dtype;
        int64_t n = suite_numel(&w->p->outputs[i]);
        /* A float reference of a bf16 output is compared at bf16 precision
         * (wg_fingerprint_as_bf16). */
        int rc = is_ref && dt == KBV_F32 && w->out[i].dtype == KBV_BF16
                     ? wg_fingerprint_as_bf16((const float *)bufs[i], n, w->s, &f, &e)
                     : wg_fingerprint(bufs[i], n, dt, w->s, &f, &e);
        if (rc) wk_die_harness(w, "fingerprint", &e);
        h = rng_mix(h ^ f);
    }
    return h;
}

void wk_sync(worker *w, const char *what)
{
    cudaError_t ce = cudaStreamSynchronize(w->s);
    if (ce == cudaSuccess) ce = cudaGetLastError();
    if (ce != cudaSuccess) wk_die_cuda(w, what, ce);
}

void wk_device_sync(worker *w, const char *what)
{
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce == cudaSuccess) ce = cudaGetLastError();
    if (ce != cudaSuccess) wk_die_cuda(w, what, ce);
}

int wk_count_threads(void)
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
void wk_note_threads(worker *w, int before, const char *what)
{
    int after = wk_count_threads();
    if (before > 0 && after > before) {
        if (!w->cand_threads)
            snprintf(w->cand_threads_where, sizeof w->cand_threads_where, "%s", what);
        w->cand_threads += after - before;
    }
}

static void env_free(char **v)
{
    if (!v) return;
    for (char **p = v; *p; p++) free(*p);
    free(v);
}

void wk_env_save(worker *w)
{
    size_t n = 0;
    while (environ && environ[n]) n++;
    char **copy = calloc(n + 1, sizeof *copy);
    if (!copy) wk_die_launch(w, "harness: out of host memory");
    for (size_t i = 0; i < n; i++)
        if (!(copy[i] = strdup(environ[i]))) wk_die_launch(w, "harness: out of host memory");
    env_free(w->env_saved);
    w->env_saved = copy;
}

void wk_env_drop(worker *w)
{
    env_free(w->env_saved);
    w->env_saved = NULL;
}

/* The first variable of a that b lacks (name and value alike), or NULL. */
static const char *env_first_missing(char *const *a, char *const *b)
{
    for (; a && *a; a++) {
        int found = 0;
        for (char *const *q = b; q && *q && !found; q++) found = strcmp(*a, *q) == 0;
        if (!found) return *a;
    }
    return NULL;
}

void wk_env_guard(worker *w, const char *what)
{
    if (!w->env_saved) return;
    const char *added = env_first_missing(environ, w->env_saved);
    const char *removed = added ? NULL : env_first_missing(w->env_saved, environ);
    if (!added && !removed) return;
    if (!w->env_changed) {
        /* The name only: a value may be long, and is the candidate's. */
        const char *v = added ? added : removed;
        int len = (int)strcspn(v, "=");
        snprintf(w->env_detail, sizeof w->env_detail, "%s %.*s (in %s)", added ? "set" : "removed",
                 len > 80 ? 80 : len, v, what);
    }
    w->env_changed = 1;
    if (clearenv() != 0) wk_die_launch(w, "harness: clearenv failed");
    for (char **p = w->env_saved; *p; p++) {
        char *copy = strdup(*p);
        /* putenv keeps the string: it becomes part of the environment. */
        if (!copy || putenv(copy) != 0) wk_die_launch(w, "harness: restoring the environment");
    }
}

void wk_l2_save(worker *w)
{
    if (cudaDeviceGetLimit(&w->l2_persist0, cudaLimitPersistingL2CacheSize) != cudaSuccess) {
        cudaGetLastError();
        w->l2_persist0 = 0;
    }
}

void wk_l2_reset(worker *w)
{
    size_t limit = 0;
    cudaStreamAttrValue v, none;
    memset(&v, 0, sizeof v);
    memset(&none, 0, sizeof none);
    if (cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize) == cudaSuccess && limit != w->l2_persist0) {
        if (!w->l2_changed)
            snprintf(w->l2_detail, sizeof w->l2_detail, "the persisting-L2 limit left at %zu bytes", limit);
        w->l2_changed = 1;
        if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, w->l2_persist0) != cudaSuccess)
            wk_die_cuda(w, "restoring the persisting-L2 limit", cudaGetLastError());
    }
    if (cudaStreamGetAttribute(w->s, cudaStreamAttributeAccessPolicyWindow, &v) == cudaSuccess &&
        v.accessPolicyWindow.num_bytes != 0) {
        if (!w->l2_changed)
            snprintf(w->l2_detail, sizeof w->l2_detail, "an access-policy window of %zu bytes left on the timed stream",
                     v.accessPolicyWindow.num_bytes);
        w->l2_changed = 1;
        if (cudaStreamSetAttribute(w->s, cudaStreamAttributeAccessPolicyWindow, &none) != cudaSuccess)
            wk_die_cuda(w, "clearing the stream's access-policy window", cudaGetLastError());
    }
    if (cudaCtxResetPersistingL2Cache() != cudaSuccess) wk_die_cuda(w, "resetting persisting L2 lines", cudaGetLastError());
    cudaGetLastError();
}

void wk_cand_call(worker *w, const kbv_call *c, const char *what, int timed)
{
    int before = timed ? 0 : wk_count_threads();
    mt_set_owner(MT_CANDIDATE);
    int rc = w->fwd(c);
    mt_set_owner(MT_HARNESS);
    if (!timed) {
        wk_note_threads(w, before, what);
        wk_env_guard(w, what);
    }
    if (rc != 0) {
        cudaError_t ce = cudaGetLastError();
        wk_die_launch(w, "kbv_forward returned %d (%s)%s%s", rc, what, ce != cudaSuccess ? "; CUDA: " : "",
                   ce != cudaSuccess ? cudaGetErrorString(ce) : "");
    }
}

void wk_base_call(worker *w, int v, const kbv_call *c)
{
    kbv_err e = {0};
    mt_set_owner(MT_BASELINE);
    int rc = v == V_REF ? base_run_reference(w->base, c, &e)
                        : base_run(w->base, v == V_BF16 ? BASE_BF16 : v == V_TF32 ? BASE_TF32 : BASE_FP32, c, &e);
    mt_set_owner(MT_HARNESS);
    if (rc) wk_die_harness(w, "baseline", &e);
}

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
void wk_limit_host_data(void)
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

void wk_load_candidate(worker *w)
{
    int before = wk_count_threads();
    mt_set_owner(MT_CANDIDATE); /* static constructors may allocate */
    w->lib = dlopen(w->so, RTLD_NOW | RTLD_LOCAL);
    mt_set_owner(MT_HARNESS);
    wk_note_threads(w, before, "loading");
    if (!w->lib) wk_die_launch(w, "cannot load the candidate: %s", dlerror());
    void *f = dlsym(w->lib, "kbv_forward");
    if (!f) wk_die_launch(w, "the candidate does not define kbv_forward (extern \"C\")");
    memcpy(&w->fwd, &f, sizeof f);
    f = dlsym(w->lib, "kbv_setup");
    if (f) memcpy(&w->setup, &f, sizeof f);
    f = dlsym(w->lib, "kbv_teardown");
    if (f) memcpy(&w->teardown, &f, sizeof f);
}

/* One tensor's descriptor; in the BF16 setting a float tensor of the
 * candidate's is bfloat16. */
static size_t describe(kbv_tensor *t, const suite_tensor *st, int bf16)
{
    t->dtype = bf16 && st->dtype == KBV_F32 ? KBV_BF16 : st->dtype;
    t->ndim = st->ndim;
    memcpy(t->shape, st->shape, sizeof st->shape);
    return (size_t)(t->dtype == KBV_BF16 ? suite_numel(st) * 2 : suite_bytes(st));
}

void wk_describe_tensors(worker *w)
{
    const suite_problem *p = w->p;
    size_t ni = (size_t)p->n_inputs + 1, no = (size_t)p->n_outputs + 1;
    w->in = calloc(ni, sizeof *w->in);
    w->out = calloc(no, sizeof *w->out);
    w->rin = calloc(ni, sizeof *w->rin);
    w->rout = calloc(no, sizeof *w->rout);
    w->in_bytes = calloc(ni, sizeof *w->in_bytes);
    w->out_bytes = calloc(no, sizeof *w->out_bytes);
    w->rin_bytes = calloc(ni, sizeof *w->rin_bytes);
    w->rout_bytes = calloc(no, sizeof *w->rout_bytes);
    w->attrs = calloc((size_t)p->n_attrs + 1, sizeof *w->attrs);
    if (!w->in || !w->out || !w->rin || !w->rout || !w->in_bytes || !w->out_bytes || !w->rin_bytes ||
        !w->rout_bytes || !w->attrs)
        wk_die_launch(w, "harness: out of host memory");
    w->io_bytes = 0;
    for (int i = 0; i < p->n_inputs; i++) {
        w->in_bytes[i] = describe(&w->in[i], &p->inputs[i], w->bf16);
        w->rin_bytes[i] = describe(&w->rin[i], &p->inputs[i], 0);
        w->io_bytes += w->in_bytes[i];
    }
    for (int i = 0; i < p->n_outputs; i++) {
        w->out_bytes[i] = describe(&w->out[i], &p->outputs[i], w->bf16);
        w->rout_bytes[i] = describe(&w->rout[i], &p->outputs[i], 0);
        w->io_bytes += w->out_bytes[i];
    }
    for (int i = 0; i < p->n_attrs; i++) w->attrs[i] = p->attrs[i].value;
}

void wk_compare(worker *w, void **out, void **ref, wk_cmp *r)
{
    memset(r, 0, sizeof *r);
    kbv_err e = {0};
    for (int i = 0; i < w->p->n_outputs; i++) {
        cmp_stats st;
        int64_t n = suite_numel(&w->p->outputs[i]);
        /* The BF16 setting's absolute term follows the reference tensor's
         * scale (verdict_bf16_atol); its reference is float. */
        double atol = w->atol;
        if (w->out[i].dtype == KBV_BF16) {
            double m = 0;
            if (cmp_absmax((const float *)ref[i], n, w->s, &m, &e)) wk_die_harness(w, "comparison", &e);
            atol = verdict_bf16_atol(w->atol, m);
        }
        if (cmp_tensors(out[i], ref[i], n, w->out[i].dtype, atol, w->rtol, w->s, &st, &e))
            wk_die_harness(w, "comparison", &e);
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
int64_t wk_ref_nonfinite(worker *w, void **ref)
{
    kbv_err e = {0};
    int64_t total = 0;
    for (int i = 0; i < w->p->n_outputs; i++) {
        int64_t c = 0;
        if (wg_count_nonfinite(ref[i], suite_numel(&w->p->outputs[i]), w->p->outputs[i].dtype, w->s, &c, &e))
            wk_die_harness(w, "reference check", &e);
        total += c;
    }
    return total;
}

void wk_reference(worker *w, void **in, void **ref, void **wide)
{
    const suite_problem *p = w->p;
    void *rin[WK_MAX_TENSORS] = {0};
    kbv_tensor ref_t[WK_MAX_TENSORS];
    kbv_call rc_call;
    kbv_err e = {0};
    for (int i = 0; i < p->n_inputs; i++) {
        rin[i] = in[i];
        if (w->in[i].dtype != KBV_BF16) continue;
        rin[i] = wk_dalloc(w, w->rin_bytes[i], "reference input");
        if (gen_widen_bf16(in[i], rin[i], suite_numel(&p->inputs[i]), w->s, &e))
            wk_die_harness(w, "reference input", &e);
    }
    wk_make_ref_call(w, &rc_call, ref_t, rin, ref);
    wk_base_call(w, V_REF, &rc_call);
    wk_sync(w, "fp32 reference");
    if (wide)
        for (int i = 0; i < p->n_inputs; i++) wide[i] = rin[i];
    else
        wk_free_wide(w, rin);
}

void wk_free_wide(worker *w, void **wide)
{
    for (int i = 0; i < w->p->n_inputs; i++)
        if (w->in[i].dtype == KBV_BF16) {
            wk_dfree(wide[i]);
            wide[i] = NULL;
        }
}

int wk_verify(worker *w, void **in, void **out, wk_cmp *r)
{
    const suite_problem *p = w->p;
    void *ref[WK_MAX_TENSORS] = {0};
    for (int i = 0; i < p->n_outputs; i++) {
        ref[i] = wk_dalloc(w, w->rout_bytes[i], "reference buffer");
        wk_poison(w, ref[i], w->rout_bytes[i]);
    }
    wk_reference(w, in, ref, NULL);
    wk_compare(w, out, ref, r);
    /* The expected output leaves device memory before any further
     * candidate call. */
    for (int i = 0; i < p->n_outputs; i++) wk_poison(w, ref[i], w->rout_bytes[i]);
    wk_sync(w, "poison");
    wk_free_bufs(ref, p->n_outputs);
    return verdict_check_pass(r->st.mismatches, r->st.nonfinite, r->st.unwritten);
}

int wk_checked_call(worker *w, void **in, void **out, void **ref_in, const char *what, wk_cmp *r)
{
    kbv_call c;
    for (int i = 0; i < w->p->n_outputs; i++) wk_poison_output(w, i, out[i]);
    wk_make_call(w, &c, in, out);
    wk_sync(w, what);
    wk_cand_call(w, &c, what, 0);
    wk_device_sync(w, what);
    return wk_verify(w, ref_in, out, r);
}

uint64_t wk_secret_u64(void)
{
    uint64_t x = 0;
    if (getrandom(&x, sizeof x, 0) != (ssize_t)sizeof x) {
        /* No entropy source: the clock, mixed, is still unknown in advance
         * to code that cannot read it at the very same moment. */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        x = rng_mix((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)getpid());
    }
    return x;
}

uint64_t wk_secret_below(uint64_t n)
{
    /* Rejection keeps it unbiased: draws at or above the largest multiple
     * of n are drawn again. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;
    do x = wk_secret_u64();
    while (x >= limit);
    return x % n;
}
