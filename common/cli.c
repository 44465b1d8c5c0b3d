#include "cli.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef KBV_GIT_COMMIT
#define KBV_GIT_COMMIT "unknown"
#endif

int cli_parse_long(const char *opt, const char *s, long lo, long hi, long *out, kbv_err *e)
{
    char *end;
    errno = 0;
    long v = s && *s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || errno == ERANGE)
        return err_set(e, KBV_EUSAGE, "%s: '%s' is not an integer", opt, s ? s : "");
    if (v < lo || v > hi)
        return err_set(e, KBV_EUSAGE, "%s: %ld is out of range [%ld, %ld]", opt, v, lo, hi);
    *out = v;
    return 0;
}

int cli_parse_u64(const char *opt, const char *s, unsigned long long *out, kbv_err *e)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-' || *s == '+')
        return err_set(e, KBV_EUSAGE, "%s: '%s' is not a non-negative integer", opt, s ? s : "");
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno == ERANGE)
        return err_set(e, KBV_EUSAGE, "%s: '%s' is not a non-negative integer", opt, s);
    *out = v;
    return 0;
}

int cli_parse_double(const char *opt, const char *s, double lo, double hi, double *out, kbv_err *e)
{
    char *end;
    errno = 0;
    double v = s && *s ? strtod(s, &end) : 0;
    if (!s || !*s || *end || errno == ERANGE || !isfinite(v))
        return err_set(e, KBV_EUSAGE, "%s: '%s' is not a number", opt, s ? s : "");
    if (v < lo || v > hi)
        return err_set(e, KBV_EUSAGE, "%s: %g is out of range [%g, %g]", opt, v, lo, hi);
    *out = v;
    return 0;
}

const char *cli_git_commit(void) { return KBV_GIT_COMMIT; }

void cli_print_version(const char *prog)
{
    printf("%s (kbv) %s, commit %s\n", prog, KBV_VERSION, KBV_GIT_COMMIT);
}

int cli_path(char *buf, size_t n, const char *dir, const char *name, kbv_err *e)
{
    int k = snprintf(buf, n, "%s/%s", dir, name);
    if (k < 0 || (size_t)k >= n) return err_set(e, KBV_EINPUT, "path too long: %s/%s", dir, name);
    return 0;
}

int cli_exe_dir(char *buf, size_t n)
{
    /* A buffer of one byte or none holds no path; said first, so that the
     * sanitizer build does not take buf for NULL in readlink. */
    if (!buf || n < 2) {
        if (buf && n) buf[0] = '\0';
        return -1;
    }
    ssize_t k = readlink("/proc/self/exe", buf, n - 1);
    char *slash = k > 0 ? (buf[k] = '\0', strrchr(buf, '/')) : NULL;
    if (!slash) {
        if (n) buf[0] = '\0';
        return -1;
    }
    *slash = '\0';
    return 0;
}

/* path made absolute: realpath of its longest existing prefix, then the
 * rest as written (without "." and ".." steps, which are refused: 0). */
static int abs_path(const char *path, char *out, size_t n)
{
    char buf[PATH_MAX], rest[PATH_MAX] = "";
    snprintf(buf, sizeof buf, "%s", path);
    for (;;) {
        char real[PATH_MAX];
        if (realpath(buf[0] ? buf : "/", real)) {
            if (snprintf(out, n, "%s%s%s", real, rest[0] && strcmp(real, "/") ? "/" : "", rest) >= (int)n) return 0;
            return 1;
        }
        /* Move the last component of buf to the front of rest. */
        size_t l = strlen(buf);
        while (l > 1 && buf[l - 1] == '/') buf[--l] = '\0';
        char *slash = strrchr(buf, '/');
        const char *last = slash ? slash + 1 : buf;
        if (!strcmp(last, ".") || !strcmp(last, "..") || !*last) return 0;
        char tmp[PATH_MAX];
        snprintf(tmp, sizeof tmp, "%s%s%s", last, rest[0] ? "/" : "", rest);
        snprintf(rest, sizeof rest, "%s", tmp);
        if (slash == buf) buf[1] = '\0';
        else if (slash) *slash = '\0';
        else snprintf(buf, sizeof buf, ".");
    }
}

int cli_path_inside(const char *path, const char *dir)
{
    char p[PATH_MAX], d[PATH_MAX];
    if (!realpath(dir, d) || !abs_path(path, p, sizeof p)) return 0;
    size_t n = strlen(d);
    if (strcmp(d, "/") == 0) return 1;
    return strncmp(p, d, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

int cli_glob_match(const char *globs, const char *id)
{
    if (!globs) return 1;
    char one[512];
    for (const char *g = globs;;) {
        const char *comma = strchr(g, ',');
        size_t len = comma ? (size_t)(comma - g) : strlen(g);
        if (len < sizeof one) {
            memcpy(one, g, len);
            one[len] = '\0';
            if (fnmatch(one, id, 0) == 0) return 1;
        }
        if (!comma) return 0;
        g = comma + 1;
    }
}
