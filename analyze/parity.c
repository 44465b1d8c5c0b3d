/* parity.c - parity.json judged against the limit (see parity.h). */
#include "parity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "jio.h"
#include "nmap.h"
#include "schema.h"

/* The BF16 setting's baseline is measured apart (parity.py --precision
 * bf16) and only where a run has it, so its ratio is optional: judged when
 * present, never missed. */
enum { P_FP32 = 0, P_TF32 = 1, P_BF16 = 2, P_NB = 3 };
static const char *const base_names[P_NB] = {KBV_VAR_FP32, KBV_VAR_TF32, KBV_VAR_BF16};
static const char *const ratio_keys[P_NB] = {"fp32_ratio", "tf32_ratio", "bf16_ratio"};

/* One problem of the run as parity.json measured it. */
typedef struct pentry {
    int measured;
    double ratio[P_NB];        /* NaN where null */
    const char *exception;     /* borrowed from the document; NULL where null or empty */
} pentry;

/* An optional number: 0 with *out set (NaN when absent or null), or -1 when
 * the value is neither a number nor null. */
static int opt_ratio(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = NAN;
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v)) return -1;
    *out = v->valuedouble;
    return 0;
}

/* The header of parity.json: schema (absent in files written before the id
 * existed, which are the first version), gpu, torch, cuda and samples. */
static int read_header(const cJSON *d, const char *path, cJSON *out, kbv_err *e)
{
    if (!cJSON_IsObject(d)) return err_set(e, KBV_EINPUT, "%s: expected a JSON object", path);
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(d, KBV_K_SCHEMA);
    if (sc && !(cJSON_IsString(sc) && strcmp(sc->valuestring, KBV_SCHEMA_PARITY) == 0))
        return err_set(e, KBV_EINPUT, "%s: \"schema\" is not \"" KBV_SCHEMA_PARITY "\"", path);
    const char *gpu, *torch;
    long long ns;
    int rc;
    if ((rc = jio_get_str(d, "gpu", path, &gpu, e)) || (rc = jio_get_str(d, "torch", path, &torch, e)))
        return rc;
    const cJSON *cu = cJSON_GetObjectItemCaseSensitive(d, "cuda");
    if (cu && !cJSON_IsString(cu) && !cJSON_IsNull(cu))
        return err_set(e, KBV_EINPUT, "%s: \"cuda\" must be a string", path);
    if ((rc = jio_get_int(d, "samples", path, &ns, e))) return rc;
    if (ns < 1) return err_set(e, KBV_EINPUT, "%s: \"samples\" must be at least 1", path);
    cJSON_AddStringToObject(out, "gpu", gpu);
    cJSON_AddStringToObject(out, "torch", torch);
    cJSON_AddStringToObject(out, "cuda", cJSON_IsString(cu) ? cu->valuestring : "unknown");
    cJSON_AddNumberToObject(out, "samples", (double)ns);
    cJSON_AddNumberToObject(out, "limit", PARITY_LIMIT);
    return 0;
}

/* Fills ent[] (one per problem of the run) from the document's problems;
 * problems the run does not have are ignored. */
static int read_entries(const cJSON *d, const char *path, const nmap *by_id, pentry *ent, kbv_err *e)
{
    const cJSON *probs, *it;
    int rc = jio_get_arr(d, "problems", path, &probs, e);
    if (rc) return rc;
    int j = 0;
    cJSON_ArrayForEach(it, probs) {
        char w[4200];
        snprintf(w, sizeof w, "%s: problems[%d]", path, j++);
        const char *id;
        if (!cJSON_IsObject(it)) return err_set(e, KBV_EINPUT, "%s: expected an object", w);
        if ((rc = jio_get_str(it, "id", w, &id, e))) return rc;
        double r[P_NB];
        for (int b = 0; b < P_NB; b++)
            if (opt_ratio(it, ratio_keys[b], &r[b]) || (!isnan(r[b]) && !(r[b] >= 0)))
                return err_set(e, KBV_EINPUT, "%s (%s): \"%s\" must be a number >= 0 or null", w, id, ratio_keys[b]);
        const cJSON *ex = cJSON_GetObjectItemCaseSensitive(it, "exception");
        if (ex && !cJSON_IsString(ex) && !cJSON_IsNull(ex))
            return err_set(e, KBV_EINPUT, "%s (%s): \"exception\" must be a string or null", w, id);
        long qi = nmap_find(by_id, id);
        if (qi < 0) continue;   /* measured, but not part of this run */
        pentry *q = &ent[qi];
        if (q->measured) return err_set(e, KBV_EINPUT, "%s: problem '%s' appears twice", path, id);
        q->measured = 1;
        for (int b = 0; b < P_NB; b++) q->ratio[b] = r[b];
        q->exception = cJSON_IsString(ex) && *ex->valuestring ? ex->valuestring : NULL;
    }
    return 0;
}

/* The verdict of one problem as an analysis.json item.  A problem is within
 * the limit when it was measured, has no exception and both ratios are at
 * most the limit; otherwise the reason is parity.py's exception or, without
 * one, what was found (a ratio over the limit, no ratio, not measured). */
static cJSON *verdict(const char *id, const pentry *q)
{
    char reason[512] = "";
    size_t k = 0;
    if (!q->measured) {
        snprintf(reason, sizeof reason, "not measured: absent from parity.json");
    } else if (q->exception) {
        snprintf(reason, sizeof reason, "%s", q->exception);
    } else {
        for (int b = 0; b < P_NB; b++) {
            int w = 0;
            if (isnan(q->ratio[b]) && b != P_BF16)
                w = snprintf(reason + k, sizeof reason - k, "%sno %s ratio measured", k ? "; " : "", base_names[b]);
            else if (!isnan(q->ratio[b]) && q->ratio[b] > PARITY_LIMIT)
                w = snprintf(reason + k, sizeof reason - k, "%sslower than PyTorch: %s ratio %.3f", k ? "; " : "",
                             base_names[b], q->ratio[b]);
            if (w > 0 && (size_t)w < sizeof reason - k) k += (size_t)w;
        }
    }
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, KBV_K_PROBLEM, id);
    for (int b = 0; b < P_NB; b++)
        cJSON_AddItemToObject(o, ratio_keys[b], isnan(q->ratio[b]) ? cJSON_CreateNull() : cJSON_CreateNumber(q->ratio[b]));
    cJSON_AddBoolToObject(o, "measured", q->measured);
    cJSON_AddBoolToObject(o, "within", !reason[0]);
    cJSON_AddItemToObject(o, "reason", reason[0] ? cJSON_CreateString(reason) : cJSON_CreateNull());
    return o;
}

int parity_add(const char *run_dir, const run_data *r, cJSON *root, kbv_err *e)
{
    char path[4096];
    int rc = cli_path(path, sizeof path, run_dir, "parity.json", e);
    if (rc) return rc;
    if (access(path, F_OK) != 0) {
        cJSON_DeleteItemFromObjectCaseSensitive(root, "parity");
        cJSON_AddItemToObject(root, "parity", cJSON_CreateNull());
        return 0;
    }
    cJSON *doc = NULL, *out = cJSON_CreateObject();
    nmap *by_id = NULL;
    pentry *ent = calloc(r->n_problems ? r->n_problems : 1, sizeof *ent);
    if (!out || !ent) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < r->n_problems; i++)
        for (int b = 0; b < P_NB; b++) ent[i].ratio[b] = NAN;
    if ((rc = jio_load(path, &doc, e)) || (rc = read_header(doc, path, out, e)) ||
        (rc = nmap_build(r->problem_ids, r->n_problems, &by_id, e)) || (rc = read_entries(doc, path, by_id, ent, e)))
        goto done;
    cJSON *arr = cJSON_AddArrayToObject(out, "problems");
    for (size_t i = 0; arr && i < r->n_problems; i++) {
        cJSON *v = verdict(r->problem_ids[i], &ent[i]);
        if (!v || !cJSON_AddItemToArray(arr, v)) {
            cJSON_Delete(v);
            rc = err_set(e, KBV_ENOMEM, "out of memory");
            goto done;
        }
    }
    if (!arr) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }
    /* An earlier verdict (parity_update) is replaced. */
    cJSON_DeleteItemFromObjectCaseSensitive(root, "parity");
    cJSON_AddItemToObject(root, "parity", out);
    out = NULL;
done:
    cJSON_Delete(out);
    cJSON_Delete(doc);
    nmap_free(by_id);
    free(ent);
    return rc;
}

int parity_update(const char *run_dir, kbv_err *e)
{
    char mpath[4096], apath[4096];
    cJSON *manifest = NULL, *analysis = NULL;
    run_data *r = NULL;
    int rc;
    if ((rc = cli_path(mpath, sizeof mpath, run_dir, "manifest.json", e)) ||
        (rc = cli_path(apath, sizeof apath, run_dir, "analysis.json", e)) || (rc = jio_load(mpath, &manifest, e)) ||
        (rc = jio_load(apath, &analysis, e)))
        goto done;
    /* run_from_manifest takes the manifest, also on failure. */
    rc = run_from_manifest(manifest, &r, e);
    manifest = NULL;
    if (rc) goto done;
    const cJSON *rid = cJSON_GetObjectItemCaseSensitive(analysis, "run_id");
    if (!cJSON_IsString(rid) || !r->run_id || strcmp(rid->valuestring, r->run_id) != 0) {
        rc = err_set(e, KBV_EINPUT, "%s: not the analysis of the run in %s (run_id differs)", apath, mpath);
        goto done;
    }
    if ((rc = parity_add(run_dir, r, analysis, e)) || (rc = jio_utf8_fix(analysis, NULL, e)) ||
        (rc = jio_save(apath, analysis, e)))
        goto done;
done:
    cJSON_Delete(manifest);
    cJSON_Delete(analysis);
    run_free(r);
    return rc;
}
