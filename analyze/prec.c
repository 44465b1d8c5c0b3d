/* prec.c - see prec.h. */
#include "prec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A tolerance field: absent keeps *out, a number replaces it. */
static int tol_num(const cJSON *o, const char *key, double *out, kbv_err *e)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) return 0;
    if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0) || !isfinite(it->valuedouble))
        return err_set(e, KBV_EINPUT, "manifest.json: config.tolerance_bf16.%s must be a non-negative number", key);
    *out = it->valuedouble;
    return 0;
}

int prec_read(run_data *r, const cJSON *config, const cJSON *sets, kbv_err *e)
{
    int rc;
    /* Manifests from before the BF16 setting have no tolerance_bf16 and no
     * BF16 set; the default is the tolerance collect applies (1e-2). */
    r->atol_bf16 = r->rtol_bf16 = 1e-2;
    const cJSON *tb = cJSON_GetObjectItemCaseSensitive(config, "tolerance_bf16");
    if (cJSON_IsObject(tb) && ((rc = tol_num(tb, "atol", &r->atol_bf16, e)) || (rc = tol_num(tb, "rtol", &r->rtol_bf16, e))))
        return rc;
    r->set_precision = calloc(r->n_sets + 1, sizeof *r->set_precision);
    r->set_compare_with = calloc(r->n_sets + 1, sizeof *r->set_compare_with);
    if (!r->set_precision || !r->set_compare_with) return err_set(e, KBV_ENOMEM, "out of memory");
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, sets) {
        if (i >= r->n_sets) break;
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(it, "precision");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(it, "compare_with");
        if (p && !(cJSON_IsString(p) && (strcmp(p->valuestring, "fp32") == 0 || strcmp(p->valuestring, "bf16") == 0)))
            return err_set(e, KBV_EINPUT, "manifest.json: set %s: \"precision\" must be \"fp32\" or \"bf16\"",
                           r->set_names[i]);
        if (c && !cJSON_IsString(c))
            return err_set(e, KBV_EINPUT, "manifest.json: set %s: \"compare_with\" must be a set name",
                           r->set_names[i]);
        r->set_precision[i] = p && strcmp(p->valuestring, "bf16") == 0 ? RUN_PREC_BF16 : RUN_PREC_FP32;
        r->set_compare_with[i] = c ? c->valuestring : NULL;
        i++;
    }
    return 0;
}

int prec_is_bf16(const run_data *r, size_t set)
{
    return r->set_precision && set < r->n_sets && r->set_precision[set] == RUN_PREC_BF16;
}

int prec_baselines(const run_data *r, size_t set, int v[RUN_MAX_BL])
{
    if (prec_is_bf16(r, set)) {
        v[0] = RUN_V_BF16;
        v[1] = -1;
        return 1;
    }
    v[0] = RUN_V_FP32;
    v[1] = RUN_V_TF32;
    return 2;
}

void prec_tolerance(const run_data *r, size_t set, double *atol, double *rtol)
{
    int bf16 = prec_is_bf16(r, set);
    *atol = bf16 ? r->atol_bf16 : r->atol;
    *rtol = bf16 ? r->rtol_bf16 : r->rtol;
}

long prec_set_index(const run_data *r, const char *name)
{
    for (size_t s = 0; name && s < r->n_sets; s++)
        if (strcmp(r->set_names[s], name) == 0) return (long)s;
    return -1;
}
