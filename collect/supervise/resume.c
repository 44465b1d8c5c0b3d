#include "resume.h"
#include "schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "afile.h"
#include "jgram.h"
#include "jnl.h"
#include "log.h"
#include "plan.h"

#include <cjson/cJSON.h>

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The pair key of one journal line, judged by the journal grammar g (the
 * one validator of collect, merge and analyze): NULL with 0 when the line is
 * not a record (unparseable, or no string type, set and problem), a key
 * (owned by the caller) with 0 otherwise, and NULL with a negative code when
 * memory runs out.  A record that breaks the grammar is still a record of
 * its pair: its tampering is evidence that analyze must see, so it is kept
 * with the pair.  *is_status tells a status record. */
static char *line_key(jgram *g, const char *line, size_t len, int *is_status, int *rc, kbv_err *e)
{
    *is_status = 0;
    *rc = 0;
    cJSON *j = cJSON_ParseWithLength(line, len);
    int v = j ? jgram_feed(g, j, NULL, 0) : KBV_EINPUT;
    char *k = NULL;
    if (v == KBV_ENOMEM) {
        *rc = err_set(e, KBV_ENOMEM, "resume: out of memory");
    } else if (v >= 0) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, KBV_K_TYPE);
        *is_status = strcmp(t->valuestring, KBV_REC_STATUS) == 0;
        k = plan_pair_key(cJSON_GetObjectItemCaseSensitive(j, KBV_K_SET)->valuestring,
                          cJSON_GetObjectItemCaseSensitive(j, KBV_K_PROBLEM)->valuestring);
        if (!k) *rc = err_set(e, KBV_ENOMEM, "resume: out of memory");
    }
    cJSON_Delete(j);
    return k;
}

int resume_is_done(const resume_done *d, const char *set, const char *problem)
{
    char *k = plan_pair_key(set, problem);
    if (!k) return 0;
    int found = d->n > 0 && bsearch(&k, d->keys, (size_t)d->n, sizeof *d->keys, cmp_key) != NULL;
    free(k);
    return found;
}

void resume_done_free(resume_done *d)
{
    if (!d) return;
    for (int i = 0; i < d->n; i++) free(d->keys[i]);
    free(d->keys);
    d->keys = NULL;
    d->n = 0;
}

int resume_prepare(const char *path, resume_done *done, resume_stats *st, kbv_err *e)
{
    memset(done, 0, sizeof *done);
    memset(st, 0, sizeof *st);
    if (access(path, F_OK) != 0) return 0;

    /* Pass 1: which pairs are done. */
    jgram *gram = NULL;
    jnl_reader *r = NULL;
    int rc = jgram_new(&gram, e);
    if (rc) return rc;
    rc = jnl_open_file(path, &r, e);
    if (rc) goto fail;
    int cap = 0;
    const char *line;
    size_t len;
    long lineno;
    int torn;
    while ((rc = jnl_next(r, &line, &len, &lineno, &torn, e)) == 1) {
        if (torn) continue;
        int is_status;
        char *k = line_key(gram, line, len, &is_status, &rc, e);
        if (rc) break;
        if (!k) continue;
        if (!is_status) {
            free(k);
            continue;
        }
        if (done->n == cap) {
            cap = cap ? 2 * cap : 64;
            char **g = realloc(done->keys, (size_t)cap * sizeof *g);
            if (!g) {
                free(k);
                rc = err_set(e, KBV_ENOMEM, "resume: out of memory");
                break;
            }
            done->keys = g;
        }
        done->keys[done->n++] = k;
    }
    jnl_close(r);
    if (rc < 0) goto fail;
    /* qsort and bsearch take no NULL array, even with no elements. */
    if (done->n > 0) qsort(done->keys, (size_t)done->n, sizeof *done->keys, cmp_key);

    /* Pass 2: keep the records of done pairs, in their order.  A fresh
     * grammar judges each line as pass 1 did. */
    jgram_free(gram);
    if ((rc = jgram_new(&gram, e))) goto fail;
    rc = jnl_open_file(path, &r, e);
    if (rc) goto fail;
    afile *af = NULL;
    rc = afile_open(&af, path, e);
    if (rc) {
        jnl_close(r);
        goto fail;
    }
    FILE *fp = afile_fp(af);
    while ((rc = jnl_next(r, &line, &len, &lineno, &torn, e)) == 1) {
        if (torn) {
            st->torn = 1;
            continue;
        }
        int is_status;
        char *k = line_key(gram, line, len, &is_status, &rc, e);
        if (rc) break;
        int keep = k && done->n > 0 && bsearch(&k, done->keys, (size_t)done->n, sizeof *done->keys, cmp_key);
        free(k);
        if (!keep) {
            st->dropped++;
            continue;
        }
        st->kept++;
        if (fwrite(line, 1, len, fp) != len || fputc('\n', fp) == EOF) {
            rc = err_set(e, KBV_ERUNTIME, "%s: write: %s", path, strerror(errno));
            break;
        }
    }
    jnl_close(r);
    if (rc < 0) {
        afile_abort(af);
        goto fail;
    }
    jgram_free(gram);
    gram = NULL;
    if (st->dropped == 0 && !st->torn) {
        afile_abort(af);
        return 0;
    }
    rc = afile_commit(af, e);
    if (rc) goto fail;
    st->rewritten = 1;
    return 0;
fail:
    jgram_free(gram);
    resume_done_free(done);
    return rc;
}

void resume_note_gpu(const cJSON *old_manifest, const cJSON *device_info)
{
    const cJSON *now = cJSON_GetObjectItemCaseSensitive(device_info, "uuid");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(old_manifest, "device");
    const cJSON *first = d ? cJSON_GetObjectItemCaseSensitive(d, "uuid") : NULL;
    if (!cJSON_IsString(now)) return;
    if (!cJSON_IsString(first))
        log_info("collect", "this share runs on %s (the run's manifest names no GPU UUID)", now->valuestring);
    else if (strcmp(first->valuestring, now->valuestring) != 0)
        log_warn("collect", "this share runs on %s, another GPU than the run started on (%s)", now->valuestring,
                 first->valuestring);
}
