/* aroot.c - see aroot.h. */
#include "aroot.h"
#include "schema.h"

#include "classify.h"
#include "drift.h"

int analysis_root(const run_data *r, const analysis_opts *o, cJSON **sets, cJSON **out, kbv_err *e)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return err_set(e, KBV_ENOMEM, "out of memory");
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
    cJSON *sj = cJSON_AddArrayToObject(root, "sets");
    for (size_t s = 0; s < r->n_sets; s++) {
        cJSON_AddItemToArray(sj, sets[s]);
        sets[s] = NULL;
    }
    /* Baselines whose median moved between the sets of the run (drift.h). */
    cJSON *drift = NULL;
    int rc = drift_build(r, o->level, &drift, e);
    if (rc) {
        cJSON_Delete(root);
        return rc;
    }
    cJSON_AddItemToObject(root, "baseline_drift", drift);
    *out = root;
    return 0;
}
