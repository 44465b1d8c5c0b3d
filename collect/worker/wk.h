/* wk.h - the modules of kbv-worker, the process that runs one (set,
 * problem) pair of a collect (DESIGN.md 5a steps 3 to 8):
 *
 *   wk_core.c     records on the authenticated channel, statuses, buffers,
 *                 calls into the candidate and the baselines
 *   wk_checks.c   correctness on every distribution (step 5) and the
 *                 probes that need no timing (step 6)
 *   wk_timing.c   the timed rounds, their verification and the two clocks
 *                 (steps 7 and 7a), and the probes that need the times
 *   wk_memory.c   peak device memory (step 8)
 *   wk_main.c     the modes and the order of the steps
 *   memtrack.c    interposed device allocation (counts and poison)
 *
 * The worker owns one `worker` for its life.  After the first error it
 * sends a status and exits (the wk_die_* functions do not return): a
 * sticky CUDA error leaves the context unusable, and the next pair gets a
 * fresh process anyway.  Device pointers in void *[] arrays belong to the
 * worker and are freed with wk_free_bufs. */
#ifndef KBV_WK_H
#define KBV_WK_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>
#include <cjson/cJSON.h>

#include "chan.h"
#include "err.h"
#include "gpu.h"
#include "kbv.h"
#include "nvmlx.h"
#include "suite.h"

typedef int (*wk_forward_fn)(const kbv_call *);
typedef int (*wk_setup_fn)(const kbv_call *);
typedef void (*wk_teardown_fn)(void);

/* V_BF16 is the baseline of the BF16 setting (--precision bf16), timed
 * instead of V_FP32 and V_TF32; the reference is V_FP32's computation in
 * both settings. */
enum { V_FP32 = 0, V_TF32 = 1, V_CAND = 2, V_BF16 = 3, N_VARIANTS = 4 };
/* wk_base_call's pseudo-variant for the correctness reference
 * (base_run_reference); never timed, never an index. */
enum { V_REF = -1 };
extern const char *const wk_variant_names[N_VARIANTS];

/* The most input or output tensors of a problem the worker handles. */
#define WK_MAX_TENSORS 64

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
} wk_evidence;

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
    const char *preroll;      /* --preroll's text (cstat_parse_preroll), or NULL for the rule's default */
    const char *pins;         /* base_pin's text for this problem, or NULL */
    int sandbox;              /* --sandbox: 0 off, 1 what the kernel offers, 2 Landlock and seccomp or fail */
    int bf16;                 /* the BF16 setting: the candidate's float tensors are bfloat16 */
    /* the record channel: fd, sequence number and the key, which lives in
     * a page of its own that is readable only while a line is signed */
    int fd;
    uint64_t seq;
    unsigned char *key;
    /* state */
    const suite_problem *p;
    cudaStream_t s;
    void *lib;
    wk_forward_fn fwd;
    wk_setup_fn setup;
    wk_teardown_fn teardown;
    base_ctx *base;
    nvmlx *nv;
    double *attrs;
    kbv_tensor *in, *out;     /* the candidate's and the timed baselines' tensors */
    kbv_tensor *rin, *rout;   /* the reference's: float where in and out are bfloat16 */
    size_t *in_bytes, *out_bytes;
    size_t *rin_bytes, *rout_bytes;
    void *gen_tmp;            /* BF16: floats drawn here, then rounded into an input */
    size_t gen_tmp_bytes;
    size_t io_bytes;
    size_t l2_bytes;
    int cand_threads;       /* host threads alive after a candidate call that were not before */
    char cand_threads_where[64];
    /* The environment as the harness set it (wk_env_save: owned copies,
     * NULL-terminated), and the first change candidate code made to it. */
    char **env_saved;
    int env_changed;
    char env_detail[200];
    /* The persisting-L2 limit as the harness found it, and the first
     * change candidate code left in the L2 policy (wk_l2_reset). */
    size_t l2_persist0;
    int l2_changed;
    char l2_detail[160];
    wk_evidence ev;
    double med_gpu[N_VARIANTS], med_wall[N_VARIANTS];
    /* Free device memory (cudaMemGetInfo) before the baselines were created
     * and before kbv_setup: memory that libraries allocate outside the
     * interposed calls (cuBLAS and cuDNN link the runtime statically) shows
     * only there. */
    size_t free_before_base, free_before_setup;
    long long base_untracked;
    /* The candidate's highest live bytes over the timed phase (warm-up,
     * pre-rolls and timed calls), or -1 before it: the memory call is one
     * the candidate can tell from a timed call (its stream is idle), so the
     * peak it reports is the larger of the two. */
    long long cand_timed_peak;
} worker;

typedef struct {
    cmp_stats st;
    int tier;
} wk_cmp;

/* --- wk_core.c ------------------------------------------------------------- */

/* Reads the channel key from CHAN_KEY_FD (then closed) into a page of its
 * own; without that descriptor (a worker run by hand) the key is zero. */
void wk_key_init(worker *w);
/* Signs and sends rec as one line, and frees it. */
void wk_emit(worker *w, cJSON *rec);
/* A new record of the type; the caller passes it to wk_emit. */
cJSON *wk_rec(const char *type);
/* Sends the status record; after it the worker sends nothing more. */
void wk_status(worker *w, const char *status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void wk_die_launch(worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
void wk_die_cuda(worker *w, const char *what, cudaError_t ce) __attribute__((noreturn));
void wk_die_harness(worker *w, const char *what, const kbv_err *e) __attribute__((noreturn));

void *wk_dalloc(worker *w, size_t n, const char *what);
void wk_dfree(void *p);
void wk_poison(worker *w, void *p, size_t bytes);
/* Poisons output i's buffer p with its dtype's poison (bfloat16 or float). */
void wk_poison_output(worker *w, int i, void *p);
/* Whether variant v is timed in its own right: candidate; fp32, and tf32
 * where the problem has a product, in the FP32 setting; bf16 in BF16. */
int wk_variant_timed(const worker *w, int v);
/* The baseline the deferred-work probe compares with: V_FP32 or V_BF16. */
int wk_main_baseline(const worker *w);
void wk_alloc_inputs(worker *w, void **bufs);
void wk_fill_inputs(worker *w, void **bufs, suite_dist d, int trial);
/* Input i of (d, trial) into buf, in the candidate's dtype: in the BF16
 * setting drawn as floats and rounded to bfloat16. */
void wk_fill_input(worker *w, int i, void *buf, suite_dist d, int trial);
void wk_alloc_outputs(worker *w, void **bufs);
void wk_free_bufs(void **bufs, int n);
void wk_make_call(worker *w, kbv_call *c, void **in, void **out);
/* A call whose output descriptors are fresh copies pointing at ref, so that
 * descriptors the candidate kept never point at the reference. */
void wk_make_ref_call(worker *w, kbv_call *c, kbv_tensor *outs, void **in, void **ref);
/* The fp32 reference on the candidate's inputs in, into ref (w->rout_bytes
 * each, allocated by the caller); synchronises.  In the BF16 setting the
 * bfloat16 inputs are first widened (exactly) into float buffers of their
 * own: wide, when not NULL, receives the reference's inputs (in's own
 * pointers in FP32), to be released with wk_free_wide. */
void wk_reference(worker *w, void **in, void **ref, void **wide);
void wk_free_wide(worker *w, void **wide);
uint64_t wk_fingerprint(worker *w, void **bufs, const size_t *bytes, int n);
/* is_ref: the buffers are reference outputs (floats), else the candidate's. */
uint64_t wk_value_fingerprint(worker *w, void **bufs, int is_ref);
void wk_sync(worker *w, const char *what);
void wk_device_sync(worker *w, const char *what);
int wk_count_threads(void);
void wk_note_threads(worker *w, int before, const char *what);
/* timed = 1 in the timed rounds, where threads are not counted. */
void wk_cand_call(worker *w, const kbv_call *c, const char *what, int timed);
void wk_base_call(worker *w, int v, const kbv_call *c);
void wk_limit_host_data(void);
void wk_load_candidate(worker *w);
/* wk_env_save copies the process environment (replacing an earlier copy);
 * wk_env_guard, called after candidate code ran (outside every timed
 * window), compares the environment with that copy and, where they differ,
 * notes the first change (env_changed, env_detail naming `what`) and puts
 * the copy back, so that the baselines and the libraries they load never
 * read a variable the candidate set (KBV_CUDNN_LIB, NVIDIA_TF32_OVERRIDE). */
void wk_env_save(worker *w);
void wk_env_guard(worker *w, const char *what);
/* Frees the copy; guards after it do nothing. */
void wk_env_drop(worker *w);
/* Puts the L2 policy back as the harness found it before a timed call's
 * flush: the persisting-L2 limit, the timed stream's access-policy window,
 * and every persisting line made normal again, so that no line of a
 * call's inputs outlives the flush.  A candidate may use persistence
 * within its call; the first change it left is noted (l2_changed). */
void wk_l2_save(worker *w);
void wk_l2_reset(worker *w);
void wk_describe_tensors(worker *w);
/* The candidate's outputs out against the float reference ref. */
void wk_compare(worker *w, void **out, void **ref, wk_cmp *r);
/* The candidate's output in out against the fp32 reference on in, which is
 * computed into buffers of its own and poisoned again before returning:
 * 1 when right, else 0 with the counts in *r. */
int wk_verify(worker *w, void **in, void **out, wk_cmp *r);
/* One untimed candidate call on in into out (poisoned first), checked
 * against the fp32 reference on ref_in, the same values in buffers the
 * call does not get (a candidate that changes its inputs cannot change
 * the reference): 1 when right, else 0 with the counts in *r.  what names
 * the call in errors. */
int wk_checked_call(worker *w, void **in, void **out, void **ref_in, const char *what, wk_cmp *r);
int64_t wk_ref_nonfinite(worker *w, void **ref);
/* A random word from the kernel, for draws a candidate must not predict
 * (the seeded generator's are reproducible, and so predictable). */
uint64_t wk_secret_u64(void);
/* A secret draw uniform in [0, n), n > 0. */
uint64_t wk_secret_below(uint64_t n);

/* --- wk_checks.c ----------------------------------------------------------- */

/* A probe record (type, name, pass, detail) for the caller to add keys to
 * and hand to wk_emit, which takes it; wk_probe emits one as it is. */
cJSON *wk_probe_rec(const char *name, int pass, const char *detail);
void wk_probe(worker *w, const char *name, int pass, const char *detail);
void wk_checks(worker *w, void **slot_in);
void wk_probes_from_checks(worker *w);
void wk_probe_caching(worker *w, void **in);
void wk_probe_determinism(worker *w, void **in);

/* --- wk_timing.c ----------------------------------------------------------- */

void wk_timing(worker *w);
void wk_probes_after_timing(worker *w);

/* Below this, a difference of free-memory figures is noise: the driver's
 * 2 MiB pages, kernel modules loaded lazily, the runtime's pools. */
#define WK_UNTRACKED_FLOOR (8LL << 20)

/* --- wk_memory.c ----------------------------------------------------------- */

typedef struct {
    long long peak_bytes;
    long long driver_delta;
    long long untracked;
} wk_memres;

void wk_measure_memory(worker *w, void **in, wk_memres *m);
void wk_emit_choices(worker *w);
void wk_emit_memory(worker *w, const wk_memres *m, long long cand_leak, long long base_leak);

#endif
