#include "memtrack.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* --- the table of live allocations ------------------------------------------ */

typedef struct {
    uintptr_t ptr;     /* 0: empty; 1: deleted */
    size_t bytes;
    int owner;
} slot;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static slot *table;
static size_t cap, used;
static mt_counts counts[MT_N_OWNERS];
static mt_owner cur_owner = MT_HARNESS;
/* A poisoning kernel launch must not count itself if it allocates. */
static __thread int in_hook;

static size_t hash_ptr(uintptr_t p) { return (size_t)((p >> 8) * 0x9e3779b97f4a7c15ull); }

static void table_put(uintptr_t p, size_t bytes, int owner);

static int table_grow(void)
{
    size_t ncap = cap ? cap * 2 : 1024;
    slot *old = table;
    size_t ocap = cap;
    table = calloc(ncap, sizeof *table);
    if (!table) {
        table = old;
        return -1;
    }
    cap = ncap;
    used = 0;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].ptr > 1) table_put(old[i].ptr, old[i].bytes, old[i].owner);
    free(old);
    return 0;
}

static void table_put(uintptr_t p, size_t bytes, int owner)
{
    if ((used + 1) * 2 > cap && table_grow()) return;
    size_t i = hash_ptr(p) & (cap - 1);
    while (table[i].ptr > 1) i = (i + 1) & (cap - 1);
    table[i].ptr = p;
    table[i].bytes = bytes;
    table[i].owner = owner;
    used++;
}

/* Removes p; returns 1 with its size and owner when it was tracked. */
static int table_take(uintptr_t p, size_t *bytes, int *owner)
{
    if (!cap) return 0;
    size_t i = hash_ptr(p) & (cap - 1);
    for (size_t n = 0; n < cap && table[i].ptr != 0; n++, i = (i + 1) & (cap - 1)) {
        if (table[i].ptr == p) {
            *bytes = table[i].bytes;
            *owner = table[i].owner;
            table[i].ptr = 1;
            return 1;
        }
    }
    return 0;
}

static void note_alloc(void *p, size_t bytes, int owner)
{
    pthread_mutex_lock(&mu);
    table_put((uintptr_t)p, bytes, owner);
    mt_counts *c = &counts[owner];
    c->live += (long long)bytes;
    c->n_allocs++;
    if (c->live > c->peak) c->peak = c->live;
    pthread_mutex_unlock(&mu);
}

static void note_fail(size_t bytes, int owner, cudaError_t err)
{
    pthread_mutex_lock(&mu);
    counts[owner].failed++;
    counts[owner].failed_bytes = (long long)bytes;
    counts[owner].last_error = (int)err;
    pthread_mutex_unlock(&mu);
}

static void note_free(void *p)
{
    size_t bytes;
    int owner;
    pthread_mutex_lock(&mu);
    if (table_take((uintptr_t)p, &bytes, &owner)) {
        counts[owner].live -= (long long)bytes;
        counts[owner].n_frees++;
    }
    pthread_mutex_unlock(&mu);
}

mt_owner mt_set_owner(mt_owner o)
{
    pthread_mutex_lock(&mu);
    mt_owner old = cur_owner;
    cur_owner = o;
    pthread_mutex_unlock(&mu);
    return old;
}

static mt_owner owner_now(void)
{
    pthread_mutex_lock(&mu);
    mt_owner o = cur_owner;
    pthread_mutex_unlock(&mu);
    return o;
}

void mt_get(mt_owner o, mt_counts *c)
{
    pthread_mutex_lock(&mu);
    *c = counts[o];
    pthread_mutex_unlock(&mu);
}

void mt_reset_peak(mt_owner o)
{
    pthread_mutex_lock(&mu);
    counts[o].peak = counts[o].live;
    pthread_mutex_unlock(&mu);
}

/* --- the runtime's functions ------------------------------------------------- */

typedef cudaError_t (*malloc_fn)(void **, size_t);
typedef cudaError_t (*free_fn)(void *);
typedef cudaError_t (*malloc_async_fn)(void **, size_t, cudaStream_t);
typedef cudaError_t (*free_async_fn)(void *, cudaStream_t);
typedef cudaError_t (*malloc_managed_fn)(void **, size_t, unsigned int);
typedef cudaError_t (*malloc_pitch_fn)(void **, size_t *, size_t, size_t);
typedef cudaError_t (*malloc_pool_fn)(void **, size_t, cudaMemPool_t, cudaStream_t);
/* The driver API's types, declared here so that cuda.h is not needed. */
typedef unsigned long long mt_cudeviceptr;
typedef int (*cu_alloc_fn)(mt_cudeviceptr *, size_t);
typedef int (*cu_free_fn)(mt_cudeviceptr);
typedef int (*cu_alloc_async_fn)(mt_cudeviceptr *, size_t, cudaStream_t);
typedef int (*cu_free_async_fn)(mt_cudeviceptr, cudaStream_t);

static struct {
    malloc_fn malloc_;
    free_fn free_;
    malloc_async_fn malloc_async;
    free_async_fn free_async;
    malloc_managed_fn malloc_managed;
    malloc_pitch_fn malloc_pitch;
    malloc_pool_fn malloc_pool;
    cu_alloc_fn cu_alloc;
    cu_free_fn cu_free;
    cu_alloc_async_fn cu_alloc_async;
    cu_free_async_fn cu_free_async;
} real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

static void *next_sym(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        /* The driver library is loaded by the runtime with RTLD_LOCAL;
         * find it by name when it is there. */
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (h) f = dlsym(h, name);
    }
    return f;
}

static void resolve(void)
{
    /* Casting void* to a function pointer through memcpy keeps ISO C quiet. */
#define RESOLVE(field, name)                                  \
    do {                                                      \
        void *f_ = next_sym(name);                            \
        memcpy(&real.field, &f_, sizeof f_);                  \
    } while (0)
    RESOLVE(malloc_, "cudaMalloc");
    RESOLVE(free_, "cudaFree");
    RESOLVE(malloc_async, "cudaMallocAsync");
    RESOLVE(free_async, "cudaFreeAsync");
    RESOLVE(malloc_managed, "cudaMallocManaged");
    RESOLVE(malloc_pitch, "cudaMallocPitch");
    RESOLVE(malloc_pool, "cudaMallocFromPoolAsync");
#undef RESOLVE
}

static void resolve_driver(void)
{
    void *f;
    if (!real.cu_alloc && (f = next_sym("cuMemAlloc_v2"))) memcpy(&real.cu_alloc, &f, sizeof f);
    if (!real.cu_free && (f = next_sym("cuMemFree_v2"))) memcpy(&real.cu_free, &f, sizeof f);
    if (!real.cu_alloc_async && (f = next_sym("cuMemAllocAsync"))) memcpy(&real.cu_alloc_async, &f, sizeof f);
    if (!real.cu_free_async && (f = next_sym("cuMemFreeAsync"))) memcpy(&real.cu_free_async, &f, sizeof f);
}

static void need_real(void) { pthread_once(&real_once, resolve); }

cudaError_t mt_real_malloc(void **p, size_t n)
{
    need_real();
    return real.malloc_ ? real.malloc_(p, n) : cudaErrorInitializationError;
}

cudaError_t mt_real_free(void *p)
{
    need_real();
    return real.free_ ? real.free_(p) : cudaErrorInitializationError;
}

/* Every allocation a candidate makes hands it poisoned memory, so that a
 * candidate cannot find a result left behind in recycled memory (the stale
 * output hack).  The poison is the "never written" NaN of gen.cu. */
static void poison(void *p, size_t bytes, cudaStream_t s, int sync)
{
    kbv_err e;
    size_t words = bytes / 4;
    if (words) gen_poison_f32(p, words, s, &e);
    if (bytes % 4) gen_fill_bytes((char *)p + words * 4, bytes % 4, 0xff, s, &e);
    /* On the legacy stream the poison is not ordered before work on the
     * candidate's non-blocking streams: wait for it. */
    if (sync) cudaStreamSynchronize(s);
}

static void after_alloc(cudaError_t rc, void *p, size_t bytes, mt_owner o, cudaStream_t s, int sync)
{
    if (o == MT_HARNESS) return;
    if (rc != cudaSuccess || !p) {
        note_fail(bytes, o, rc);
        return;
    }
    note_alloc(p, bytes, o);
    if (o == MT_CANDIDATE && bytes) poison(p, bytes, s, sync);
}

cudaError_t cudaMalloc(void **p, size_t n)
{
    need_real();
    if (!real.malloc_) return cudaErrorInitializationError;
    if (in_hook) return real.malloc_(p, n);
    /* A driver-level hook reached from inside the runtime must not count
     * the same memory twice. */
    in_hook = 1;
    cudaError_t rc = real.malloc_(p, n);
    after_alloc(rc, rc == cudaSuccess ? *p : NULL, n, owner_now(), 0, 1);
    in_hook = 0;
    return rc;
}

cudaError_t cudaFree(void *p)
{
    need_real();
    if (!real.free_) return cudaErrorInitializationError;
    cudaError_t rc = real.free_(p);
    if (p && rc == cudaSuccess) note_free(p);
    return rc;
}

cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
    need_real();
    if (!real.malloc_async) return cudaErrorInitializationError;
    if (in_hook) return real.malloc_async(p, n, s);
    /* A driver-level hook reached from inside the runtime must not count
     * the same memory twice. */
    in_hook = 1;
    cudaError_t rc = real.malloc_async(p, n, s);
    after_alloc(rc, rc == cudaSuccess ? *p : NULL, n, owner_now(), s, 0);
    in_hook = 0;
    return rc;
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    need_real();
    if (!real.free_async) return cudaErrorInitializationError;
    cudaError_t rc = real.free_async(p, s);
    if (p && rc == cudaSuccess) note_free(p);
    return rc;
}

cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)
{
    need_real();
    if (!real.malloc_pool) return cudaErrorInitializationError;
    if (in_hook) return real.malloc_pool(p, n, pool, s);
    /* A driver-level hook reached from inside the runtime must not count
     * the same memory twice. */
    in_hook = 1;
    cudaError_t rc = real.malloc_pool(p, n, pool, s);
    after_alloc(rc, rc == cudaSuccess ? *p : NULL, n, owner_now(), s, 0);
    in_hook = 0;
    return rc;
}

cudaError_t cudaMallocManaged(void **p, size_t n, unsigned int flags)
{
    need_real();
    if (!real.malloc_managed) return cudaErrorInitializationError;
    if (in_hook) return real.malloc_managed(p, n, flags);
    /* A driver-level hook reached from inside the runtime must not count
     * the same memory twice. */
    in_hook = 1;
    cudaError_t rc = real.malloc_managed(p, n, flags);
    after_alloc(rc, rc == cudaSuccess ? *p : NULL, n, owner_now(), 0, 1);
    in_hook = 0;
    return rc;
}

cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h)
{
    need_real();
    if (!real.malloc_pitch) return cudaErrorInitializationError;
    if (in_hook) return real.malloc_pitch(p, pitch, w, h);
    /* A driver-level hook reached from inside the runtime must not count
     * the same memory twice. */
    in_hook = 1;
    cudaError_t rc = real.malloc_pitch(p, pitch, w, h);
    after_alloc(rc, rc == cudaSuccess ? *p : NULL, rc == cudaSuccess ? *pitch * h : w * h,
                owner_now(), 0, 1);
    in_hook = 0;
    return rc;
}

/* The driver API's allocator, for candidates that call it directly. */
int cuMemAlloc_v2(mt_cudeviceptr *p, size_t n);
int cuMemFree_v2(mt_cudeviceptr p);
int cuMemAllocAsync(mt_cudeviceptr *p, size_t n, cudaStream_t s);
int cuMemFreeAsync(mt_cudeviceptr p, cudaStream_t s);

int cuMemAlloc_v2(mt_cudeviceptr *p, size_t n)
{
    resolve_driver();
    if (!real.cu_alloc) return 3; /* CUDA_ERROR_NOT_INITIALIZED */
    int rc = real.cu_alloc(p, n);
    if (in_hook) return rc;
    in_hook = 1;
    after_alloc(rc == 0 ? cudaSuccess : cudaErrorMemoryAllocation, rc == 0 ? (void *)(uintptr_t)*p : NULL,
                n, owner_now(), 0, 1);
    in_hook = 0;
    return rc;
}

int cuMemFree_v2(mt_cudeviceptr p)
{
    resolve_driver();
    if (!real.cu_free) return 3;
    int rc = real.cu_free(p);
    if (p && rc == 0) note_free((void *)(uintptr_t)p);
    return rc;
}

int cuMemAllocAsync(mt_cudeviceptr *p, size_t n, cudaStream_t s)
{
    resolve_driver();
    if (!real.cu_alloc_async) return 3;
    int rc = real.cu_alloc_async(p, n, s);
    if (in_hook) return rc;
    in_hook = 1;
    after_alloc(rc == 0 ? cudaSuccess : cudaErrorMemoryAllocation, rc == 0 ? (void *)(uintptr_t)*p : NULL,
                n, owner_now(), s, 0);
    in_hook = 0;
    return rc;
}

int cuMemFreeAsync(mt_cudeviceptr p, cudaStream_t s)
{
    resolve_driver();
    if (!real.cu_free_async) return 3;
    int rc = real.cu_free_async(p, s);
    if (p && rc == 0) note_free((void *)(uintptr_t)p);
    return rc;
}

/* --- the remaining entry points (DESIGN.md 5a step 8) ------------------------
 * Pitched and 3D allocations count their padded size; managed memory counts
 * like device memory; the virtual-memory API counts physical allocations
 * (cuMemCreate) until cuMemRelease, and poisons a range when it becomes
 * accessible (cuMemSetAccess), which is when a candidate could first read
 * what the memory held before. */
typedef unsigned long long mt_cuhandle;

static void *resolve_one(void **where, const char *name)
{
    if (!*where) *where = next_sym(name);
    return *where;
}

/* Physical allocations are keyed apart from device addresses. */
static void *handle_key(mt_cuhandle h) { return (void *)(uintptr_t)(h ^ 0xc0de000000000000ull); }

static struct {
    void *malloc3d, *cu_pitch, *cu_managed, *cu_pool_async, *cu_create, *cu_release, *cu_set_access;
} more;

cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pp, struct cudaExtent ext)
{
    typedef cudaError_t (*fn)(struct cudaPitchedPtr *, struct cudaExtent);
    fn f;
    void *v = resolve_one(&more.malloc3d, "cudaMalloc3D");
    if (!v) return cudaErrorInitializationError;
    memcpy(&f, &v, sizeof v);
    if (in_hook) return f(pp, ext);
    in_hook = 1;
    cudaError_t rc = f(pp, ext);
    size_t h = ext.height ? ext.height : 1, d = ext.depth ? ext.depth : 1;
    after_alloc(rc, rc == cudaSuccess ? pp->ptr : NULL, rc == cudaSuccess ? pp->pitch * h * d : ext.width * h * d,
                owner_now(), 0, 1);
    in_hook = 0;
    return rc;
}

int cuMemAllocPitch_v2(mt_cudeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned elem);
int cuMemAllocPitch_v2(mt_cudeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned elem)
{
    typedef int (*fn)(mt_cudeviceptr *, size_t *, size_t, size_t, unsigned);
    fn f;
    void *v = resolve_one(&more.cu_pitch, "cuMemAllocPitch_v2");
    if (!v) return 3;
    memcpy(&f, &v, sizeof v);
    int rc = f(p, pitch, w, h, elem);
    if (in_hook) return rc;
    in_hook = 1;
    after_alloc(rc == 0 ? cudaSuccess : cudaErrorMemoryAllocation, rc == 0 ? (void *)(uintptr_t)*p : NULL,
                rc == 0 ? *pitch * h : w * h, owner_now(), 0, 1);
    in_hook = 0;
    return rc;
}

int cuMemAllocManaged(mt_cudeviceptr *p, size_t n, unsigned flags);
int cuMemAllocManaged(mt_cudeviceptr *p, size_t n, unsigned flags)
{
    typedef int (*fn)(mt_cudeviceptr *, size_t, unsigned);
    fn f;
    void *v = resolve_one(&more.cu_managed, "cuMemAllocManaged");
    if (!v) return 3;
    memcpy(&f, &v, sizeof v);
    int rc = f(p, n, flags);
    if (in_hook) return rc;
    in_hook = 1;
    after_alloc(rc == 0 ? cudaSuccess : cudaErrorMemoryAllocation, rc == 0 ? (void *)(uintptr_t)*p : NULL, n,
                owner_now(), 0, 1);
    in_hook = 0;
    return rc;
}

int cuMemAllocFromPoolAsync(mt_cudeviceptr *p, size_t n, void *pool, cudaStream_t s);
int cuMemAllocFromPoolAsync(mt_cudeviceptr *p, size_t n, void *pool, cudaStream_t s)
{
    typedef int (*fn)(mt_cudeviceptr *, size_t, void *, cudaStream_t);
    fn f;
    void *v = resolve_one(&more.cu_pool_async, "cuMemAllocFromPoolAsync");
    if (!v) return 3;
    memcpy(&f, &v, sizeof v);
    int rc = f(p, n, pool, s);
    if (in_hook) return rc;
    in_hook = 1;
    after_alloc(rc == 0 ? cudaSuccess : cudaErrorMemoryAllocation, rc == 0 ? (void *)(uintptr_t)*p : NULL, n,
                owner_now(), s, 0);
    in_hook = 0;
    return rc;
}

int cuMemCreate(mt_cuhandle *h, size_t n, const void *prop, unsigned long long flags);
int cuMemCreate(mt_cuhandle *h, size_t n, const void *prop, unsigned long long flags)
{
    typedef int (*fn)(mt_cuhandle *, size_t, const void *, unsigned long long);
    fn f;
    void *v = resolve_one(&more.cu_create, "cuMemCreate");
    if (!v) return 3;
    memcpy(&f, &v, sizeof v);
    int rc = f(h, n, prop, flags);
    mt_owner o = owner_now();
    if (o == MT_HARNESS) return rc;
    if (rc != 0) note_fail(n, o, cudaErrorMemoryAllocation);
    else note_alloc(handle_key(*h), n, o);
    return rc;
}

int cuMemRelease(mt_cuhandle h);
int cuMemRelease(mt_cuhandle h)
{
    typedef int (*fn)(mt_cuhandle);
    fn f;
    void *v = resolve_one(&more.cu_release, "cuMemRelease");
    if (!v) return 3;
    memcpy(&f, &v, sizeof v);
    int rc = f(h);
    if (rc == 0) note_free(handle_key(h));
    return rc;
}

int cuMemSetAccess(mt_cudeviceptr ptr, size_t n, const void *desc, size_t count);
int cuMemSetAccess(mt_cudeviceptr ptr, size_t n, const void *desc, size_t count)
{
    typedef int (*fn)(mt_cudeviceptr, size_t, const void *, size_t);
    fn f;
    void *v = resolve_one(&more.cu_set_access, "cuMemSetAccess");
    if (!v) return 3;
    memcpy(&f, &v, sizeof v);
    int rc = f(ptr, n, desc, count);
    if (rc == 0 && owner_now() == MT_CANDIDATE && n) poison((void *)(uintptr_t)ptr, n, 0, 1);
    return rc;
}

/* --- contexts of the candidate's own -----------------------------------------
 * Work in a second context (cuCtxCreate, or a green context on a share of
 * the SMs) is outside everything the harness synchronises on: a kernel left
 * spinning there after a call runs during the baselines' timed calls and
 * slows them, time-sliced with them or beside them, and no device-wide
 * synchronise of the worker's context waits for it.  A kbv candidate is
 * handed a stream of the worker's context and needs no context of its own,
 * so a request made while the candidate's code runs (its constructors,
 * kbv_setup, its calls, kbv_teardown) is refused and kept for the
 * environment probe.  Anyone else's (the runtime, cuBLAS, cuDNN) goes to
 * the driver: a library that made a context would not be a candidate's
 * hack.  A candidate's thread that asks outside its calls is seen as the
 * harness, but such a thread outlives the call and is deferred-work. */
#define CU_ERROR_NOT_PERMITTED 800
#define CU_ERROR_NOT_INITIALIZED 3

static int ctx_refused;
static char ctx_refused_first[40];
static struct {
    void *v1, *v2, *v3, *v4, *green;
} ctx_real;

/* 1 (and the request counted, *made cleared) when the candidate asks. */
static int refuse_context(const char *name, void **made)
{
    if (owner_now() != MT_CANDIDATE) return 0;
    if (made) *made = NULL;
    pthread_mutex_lock(&mu);
    if (ctx_refused++ == 0) snprintf(ctx_refused_first, sizeof ctx_refused_first, "%s", name);
    pthread_mutex_unlock(&mu);
    return 1;
}

int mt_contexts_refused(char *first, size_t n)
{
    pthread_mutex_lock(&mu);
    int k = ctx_refused;
    if (first && n) snprintf(first, n, "%s", ctx_refused_first);
    pthread_mutex_unlock(&mu);
    return k;
}

/* cuCtxCreate and its _v2, which share a signature. */
static int ctx_create_flags(const char *name, void **driver_fn, void **ctx, unsigned flags, int dev)
{
    if (refuse_context(name, ctx)) return CU_ERROR_NOT_PERMITTED;
    int (*f)(void **, unsigned, int);
    void *v = resolve_one(driver_fn, name);
    if (!v) return CU_ERROR_NOT_INITIALIZED;
    memcpy(&f, &v, sizeof v);
    return f(ctx, flags, dev);
}

int cuCtxCreate(void **ctx, unsigned flags, int dev);
int cuCtxCreate(void **ctx, unsigned flags, int dev)
{
    return ctx_create_flags("cuCtxCreate", &ctx_real.v1, ctx, flags, dev);
}

int cuCtxCreate_v2(void **ctx, unsigned flags, int dev);
int cuCtxCreate_v2(void **ctx, unsigned flags, int dev)
{
    return ctx_create_flags("cuCtxCreate_v2", &ctx_real.v2, ctx, flags, dev);
}

int cuCtxCreate_v3(void **ctx, void *affinity, int n_affinity, unsigned flags, int dev);
int cuCtxCreate_v3(void **ctx, void *affinity, int n_affinity, unsigned flags, int dev)
{
    if (refuse_context("cuCtxCreate_v3", ctx)) return CU_ERROR_NOT_PERMITTED;
    int (*f)(void **, void *, int, unsigned, int);
    void *v = resolve_one(&ctx_real.v3, "cuCtxCreate_v3");
    if (!v) return CU_ERROR_NOT_INITIALIZED;
    memcpy(&f, &v, sizeof v);
    return f(ctx, affinity, n_affinity, flags, dev);
}

int cuCtxCreate_v4(void **ctx, void *params, unsigned flags, int dev);
int cuCtxCreate_v4(void **ctx, void *params, unsigned flags, int dev)
{
    if (refuse_context("cuCtxCreate_v4", ctx)) return CU_ERROR_NOT_PERMITTED;
    int (*f)(void **, void *, unsigned, int);
    void *v = resolve_one(&ctx_real.v4, "cuCtxCreate_v4");
    if (!v) return CU_ERROR_NOT_INITIALIZED;
    memcpy(&f, &v, sizeof v);
    return f(ctx, params, flags, dev);
}

int cuGreenCtxCreate(void **green, void *resources, int dev, unsigned flags);
int cuGreenCtxCreate(void **green, void *resources, int dev, unsigned flags)
{
    if (refuse_context("cuGreenCtxCreate", green)) return CU_ERROR_NOT_PERMITTED;
    int (*f)(void **, void *, int, unsigned);
    void *v = resolve_one(&ctx_real.green, "cuGreenCtxCreate");
    if (!v) return CU_ERROR_NOT_INITIALIZED;
    memcpy(&f, &v, sizeof v);
    return f(green, resources, dev, flags);
}

/* The refuser a lookup of cuCtxCreate by name hands out: the version of the
 * signature the caller asked for (cuda.h's cuCtxCreate is _v4 since CUDA
 * 12.5, _v3 since 11.4), the newest when it gave none (version 0). */
static void *context_refuser(int version)
{
    if (version == 0 || version >= 12050) return (void *)cuCtxCreate_v4;
    if (version >= 11040) return (void *)cuCtxCreate_v3;
    return (void *)cuCtxCreate_v2;
}

/* --- driver entry points handed out by name ------------------------------------
 * cudaGetDriverEntryPoint(ByVersion) and cuGetProcAddress give a candidate
 * the driver's own functions, past the interposers above.  For the
 * allocation functions they hand out the interposers instead, so that
 * memory taken that way is counted and poisoned like any other, and, to
 * the candidate, the context constructors' refusers. */
static void *interposed_version(const char *symbol, int version)
{
    /* The refusers only for the candidate (above): a library's lookup
     * keeps the driver's own function. */
    if (symbol && owner_now() == MT_CANDIDATE) {
        if (strcmp(symbol, "cuCtxCreate") == 0) return context_refuser(version);
        if (strcmp(symbol, "cuGreenCtxCreate") == 0) return (void *)cuGreenCtxCreate;
    }
    static const struct {
        const char *name;
        void *fn;
    } ours[] = {
        {"cuMemAlloc", (void *)cuMemAlloc_v2},
        {"cuMemFree", (void *)cuMemFree_v2},
        {"cuMemAllocAsync", (void *)cuMemAllocAsync},
        {"cuMemFreeAsync", (void *)cuMemFreeAsync},
        {"cuMemAllocPitch", (void *)cuMemAllocPitch_v2},
        {"cuMemAllocManaged", (void *)cuMemAllocManaged},
        {"cuMemAllocFromPoolAsync", (void *)cuMemAllocFromPoolAsync},
        {"cuMemCreate", (void *)cuMemCreate},
        {"cuMemRelease", (void *)cuMemRelease},
        {"cuMemSetAccess", (void *)cuMemSetAccess},
    };
    for (size_t i = 0; symbol && i < sizeof ours / sizeof ours[0]; i++)
        if (strcmp(symbol, ours[i].name) == 0) return ours[i].fn;
    return NULL;
}

static struct {
    void *entry, *entry_v, *proc, *proc_v1;
} lookups;

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult *status)
{
    typedef cudaError_t (*f_t)(const char *, void **, unsigned long long, enum cudaDriverEntryPointQueryResult *);
    f_t f;
    void *v = resolve_one(&lookups.entry, "cudaGetDriverEntryPoint");
    if (!v) return cudaErrorInitializationError;
    memcpy(&f, &v, sizeof v);
    cudaError_t rc = f(symbol, fn, flags, status);
    void *ours = interposed_version(symbol, 0);
    if (rc == cudaSuccess && fn && *fn && ours) *fn = ours;
    return rc;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                             unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *status)
{
    typedef cudaError_t (*f_t)(const char *, void **, unsigned int, unsigned long long,
                               enum cudaDriverEntryPointQueryResult *);
    f_t f;
    void *v = resolve_one(&lookups.entry_v, "cudaGetDriverEntryPointByVersion");
    if (!v) return cudaErrorInitializationError;
    memcpy(&f, &v, sizeof v);
    cudaError_t rc = f(symbol, fn, version, flags, status);
    void *ours = interposed_version(symbol, (int)version);
    if (rc == cudaSuccess && fn && *fn && ours) *fn = ours;
    return rc;
}

int cuGetProcAddress_v2(const char *symbol, void **fn, int version, unsigned long long flags, void *status);
int cuGetProcAddress_v2(const char *symbol, void **fn, int version, unsigned long long flags, void *status)
{
    typedef int (*f_t)(const char *, void **, int, unsigned long long, void *);
    f_t f;
    void *v = resolve_one(&lookups.proc, "cuGetProcAddress_v2");
    if (!v) return 3;
    memcpy(&f, &v, sizeof v);
    int rc = f(symbol, fn, version, flags, status);
    void *ours = interposed_version(symbol, version);
    if (rc == 0 && fn && *fn && ours) *fn = ours;
    return rc;
}

/* The first version of the lookup, without the status argument: still a
 * symbol of the driver, and as good a way past the interposers. */
int cuGetProcAddress(const char *symbol, void **fn, int version, unsigned long long flags);
int cuGetProcAddress(const char *symbol, void **fn, int version, unsigned long long flags)
{
    typedef int (*f_t)(const char *, void **, int, unsigned long long);
    f_t f;
    void *v = resolve_one(&lookups.proc_v1, "cuGetProcAddress");
    if (!v) return CU_ERROR_NOT_INITIALIZED;
    memcpy(&f, &v, sizeof v);
    int rc = f(symbol, fn, version, flags);
    void *ours = interposed_version(symbol, version);
    if (rc == 0 && fn && *fn && ours) *fn = ours;
    return rc;
}
