/* wk_checks.c - correctness on every distribution (DESIGN.md 5a step 5)
 * and the probes that need no timing (step 6): input independence,
 * identity and input mutation from the checks' evidence, caching and
 * determinism by calls of their own.  See wk.h. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jio.h"
#include "memtrack.h"
#include "rng.h"
#include "verdict.h"
#include "schema.h"
#include "wk.h"
#include "worker_gpu.h"

/* 1 in *eq when the reference's output o equals its input i at the
 * precision the candidate's output has.  In the BF16 setting the float
 * reference is rounded to bfloat16 first and compared with the bfloat16
 * input: a correct tanh of values below 2^-4 is a bitwise copy of its
 * input there, since tanh(x) and x round to the same bfloat16, although the
 * float reference differs from the widened input in its last bits. */
static void reference_equals_input(worker *w, int o, int i, void *in_i, void *wide_i, void *ref_o, int *eq)
{
    kbv_err e = {0};
    *eq = 0;
    if (w->out[o].dtype != KBV_BF16) {
        if (w->rin_bytes[i] == w->rout_bytes[o] && cmp_equal(ref_o, wide_i, w->rout_bytes[o], w->s, eq, &e))
            wk_die_harness(w, "identity", &e);
        return;
    }
    if (w->in[i].dtype != KBV_BF16) return; /* an integer input of a bf16 output's size */
    void *narrow = wk_dalloc(w, w->out_bytes[o], "identity scratch");
    if (gen_narrow_bf16((const float *)ref_o, narrow, suite_numel(&w->p->outputs[o]), w->s, &e) ||
        cmp_equal(narrow, in_i, w->out_bytes[o], w->s, eq, &e))
        wk_die_harness(w, "identity", &e);
    /* It holds the expected output: poisoned before it is freed, as the
     * reference buffers are, so that no later call finds it in memory. */
    wk_poison(w, narrow, w->out_bytes[o]);
    wk_sync(w, "poison");
    wk_dfree(narrow);
}

/* Identity: an output bitwise equal to an input of the same size, where the
 * reference output is not equal to the reference's input (compared at the
 * output's precision: reference_equals_input). */
static void check_identity(worker *w, void **in, void **wide, void **out, void **ref, const char *label)
{
    kbv_err e = {0};
    for (int o = 0; o < w->p->n_outputs && !w->ev.identity_hit; o++)
        for (int i = 0; i < w->p->n_inputs; i++) {
            if (w->in_bytes[i] != w->out_bytes[o]) continue;
            int eq = 0, ref_eq = 0;
            if (cmp_equal(out[o], in[i], w->out_bytes[o], w->s, &eq, &e)) wk_die_harness(w, "identity", &e);
            if (!eq) continue;
            reference_equals_input(w, o, i, in[i], wide[i], ref[o], &ref_eq);
            if (ref_eq) continue;
            w->ev.identity_hit = 1;
            snprintf(w->ev.identity_detail, sizeof w->ev.identity_detail,
                     "on %s, output %d is a bitwise copy of input %d (%s), which the reference output%s is not",
                     label, o, i, w->p->inputs[i].name,
                     w->out[o].dtype == KBV_BF16 ? " rounded to bfloat16" : "");
            break;
        }
}

void wk_checks(worker *w, void **slot_in)
{
    const suite_problem *p = w->p;
    int max_calls = 5 * w->trials;
    w->ev.out_fp = calloc((size_t)max_calls, sizeof *w->ev.out_fp);
    w->ev.ref_fp = calloc((size_t)max_calls, sizeof *w->ev.ref_fp);
    w->ev.label = calloc((size_t)max_calls, sizeof *w->ev.label);
    if (!w->ev.out_fp || !w->ev.ref_fp || !w->ev.label) wk_die_launch(w, "harness: out of host memory");
    void *prev[WK_MAX_TENSORS] = {0}, *cur[WK_MAX_TENSORS] = {0}, *out[WK_MAX_TENSORS] = {0}, *ref[WK_MAX_TENSORS] = {0};
    void *wide[WK_MAX_TENSORS] = {0};
    uint64_t in_fp[WK_MAX_TENSORS];
    for (int i = 0; i < p->n_inputs; i++) prev[i] = slot_in[i];
    for (int d = SUITE_D1; d <= SUITE_D5; d++) {
        if (!suite_has_dist(p, (suite_dist)d)) continue;
        const char *dn = suite_dist_name((suite_dist)d);
        int skipped = 0;
        for (int t = 0; t < w->trials; t++) {
            char label[32];
            snprintf(label, sizeof label, "%s trial %d", dn, t);
            cJSON *r = wk_rec(KBV_REC_CHECK);
            cJSON_AddStringToObject(r, "dist", dn);
            cJSON_AddNumberToObject(r, "trial", t);
            cJSON_AddNumberToObject(r, "seed", (double)w->seed);
            if (skipped) {
                cJSON_AddBoolToObject(r, "pass", 1);
                cJSON_AddBoolToObject(r, "skipped", 1);
                cJSON_AddStringToObject(r, KBV_K_DETAIL, "the fp32 reference is not finite on this distribution");
                wk_emit(w, r);
                continue;
            }
            /* Fresh input buffers at addresses that differ from the previous
             * call's (those are still held), so that a candidate keyed on the
             * previous call's pointers computes instead of failing here; the
             * caching probe is what tests same pointers, new contents. */
            wk_alloc_inputs(w, cur);
            wk_fill_inputs(w, cur, (suite_dist)d, t);
            for (int i = 0; i < p->n_inputs; i++) in_fp[i] = wk_fingerprint(w, &cur[i], &w->in_bytes[i], 1);
            wk_alloc_outputs(w, out);
            kbv_call c;
            wk_make_call(w, &c, cur, out);
            wk_sync(w, "before the candidate");
            wk_cand_call(w, &c, label, 0);
            wk_sync(w, label);
            /* Deferred work: a fingerprint right after the stream is done and
             * one after the whole device is. */
            uint64_t fp_stream = wk_fingerprint(w, out, w->out_bytes, p->n_outputs);
            wk_device_sync(w, label);
            uint64_t fp_dev = wk_fingerprint(w, out, w->out_bytes, p->n_outputs);
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
                uint64_t f = wk_fingerprint(w, &cur[i], &w->in_bytes[i], 1);
                if (f != in_fp[i]) {
                    if (!w->ev.mutation_hit)
                        snprintf(w->ev.mutation_detail, sizeof w->ev.mutation_detail,
                                 "on %s the candidate changed input %d (%s)", label, i, p->inputs[i].name);
                    w->ev.mutation_hit = 1;
                    mutated = 1;
                }
            }
            if (mutated) wk_fill_inputs(w, cur, (suite_dist)d, t);
            /* The reference, into buffers of its own. */
            for (int i = 0; i < p->n_outputs; i++) {
                ref[i] = wk_dalloc(w, w->rout_bytes[i], "reference buffer");
                wk_poison(w, ref[i], w->rout_bytes[i]);
            }
            wk_reference(w, cur, ref, wide);
            int64_t bad_ref = wk_ref_nonfinite(w, ref);
            if (bad_ref > 0) {
                skipped = 1;
                cJSON_AddBoolToObject(r, "pass", 1);
                cJSON_AddBoolToObject(r, "skipped", 1);
                char det[160];
                snprintf(det, sizeof det, "the fp32 reference has %lld non-finite values", (long long)bad_ref);
                cJSON_AddStringToObject(r, KBV_K_DETAIL, det);
                wk_emit(w, r);
            } else {
                wk_cmp ca;
                wk_compare(w, out, ref, &ca);
                int pass = verdict_check_pass(ca.st.mismatches, ca.st.nonfinite, ca.st.unwritten);
                cJSON_AddBoolToObject(r, "pass", pass);
                jio_add_num(r, "max_abs_err", ca.st.max_abs_err);
                jio_add_num(r, "max_rel_err", ca.st.max_rel_err);
                cJSON_AddNumberToObject(r, "mismatches", (double)ca.st.mismatches);
                cJSON_AddNumberToObject(r, "nonfinite", (double)ca.st.nonfinite);
                cJSON_AddNumberToObject(r, "unwritten", (double)ca.st.unwritten);
                cJSON_AddNumberToObject(r, "count", (double)ca.st.count);
                cJSON_AddStringToObject(r, "tier", verdict_tier_name(ca.tier));
                wk_emit(w, r);
                int k = w->ev.n++;
                w->ev.out_fp[k] = wk_value_fingerprint(w, out, 0);
                w->ev.ref_fp[k] = wk_value_fingerprint(w, ref, 1);
                snprintf(w->ev.label[k], sizeof w->ev.label[k], "%s", label);
                if (!w->ev.identity_hit) check_identity(w, cur, wide, out, ref, label);
            }
            wk_free_wide(w, wide);
            /* The expected output leaves device memory before any further
             * candidate call. */
            for (int i = 0; i < p->n_outputs; i++) wk_poison(w, ref[i], w->rout_bytes[i]);
            wk_sync(w, "poison");
            wk_free_bufs(ref, p->n_outputs);
            wk_free_bufs(out, p->n_outputs);
            wk_free_bufs(prev, p->n_inputs);
            for (int i = 0; i < p->n_inputs; i++) prev[i] = cur[i];
        }
    }
    for (int i = 0; i < p->n_inputs; i++) slot_in[i] = prev[i];
}

cJSON *wk_probe_rec(const char *name, int pass, const char *detail)
{
    cJSON *r = wk_rec(KBV_REC_PROBE);
    cJSON_AddStringToObject(r, KBV_K_PROBE, name);
    cJSON_AddBoolToObject(r, "pass", pass);
    cJSON_AddStringToObject(r, KBV_K_DETAIL, detail);
    return r;
}

void wk_probe(worker *w, const char *name, int pass, const char *detail)
{
    wk_emit(w, wk_probe_rec(name, pass, detail));
}

void wk_probes_from_checks(worker *w)
{
    char det[512];
    int a = 0, b = 0;
    if (w->ev.n < 2) {
        wk_probe(w, "input-independence", 1, "fewer than two checked calls; nothing to compare");
    } else if (verdict_independence(w->ev.out_fp, w->ev.ref_fp, w->ev.n, &a, &b)) {
        snprintf(det, sizeof det, "%d calls on different inputs gave different outputs wherever the references differed",
                 w->ev.n);
        wk_probe(w, "input-independence", 1, det);
    } else {
        snprintf(det, sizeof det, "the output on %s is bitwise the output on %s although the references differ",
                 w->ev.label[b], w->ev.label[a]);
        wk_probe(w, "input-independence", 0, det);
    }
    if (w->ev.identity_hit) wk_probe(w, "identity", 0, w->ev.identity_detail);
    else wk_probe(w, "identity", 1, "no output equalled an input where the reference output does not");
    if (w->ev.mutation_hit) wk_probe(w, "input-mutation", 0, w->ev.mutation_detail);
    else {
        snprintf(det, sizeof det, "inputs hashed before and after all %d checked calls were unchanged", w->ev.n);
        wk_probe(w, "input-mutation", 1, det);
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
    rng r;
    rng_seed(&r, rng_hash_str(w->seed ^ 0x63616368ull, p->id));
    for (int i = 0; i < p->n_inputs; i++) {
        int64_t n = suite_numel(&p->inputs[i]);
        if (p->inputs[i].dtype != KBV_F32 || n < 2048) continue;
        int64_t span = n < 131072 ? n : 131072;
        int64_t off = 256 + 1024 * (int64_t)rng_below64(&r, (uint64_t)(span / 1024 - 1));
        void *tmp = wk_dalloc(w, w->in_bytes[i], "caching probe buffer");
        size_t es = w->in_bytes[i] / (size_t)n;   /* 4, or 2 for bfloat16 */
        wk_fill_input(w, i, tmp, SUITE_D1, 1);
        cudaError_t ce = cudaMemcpyAsync((char *)in[i] + off * es, (char *)tmp + off * es, 256 * es,
                                         cudaMemcpyDeviceToDevice, w->s);
        if (ce != cudaSuccess) wk_die_cuda(w, "caching probe", ce);
        wk_sync(w, "caching probe");
        wk_dfree(tmp);
        size_t l = strlen(where);
        snprintf(where + l, wn - l, "%s%s[%lld..%lld]", l ? ", " : "", p->inputs[i].name, (long long)off,
                 (long long)off + 255);
        changed++;
    }
    return changed;
}

/* One call on the inputs as they are now, into out (re-poisoned), checked
 * against the fp32 reference: 1 when right, else 0 with the counts. */
static int caching_call(worker *w, void **in, void **out, const char *what, wk_cmp *ca)
{
    const suite_problem *p = w->p;
    /* The reference needs the inputs as the candidate got them, in case it
     * changes them: kept in a copy. */
    void *keep[WK_MAX_TENSORS] = {0};
    for (int i = 0; i < p->n_inputs; i++) {
        keep[i] = wk_dalloc(w, w->in_bytes[i], "caching probe copy");
        cudaError_t ce = cudaMemcpyAsync(keep[i], in[i], w->in_bytes[i], cudaMemcpyDeviceToDevice, w->s);
        if (ce != cudaSuccess) wk_die_cuda(w, "caching probe", ce);
    }
    int pass = wk_checked_call(w, in, out, keep, what, ca);
    /* The candidate's later calls see its own input, as it left it. */
    wk_free_bufs(keep, p->n_inputs);
    return pass;
}

/* Changes one element of one floating input, both drawn from the kernel's
 * random source (a candidate cannot know which), to the value of another
 * element of the same input, so that the input stays a sample of its
 * distribution.  Returns 0 when no input has two elements. */
static int change_one(worker *w, void **in, char *where, size_t wn)
{
    const suite_problem *p = w->p;
    int cand[WK_MAX_TENSORS], n = 0;
    for (int i = 0; i < p->n_inputs; i++)
        if (p->inputs[i].dtype == KBV_F32 && suite_numel(&p->inputs[i]) >= 2) cand[n++] = i;
    if (!n) return 0;
    int i = cand[wk_secret_u64() % (uint64_t)n];
    uint64_t numel = (uint64_t)suite_numel(&p->inputs[i]);
    uint64_t at = wk_secret_u64() % numel, from = wk_secret_u64() % numel;
    size_t es = w->in_bytes[i] / numel;   /* 4, or 2 for bfloat16 */
    uint32_t old_b = 0, val_b = 0;
    /* Another element with a different value: a few tries at most. */
    for (int k = 0; k < 8; k++) {
        if (from == at) from = (from + 1) % numel;
        if (cudaMemcpy(&old_b, (char *)in[i] + at * es, es, cudaMemcpyDeviceToHost) != cudaSuccess ||
            cudaMemcpy(&val_b, (char *)in[i] + from * es, es, cudaMemcpyDeviceToHost) != cudaSuccess)
            wk_die_cuda(w, "caching probe", cudaGetLastError());
        if (val_b != old_b) break;
        from = wk_secret_u64() % numel;
    }
    if (cudaMemcpy((char *)in[i] + at * es, &val_b, es, cudaMemcpyHostToDevice) != cudaSuccess)
        wk_die_cuda(w, "caching probe", cudaGetLastError());
    /* The values for the detail (a bfloat16 is the top half of a float;
     * the host is little-endian, so the low bytes of the words hold it). */
    float old = 0, val = 0;
    uint32_t ob = es == 2 ? old_b << 16 : old_b, vb = es == 2 ? val_b << 16 : val_b;
    memcpy(&old, &ob, 4);
    memcpy(&val, &vb, 4);
    snprintf(where, wn, "%s[%llu] from %.6g to %.6g", p->inputs[i].name, (unsigned long long)at, old, val);
    return 1;
}

void wk_probe_caching(worker *w, void **in)
{
    const suite_problem *p = w->p;
    void *out[WK_MAX_TENSORS] = {0}, *copy[WK_MAX_TENSORS] = {0}, *out2[WK_MAX_TENSORS] = {0};
    kbv_call c;
    /* Call 1, then calls that a memo of any key gets wrong: the same
     * pointers with 256 elements changed (a memo keyed on a sample of the
     * contents), the same pointers with one element changed at a secret
     * place (a memo keyed on a larger sample), equal contents in new
     * buffers (a memo keyed on the output pointer), and the same pointers
     * with every element redrawn (a memo keyed on the pointers alone). */
    wk_fill_inputs(w, in, SUITE_D1, 0);
    wk_alloc_outputs(w, out);
    wk_make_call(w, &c, in, out);
    wk_sync(w, "caching probe");
    wk_cand_call(w, &c, "caching probe, first call", 0);
    wk_device_sync(w, "caching probe, first call");
    uint64_t fp1 = wk_fingerprint(w, out, w->out_bytes, p->n_outputs);

    char where[512], one[256] = "none", det[1400];
    wk_cmp r;
    int pass = 1;
    int changed = change_a_little(w, in, where, sizeof where);
    if (changed && !caching_call(w, in, out, "caching probe, second call", &r)) {
        pass = 0;
        snprintf(det, sizeof det,
                 "after 256 input elements changed (%s) with the same pointers, the output had %lld "
                 "mismatching elements (%lld unwritten): a result kept from the previous call",
                 where, (long long)r.st.mismatches, (long long)r.st.unwritten);
    }
    if (pass && change_one(w, in, one, sizeof one) && !caching_call(w, in, out, "caching probe, one element", &r)) {
        pass = 0;
        snprintf(det, sizeof det,
                 "after one input element changed (%s) with the same pointers, the output had %lld "
                 "mismatching elements (%lld unwritten): a result kept from the previous call",
                 one, (long long)r.st.mismatches, (long long)r.st.unwritten);
    }
    if (pass) {
        /* Equal contents in new input and output buffers. */
        for (int i = 0; i < p->n_inputs; i++) {
            copy[i] = wk_dalloc(w, w->in_bytes[i], "caching probe copy");
            if (cudaMemcpyAsync(copy[i], in[i], w->in_bytes[i], cudaMemcpyDeviceToDevice, w->s) != cudaSuccess)
                wk_die_cuda(w, "caching probe", cudaGetLastError());
        }
        wk_alloc_outputs(w, out2);
        if (!caching_call(w, copy, out2, "caching probe, new buffers", &r)) {
            pass = 0;
            snprintf(det, sizeof det,
                     "a call on equal input contents in new buffers, into a new output buffer, gave %lld "
                     "mismatching elements (%lld unwritten)",
                     (long long)r.st.mismatches, (long long)r.st.unwritten);
        }
        wk_free_bufs(out2, p->n_outputs);
        wk_free_bufs(copy, p->n_inputs);
    }
    if (pass) {
        wk_fill_inputs(w, in, SUITE_D1, 1);
        if (!caching_call(w, in, out, "caching probe, third call", &r)) {
            pass = 0;
            uint64_t fp3 = wk_fingerprint(w, out, w->out_bytes, p->n_outputs);
            snprintf(det, sizeof det,
                     "a call with the same pointers and every input element redrawn (D1 trial 1 after trial 0) "
                     "gave %lld mismatching elements (%lld unwritten)%s",
                     (long long)r.st.mismatches, (long long)r.st.unwritten,
                     fp1 == fp3 ? "; the output is bitwise the first call's" : "");
        }
    }
    wk_free_bufs(out, p->n_outputs);
    if (pass)
        snprintf(det, sizeof det,
                 "calls with the same pointers and new input contents gave the right output%s%s%s, "
                 "after one element changed (%s), on equal contents in new buffers, and after every "
                 "element was redrawn",
                 changed ? " after 256 elements changed (" : "", changed ? where : "", changed ? ")" : "",
                 one);
    wk_probe(w, "caching", pass, det);
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
    if (gen_fill_bytes(p, n, pattern, w->s, &e)) wk_die_harness(w, "scrub", &e);
    wk_sync(w, "scrub");
    mt_real_free(p);
}

/* The scrub's byte, drawn in secret for each worker, so that a candidate
 * that knows kbv's source cannot leave memory holding the byte the scrub
 * will write (a uniform fill stays recognisable as one, which tells a
 * candidate nothing it could use: the call is compared with the first,
 * not timed).  It is one of the bytes whose
 * repetition reads as a float or bfloat16 of magnitude 2^17 or more
 * (either sign; exponent field 0x90-0xfd): a byte like 0x80 would read as
 * a tiny number, which a ReLU or a max turns into the zero that fresh
 * memory often holds, and the scrub would change nothing. */
static unsigned char scrub_pattern(void)
{
    unsigned lo = 0x48, span = 0x7e - 0x48 + 1;
    unsigned k = (unsigned)wk_secret_below(2u * span);
    return (unsigned char)((k >= span ? 0x80u : 0u) | (lo + k % span));
}

/* The determinism probe's calls, all on the same input (D1 trial 0, drawn
 * afresh before each).  Two calls on an idle GPU often add their atomic
 * partial sums in the same order: on the H200 a Frobenius norm gathered by
 * a thousand blocks' float atomicAdd gave bitwise equal outputs in one
 * whole-suite run and differing ones in the next.  So the later calls
 * change what a kernel's result may depend on, one thing each: the free
 * memory's contents, and the SMs and order its blocks start in (another
 * kernel takes a share of every SM's thread slots when the call starts).
 * The probe stops at the first call that differs from the first.
 *
 * One scrub, not two: each allocates, fills and frees all free memory, and
 * the allocations after it are slow, about 0.3 s a pair on an H200
 * (bench/README.md, scrub_cost), which the whole-suite collect time
 * cannot spare.  A second scrub with another byte only adds the case where
 * the first scrub's byte happens to give the output that the first call's
 * leftovers gave; with the byte drawn in secret from the strong ones, that
 * is a coincidence, not something a candidate can arrange. */
typedef struct {
    int scrub;             /* fill free memory with the secret byte first */
    double occupy_share;   /* wg_occupy's share of the thread slots (0: none) */
    const char *what;      /* how the call differed from the first, for the detail */
} det_call;

static const det_call DET_CALLS[] = {
    {0, 0.0, "the first call"},
    {1, 0.0, "free memory scrubbed"},
    {0, 0.5, "half of every SM's thread slots taken when it started"},
    {0, 0.75, "three quarters of the thread slots taken when it started"},
};
#define N_DET_CALLS (int)(sizeof DET_CALLS / sizeof DET_CALLS[0])
/* Long enough that the call's first blocks are placed while the slots are
 * taken, short beside the probe's other costs. */
#define DET_OCCUPY_US 200.0

void wk_probe_determinism(worker *w, void **in)
{
    const suite_problem *p = w->p;
    void *first[WK_MAX_TENSORS] = {0}, *o[WK_MAX_TENSORS] = {0};
    kbv_call c;
    kbv_err e = {0};
    cudaStream_t side = NULL;
    if (cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess)
        wk_die_cuda(w, "determinism probe: a stream", cudaGetLastError());
    int differs_at = -1;
    for (int k = 0; k < N_DET_CALLS && differs_at < 0; k++) {
        const det_call *d = &DET_CALLS[k];
        if (d->scrub) scrub_free_memory(w, scrub_pattern());
        wk_fill_inputs(w, in, SUITE_D1, 0);
        wk_alloc_outputs(w, k == 0 ? first : o);
        wk_make_call(w, &c, in, k == 0 ? first : o);
        wk_sync(w, "determinism probe");
        if (d->occupy_share > 0 && wg_occupy(side, d->occupy_share, DET_OCCUPY_US, &e))
            wk_die_harness(w, "determinism probe", &e);
        wk_cand_call(w, &c, "determinism probe", 0);
        wk_device_sync(w, "determinism probe");
        if (k == 0) continue;
        int all_eq = 1;
        for (int i = 0; i < p->n_outputs; i++) {
            int eq = 0;
            if (cmp_equal(first[i], o[i], w->out_bytes[i], w->s, &eq, &e)) wk_die_harness(w, "determinism", &e);
            all_eq &= eq;
        }
        if (!all_eq) differs_at = k;
        else wk_free_bufs(o, p->n_outputs);
    }
    cudaStreamDestroy(side);
    char det[512];
    if (differs_at < 0) {
        snprintf(det, sizeof det,
                 "%d calls on the same input gave bitwise equal outputs (between them: free memory scrubbed once, "
                 "a share of the SMs' thread slots taken as two calls started)",
                 N_DET_CALLS);
    } else {
        /* The first call's output as the "reference", in floats. */
        void *r1[WK_MAX_TENSORS] = {0};
        for (int i = 0; i < p->n_outputs; i++) {
            r1[i] = first[i];
            if (w->out[i].dtype != KBV_BF16) continue;
            r1[i] = wk_dalloc(w, w->rout_bytes[i], "determinism probe");
            if (gen_widen_bf16(first[i], r1[i], suite_numel(&p->outputs[i]), w->s, &e))
                wk_die_harness(w, "determinism", &e);
        }
        wk_cmp ca;
        wk_compare(w, o, r1, &ca);
        for (int i = 0; i < p->n_outputs; i++)
            if (w->out[i].dtype == KBV_BF16) wk_dfree(r1[i]);
        snprintf(det, sizeof det,
                 "call %d of %d on the same input (D1 trial 0; %s) differs from the first: "
                 "max abs difference %.3g, %lld elements beyond the tolerance",
                 differs_at + 1, N_DET_CALLS, DET_CALLS[differs_at].what, ca.st.max_abs_err,
                 (long long)ca.st.mismatches);
        wk_free_bufs(o, p->n_outputs);
    }
    wk_free_bufs(first, p->n_outputs);
    wk_probe(w, "determinism", differs_at < 0, det);
}