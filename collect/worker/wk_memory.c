/* wk_memory.c - peak device memory of candidate and baselines, measured
 * the same way (DESIGN.md 5a step 8), and the baselines' kernel choices.
 * See wk.h. */
#include <stdio.h>
#include <string.h>

#include "memtrack.h"
#include "schema.h"
#include "wk.h"

void wk_measure_memory(worker *w, void **in, wk_memres *m)
{
    const suite_problem *p = w->p;
    void *out[WK_MAX_TENSORS] = {0};
    kbv_call c;
    wk_fill_inputs(w, in, SUITE_D1, 0);
    wk_alloc_outputs(w, out);
    wk_make_call(w, &c, in, out);
    memset(m, 0, N_VARIANTS * sizeof *m);
    for (int v = 0; v < N_VARIANTS; v++) {
        if (v == V_TF32 && !w->bf16 && !p->uses_tf32) {
            m[v] = m[V_FP32]; /* the same computation (see timing) */
            continue;
        }
        if (!wk_variant_timed(w, v)) continue;
        for (int i = 0; i < p->n_outputs; i++) wk_poison_output(w, i, out[i]);
        wk_device_sync(w, "memory");
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
            if (untracked <= WK_UNTRACKED_FLOOR) untracked = 0;
        }
        if (v == V_CAND) wk_cand_call(w, &c, "memory", 0);
        else wk_base_call(w, v, &c);
        wk_device_sync(w, "memory");
        cudaMemGetInfo(&f1, &tot);
        mt_counts mc;
        mt_get(o, &mc);
        long long extra = mc.peak;
        /* A candidate that allocates a workspace only in calls it can tell
         * are timed (a busy stream) shows it here. */
        if (v == V_CAND && w->cand_timed_peak > extra) extra = w->cand_timed_peak;
        /* Baselines: every buffer they hold was allocated through the
         * interposed cudaMalloc; the workspace figure is a floor in case a
         * library allocated it some other way. */
        if (v != V_CAND && (long long)base_workspace_bytes(w->base) > extra)
            extra = (long long)base_workspace_bytes(w->base);
        m[v].peak_bytes = (long long)w->io_bytes + extra + untracked;
        m[v].driver_delta = (long long)f0 - (long long)f1;
        m[v].untracked = untracked;
    }
    for (int i = 0; i < p->n_outputs; i++) wk_poison_output(w, i, out[i]);
    wk_sync(w, "poison");
    wk_free_bufs(out, p->n_outputs);
}

/* One "baseline" record per variant whose kernel the baseline chose by
 * timing, so that a reader can tell a change of kernel between the sets
 * of a run (each worker chooses anew) from a change of clock. */
void wk_emit_choices(worker *w)
{
    for (int v = 0; v < N_VARIANTS; v++) {
        if (v == V_CAND || !wk_variant_timed(w, v)) continue;
        base_variant bv = v == V_BF16 ? BASE_BF16 : v == V_TF32 ? BASE_TF32 : BASE_FP32;
        const char *c = base_choice(w->base, bv);
        if (!c || !*c) continue;
        cJSON *r = wk_rec(KBV_REC_BASELINE);
        cJSON_AddStringToObject(r, KBV_K_VARIANT, wk_variant_names[v]);
        cJSON_AddStringToObject(r, "choice", c);
        /* The same choices as base_pin takes them back (scripts/pins.py). */
        const char *pins = base_pins(w->base, bv);
        if (pins && *pins) cJSON_AddStringToObject(r, "pins", pins);
        wk_emit(w, r);
    }
}

void wk_emit_memory(worker *w, const wk_memres *m, long long cand_leak, long long base_leak)
{
    for (int v = 0; v < N_VARIANTS; v++) {
        /* tf32 is recorded where it is the fp32 computation too. */
        if (w->bf16 ? !wk_variant_timed(w, v) : v == V_BF16) continue;
        cJSON *r = wk_rec(KBV_REC_MEMORY);
        cJSON_AddStringToObject(r, KBV_K_VARIANT, wk_variant_names[v]);
        cJSON_AddNumberToObject(r, "peak_bytes", (double)m[v].peak_bytes);
        cJSON_AddNumberToObject(r, "io_bytes", (double)w->io_bytes);
        cJSON_AddNumberToObject(r, "leaked_bytes", (double)(v == V_CAND ? cand_leak : base_leak));
        cJSON_AddNumberToObject(r, "driver_delta_bytes", (double)m[v].driver_delta);
        cJSON_AddNumberToObject(r, "untracked_bytes", (double)m[v].untracked);
        wk_emit(w, r);
    }
}