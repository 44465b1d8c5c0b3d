/* kbv-merge OUT_DIR RUN_DIR... - joins the shards of one run.
 *
 * Shards come from `kbv collect --shard I/N` on several machines.  They
 * belong to one run when their manifests agree on everything but the
 * identity of the shard (run_id, created_utc, config.shard, device details
 * other than the GPU model): the same suite, configuration, seed and
 * candidate sources.  The merged journal holds every (set, problem) pair
 * exactly once, in the order a one-machine run writes them, so that analyze
 * gives the whole run's numbers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"
#include "cli.h"
#include "err.h"
#include "jio.h"
#include "jnl.h"
#include "log.h"
#include "nmap.h"
#include "sums.h"

static const char usage[] =
    "usage: kbv merge OUT_DIR RUN_DIR...\n"
    "\n"
    "Joins the shards of one run (made with `kbv collect --shard I/N`) into\n"
    "OUT_DIR, a run directory that analyze treats like any other.  Refuses\n"
    "shards of different runs (configuration, suite, seed or candidate\n"
    "sources differ), a (set, problem) pair found in two shards, a pair\n"
    "found in none, and a shard that fails `kbv verify`.  OUT_DIR must not\n"
    "exist yet, nor lie inside a shard.\n";

/* The part of a manifest that must agree between shards of one run. */
static cJSON *identity_of(const cJSON *manifest)
{
    cJSON *id = cJSON_Duplicate(manifest, 1);
    if (!id) return NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(id, "run_id");
    cJSON_DeleteItemFromObjectCaseSensitive(id, "created_utc");
    cJSON_DeleteItemFromObjectCaseSensitive(id, "shard");
    cJSON_DeleteItemFromObjectCaseSensitive(id, "shards");
    cJSON *config = cJSON_GetObjectItemCaseSensitive(id, "config");
    if (config) {
        cJSON_DeleteItemFromObjectCaseSensitive(config, "shard");
        cJSON_DeleteItemFromObjectCaseSensitive(config, "gpus");
    }
    /* Nodes differ in driver, clocks and measured rates; the GPU model must
     * not, or the shards' times are not one experiment. */
    cJSON *device = cJSON_GetObjectItemCaseSensitive(id, "device");
    if (device) {
        cJSON *name = cJSON_GetObjectItemCaseSensitive(device, "name");
        cJSON *keep = name ? cJSON_Duplicate(name, 1) : NULL;
        cJSON_DeleteItemFromObjectCaseSensitive(id, "device");
        if (keep) cJSON_AddItemToObject(id, "device_name", keep);
    }
    /* The harness commit must agree; its version string follows from it. */
    return id;
}

/* Finds the first key where two JSON values differ, for the message. */
static void first_difference(const cJSON *a, const cJSON *b, char *path, size_t n)
{
    if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
        for (const cJSON *it = a->child; it; it = it->next) {
            const cJSON *other = cJSON_GetObjectItemCaseSensitive(b, it->string);
            if (!other || !cJSON_Compare(it, other, 1)) {
                size_t len = strlen(path);
                snprintf(path + len, n - len, "%s%s", len ? "." : "", it->string);
                if (other) first_difference(it, other, path, n);
                return;
            }
        }
        for (const cJSON *it = b->child; it; it = it->next) {
            if (!cJSON_GetObjectItemCaseSensitive(a, it->string)) {
                size_t len = strlen(path);
                snprintf(path + len, n - len, "%s%s", len ? "." : "", it->string);
                return;
            }
        }
    }
}

typedef struct {
    int set, problem;   /* indices in the manifest's lists */
    long shard;         /* which input it came from */
    long seq;           /* position in that shard's journal */
    char *line;         /* owned */
} rec;

static int rec_cmp(const void *pa, const void *pb)
{
    const rec *a = pa, *b = pb;
    if (a->set != b->set) return a->set < b->set ? -1 : 1;
    if (a->problem != b->problem) return a->problem < b->problem ? -1 : 1;
    if (a->shard != b->shard) return a->shard < b->shard ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The names of a manifest list (its strings, or each object's `key`), in
 * list order, NULL where an item has none; *out (borrowed strings) is owned
 * by the caller. */
static int names_of(const cJSON *arr, const char *key, const char ***out, kbv_err *e)
{
    int n = cJSON_GetArraySize(arr), i = 0;
    *out = calloc((size_t)n + 1, sizeof **out);
    if (!*out) return err_set(e, KBV_ENOMEM, "out of memory");
    for (const cJSON *it = arr ? arr->child : NULL; it; it = it->next, i++) {
        const cJSON *v = key ? cJSON_GetObjectItemCaseSensitive(it, key) : it;
        (*out)[i] = cJSON_IsString(v) ? v->valuestring : NULL;
    }
    return 0;
}

static int merge(const char *out_dir, int n_in, char **in_dirs, kbv_err *e)
{
    cJSON **manifests = calloc((size_t)n_in, sizeof *manifests);
    cJSON *identity0 = NULL, *merged = NULL;
    rec *recs = NULL;
    size_t n_recs = 0, cap = 0;
    int *owner = NULL;  /* shard that holds each pair, or -1 */
    const char **set_names = NULL, **prob_names = NULL;   /* borrowed from manifests[0] */
    nmap *set_map = NULL, *prob_map = NULL;
    char tmp_dir[4096] = "", path[4096];
    int rc = 0, n_sets, n_problems;
    const cJSON *sets, *problems;
    if (!manifests) return err_set(e, KBV_ENOMEM, "out of memory");

    struct stat st;
    if (stat(out_dir, &st) == 0) {
        rc = err_set(e, KBV_EUSAGE, "%s already exists; merge writes a new run directory", out_dir);
        goto done;
    }
    /* The output must not change an input: a run inside a shard would be
     * taken for part of it (and verify would find an unlisted folder). */
    for (int i = 0; i < n_in; i++)
        if (cli_path_inside(out_dir, in_dirs[i])) {
            rc = err_set(e, KBV_EUSAGE, "%s lies inside the shard %s; merge into a folder outside the inputs",
                         out_dir, in_dirs[i]);
            goto done;
        }
    /* A shard's raw files must be those its collect sealed: merging would
     * otherwise seal a changed journal anew, and the change would pass. */
    for (int i = 0; i < n_in; i++) {
        if ((rc = cli_path(path, sizeof path, in_dirs[i], "SHA256SUMS", e))) goto done;
        if (lstat(path, &st) != 0) {
            log_warn("merge", "%s: no SHA256SUMS: the shard was not sealed by collect, and is taken as it is",
                     in_dirs[i]);
            continue;
        }
        if ((rc = sums_verify(in_dirs[i], NULL, NULL, e))) {
            err_prefix(e, "shard %s fails kbv verify", in_dirs[i]);
            goto done;
        }
    }
    for (int i = 0; i < n_in; i++) {
        if ((rc = cli_path(path, sizeof path, in_dirs[i], "manifest.json", e))) goto done;
        if ((rc = jio_load(path, &manifests[i], e))) goto done;
        const char *schema;
        if ((rc = jio_get_str(manifests[i], "schema", path, &schema, e))) goto done;
        if (strcmp(schema, "kbv-run/1") != 0) {
            rc = err_set(e, KBV_EINPUT, "%s: schema \"%s\" is not kbv-run/1", path, schema);
            goto done;
        }
        cJSON *id = identity_of(manifests[i]);
        if (!id) {
            rc = err_set(e, KBV_ENOMEM, "out of memory");
            goto done;
        }
        if (i == 0) {
            identity0 = id;
        } else {
            int same = cJSON_Compare(identity0, id, 1);
            char where[512] = "";
            if (!same) first_difference(identity0, id, where, sizeof where);
            cJSON_Delete(id);
            if (!same) {
                rc = err_set(e, KBV_EINPUT, "%s and %s are not shards of one run: their manifests differ at \"%s\"",
                             in_dirs[0], in_dirs[i], where[0] ? where : "?");
                goto done;
            }
        }
    }
    if ((rc = jio_get_arr(manifests[0], "sets", in_dirs[0], &sets, e))) goto done;
    if ((rc = jio_get_arr(manifests[0], "problems", in_dirs[0], &problems, e))) goto done;
    n_sets = cJSON_GetArraySize(sets);
    n_problems = cJSON_GetArraySize(problems);
    if ((rc = names_of(sets, "name", &set_names, e)) || (rc = names_of(problems, NULL, &prob_names, e)) ||
        (rc = nmap_build(set_names, (size_t)n_sets, &set_map, e)) ||
        (rc = nmap_build(prob_names, (size_t)n_problems, &prob_map, e)))
        goto done;
    owner = malloc(sizeof *owner * (size_t)(n_sets > 0 ? n_sets : 1) * (size_t)(n_problems > 0 ? n_problems : 1));
    if (!owner) {
        rc = err_set(e, KBV_ENOMEM, "out of memory");
        goto done;
    }
    for (int k = 0; k < n_sets * n_problems; k++) owner[k] = -1;

    for (int i = 0; i < n_in; i++) {
        jnl_reader *r;
        if ((rc = jnl_open_dir(in_dirs[i], &r, e))) goto done;
        const char *line;
        size_t len;
        long lineno;
        int torn;
        while ((rc = jnl_next(r, &line, &len, &lineno, &torn, e)) == 1) {
            if (len == 0) continue;
            if (torn) {
                log_warn("merge", "%s:%ld: dropping a torn last line (an interrupted collect)", jnl_path(r), lineno);
                continue;
            }
            char what[4200];
            snprintf(what, sizeof what, "%s:%ld", jnl_path(r), lineno);
            cJSON *v;
            if ((rc = jio_parse(line, len, what, &v, e))) break;
            const char *set_name, *problem;
            rc = jio_get_str(v, "set", what, &set_name, e);
            if (!rc) rc = jio_get_str(v, "problem", what, &problem, e);
            int si = rc ? -1 : (int)nmap_find(set_map, set_name);
            int pi = rc ? -1 : (int)nmap_find(prob_map, problem);
            if (!rc && (si < 0 || pi < 0))
                rc = err_set(e, KBV_EINPUT, "%s: set \"%s\" or problem \"%s\" is not in the manifest", what,
                             set_name, problem);
            if (!rc) {
                /* set_name and problem live in v: the message is made before it goes. */
                int *o = &owner[si * n_problems + pi];
                if (*o >= 0 && *o != i)
                    rc = err_set(e, KBV_EINPUT, "pair %s/%s is in two shards: %s and %s", set_name, problem,
                                 in_dirs[*o], in_dirs[i]);
                else
                    *o = i;
            }
            cJSON_Delete(v);
            if (rc) break;
            if (n_recs == cap) {
                cap = cap ? cap * 2 : 4096;
                rec *bigger = realloc(recs, cap * sizeof *recs);
                if (!bigger) {
                    rc = err_set(e, KBV_ENOMEM, "out of memory");
                    break;
                }
                recs = bigger;
            }
            recs[n_recs] = (rec){si, pi, i, lineno, strndup(line, len)};
            if (!recs[n_recs].line) {
                rc = err_set(e, KBV_ENOMEM, "out of memory");
                break;
            }
            n_recs++;
        }
        jnl_close(r);
        if (rc < 0) goto done;
        rc = 0;
    }
    for (int s = 0; s < n_sets; s++)
        for (int p = 0; p < n_problems; p++)
            if (owner[s * n_problems + p] < 0) {
                const cJSON *set = cJSON_GetArrayItem(sets, s);
                const cJSON *name = cJSON_GetObjectItemCaseSensitive(set, "name");
                const cJSON *prob = cJSON_GetArrayItem(problems, p);   /* an id, or not a string */
                rc = err_set(e, KBV_EINPUT, "pair %s/%s is in no shard: a shard is missing or unfinished",
                             cJSON_IsString(name) ? name->valuestring : "?",
                             cJSON_IsString(prob) ? prob->valuestring : "?");
                goto done;
            }
    if (n_recs) qsort(recs, n_recs, sizeof *recs, rec_cmp);   /* recs is NULL when empty */

    /* The merged manifest: the first shard's, marked as a merge of all. */
    merged = cJSON_Duplicate(manifests[0], 1);
    cJSON *config = cJSON_GetObjectItemCaseSensitive(merged, "config");
    if (config) cJSON_DeleteItemFromObjectCaseSensitive(config, "shard");
    cJSON_DeleteItemFromObjectCaseSensitive(merged, "shard");
    cJSON *shards = cJSON_AddArrayToObject(merged, "shards");
    for (int i = 0; i < n_in; i++) {
        const cJSON *rid = cJSON_GetObjectItemCaseSensitive(manifests[i], "run_id");
        cJSON_AddItemToArray(shards, cJSON_CreateString(cJSON_IsString(rid) ? rid->valuestring : in_dirs[i]));
    }

    /* Build in a temporary folder beside OUT_DIR, then rename it into place. */
    snprintf(tmp_dir, sizeof tmp_dir, "%s.tmp.%ld", out_dir, (long)getpid());
    if ((rc = afile_mkdirs(tmp_dir, e))) goto done;
    if ((rc = cli_path(path, sizeof path, tmp_dir, "manifest.json", e))) goto done;
    if ((rc = jio_save(path, merged, e))) goto done;
    if ((rc = cli_path(path, sizeof path, tmp_dir, "samples.jsonl", e))) goto done;
    afile *f;
    if ((rc = afile_open(&f, path, e))) goto done;
    for (size_t k = 0; k < n_recs; k++) {
        fputs(recs[k].line, afile_fp(f));
        fputc('\n', afile_fp(f));
    }
    if ((rc = afile_commit(f, e))) goto done;
    if ((rc = sums_seal_raw(tmp_dir, e))) goto done;
    if (rename(tmp_dir, out_dir) != 0) {
        rc = err_set(e, KBV_ERUNTIME, "%s: cannot rename into place: %s", out_dir, strerror(errno));
        goto done;
    }
    tmp_dir[0] = '\0';
    log_info("merge", "%d shards, %zu records -> %s", n_in, n_recs, out_dir);
done:
    if (tmp_dir[0]) {
        char p2[4300];
        const char *names[] = {"manifest.json", "samples.jsonl", "SHA256SUMS"};
        for (int k = 0; k < 3; k++) {
            snprintf(p2, sizeof p2, "%s/%s", tmp_dir, names[k]);
            unlink(p2);
        }
        rmdir(tmp_dir);
    }
    for (size_t k = 0; k < n_recs; k++) free(recs[k].line);
    free(recs);
    free(owner);
    nmap_free(set_map);
    nmap_free(prob_map);
    free(set_names);
    free(prob_names);
    cJSON_Delete(merged);
    cJSON_Delete(identity0);
    for (int i = 0; i < n_in; i++) cJSON_Delete(manifests[i]);
    free(manifests);
    return rc;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--version")) {
            cli_print_version("kbv-merge");
            return 0;
        }
        if (argv[i][0] == '-') {
            fprintf(stderr, "kbv: merge: unknown option '%s'\n%s", argv[i], usage);
            return 2;
        }
    }
    if (argc < 3) {
        fprintf(stderr, "kbv: merge: %s\n%s", argc < 2 ? "no OUT_DIR given" : "no RUN_DIR given", usage);
        return 2;
    }
    kbv_err e = {0};
    int rc = merge(argv[1], argc - 2, argv + 2, &e);
    if (rc) {
        err_report("merge", &e);
        return err_exit_status(rc);
    }
    return 0;
}
