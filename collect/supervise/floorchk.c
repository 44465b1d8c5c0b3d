/* floorchk.c - see floorchk.h. */
#include "floorchk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstat.h"
#include "schema.h"
#include "verdict.h"

int floorchk_note(floorchk *f, const cJSON *rec)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(rec, KBV_K_TYPE);
    if (!cJSON_IsString(type)) return 0;
    if (strcmp(type->valuestring, KBV_REC_PROBE) == 0) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(rec, KBV_K_PROBE);
        const cJSON *pass = cJSON_GetObjectItemCaseSensitive(rec, "pass");
        if (cJSON_IsString(name) && strcmp(name->valuestring, "physical-floor") == 0)
            f->probe = cJSON_IsTrue(pass) ? 1 : 2;
        return 0;
    }
    if (strcmp(type->valuestring, KBV_REC_TIME) != 0) return 0;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, KBV_K_VARIANT);
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(rec, KBV_K_GPU_MS);
    if (!cJSON_IsString(v) || strcmp(v->valuestring, "candidate") != 0 || !cJSON_IsNumber(g)) return 0;
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 64;
        double *ms = realloc(f->ms, (size_t)cap * sizeof *ms);
        if (!ms) return -1;
        f->ms = ms;
        f->cap = cap;
    }
    f->ms[f->n++] = g->valuedouble;
    return 0;
}

int floorchk_contradicts(const floorchk *f, const suite_problem *p, int bf16, double copy_gbps, double tf32_tflops,
                         char *why, size_t n)
{
    if (f->probe != 1 || f->n == 0 || !p) return 0;
    double *scratch = malloc((size_t)f->n * sizeof *scratch);
    if (!scratch) return 0;
    double med = cstat_median(f->ms, f->n, scratch);
    free(scratch);
    double min_bytes = suite_floor_bytes(p, bf16), flops = suite_floor_flops(p);
    double floor_ms = verdict_floor_ms(min_bytes, flops, copy_gbps, tf32_tflops);
    /* The worker's median is of the same samples and its floor of the same
     * numbers; the journal's numbers keep 15 digits, hence the sliver. */
    if (verdict_floor_pass(med * (1 + 1e-9), floor_ms)) return 0;
    snprintf(why, n,
             "the worker's physical-floor probe passed, but the journalled candidate median %.4g ms of %d samples "
             "is below 0.9 x the floor of %.4g ms that collect works out (%.4g bytes / %.4g GB/s, %.4g FLOP / "
             "(2 x %.4g TFLOP/s)): the probe was judged with altered numbers",
             med, f->n, floor_ms, min_bytes, copy_gbps, flops, tf32_tflops);
    return 1;
}

void floorchk_free(floorchk *f)
{
    free(f->ms);
    memset(f, 0, sizeof *f);
}
