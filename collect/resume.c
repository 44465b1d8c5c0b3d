#include "resume.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "afile.h"
#include "jnl.h"
#include "plan.h"

#include <cjson/cJSON.h>

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The pair key of one journal line, or NULL when the line is not a record
 * (unparseable, no set or problem).  *is_status tells a status record. */
static char *line_key(const char *line, size_t len, int *is_status)
{
    *is_status = 0;
    cJSON *j = cJSON_ParseWithLength(line, len);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return NULL;
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "type");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "set");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "problem");
    char *k = NULL;
    if (cJSON_IsString(t) && cJSON_IsString(s) && cJSON_IsString(p)) {
        *is_status = strcmp(t->valuestring, "status") == 0;
        k = plan_pair_key(s->valuestring, p->valuestring);
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
    jnl_reader *r = NULL;
    int rc = jnl_open_file(path, &r, e);
    if (rc) return rc;
    int cap = 0;
    const char *line;
    size_t len;
    long lineno;
    int torn;
    while ((rc = jnl_next(r, &line, &len, &lineno, &torn, e)) == 1) {
        if (torn) continue;
        int is_status;
        char *k = line_key(line, len, &is_status);
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

    /* Pass 2: keep the records of done pairs, in their order. */
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
        char *k = line_key(line, len, &is_status);
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
    if (st->dropped == 0 && !st->torn) {
        afile_abort(af);
        return 0;
    }
    rc = afile_commit(af, e);
    if (rc) goto fail;
    st->rewritten = 1;
    return 0;
fail:
    resume_done_free(done);
    return rc;
}
