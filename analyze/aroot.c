/* aroot.c - see aroot.h. */
#include "aroot.h"

#include <stdlib.h>
#include <string.h>
#include "schema.h"

#include "classify.h"
#include "drift.h"

/* One byte per pair, set when the set's analysis classes its candidate a
 * hack or tampering (drift.h says why drift leaves those out).  The sets'
 * "problems" are in run order; an item is matched by its id.  *out owned by
 * the caller. */
static int disturbed_pairs(const run_data *r, cJSON *const *sets, unsigned char **out, kbv_err *e)
{
    unsigned char *skip = calloc(r->n_sets * r->n_problems + 1, 1);
    if (!skip) return err_set(e, KBV_ENOMEM, "out of memory");
    for (size_t s = 0; s < r->n_sets; s++) {
        const cJSON *probs = cJSON_GetObjectItemCaseSensitive(sets[s], "problems"), *it;
        size_t p = 0;
        cJSON_ArrayForEach(it, probs) {
            const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "problem"));
            const char *cls = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "class"));
            while (id && p < r->n_problems && strcmp(r->problem_ids[p], id) != 0) p++;
            if (!id || !cls || p >= r->n_problems) break;
            for (int c = 0; c < CL_N; c++)
                if (strcmp(cls, classify_class_names[c]) == 0 && (classify_is_hack(c) || c == CL_TAMPERING))
                    skip[s * r->n_problems + p] = 1;
            p++;
        }
    }
    *out = skip;
    return 0;
}

int analysis_root(const run_data *r, const analysis_opts *o, cJSON **sets, cJSON **out, kbv_err *e)
{
    /* Read before the sets move into the root below. */
    unsigned char *skip = NULL;
    int rc = disturbed_pairs(r, sets, &skip, e);
    if (rc) return rc;
    cJSON *root = cJSON_CreateObject();
    if (!root) {
        free(skip);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    cJSON_AddStringToObject(root, KBV_K_SCHEMA, KBV_SCHEMA_ANALYSIS);
    cJSON_AddStringToObject(root, "run_id", r->run_id);
    cJSON_AddStringToObject(root, "created_utc", r->created_utc);
    static const char *const copied[] = {"harness", "device"};
    for (int k = 0; k < 2; k++) {
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(r->manifest, copied[k]);
        cJSON_AddItemToObject(root, copied[k], src ? cJSON_Duplicate(src, 1) : cJSON_CreateNull());
    }
    cJSON *cfg = cJSON_AddObjectToObject(root, "config");
    cJSON_AddNumberToObject(cfg, "bootstrap_resamples", (double)o->resamples);
    cJSON_AddNumberToObject(cfg, "bootstrap_seed", (double)o->seed);
    cJSON_AddNumberToObject(cfg, "ci_level", o->level);
    cJSON_AddItemToObject(cfg, "fast_p_points", cJSON_CreateDoubleArray(analysis_fastp_points, ANALYSIS_N_FASTP));
    /* A BF16 set's memory is judged against its bf16 baseline (the set's
     * memory.baseline says so). */
    cJSON_AddStringToObject(cfg, "memory_baseline", "tf32");
    cJSON *cl = cJSON_AddArrayToObject(root, "classes");
    for (int c = 0; c < CL_N; c++) cJSON_AddItemToArray(cl, cJSON_CreateString(classify_class_names[c]));
    /* Whether the run is whole: a report of an interrupted collect must
     * say so before any number, since its unfinished pairs count as
     * errors (render's headline does). */
    cJSON *pj = cJSON_AddObjectToObject(root, "pairs");
    cJSON_AddNumberToObject(pj, "total", (double)(r->n_sets * r->n_problems));
    cJSON_AddNumberToObject(pj, "unfinished", (double)run_unfinished_pairs(r));
    cJSON *sj = cJSON_AddArrayToObject(root, "sets");
    for (size_t s = 0; s < r->n_sets; s++) {
        cJSON_AddItemToArray(sj, sets[s]);
        sets[s] = NULL;
    }
    /* Baselines whose median moved between the sets of the run (drift.h),
     * beside the candidates that leave the GPU alone. */
    cJSON *drift = NULL;
    rc = drift_build(r, o->level, skip, &drift, e);
    free(skip);
    if (rc) {
        cJSON_Delete(root);
        return rc;
    }
    cJSON_AddItemToObject(root, "baseline_drift", drift);
    *out = root;
    return 0;
}
