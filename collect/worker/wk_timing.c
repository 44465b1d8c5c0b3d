/* wk_timing.c - the timed rounds (DESIGN.md 5a step 7), their proof and
 * the second clock (step 7a), and the probes that need the times.
 *
 * Why this shape.  A candidate that has read this file must not be able to
 * tell a timed call from a checked one, nor profit from telling:
 *
 * - Timed calls run on input sets that no check or probe showed the
 *   candidate, WK_TIMED_SETS of them in distinct buffers with distinct
 *   output buffers, and which set a round uses is drawn from the kernel's
 *   random source.  Before every round the chosen set is redrawn whole from
 *   D1 with a secret trial number (refresh_set), so that no two timed calls
 *   see the same contents and none can be computed ahead.
 * - Every secret draw is made from the kernel when it is needed: a
 *   candidate can read the worker's memory (its stack holds this file's
 *   state), so a generator state or a list of chosen rounds kept there
 *   would tell it the future.
 * - The candidate's output of secretly chosen rounds (WK_VERIFY_EARLY of the
 *   first min_samples, and any round with probability 1 in VERIFY_EVERY)
 *   and of the last round is checked against the fp32
 *   reference after the round, outside every timed window.  A wrong one is
 *   the `timed-output` probe's failure (class stale-output), naming the
 *   round, unless an untimed call on a copy of the round's inputs gets it
 *   wrong too (recheck_untimed: class incorrect).  A candidate lazy in a
 *   share f of its calls passes with odds of at most (1 - f)^(verified
 *   rounds).
 * - Every round holds every variant, in a secretly shuffled order, so that
 *   speedups are paired by round (the stopping rule uses the per-round
 *   ratios) and a clock change weighs on all of them.
 * - Each timed call is preceded by a pre-roll: the same variant, untimed,
 *   on the other input set (cstat_preroll_calls: about a millisecond of its
 *   own work; none for a call over 2 ms, whose own start outweighs what ran
 *   before), then a device-wide synchronise.  What ran just before
 *   changes a call's time: on the H200 a tf32 GEMM ran up to 22% slower
 *   right after a long FMA-bound candidate than after the fp32 baseline,
 *   at the same reported clock.  After the pre-roll every variant starts
 *   from the state its own work leaves, as in a user's loop that times one
 *   model, whatever the shuffled order put before it.
 * - The candidate's inputs of a round are drawn after its pre-roll and the
 *   synchronise, just before its timed call: a pre-roll call could
 *   otherwise compute the timed call's output ahead, untimed, from inputs
 *   already in memory.  A baseline's sample redraws the other set instead,
 *   so that every timed call follows the same work.
 * - Each timed call is bracketed by two one-thread kernels that read the
 *   GPU's global timer into device memory the worker owns, outside the
 *   event window.  Event time and global-timer time must agree within
 *   CLOCK_REL plus the harness's own gap in their median difference (the
 *   `clock-agreement` probe, class tampering): a candidate that patches the
 *   event path (a rewritten GOT slot, say) must also find and rewrite the
 *   stamps.  The gap is what the same brackets around no call at all show
 *   on an idle GPU (the stamp kernels' launch latency, which the events do
 *   not see), twice its median, and at least CLOCK_ABS_MS: an empty call
 *   showed 10.5 us on the H200, just past a fixed 10 us.
 * - Each timed call is enqueued behind a gate (worker_gpu.h): after the L2
 *   flush, a kernel that takes every SM's thread slots and holds the
 *   stream until the host has enqueued the call, its end event and its
 *   stamp.  The start event is taken when the gate ends, so the host's
 *   launch latency is outside the window (as it is in a user's loop, where
 *   the GPU is busy with the previous call), and no work of the
 *   candidate's on another stream can run before the start event: with the
 *   flush alone as the head start, a call that launched its real work on a
 *   stream of its own had it run beside the flush, untimed (up to ~80 us on
 *   an H200).  The gate writes the start stamp itself when it releases, so
 *   that nothing needing a free SM stands between it and the start event.
 *   It holds at most as long as the variant's own calls take
 *   (gate_hold_ms): host time beyond that is timed, as in a loop.
 *   Before the flush the L2 policy is put back (wk_l2_reset): no line a
 *   candidate made persisting outlives it.
 * - Warm-up runs whole rounds until the SM clock is steady (three readings
 *   within 1%) and at least the rule's warm_min_s has passed: an idle GPU
 *   runs its first tens of milliseconds of work at a lower clock, and a
 *   memory-bound kernel runs slower for a few hundred milliseconds more,
 *   with no sign of it in the clock reading (cstat.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstat.h"
#include "jio.h"
#include "log.h"
#include "memtrack.h"
#include "rng.h"
#include "verdict.h"
#include "schema.h"
#include "wk.h"
#include "worker_gpu.h"

#define WK_TIMED_SETS 2
#define TIMED_TRIAL0 1000
#define WK_VERIFY_EARLY 3
#define VERIFY_EVERY 16
/* The recheck's buffers lie at a secret offset within this much slack. */
#define RECHECK_SLIDE ((size_t)64 << 10)
#define CLOCK_REL 0.01
#define CLOCK_ABS_MS 0.010
/* The measured gap counts up to this much: a candidate that kept the GPU
 * busy during the empty brackets (work left on another stream) must not
 * widen the tolerance without bound. */
#define CLOCK_MAX_SLACK_MS 0.050
#define EMPTY_BRACKETS 16

typedef struct {
    double *gpu, *wall, *gt;   /* per round; gt < 0 when the stamps were out of order */
    unsigned *mhz;
    double gpu_s, wall_s;
    double pre_s;              /* the wall time of its pre-roll calls */
} tvar;

typedef struct {
    void *in[WK_TIMED_SETS][WK_MAX_TENSORS];
    int trial[WK_TIMED_SETS];                    /* the D1 trial each set was last drawn from */
    uint64_t cand_fp[WK_MAX_TENSORS];            /* the round's inputs right after the candidate's call */
    void *cout[WK_TIMED_SETS][WK_MAX_TENSORS];   /* the candidate's output per set */
    void *bout[WK_MAX_TENSORS];                  /* the baselines' output */
    void *flush;
    size_t flush_bytes;
    wg_gate *gate;
    int gate_timeouts[N_VARIANTS];               /* samples whose gate released on its own */
    double hold_ms[N_VARIANTS];                  /* the gate's limit per variant (gate_hold_ms) */
    unsigned long long *stamps;                  /* 2 per variant, device */
    cudaEvent_t ev0, ev1;
    double clock_slack_ms;                       /* the clocks' absolute tolerance (empty_gap) */
    int early_left;                              /* early rounds still to verify (verify_pick) */
    int preroll[N_VARIANTS];                     /* untimed calls before each timed one */
    int tf32_is_fp32;
    /* verification */
    int verified, failed_round, failed_set;
    /* The untimed call on a copy of the failed round's inputs (recheck):
     * 1 right, 0 wrong, -1 not made; its counts in recheck_cmp. */
    int recheck;
    wk_cmp recheck_cmp;
    int mutated_round;                           /* first verified round whose inputs had changed */
    char mutated_text[200];
    wk_cmp failed_cmp;
    char rounds_text[256];
    /* The worst precision tier among the verified rounds that passed, its
     * round, and their largest relative error: a candidate exact in its
     * checked calls and TF32-close in its timed ones has a tf32 tier. */
    int worst_tier, worst_tier_round;
    double worst_rel;
} tstate;

static void tstate_open(worker *w, tstate *t)
{
    const suite_problem *p = w->p;
    memset(t, 0, sizeof *t);
    t->early_left = WK_VERIFY_EARLY;
    for (int k = 0; k < WK_TIMED_SETS; k++) {
        wk_alloc_inputs(w, t->in[k]);
        t->trial[k] = TIMED_TRIAL0 + k;
        wk_fill_inputs(w, t->in[k], SUITE_D1, t->trial[k]);
        wk_alloc_outputs(w, t->cout[k]);
    }
    wk_alloc_outputs(w, t->bout);
    /* Twice the L2, and at least 256 MiB (as Triton's do_bench): the
     * flush's own time, about 80 us on an H200, is the head start in which
     * the host enqueues the timed call behind it. */
    t->flush_bytes = 2 * w->l2_bytes;
    if (t->flush_bytes < ((size_t)256 << 20)) t->flush_bytes = (size_t)256 << 20;
    t->flush = wk_dalloc(w, t->flush_bytes, "L2 flush buffer");
    t->stamps = wk_dalloc(w, 2 * N_VARIANTS * sizeof *t->stamps, "clock stamps");
    kbv_err e = {0};
    if (wg_gate_open(&t->gate, &e)) wk_die_harness(w, "timing gate", &e);
    if (cudaEventCreate(&t->ev0) != cudaSuccess || cudaEventCreate(&t->ev1) != cudaSuccess)
        wk_die_cuda(w, "events", cudaGetLastError());
    t->tf32_is_fp32 = !w->bf16 && !p->uses_tf32;
    t->failed_round = -1;
    t->recheck = -1;
    t->mutated_round = -1;
    for (int v = 0; v < N_VARIANTS; v++) t->hold_ms[v] = WG_GATE_MAX_MS;
    t->worst_tier = -1;
    t->worst_tier_round = -1;
    t->worst_rel = -1;
    wk_sync(w, "timing setup");
}

static void tstate_close(worker *w, tstate *t)
{
    const suite_problem *p = w->p;
    cudaEventDestroy(t->ev0);
    cudaEventDestroy(t->ev1);
    wk_dfree(t->flush);
    wk_dfree(t->stamps);
    wg_gate_close(t->gate);
    /* Outputs are poisoned before the memory is given back: the candidate
     * runs again (memory measurement) and could find them. */
    for (int k = 0; k < WK_TIMED_SETS; k++) {
        for (int i = 0; i < p->n_outputs; i++) wk_poison_output(w, i, t->cout[k][i]);
        wk_sync(w, "poison");
        wk_free_bufs(t->cout[k], p->n_outputs);
        wk_free_bufs(t->in[k], p->n_inputs);
    }
    for (int i = 0; i < p->n_outputs; i++) wk_poison_output(w, i, t->bout[i]);
    wk_sync(w, "poison");
    wk_free_bufs(t->bout, p->n_outputs);
}

/* Redraws every input of set k from D1 with a trial number drawn from the
 * kernel's random source, so that no two timed calls see the same
 * contents and none can be known before its round: a memo keyed on the
 * contents computes every time; an output computed ahead (in kbv_setup,
 * for the seed's trials) never fits; and an incremental update from the
 * previous call's output (a few changed elements of a linear operation)
 * saves nothing, since every element is new. */
static void refresh_set(worker *w, tstate *t, int k)
{
    t->trial[k] = TIMED_TRIAL0 + (int)wk_secret_below((uint64_t)1 << 30);
    wk_fill_inputs(w, t->in[k], SUITE_D1, t->trial[k]);
}

static void run_variant(worker *w, int v, const kbv_call *c)
{
    if (v == V_CAND) wk_cand_call(w, c, "timing", 1);
    else wk_base_call(w, v, c);
}

/* One sample of variant v on set k: the pre-roll on the other set and a
 * device-wide synchronise; the redraw of set k (the candidate) or of the
 * other set (a baseline); then flush, stamp, event, call, event, stamp,
 * device-wide synchronise.  The stamps are read with the round's. */
static void sample(worker *w, tstate *t, int v, int k, int round, double *gpu_ms, double *wall_ms, double *pre_ms)
{
    const suite_problem *p = w->p;
    kbv_err e = {0};
    kbv_call c;
    int other = (k + 1) % WK_TIMED_SETS;
    void **out = v == V_CAND ? t->cout[k] : t->bout;
    /* Threads are counted around the whole sample, outside both windows: a
     * thread a timed or pre-roll call starts, alive when the sample ends,
     * could load the GPU around the baselines' calls. */
    int threads_before = v == V_CAND ? wk_count_threads() : 0;
    double p0 = log_now();
    if (t->preroll[v] > 0) {
        kbv_call pre;
        wk_make_call(w, &pre, t->in[other], v == V_CAND ? t->cout[other] : t->bout);
        for (int i = 0; i < t->preroll[v]; i++) run_variant(w, v, &pre);
        /* Device-wide: work the candidate left on streams of its own ends
         * here, before the timed inputs exist. */
        wk_device_sync(w, "pre-roll");
    }
    *pre_ms = (log_now() - p0) * 1e3;
    refresh_set(w, t, v == V_CAND ? k : other);
    wk_make_call(w, &c, t->in[k], out);
    if (v == V_CAND)
        for (int i = 0; i < p->n_outputs; i++) wk_poison_output(w, i, out[i]);
    /* The redraw of the inputs and the poisoning of the outputs are done
     * before the wall clock starts: left on the stream, they fell inside
     * the wall window of whichever call came next (4.7 ms on a 1.6 GB ReLU on
     * the H200), and the deferred-work probe took them for the candidate's
     * work outside its stream. */
    wk_sync(w, "before a timed call");
    /* The flush, then the gate, which returns once it holds every SM:
     * both are outside both windows.  The start event follows the gate on
     * the stream, and the call, its end event and the end stamp are
     * enqueued while the gate holds, so the call starts when the gate ends,
     * as in a user's loop where the GPU is still busy with the last call.
     * Recording the start event on an idle GPU put the host's launch
     * latency inside the window: up to a fifth of a 0.2 ms tf32 GEMM on the
     * H200 (in-run medians 1.09-1.20x PyTorch's alone, with the same
     * kernel). */
    wk_l2_reset(w);
    if (cudaMemsetAsync(t->flush, round & 0xff, t->flush_bytes, w->s) != cudaSuccess)
        wk_die_cuda(w, "L2 flush", cudaGetLastError());
    if (wg_gate_hold(t->gate, w->s, &t->stamps[2 * v], t->hold_ms[v], &e)) wk_die_harness(w, "timing gate", &e);
    double t_in = log_now();
    cudaEventRecord(t->ev0, w->s);
    run_variant(w, v, &c);
    cudaEventRecord(t->ev1, w->s);
    if (wg_stamp(&t->stamps[2 * v + 1], w->s, &e)) wk_die_harness(w, "clock stamp", &e);
    double t0 = log_now();
    wg_gate_release(t->gate);
    /* The gate let go at its limit if the host took longer than that. */
    if (t0 > t_in + t->hold_ms[v] * 1e-3) t0 = t_in + t->hold_ms[v] * 1e-3;
    cudaError_t ce = cudaDeviceSynchronize();
    double t1 = log_now();
    if (ce == cudaSuccess) ce = cudaGetLastError();
    if (ce != cudaSuccess) wk_die_cuda(w, "timing", ce);
    float ms = 0;
    ce = cudaEventElapsedTime(&ms, t->ev0, t->ev1);
    if (ce != cudaSuccess) wk_die_cuda(w, "event time", ce);
    *gpu_ms = ms;
    /* The wall window is the host's own: from the gate's release (the
     * host's, or the gate's own at its limit), when the call's GPU work may
     * start, to the end of the device-wide
     * synchronise, so work left running outside the stream shows in it.
     * A call that synchronised inside itself ran while the gate held it
     * (until the gate's own limit) and returned before the release: its
     * window is then shorter than its event time, and the work took at
     * least that. */
    *wall_ms = (t1 - t0) * 1e3;
    if (*wall_ms < *gpu_ms) *wall_ms = *gpu_ms;
    t->gate_timeouts[v] += wg_gate_timed_out(t->gate);
    if (v == V_CAND) {
        wk_note_threads(w, threads_before, "a timed call");
        wk_env_guard(w, "a timed call");
    }
}

/* The round's variants in a secret order (the tf32 baseline is not run
 * where it is the fp32 computation).  Returns their number. */
static int round_order(const worker *w, int order[N_VARIANTS])
{
    int n = 0;
    for (int v = 0; v < N_VARIANTS; v++)
        if (wk_variant_timed(w, v)) order[n++] = v;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)wk_secret_below((uint64_t)i + 1), x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    return n;
}

/* How long the gate may hold the GPU before a variant's timed call: as
 * long as the variant's own calls take, within [GATE_MIN_HOLD_MS,
 * WG_GATE_MAX_MS].  That is the warm-up's median event time (its samples
 * held the gate until the call returned, so they are the GPU's time
 * alone), or the shortest event time of the timed rounds so far where that
 * is less.  A median of the timed rounds would feed on itself: their times
 * include host time beyond the hold, so a longer hold would follow, and a
 * candidate slow on purpose in the calls it guesses are warm-up would
 * settle halfway.  The shortest time only falls.  In a user's loop the
 * GPU is busy with the previous call while the host makes the next, for
 * as long as that call runs: host time up to that is hidden, and beyond it
 * is not.  The gate holds the same way.  Until it was bounded so, it held
 * until the call returned (up to 10 ms): a call could do that much work on
 * the host or the copy engines, which the gate does not hold, untimed
 * (copy its inputs out, compute on the CPU, copy the output back) and
 * leave the timed window empty.  The minimum leaves the host time to
 * enqueue an ordinary call (a few launches), so that a short baseline's
 * launch latency stays out of its window, as in a busy loop. */
#define GATE_MIN_HOLD_MS 0.02
static double gate_hold_ms(double call_ms)
{
    if (!(call_ms > GATE_MIN_HOLD_MS)) return GATE_MIN_HOLD_MS;
    return call_ms < WG_GATE_MAX_MS ? call_ms : WG_GATE_MAX_MS;
}

/* Whole rounds, not recorded, until the clock is steady (cstat_rule).  The
 * pre-roll counts come from the warm-up's own times: each round uses the
 * previous round's, and the timed rounds the median over all of them. */
static void warm_up(worker *w, tstate *t, const cstat_rule *rule)
{
    double t_start = log_now();
    unsigned mhz[3] = {0, 0, 0};
    enum { WARM_MAX = 256 };
    double times[N_VARIANTS][WARM_MAX], scratch[WARM_MAX];
    int n_times = 0;
    memset(t->preroll, 0, sizeof t->preroll);
    for (int round = 0;; round++) {
        int order[N_VARIANTS];
        int n = round_order(w, order);
        int k = (int)wk_secret_below(WK_TIMED_SETS);
        for (int j = 0; j < n; j++) {
            double g, wl, pre;
            sample(w, t, order[j], k, round, &g, &wl, &pre);
            if (n_times < WARM_MAX) times[order[j]][n_times] = g;
            t->preroll[order[j]] = cstat_preroll_calls(rule, g);
        }
        if (n_times < WARM_MAX) n_times++;
        unsigned now = 0;
        int have = nvmlx_sm_mhz(w->nv, &now) == 0 && now > 0;
        mhz[round % 3] = now;
        double el = log_now() - t_start;
        int steady = !have;
        if (have && round >= 2) {
            unsigned lo = mhz[0], hi = mhz[0];
            for (int i = 1; i < 3; i++) {
                if (mhz[i] < lo) lo = mhz[i];
                if (mhz[i] > hi) hi = mhz[i];
            }
            steady = lo > 0 && (double)(hi - lo) <= 0.01 * hi;
        }
        if (round + 1 >= rule->warm_min_rounds && el >= rule->warm_min_s && steady) break;
        if (el >= rule->warm_max_s) break;
    }
    for (int v = 0; v < N_VARIANTS; v++)
        if (wk_variant_timed(w, v)) {
            double med = cstat_median(times[v], n_times, scratch);
            t->preroll[v] = cstat_preroll_calls(rule, med);
            t->hold_ms[v] = gate_hold_ms(med);
        }
}

/* The fingerprints of the round's inputs right after the candidate's timed
 * call (before any baseline of the round runs on them), for verify_round. */
static void note_candidate_inputs(worker *w, tstate *t, int k)
{
    for (int i = 0; i < w->p->n_inputs; i++) t->cand_fp[i] = wk_fingerprint(w, &t->in[k][i], &w->in_bytes[i], 1);
}

/* A device buffer of n bytes, or NULL when there is no memory for it (the
 * caller does without), placed at a secret multiple of 256 bytes into an
 * allocation of its own: the CUDA allocator hands freed addresses out
 * again, and a pointer the candidate saw before must not come back.  *base
 * receives what to free. */
static void *fresh_buffer(size_t n, void **base)
{
    *base = NULL;
    if (mt_real_malloc(base, n + RECHECK_SLIDE) != cudaSuccess) {
        cudaGetLastError();
        *base = NULL;
        return NULL;
    }
    return (char *)*base + 256 * wk_secret_below(RECHECK_SLIDE / 256);
}

/* The candidate once more, untimed, on a copy of timed input set k in
 * buffers it has never seen, into new poisoned outputs, checked against
 * the reference on the set itself (which this call does not touch): 1
 * right, 0 wrong (the counts in *r), -1 not made (no device memory for the
 * copies).  It tells a timed output that was wrong because the candidate
 * behaves otherwise in timed calls (lazy, stale, keyed on the timed sets'
 * pointers: stale-output) from an output that its ordinary numerics get
 * wrong on that draw, as an untimed call on the same values shows
 * (incorrect, as a failed D1 check would be: a deep network in bfloat16
 * whose one element of 10^8 lands just past the tolerance on some draws). */
static int recheck_untimed(worker *w, void *const *in, wk_cmp *r)
{
    const suite_problem *p = w->p;
    void *base[2 * WK_MAX_TENSORS] = {0}, *cin[WK_MAX_TENSORS] = {0}, *cout[WK_MAX_TENSORS] = {0};
    int made = -1, ok = 1;
    for (int i = 0; i < p->n_inputs && ok; i++) ok = (cin[i] = fresh_buffer(w->in_bytes[i], &base[i])) != NULL;
    for (int i = 0; i < p->n_outputs && ok; i++)
        ok = (cout[i] = fresh_buffer(w->out_bytes[i], &base[WK_MAX_TENSORS + i])) != NULL;
    if (ok) {
        for (int i = 0; i < p->n_inputs; i++) {
            cudaError_t ce = cudaMemcpyAsync(cin[i], in[i], w->in_bytes[i], cudaMemcpyDeviceToDevice, w->s);
            if (ce != cudaSuccess) wk_die_cuda(w, "timed-output recheck", ce);
        }
        made = wk_checked_call(w, cin, cout, (void **)in, "timed-output recheck", r);
    }
    for (int i = 0; i < 2 * WK_MAX_TENSORS; i++) wk_dfree(base[i]);
    return made;
}

/* Checks the candidate's output of the round on set k against the
 * reference; the first failure is kept for the probe.  The inputs as the
 * candidate's call left them (note_candidate_inputs) are first compared
 * with a fresh draw of the set's trial, which then replaces them for the
 * reference: the input-mutation probe sees only checked calls, and a
 * candidate that told a timed call from them (by the flush and gate still
 * on its stream, say) could overwrite its inputs there (zero a GEMM's
 * operands and its output) and pass a reference computed from what it
 * left. */
static void verify_round(worker *w, tstate *t, int round, int k, int last)
{
    const suite_problem *p = w->p;
    wk_cmp r;
    wk_fill_inputs(w, t->in[k], SUITE_D1, t->trial[k]);
    for (int i = 0; i < p->n_inputs && t->mutated_round < 0; i++) {
        if (wk_fingerprint(w, &t->in[k][i], &w->in_bytes[i], 1) == t->cand_fp[i]) continue;
        t->mutated_round = round;
        snprintf(t->mutated_text, sizeof t->mutated_text, "round %d (timed input set %d): input %d (%s) changed",
                 round, k, i, p->inputs[i].name);
    }
    int ok = wk_verify(w, t->in[k], t->cout[k], &r);
    t->verified++;
    size_t l = strlen(t->rounds_text);
    if (l + 24 < sizeof t->rounds_text)
        snprintf(t->rounds_text + l, sizeof t->rounds_text - l, "%s%d%s", l ? ", " : "", round, last ? " (last)" : "");
    if (!ok && t->failed_round < 0) {
        t->failed_round = round;
        t->failed_set = k;
        t->failed_cmp = r;
        /* Elements left unwritten are lazy whatever an untimed call does. */
        if (!r.st.unwritten) t->recheck = recheck_untimed(w, t->in[k], &t->recheck_cmp);
    }
    if (ok) {
        if (r.tier > t->worst_tier) {
            t->worst_tier = r.tier;
            t->worst_tier_round = round;
        }
        if (r.st.max_rel_err > t->worst_rel) t->worst_rel = r.st.max_rel_err;
    }
}

/* What NVML said after a round: the SM clock, the board power and the clock
 * event reasons (each absent when it could not be read). */
typedef struct {
    int have_mhz, have_power, have_events;
    unsigned mhz, power_mw;
    unsigned long long events;
} round_gpu;

static void read_round_gpu(worker *w, round_gpu *q)
{
    memset(q, 0, sizeof *q);
    q->have_mhz = nvmlx_sm_mhz(w->nv, &q->mhz) == 0;
    q->have_power = nvmlx_power_mw(w->nv, &q->power_mw) == 0;
    q->have_events = nvmlx_clock_events(w->nv, &q->events) == 0;
}

/* k is the round's timed input set.  It is no secret once the round has
 * run, and analyze needs it: the sets live in distinct buffers, and on a
 * bandwidth-bound problem of several GB the two placements ran 5% apart on
 * an H100 and an H200 alike (L1_039's baseline and candidate, in every
 * round of one set fast or slow together), so a median over the rounds
 * lands on either mode by the luck of the draw. */
static void emit_sample(worker *w, int v, int round, int k, double g, double wl, double gt, const round_gpu *q,
                        const char *same_as, int preroll)
{
    cJSON *r = wk_rec(KBV_REC_TIME);
    cJSON_AddStringToObject(r, KBV_K_VARIANT, wk_variant_names[v]);
    cJSON_AddNumberToObject(r, KBV_K_ROUND, round);
    cJSON_AddNumberToObject(r, "input_set", k);
    jio_add_num(r, KBV_K_GPU_MS, g);
    jio_add_num(r, KBV_K_WALL_MS, wl);
    if (gt >= 0) jio_add_num(r, "gt_ms", gt);
    if (q->have_mhz) cJSON_AddNumberToObject(r, "sm_mhz", q->mhz);
    /* Power and the clock event reasons explain a drift that the SM clock
     * reading does not show (a power cap acts between its samples). */
    if (q->have_power) jio_add_num(r, "power_w", q->power_mw * 1e-3);
    if (q->have_events && q->events) cJSON_AddNumberToObject(r, "clock_events", (double)q->events);
    if (same_as) cJSON_AddStringToObject(r, "same_as", same_as);
    cJSON_AddNumberToObject(r, "preroll", preroll);
    wk_emit(w, r);
}

/* Whether round (0-based), whose calls have run, is one whose candidate
 * output is verified: every round with odds of at least 1 in
 * VERIFY_EVERY, and besides, exactly WK_VERIFY_EARLY of the first
 * min_rounds, chosen one round at a time (selection sampling: with k picks
 * left among r rounds, this one with odds k / r).  Every draw comes from
 * the kernel at the moment of the decision, after the candidate's call,
 * so nothing in the worker's memory says which rounds will be verified.
 * The count of early picks left is in that memory, though: the 1-in-
 * VERIFY_EVERY draw of every round is what keeps a candidate that reads
 * it as zero from knowing the rest of the early rounds unchecked. */
static int verify_pick(tstate *t, int round, int min_rounds)
{
    int early = 0;
    if (round < min_rounds && t->early_left > 0) {
        early = wk_secret_below((uint64_t)(min_rounds - round)) < (uint64_t)t->early_left;
        t->early_left -= early;
    }
    int any = wk_secret_below(VERIFY_EVERY) == 0;
    return early || any;
}

/* The clocks' absolute tolerance: twice the median (global timer - event)
 * of EMPTY_BRACKETS brackets around no call, each behind the gate as a
 * timed call is, at least CLOCK_ABS_MS and at most CLOCK_MAX_SLACK_MS.
 * Nothing runs between the events, so the end stamp kernel's launch
 * latency shows in full: this bounds what an honest call that leaves the
 * GPU idle can show. */
static double empty_gap(worker *w, tstate *t)
{
    double gap[EMPTY_BRACKETS], scratch[EMPTY_BRACKETS];
    int m = 0;
    kbv_err e = {0};
    for (int i = 0; i < EMPTY_BRACKETS; i++) {
        wk_device_sync(w, "clock brackets");
        if (wg_gate_hold(t->gate, w->s, &t->stamps[0], WG_GATE_MAX_MS, &e)) wk_die_harness(w, "timing gate", &e);
        cudaEventRecord(t->ev0, w->s);
        cudaEventRecord(t->ev1, w->s);
        if (wg_stamp(&t->stamps[1], w->s, &e)) wk_die_harness(w, "clock stamp", &e);
        wg_gate_release(t->gate);
        wk_device_sync(w, "clock brackets");
        float ms = 0;
        unsigned long long st[2];
        if (cudaEventElapsedTime(&ms, t->ev0, t->ev1) != cudaSuccess ||
            cudaMemcpy(st, t->stamps, sizeof st, cudaMemcpyDeviceToHost) != cudaSuccess || st[1] < st[0])
            continue;
        gap[m++] = (double)(st[1] - st[0]) * 1e-6 - ms;
    }
    double g = m ? 2 * cstat_median(gap, m, scratch) : 0;
    if (g > CLOCK_MAX_SLACK_MS) g = CLOCK_MAX_SLACK_MS;
    return g > CLOCK_ABS_MS ? g : CLOCK_ABS_MS;
}

/* The clocks' agreement for one variant: the median of (global-timer time -
 * event time) against the tolerance.  1 when they agree; 0 also when any
 * sample's stamps are out of order (*bad gets their number): kbv's own
 * kernels write them around the call, so only a write into the stamps
 * puts the end before the start, and skipping such samples let a call
 * that spoiled every stamp pass with none compared. */
static int clocks_agree(const tvar *tv, int n, double slack_ms, double *scratch, double *diffs, double *med_diff,
                        double *med_ev, int *bad)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (tv->gt[i] >= 0) diffs[m++] = tv->gt[i] - tv->gpu[i];
    *bad = n - m;
    *med_ev = n > 0 ? cstat_median(tv->gpu, n, scratch) : 0;
    *med_diff = m > 0 ? cstat_median(diffs, m, scratch) : 0;
    if (*bad > 0 || m == 0) return 0;
    return fabs(*med_diff) <= CLOCK_REL * *med_ev + slack_ms;
}

static void emit_clock_probe(worker *w, const tvar *tv, int n, const tstate *t, double *scratch)
{
    double slack_ms = t->clock_slack_ms;
    double *diffs = malloc((size_t)(n + 1) * sizeof *diffs);
    if (!diffs) wk_die_launch(w, "harness: out of host memory");
    char det[900] = "";
    int pass = 1;
    size_t l = 0;
    for (int v = 0; v < N_VARIANTS; v++) {
        if (!wk_variant_timed(w, v)) continue;
        double md, me;
        int bad = 0;
        int ok = clocks_agree(&tv[v], n, slack_ms, scratch, diffs, &md, &me, &bad);
        pass &= ok;
        l = strlen(det);
        if (bad > 0)
            snprintf(det + l, sizeof det - l, "%s%s: %d of %d samples' clock stamps out of order (written over)",
                     l ? "; " : "", wk_variant_names[v], bad, n);
        else
            snprintf(det + l, sizeof det - l, "%s%s: median event %.4g ms, global timer - event %+.4g ms%s",
                     l ? "; " : "", wk_variant_names[v], me, md, ok ? "" : " (beyond the tolerance)");
    }
    free(diffs);
    l = strlen(det);
    snprintf(det + l, sizeof det - l, "; tolerance %.0f%% of the event time + %.1f us (the harness's own gap)",
             CLOCK_REL * 100, slack_ms * 1e3);
    /* A gate that released on its own means the host took longer to make
     * the call than the gate holds (gate_hold_ms), or the call waited for
     * the GPU inside itself: said, since the rest of its host time is then
     * inside its window. */
    if (t->gate_timeouts[V_CAND] > 0) {
        l = strlen(det);
        snprintf(det + l, sizeof det - l,
                 "; the timing gate released on its own (at its limit, %.3g ms at the end) in %d candidate samples: "
                 "the call's host time, or a wait for the GPU inside it, outlasted the gate",
                 t->hold_ms[V_CAND], t->gate_timeouts[V_CAND]);
    }
    wk_probe(w, "clock-agreement", pass, det);
}

/* The timed-output probe: the verified rounds, or the first that failed
 * and what the untimed recheck of its inputs found. */
static void emit_timed_output(worker *w, const tstate *t)
{
    char det[1200];
    if (t->failed_round < 0) {
        snprintf(det, sizeof det,
                 "the candidate's output of %d timed rounds (%s), drawn at random, matched the fp32 reference "
                 "(worst precision tier %s, in round %d)",
                 t->verified, t->rounds_text, verdict_tier_name(t->worst_tier < 0 ? 0 : t->worst_tier),
                 t->worst_tier_round);
    } else {
        char again[200];
        if (t->recheck < 0)
            snprintf(again, sizeof again, "%s",
                     t->failed_cmp.st.unwritten ? "" : "; no device memory for an untimed recheck");
        else if (t->recheck)
            snprintf(again, sizeof again, "; an untimed call on a copy of those inputs in new buffers was right");
        else
            snprintf(again, sizeof again,
                     "; an untimed call on a copy of those inputs in new buffers was wrong too (%lld mismatching, "
                     "%lld unwritten, max abs error %.3g)",
                     (long long)t->recheck_cmp.st.mismatches, (long long)t->recheck_cmp.st.unwritten,
                     t->recheck_cmp.st.max_abs_err);
        snprintf(det, sizeof det,
                 "round %d (timed input set %d): the candidate's timed output had %lld mismatching elements "
                 "(%lld unwritten, max abs error %.3g) against the fp32 reference, although its checked "
                 "calls were right%s; verified rounds: %s",
                 t->failed_round, t->failed_set, (long long)t->failed_cmp.st.mismatches,
                 (long long)t->failed_cmp.st.unwritten, t->failed_cmp.st.max_abs_err, again, t->rounds_text);
    }
    /* The tier of the passing timed outputs goes with the probe, so that
     * analyze judges the candidate's precision by the calls it was timed
     * on as well as by its checks. */
    cJSON *rec = wk_probe_rec("timed-output", t->failed_round < 0, det);
    /* Whether the untimed recheck got the same inputs wrong with every
     * element written: the failure is then the candidate's numerics, not
     * its timed calls (analyze: incorrect rather than stale-output). */
    if (t->failed_round >= 0 && t->recheck >= 0)
        cJSON_AddBoolToObject(rec, "reproduced_untimed", !t->recheck && !t->recheck_cmp.st.unwritten);
    if (t->worst_tier >= 0) {
        cJSON_AddStringToObject(rec, "tier", verdict_tier_name(t->worst_tier));
        jio_add_num(rec, "max_rel_err", t->worst_rel);
    }
    wk_emit(w, rec);
}

void wk_timing(worker *w)
{
    cstat_rule rule;
    cstat_rule_default(&rule);
    rule.max_s = w->max_s;
    if (w->preroll) cstat_parse_preroll(w->preroll, &rule);   /* checked in main */
    tstate t;
    tstate_open(w, &t);
    mt_reset_peak(MT_CANDIDATE);
    warm_up(w, &t, &rule);
    t.clock_slack_ms = empty_gap(w, &t);

    int cap = rule.max_samples + 1;
    tvar tv[N_VARIANTS];
    memset(tv, 0, sizeof tv);
    double *scratch = malloc(2 * (size_t)cap * sizeof *scratch);
    double *ratio[2] = {malloc((size_t)cap * sizeof(double)), malloc((size_t)cap * sizeof(double))};
    int *round_set = malloc((size_t)cap * sizeof *round_set);
    if (!scratch || !ratio[0] || !ratio[1] || !round_set) wk_die_launch(w, "harness: out of host memory");
    for (int v = 0; v < N_VARIANTS; v++) {
        tv[v].gpu = malloc((size_t)cap * sizeof(double));
        tv[v].wall = malloc((size_t)cap * sizeof(double));
        tv[v].gt = malloc((size_t)cap * sizeof(double));
        tv[v].mhz = malloc((size_t)cap * sizeof(unsigned));
        if (!tv[v].gpu || !tv[v].wall || !tv[v].gt || !tv[v].mhz) wk_die_launch(w, "harness: out of host memory");
    }
    /* The baselines each per-round ratio is taken against. */
    int bases[2], nb = 0;
    if (w->bf16) {
        bases[nb++] = V_BF16;
    } else {
        bases[nb++] = V_FP32;
        if (!t.tf32_is_fp32) bases[nb++] = V_TF32;
    }
    int n = 0, last_k = 0, last_verified = 0;
    for (int round = 0;; round++) {
        int order[N_VARIANTS];
        int nv = round_order(w, order);
        int k = (int)wk_secret_below(WK_TIMED_SETS);
        double g[N_VARIANTS], wl[N_VARIANTS], gt[N_VARIANTS], pre[N_VARIANTS];
        for (int j = 0; j < nv; j++) {
            sample(w, &t, order[j], k, round, &g[order[j]], &wl[order[j]], &pre[order[j]]);
            if (order[j] == V_CAND) note_candidate_inputs(w, &t, k);
        }
        unsigned long long st[2 * N_VARIANTS];
        cudaError_t sce = cudaMemcpy(st, t.stamps, sizeof st, cudaMemcpyDeviceToHost);
        if (sce != cudaSuccess) wk_die_cuda(w, "clock stamps", sce);
        round_gpu q;
        read_round_gpu(w, &q);
        for (int j = 0; j < nv; j++) {
            int v = order[j];
            gt[v] = st[2 * v + 1] >= st[2 * v] ? (double)(st[2 * v + 1] - st[2 * v]) * 1e-6 : -1;
            tv[v].gpu[n] = g[v];
            tv[v].wall[n] = wl[v];
            tv[v].gt[n] = gt[v];
            tv[v].mhz[n] = q.have_mhz ? q.mhz : 0;
            tv[v].gpu_s += g[v] * 1e-3;
            tv[v].wall_s += wl[v] * 1e-3;
            tv[v].pre_s += pre[v] * 1e-3;
            emit_sample(w, v, round, k, g[v], wl[v], gt[v], &q, NULL, t.preroll[v]);
        }
        if (t.tf32_is_fp32) {
            /* Without a matrix product the tf32 baseline is the fp32 one
             * (DESIGN.md 5): timed once, recorded for both. */
            tv[V_TF32].gpu[n] = g[V_FP32];
            emit_sample(w, V_TF32, round, k, g[V_FP32], wl[V_FP32], gt[V_FP32], &q, "fp32", t.preroll[V_FP32]);
        }
        last_k = k;
        last_verified = verify_pick(&t, round, rule.min_samples);
        if (last_verified) verify_round(w, &t, round, k, 0);
        for (int b = 0; b < nb; b++) ratio[b][n] = tv[bases[b]].gpu[n] / tv[V_CAND].gpu[n];
        round_set[n] = k;
        n++;
        for (int j = 0; j < nv; j++) {
            int v = order[j];
            double run = gate_hold_ms(g[v]);
            if (run < t.hold_ms[v]) t.hold_ms[v] = run;
        }
        /* The time cap bounds the pair's rounds: every variant's calls and
         * pre-rolls, summed (the pre-roll is most of a short call's time).
         * One variant's alone, as before, let a pair of three slow
         * variants run three times the cap: 33 s for the recurrent
         * networks of run 9d20bada. */
        double wall = 0;
        for (int v = 0; v < N_VARIANTS; v++) wall += tv[v].wall_s + tv[v].pre_s;
        const double *const rs[2] = {ratio[0], ratio[1]};
        if (cstat_should_stop_paired(&rule, rs, round_set, nb, n, tv[V_CAND].gpu_s, wall, scratch) !=
            CSTAT_GO_ON)
            break;
    }
    /* The last round's output is still in its set's buffers, and its input
     * unchanged since: verified unless it was already. */
    if (!last_verified) verify_round(w, &t, n - 1, last_k, 1);

    emit_timed_output(w, &t);
    char det[1200];
    if (t.mutated_round < 0)
        snprintf(det, sizeof det, "the inputs of %d verified timed rounds were as drawn after the candidate's calls",
                 t.verified);
    else
        snprintf(det, sizeof det, "%s by the candidate's timed calls; verified rounds: %s", t.mutated_text,
                 t.rounds_text);
    wk_probe(w, "timed-inputs", t.mutated_round < 0, det);
    emit_clock_probe(w, tv, n, &t, scratch);

    for (int v = 0; v < N_VARIANTS; v++) {
        const tvar *x = v == V_TF32 && t.tf32_is_fp32 ? &tv[V_FP32] : &tv[v];
        w->med_gpu[v] = w->med_wall[v] = 0;
        if (!wk_variant_timed(w, v) && !(v == V_TF32 && t.tf32_is_fp32)) continue;
        w->med_gpu[v] = cstat_median(x->gpu, n, scratch);
        w->med_wall[v] = cstat_median(x->wall, n, scratch);
    }
    for (int v = 0; v < N_VARIANTS; v++) {
        free(tv[v].gpu);
        free(tv[v].wall);
        free(tv[v].gt);
        free(tv[v].mhz);
    }
    free(ratio[0]);
    free(ratio[1]);
    free(round_set);
    free(scratch);
    mt_counts cc;
    mt_get(MT_CANDIDATE, &cc);
    w->cand_timed_peak = cc.peak;
    tstate_close(w, &t);
}

void wk_probes_after_timing(worker *w)
{
    char det[1200];
    /* Deferred work: fingerprints, wall vs event time, host threads. */
    char why[400];
    int mb = wk_main_baseline(w);
    int t_pass = verdict_deferred_timing(w->med_gpu[V_CAND], w->med_wall[V_CAND], w->med_gpu[mb],
                                         w->med_wall[mb], why, sizeof why);
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
    wk_probe(w, "deferred-work", pass, det);

    /* The environment: restored after every change (wk_env_guard), and
     * any change is tampering, a hack on the harness rather than on the
     * problem. */
    if (w->env_changed)
        snprintf(det, sizeof det, "candidate code changed the process environment: %s", w->env_detail);
    else
        snprintf(det, sizeof det, "the process environment was as the harness set it after every candidate call");
    /* A context of the candidate's own (memtrack.c refuses every one its
     * code asks for) is a place for work that no synchronisation of the
     * worker waits for. */
    char ctx_first[40] = "";
    int ctx_refused = mt_contexts_refused(ctx_first, sizeof ctx_first);
    if (ctx_refused) {
        size_t l = strlen(det);
        snprintf(det + l, sizeof det - l,
                 "; %d request(s) for a CUDA context of the candidate's own refused (first %s): work there "
                 "would run beside the baselines' timed calls, outside every synchronisation of the harness",
                 ctx_refused, ctx_first);
    }
    /* The L2 policy is put back before every flush (wk_l2_reset); using
     * persistence within a call is the candidate's right, so a change is
     * said, not failed. */
    if (w->l2_changed) {
        size_t l = strlen(det);
        snprintf(det + l, sizeof det - l, "; the candidate left %s, put back before every timed call's flush",
                 w->l2_detail);
    }
    wk_probe(w, "environment", !w->env_changed && !ctx_refused, det);

    /* Physical floor. */
    /* In the BF16 setting the float tensors move half the bytes; the FLOPs
     * are those no correct computation avoids.  collect checks the verdict
     * again from the journalled times (collect_main.c, floor_check). */
    double min_bytes = suite_floor_bytes(w->p, w->bf16);
    double flops = suite_floor_flops(w->p);
    double floor_ms = verdict_floor_ms(min_bytes, flops, w->copy_gbps, w->tf32_tflops);
    double t = w->med_gpu[V_CAND];
    int fpass = verdict_floor_pass(t, floor_ms);
    snprintf(det, sizeof det,
             "median %.4g ms vs floor %.4g ms = max(%.4g bytes / %.4g GB/s copy bandwidth, %.4g FLOP / (2 x %.4g TFLOP/s tf32))%s",
             t, floor_ms, min_bytes, w->copy_gbps, flops, w->tf32_tflops,
             fpass ? "" : ": faster than the hardware can move or compute it");
    cJSON *r = wk_probe_rec("physical-floor", fpass, det);
    jio_add_num(r, "floor_ms", floor_ms);
    jio_add_num(r, "time_ms", t);
    wk_emit(w, r);
}
