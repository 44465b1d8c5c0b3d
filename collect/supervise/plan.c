#include "plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "jio.h"

int plan_parse_shard(const char *s, int *i, int *n, kbv_err *e)
{
    char tail;
    if (!s || sscanf(s, "%d/%d%c", i, n, &tail) != 2 || *n < 1 || *i < 1 || *i > *n)
        return err_set(e, KBV_EUSAGE, "--shard: expected I/N with 1 <= I <= N, got '%s'",
                       s ? s : "");
    return 0;
}

int plan_in_suite(const char *suite, const suite_problem *p, kbv_err *e)
{
    if (strcmp(suite, "all") == 0) return 1;
    if (strcmp(suite, "level1") == 0) return p->level == 1;
    if (strcmp(suite, "level2") == 0) return p->level == 2;
    if (strcmp(suite, "level3") == 0) return p->level == 3;
    if (strcmp(suite, "smoke") == 0)
        return strcmp(p->id, "L1_001_square_matrix_multiplication") == 0 ||
               strcmp(p->id, "L1_019_relu") == 0 || strcmp(p->id, "L1_023_softmax") == 0;
    return err_set(e, KBV_EUSAGE, "--suite: unknown suite '%s' (smoke, level1, level2, level3, all)", suite);
}

int plan_shard_takes(long k, int i, int n) { return n <= 1 || k % n == i - 1; }

char *plan_pair_key(const char *set, const char *problem)
{
    size_t a = strlen(set), b = strlen(problem);
    char *k = malloc(a + b + 2);
    if (!k) return NULL;
    memcpy(k, set, a);
    k[a] = '\t';
    memcpy(k + a + 1, problem, b + 1);
    return k;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int has_cu(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *de;
    int found = 0;
    while (!found && (de = readdir(d))) {
        size_t n = strlen(de->d_name);
        found = n > 3 && strcmp(de->d_name + n - 3, ".cu") == 0;
    }
    closedir(d);
    return found;
}

/* set.json is an object with a non-empty string "name" and, optionally, the
 * strings "description" and "origin", "precision" ("fp32" or "bf16"),
 * "compare_with" (a set name, only with "bf16") and the objects "expected",
 * "expected_status", "known_gaps" and "hostile" (what the test scripts
 * expect of each problem); any other shape is a mistake the user should hear of, not a set
 * named after its folder. */
static int set_json_valid(const cJSON *j, const char *path, kbv_err *e)
{
    if (!cJSON_IsObject(j)) return err_set(e, KBV_EUSAGE, "%s: must be a JSON object with a \"name\"", path);
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "name");
    if (!cJSON_IsString(n) || !n->valuestring[0])
        return err_set(e, KBV_EUSAGE, "%s: \"name\" must be a non-empty string", path);
    const cJSON *it;
    cJSON_ArrayForEach(it, j) {
        const char *k = it->string ? it->string : "";
        if (!strcmp(k, "name")) continue;
        if (!strcmp(k, "description") || !strcmp(k, "origin")) {
            if (!cJSON_IsString(it)) return err_set(e, KBV_EUSAGE, "%s: \"description\" must be a string", path);
        } else if (!strcmp(k, "precision")) {
            if (!cJSON_IsString(it) || (strcmp(it->valuestring, "fp32") && strcmp(it->valuestring, "bf16")))
                return err_set(e, KBV_EUSAGE, "%s: \"precision\" must be \"fp32\" or \"bf16\"", path);
        } else if (!strcmp(k, "compare_with")) {
            const cJSON *pr = cJSON_GetObjectItemCaseSensitive(j, "precision");
            if (!cJSON_IsString(it) || !it->valuestring[0])
                return err_set(e, KBV_EUSAGE, "%s: \"compare_with\" must be a set name", path);
            if (!cJSON_IsString(pr) || strcmp(pr->valuestring, "bf16"))
                return err_set(e, KBV_EUSAGE, "%s: \"compare_with\" is only for a set of \"precision\": \"bf16\"",
                               path);
        } else if (!strcmp(k, "expected") || !strcmp(k, "expected_status") || !strcmp(k, "known_gaps") ||
                   !strcmp(k, "hostile")) {
            if (!cJSON_IsObject(it)) return err_set(e, KBV_EUSAGE, "%s: \"%s\" must be an object", path, k);
        } else {
            return err_set(e, KBV_EUSAGE,
                           "%s: unknown key \"%.40s\" (name, description, origin, precision, compare_with, expected, "
                           "expected_status, known_gaps, hostile)",
                           path, k);
        }
    }
    return 0;
}

/* A candidate is a regular file directly inside its set folder: a symbolic
 * link could make collect read (and journal) any file, and a folder named
 * like a candidate is a mistake.  1 with the file there, 0 when there is
 * nothing of that name (the problem is missing), or KBV_EUSAGE. */
static int candidate_file(const char *path, kbv_err *e)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        if (errno == ELOOP) return err_set(e, KBV_EUSAGE, "%s: a symbolic link, not a candidate file", path);
        return err_set(e, KBV_EUSAGE, "%s: %s", path, strerror(errno));
    }
    struct stat st;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    int is_folder = !ok && S_ISDIR(st.st_mode);
    close(fd);
    if (!ok)
        return err_set(e, KBV_EUSAGE, "%s: %s, not a candidate file", path, is_folder ? "a folder" : "not a regular file");
    return 1;
}

/* Whether a set of the setting (bf16 or not) is kept under --precision. */
static int precision_keeps(const char *precision, int bf16)
{
    if (!precision || !strcmp(precision, "all")) return 1;
    return bf16 ? !strcmp(precision, "bf16") : !strcmp(precision, "fp32");
}

static int add_set(plan *pl, const char *dir, const char *precision, kbv_err *e)
{
    char path[4096];
    int rc = cli_path(path, sizeof path, dir, "set.json", e);
    if (rc) return rc;
    char *name = NULL, *cw = NULL;
    int bf16 = 0;
    struct stat st;
    if (lstat(path, &st) == 0) {
        cJSON *j = NULL;
        rc = jio_load(path, &j, e);
        if (rc) return rc;
        rc = set_json_valid(j, path, e);
        if (!rc) {
            const cJSON *pr = cJSON_GetObjectItemCaseSensitive(j, "precision");
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "compare_with");
            bf16 = cJSON_IsString(pr) && !strcmp(pr->valuestring, "bf16");
            name = strdup(cJSON_GetObjectItemCaseSensitive(j, "name")->valuestring);
            if (cJSON_IsString(c) && !(cw = strdup(c->valuestring))) rc = err_set(e, KBV_ENOMEM, "plan: out of memory");
        }
        cJSON_Delete(j);
        if (rc) {
            free(name);
            return rc;
        }
    }
    if (!precision_keeps(precision, bf16)) {
        free(name);
        free(cw);
        return 0;
    }
    if (!name) {
        /* The folder's own name, without trailing slashes. */
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s", dir);
        size_t l = strlen(tmp);
        while (l > 1 && tmp[l - 1] == '/') tmp[--l] = 0;
        const char *slash = strrchr(tmp, '/');
        name = strdup(slash ? slash + 1 : tmp);
    }
    if (!name) {
        free(cw);
        return err_set(e, KBV_ENOMEM, "plan: out of memory");
    }
    for (int i = 0; i < pl->n_sets; i++)
        if (strcmp(pl->sets[i].name, name) == 0) {
            rc = err_set(e, KBV_EINPUT, "%s: set name '%s' is also used by %s", dir, name,
                         pl->sets[i].dir);
            free(name);
            free(cw);
            return rc;
        }
    plan_set *grown = realloc(pl->sets, (size_t)(pl->n_sets + 1) * sizeof *grown);
    char *d = strdup(dir);
    if (!grown || !d) {
        if (grown) pl->sets = grown;
        free(name);
        free(cw);
        free(d);
        return err_set(e, KBV_ENOMEM, "plan: out of memory");
    }
    pl->sets = grown;
    pl->sets[pl->n_sets].name = name;
    pl->sets[pl->n_sets].dir = d;
    pl->sets[pl->n_sets].bf16 = bf16;
    pl->sets[pl->n_sets].compare_with = cw;
    pl->n_sets++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder of set folders: the subfolders that have set.json (or, when
 * require_json is 0, .cu files), in name order so that the plan is stable. */
static int add_children(plan *pl, const char *dir, int require_json, const char *precision, int *added,
                        kbv_err *e)
{
    DIR *d = opendir(dir);
    if (!d) return err_set(e, KBV_EINPUT, "%s: cannot open the candidates folder", dir);
    char **names = NULL;
    int n = 0, rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char sub[4096], js[4096];
        if (snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name) >= (int)sizeof sub) continue;
        if (!is_dir(sub)) continue;
        snprintf(js, sizeof js, "%s/set.json", sub);
        if (!is_file(js) && (require_json || !has_cu(sub))) continue;
        char **g = realloc(names, (size_t)(n + 1) * sizeof *g);
        if (!g || !(g[n] = strdup(sub))) {
            if (g) names = g;
            rc = err_set(e, KBV_ENOMEM, "plan: out of memory");
            break;
        }
        names = g;
        n++;
    }
    closedir(d);
    if (!rc && n > 1) qsort(names, (size_t)n, sizeof *names, cmp_str); /* names is NULL when n is 0 */
    for (int i = 0; !rc && i < n; i++) rc = add_set(pl, names[i], precision, e);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    *added = rc ? 0 : n;
    return rc;
}

int plan_make(plan *out, const char *suite, const char *const *cand_dirs, int n_dirs,
              const char *glob, int shard_i, int shard_n, const char *precision, kbv_err *e)
{
    memset(out, 0, sizeof *out);
    int rc = 0;
    int n = suite_count();
    out->problems = calloc((size_t)(n > 0 ? n : 1), sizeof *out->problems);
    if (!out->problems) return err_set(e, KBV_ENOMEM, "plan: out of memory");
    for (int i = 0; i < n; i++) {
        const suite_problem *p = suite_get(i);
        int in = plan_in_suite(suite, p, e);
        if (in < 0) {
            rc = in;
            goto fail;
        }
        if (!in) continue;
        if (!cli_glob_match(glob, p->id)) continue;
        out->problems[out->n_problems++] = p;
    }
    if (out->n_problems == 0) {
        rc = err_set(e, KBV_EUSAGE, "no problem of suite '%s' matches '%s'", suite,
                     glob ? glob : "*");
        goto fail;
    }

    if (n_dirs == 0) {
        int added = 0;
        if (!is_dir("data/candidates")) {
            rc = err_set(e, KBV_EUSAGE, "no --candidates given and no data/candidates/ here");
            goto fail;
        }
        rc = add_children(out, "data/candidates", 1, precision, &added, e);
        if (rc) goto fail;
    }
    for (int i = 0; i < n_dirs; i++) {
        const char *dir = cand_dirs[i];
        char js[4096];
        snprintf(js, sizeof js, "%s/set.json", dir);
        if (!is_dir(dir)) {
            rc = err_set(e, KBV_EUSAGE, "--candidates %s: not a folder", dir);
            goto fail;
        }
        if (is_file(js) || has_cu(dir)) {
            rc = add_set(out, dir, precision, e);
        } else {
            int added = 0;
            rc = add_children(out, dir, 0, precision, &added, e);
            if (!rc && added == 0)
                rc = err_set(e, KBV_EUSAGE, "--candidates %s: no set.json, .cu files or set folders",
                             dir);
        }
        if (rc) goto fail;
    }
    if (out->n_sets == 0) {
        rc = err_set(e, KBV_EUSAGE, "no candidate sets found%s%s", precision && strcmp(precision, "all") ? " of precision " : "",
                     precision && strcmp(precision, "all") ? precision : "");
        goto fail;
    }

    out->n_pairs_all = out->n_sets * out->n_problems;
    out->pairs = calloc((size_t)out->n_pairs_all, sizeof *out->pairs);
    if (!out->pairs) {
        rc = err_set(e, KBV_ENOMEM, "plan: out of memory");
        goto fail;
    }
    long k = 0;
    for (int s = 0; s < out->n_sets; s++)
        for (int p = 0; p < out->n_problems; p++, k++) {
            if (!plan_shard_takes(k, shard_i, shard_n)) continue;
            plan_pair *pp = &out->pairs[out->n_pairs];
            pp->set = s;
            pp->p = out->problems[p];
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.cu", out->sets[s].dir, pp->p->id);
            int have = candidate_file(path, e);
            if (have < 0) {
                rc = have;
                goto fail;
            }
            if (have && !(pp->src = strdup(path))) {
                rc = err_set(e, KBV_ENOMEM, "plan: out of memory");
                goto fail;
            }
            out->n_pairs++;
        }
    return 0;
fail:
    plan_free(out);
    return rc;
}

void plan_free(plan *p)
{
    if (!p) return;
    for (int i = 0; i < p->n_sets; i++) {
        free(p->sets[i].name);
        free(p->sets[i].dir);
        free(p->sets[i].compare_with);
    }
    for (int i = 0; i < p->n_pairs; i++) free(p->pairs[i].src);
    free(p->sets);
    free(p->problems);
    free(p->pairs);
    memset(p, 0, sizeof *p);
}
