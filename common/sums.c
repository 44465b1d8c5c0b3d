#include "sums.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "afile.h"
#include "sha.h"

typedef struct {
    char **paths;   /* relative to the run directory, owned */
    size_t n, cap;
} path_list;

static void paths_free(path_list *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->paths[i]);
    free(l->paths);
}

static int paths_add(path_list *l, const char *rel, kbv_err *e)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **p = realloc(l->paths, cap * sizeof *p);
        if (!p) return err_set(e, KBV_ENOMEM, "out of memory");
        l->paths = p;
        l->cap = cap;
    }
    if (!(l->paths[l->n] = strdup(rel))) return err_set(e, KBV_ENOMEM, "out of memory");
    l->n++;
    return 0;
}

/* Temporaries of afile ("*.tmp.<pid>") and the sums file itself are not
 * part of a run. */
static int skipped(const char *name)
{
    return strcmp(name, "SHA256SUMS") == 0 || strstr(name, ".tmp.") != NULL || name[0] == '.';
}

static int walk(const char *root, const char *rel, path_list *out, kbv_err *e)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s%s%s", root, rel[0] ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d) return err_set(e, KBV_EINPUT, "%s: %s", dir, strerror(errno));
    int rc = 0;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
        if (skipped(ent->d_name)) continue;
        char child[4096], full[4096];
        snprintf(child, sizeof child, "%s%s%s", rel, rel[0] ? "/" : "", ent->d_name);
        snprintf(full, sizeof full, "%s/%s", root, child);
        struct stat st;
        if (lstat(full, &st) != 0) {
            rc = err_set(e, KBV_ERUNTIME, "%s: %s", full, strerror(errno));
            break;
        }
        if (S_ISDIR(st.st_mode))
            rc = walk(root, child, out, e);
        else if (S_ISREG(st.st_mode))
            rc = paths_add(out, child, e);
        if (rc) break;
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sums_write(const char *run_dir, kbv_err *e)
{
    path_list l = {0};
    char path[4096];
    afile *f = NULL;
    int rc = walk(run_dir, "", &l, e);
    if (rc) goto done;
    qsort(l.paths, l.n, sizeof *l.paths, cmp_str);
    snprintf(path, sizeof path, "%s/SHA256SUMS", run_dir);
    rc = afile_open(&f, path, e);
    if (rc) goto done;
    for (size_t i = 0; i < l.n; i++) {
        char full[4096], hex[SHA_HEX_LEN + 1];
        snprintf(full, sizeof full, "%s/%s", run_dir, l.paths[i]);
        rc = sha_hex_file(full, hex, e);
        if (rc) goto done;
        fprintf(afile_fp(f), "%s  %s\n", hex, l.paths[i]);
    }
    rc = afile_commit(f, e);
    f = NULL;
done:
    afile_abort(f);
    paths_free(&l);
    return rc;
}

int sums_verify(const char *run_dir, FILE *report, int *n_checked, kbv_err *e)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/SHA256SUMS", run_dir);
    char *text = NULL;
    int rc = afile_read_all(path, &text, NULL, e);
    if (rc) return rc;
    int checked = 0, bad = 0;
    long lineno = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        lineno++;
        /* "<64 hex>  <path>"; sha256sum's binary marker "*" is accepted too. */
        if (strlen(line) < SHA_HEX_LEN + 3 || (line[SHA_HEX_LEN] != ' ') ||
            (line[SHA_HEX_LEN + 1] != ' ' && line[SHA_HEX_LEN + 1] != '*') ||
            strspn(line, "0123456789abcdef") != SHA_HEX_LEN) {
            rc = err_set(e, KBV_EINPUT, "%s:%ld: malformed line", path, lineno);
            goto done;
        }
        const char *rel = line + SHA_HEX_LEN + 2;
        if (rel[0] == '/' || strstr(rel, "..")) {
            rc = err_set(e, KBV_EINPUT, "%s:%ld: path '%s' leaves the run directory", path, lineno, rel);
            goto done;
        }
        char full[4096], hex[SHA_HEX_LEN + 1];
        snprintf(full, sizeof full, "%s/%s", run_dir, rel);
        kbv_err ignored;
        checked++;
        if (sha_hex_file(full, hex, &ignored) != 0) {
            bad++;
            if (report) fprintf(report, "%s: MISSING\n", rel);
        } else if (memcmp(hex, line, SHA_HEX_LEN) != 0) {
            bad++;
            if (report) fprintf(report, "%s: FAILED\n", rel);
        } else if (report) {
            fprintf(report, "%s: OK\n", rel);
        }
    }
    if (n_checked) *n_checked = checked;
    if (bad) rc = err_set(e, KBV_EINPUT, "%s: %d of %d files do not match", path, bad, checked);
done:
    free(text);
    return rc;
}
