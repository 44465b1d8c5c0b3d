/* merge.c - joining the shards of one run (see merge.h).
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

#include "merge.h"

#include "afile.h"
#include "cli.h"
#include "err.h"
#include "jgram.h"
#include "jio.h"
#include "jnl.h"
#include "log.h"
#include "nmap.h"
#include "schema.h"
#include "sums.h"

/* The part of a manifest that must agree between shards of one run. */
static cJSON *identity_of(const cJSON *manifest)
{
    cJSON *id = cJSON_Duplicate(manifest, 1);
    if (!id) return NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(id, "run_id");
    cJSON_DeleteItemFromObjectCaseSensitive(id, "created_utc");
    cJSON_DeleteItemFromObjectCaseSensitive(id, "shard");
    cJSON_DeleteItemFromObjectCaseSensitive(id, "shards");
    /* Each shard's workers chose their baselines' kernels themselves: the
     * choices are the shard's record, joined in the merged manifest. */
    cJSON_DeleteItemFromObjectCaseSensitive(id, "baseline_choices");
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

/* Everything one merge holds; merge_run frees it. */
typedef struct mstate {
    const char *out_dir;
    int n_in;
    char **in_dirs;           /* borrowed */
    cJSON **manifests;        /* owned, n_in */
    cJSON *identity0;         /* owned */
    const cJSON *sets, *problems;   /* borrowed from manifests[0] */
    int n_sets, n_problems;
    const char **set_names, **prob_names;   /* owned arrays of strings borrowed from manifests[0] */
    nmap *set_map, *prob_map; /* owned */
    int *owner;               /* owned: the shard that holds each pair, or -1 */
    rec *recs;                /* owned */
    size_t n_recs, cap;
    char tmp_dir[4096];       /* the folder being built, "" when none */
} mstate;

/* A shard's raw files must be those its collect sealed: merging would
 * otherwise seal a changed journal anew, and the change would pass.  An
 * unsealed shard is taken as it is, with a warning. */
static int verify_shards(const mstate *m, kbv_err *e)
{
    char path[4096];
    struct stat st;
    int rc;
    for (int i = 0; i < m->n_in; i++) {
        if ((rc = cli_path(path, sizeof path, m->in_dirs[i], "SHA256SUMS", e))) return rc;
        if (lstat(path, &st) != 0) {
            log_warn("merge", "%s: no SHA256SUMS: the shard was not sealed by collect, and is taken as it is",
                     m->in_dirs[i]);
            continue;
        }
        if ((rc = sums_verify(m->in_dirs[i], NULL, NULL, e))) {
            err_prefix(e, "shard %s fails kbv verify", m->in_dirs[i]);
            return rc;
        }
    }
    return 0;
}

/* Reads every shard's manifest and checks that they describe one run. */
static int read_manifests(mstate *m, kbv_err *e)
{
    char path[4096];
    int rc;
    for (int i = 0; i < m->n_in; i++) {
        if ((rc = cli_path(path, sizeof path, m->in_dirs[i], "manifest.json", e))) return rc;
        if ((rc = jio_load(path, &m->manifests[i], e))) return rc;
        const char *schema;
        if ((rc = jio_get_str(m->manifests[i], KBV_K_SCHEMA, path, &schema, e))) return rc;
        if (strcmp(schema, KBV_SCHEMA_RUN) != 0)
            return err_set(e, KBV_EINPUT, "%s: schema \"%s\" is not " KBV_SCHEMA_RUN, path, schema);
        cJSON *id = identity_of(m->manifests[i]);
        if (!id) return err_set(e, KBV_ENOMEM, "out of memory");
        if (i == 0) {
            m->identity0 = id;
            continue;
        }
        int same = cJSON_Compare(m->identity0, id, 1);
        char where[512] = "";
        if (!same) first_difference(m->identity0, id, where, sizeof where);
        cJSON_Delete(id);
        if (!same)
            return err_set(e, KBV_EINPUT, "%s and %s are not shards of one run: their manifests differ at \"%s\"",
                           m->in_dirs[0], m->in_dirs[i], where[0] ? where : "?");
    }
    return 0;
}

/* The name tables of the first manifest's sets and problems, and the table
 * of which shard owns each pair. */
static int index_lists(mstate *m, kbv_err *e)
{
    int rc;
    if ((rc = jio_get_arr(m->manifests[0], "sets", m->in_dirs[0], &m->sets, e)) ||
        (rc = jio_get_arr(m->manifests[0], "problems", m->in_dirs[0], &m->problems, e)))
        return rc;
    m->n_sets = cJSON_GetArraySize(m->sets);
    m->n_problems = cJSON_GetArraySize(m->problems);
    if ((rc = names_of(m->sets, "name", &m->set_names, e)) || (rc = names_of(m->problems, NULL, &m->prob_names, e)) ||
        (rc = nmap_build(m->set_names, (size_t)m->n_sets, &m->set_map, e)) ||
        (rc = nmap_build(m->prob_names, (size_t)m->n_problems, &m->prob_map, e)))
        return rc;
    m->owner = malloc(sizeof *m->owner * (size_t)(m->n_sets > 0 ? m->n_sets : 1) *
                      (size_t)(m->n_problems > 0 ? m->n_problems : 1));
    if (!m->owner) return err_set(e, KBV_ENOMEM, "out of memory");
    for (int k = 0; k < m->n_sets * m->n_problems; k++) m->owner[k] = -1;
    return 0;
}

/* Judges one journal line of shard i with the journal grammar g and finds
 * its pair: 0 with *si, *pi set, or an error.  A record that breaks the
 * grammar is kept: analyze judges the merged journal with the same grammar,
 * so the evidence of tampering must reach it unchanged. */
static int judge_line(mstate *m, jgram *g, int i, const char *line, size_t len, const char *what, int *si,
                      int *pi, kbv_err *e)
{
    cJSON *v;
    int rc = jio_parse(line, len, what, &v, e);
    if (rc) return rc;
    char why[512];
    int j = jgram_feed(g, v, why, sizeof why);
    if (j < 0) {
        cJSON_Delete(v);
        return err_set(e, j == KBV_ENOMEM ? KBV_ENOMEM : KBV_EINPUT, "%s: %s", what, why);
    }
    const char *set_name = cJSON_GetObjectItemCaseSensitive(v, KBV_K_SET)->valuestring;
    const char *problem = cJSON_GetObjectItemCaseSensitive(v, KBV_K_PROBLEM)->valuestring;
    *si = (int)nmap_find(m->set_map, set_name);
    *pi = (int)nmap_find(m->prob_map, problem);
    if (*si < 0 || *pi < 0)
        rc = err_set(e, KBV_EINPUT, "%s: set \"%s\" or problem \"%s\" is not in the manifest", what, set_name,
                     problem);
    if (!rc) {
        /* set_name and problem live in v: the message is made before it goes. */
        int *o = &m->owner[*si * m->n_problems + *pi];
        if (*o >= 0 && *o != i)
            rc = err_set(e, KBV_EINPUT, "pair %s/%s is in two shards: %s and %s", set_name, problem,
                         m->in_dirs[*o], m->in_dirs[i]);
        else
            *o = i;
    }
    cJSON_Delete(v);
    return rc;
}

/* Reads shard i's journal into m->recs. */
static int read_shard(mstate *m, int i, kbv_err *e)
{
    jnl_reader *r;
    jgram *g = NULL;
    int rc = jgram_new(&g, e);
    if (rc) return rc;
    if ((rc = jnl_open_dir(m->in_dirs[i], &r, e))) {
        jgram_free(g);
        return rc;
    }
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
        int si = -1, pi = -1;
        if ((rc = judge_line(m, g, i, line, len, what, &si, &pi, e))) break;
        if (m->n_recs == m->cap) {
            size_t cap = m->cap ? m->cap * 2 : 4096;
            rec *bigger = realloc(m->recs, cap * sizeof *m->recs);
            if (!bigger) {
                rc = err_set(e, KBV_ENOMEM, "out of memory");
                break;
            }
            m->recs = bigger;
            m->cap = cap;
        }
        m->recs[m->n_recs] = (rec){si, pi, i, lineno, strndup(line, len)};
        if (!m->recs[m->n_recs].line) {
            rc = err_set(e, KBV_ENOMEM, "out of memory");
            break;
        }
        m->n_recs++;
    }
    jnl_close(r);
    jgram_free(g);
    return rc < 0 ? rc : 0;
}

/* Every pair of the manifest must be in some shard. */
static int check_complete(const mstate *m, kbv_err *e)
{
    for (int s = 0; s < m->n_sets; s++)
        for (int p = 0; p < m->n_problems; p++)
            if (m->owner[s * m->n_problems + p] < 0) {
                const cJSON *set = cJSON_GetArrayItem(m->sets, s);
                const cJSON *name = cJSON_GetObjectItemCaseSensitive(set, "name");
                const cJSON *prob = cJSON_GetArrayItem(m->problems, p);   /* an id, or not a string */
                return err_set(e, KBV_EINPUT, "pair %s/%s is in no shard: a shard is missing or unfinished",
                               cJSON_IsString(name) ? name->valuestring : "?",
                               cJSON_IsString(prob) ? prob->valuestring : "?");
            }
    return 0;
}

/* The merged manifest: the first shard's, marked as a merge of all. */
static cJSON *merged_manifest(const mstate *m)
{
    cJSON *merged = cJSON_Duplicate(m->manifests[0], 1);
    if (!merged) return NULL;
    cJSON *config = cJSON_GetObjectItemCaseSensitive(merged, "config");
    if (config) cJSON_DeleteItemFromObjectCaseSensitive(config, "shard");
    cJSON_DeleteItemFromObjectCaseSensitive(merged, "shard");
    cJSON *shards = cJSON_AddArrayToObject(merged, "shards");
    for (int i = 0; i < m->n_in; i++) {
        const cJSON *rid = cJSON_GetObjectItemCaseSensitive(m->manifests[i], "run_id");
        cJSON_AddItemToArray(shards, cJSON_CreateString(cJSON_IsString(rid) ? rid->valuestring : m->in_dirs[i]));
    }
    /* Every shard's baseline choices, in shard order (a shard collected
     * before manifests listed them adds none). */
    cJSON_DeleteItemFromObjectCaseSensitive(merged, "baseline_choices");
    cJSON *choices = NULL;
    for (int i = 0; i < m->n_in; i++) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(m->manifests[i], "baseline_choices");
        if (!cJSON_IsArray(c)) continue;
        if (!choices && !(choices = cJSON_AddArrayToObject(merged, "baseline_choices"))) break;
        for (const cJSON *it = c->child; it; it = it->next) cJSON_AddItemToArray(choices, cJSON_Duplicate(it, 1));
    }
    return merged;
}

/* Builds the run in a temporary folder beside OUT_DIR, then renames it into
 * place, so that OUT_DIR never holds half a run. */
static int write_run(mstate *m, kbv_err *e)
{
    char path[4096];
    int rc;
    cJSON *merged = merged_manifest(m);
    if (!merged) return err_set(e, KBV_ENOMEM, "out of memory");
    snprintf(m->tmp_dir, sizeof m->tmp_dir, "%s.tmp.%ld", m->out_dir, (long)getpid());
    if ((rc = afile_mkdirs(m->tmp_dir, e)) || (rc = cli_path(path, sizeof path, m->tmp_dir, "manifest.json", e)) ||
        (rc = jio_save(path, merged, e))) {
        cJSON_Delete(merged);
        return rc;
    }
    cJSON_Delete(merged);
    if ((rc = cli_path(path, sizeof path, m->tmp_dir, "samples.jsonl", e))) return rc;
    afile *f;
    if ((rc = afile_open(&f, path, e))) return rc;
    for (size_t k = 0; k < m->n_recs; k++) {
        fputs(m->recs[k].line, afile_fp(f));
        fputc('\n', afile_fp(f));
    }
    if ((rc = afile_commit(f, e))) return rc;
    if ((rc = sums_seal_raw(m->tmp_dir, e))) return rc;
    if (rename(m->tmp_dir, m->out_dir) != 0)
        return err_set(e, KBV_ERUNTIME, "%s: cannot rename into place: %s", m->out_dir, strerror(errno));
    m->tmp_dir[0] = '\0';
    return 0;
}

static void mstate_free(mstate *m)
{
    if (m->tmp_dir[0]) {
        char p2[4300];
        const char *names[] = {"manifest.json", "samples.jsonl", "SHA256SUMS"};
        for (int k = 0; k < 3; k++) {
            snprintf(p2, sizeof p2, "%s/%s", m->tmp_dir, names[k]);
            unlink(p2);
        }
        rmdir(m->tmp_dir);
    }
    for (size_t k = 0; k < m->n_recs; k++) free(m->recs[k].line);
    free(m->recs);
    free(m->owner);
    nmap_free(m->set_map);
    nmap_free(m->prob_map);
    free(m->set_names);
    free(m->prob_names);
    cJSON_Delete(m->identity0);
    if (m->manifests)
        for (int i = 0; i < m->n_in; i++) cJSON_Delete(m->manifests[i]);
    free(m->manifests);
}

int merge_run(const char *out_dir, int n_in, char **in_dirs, kbv_err *e)
{
    mstate m = {.out_dir = out_dir, .n_in = n_in, .in_dirs = in_dirs};
    int rc = 0;
    m.manifests = calloc((size_t)n_in, sizeof *m.manifests);
    if (!m.manifests) return err_set(e, KBV_ENOMEM, "out of memory");
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
    if ((rc = verify_shards(&m, e)) || (rc = read_manifests(&m, e)) || (rc = index_lists(&m, e))) goto done;
    for (int i = 0; i < n_in; i++)
        if ((rc = read_shard(&m, i, e))) goto done;
    if ((rc = check_complete(&m, e))) goto done;
    if (m.n_recs) qsort(m.recs, m.n_recs, sizeof *m.recs, rec_cmp);   /* recs is NULL when empty */
    if ((rc = write_run(&m, e))) goto done;
    log_info("merge", "%d shards, %zu records -> %s", n_in, m.n_recs, out_dir);
done:
    mstate_free(&m);
    return rc;
}
