#include "afile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct afile {
    FILE *fp;
    char *path;   /* the final name */
    char *tmp;    /* "<path>.tmp.<pid>" */
};

int afile_open(afile **out, const char *path, kbv_err *e)
{
    afile *f = calloc(1, sizeof *f);
    size_t n = strlen(path) + 32;
    if (!f || !(f->path = strdup(path)) || !(f->tmp = malloc(n))) {
        afile_abort(f);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    snprintf(f->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    f->fp = fopen(f->tmp, "wb");
    if (!f->fp) {
        int rc = err_set(e, errno == ENOENT || errno == ENOTDIR ? KBV_EINPUT : KBV_ERUNTIME,
                         "%s: cannot write: %s", path, strerror(errno));
        free(f->tmp);
        f->tmp = NULL; /* nothing to unlink */
        afile_abort(f);
        return rc;
    }
    *out = f;
    return 0;
}

FILE *afile_fp(afile *f) { return f->fp; }

int afile_commit(afile *f, kbv_err *e)
{
    int rc = 0;
    if (fflush(f->fp) != 0 || ferror(f->fp) || fsync(fileno(f->fp)) != 0) {
        rc = err_set(e, KBV_ERUNTIME, "%s: write failed: %s", f->path, strerror(errno));
        goto fail;
    }
    if (fclose(f->fp) != 0) {
        f->fp = NULL;
        rc = err_set(e, KBV_ERUNTIME, "%s: close failed: %s", f->path, strerror(errno));
        goto fail;
    }
    f->fp = NULL;
    if (rename(f->tmp, f->path) != 0) {
        rc = err_set(e, KBV_ERUNTIME, "%s: rename failed: %s", f->path, strerror(errno));
        goto fail;
    }
    free(f->tmp);
    free(f->path);
    free(f);
    return 0;
fail:
    afile_abort(f);
    return rc;
}

void afile_abort(afile *f)
{
    if (!f) return;
    if (f->fp) fclose(f->fp);
    if (f->tmp) unlink(f->tmp);
    free(f->tmp);
    free(f->path);
    free(f);
}

int afile_write_all(const char *path, const void *data, size_t len, kbv_err *e)
{
    afile *f;
    int rc = afile_open(&f, path, e);
    if (rc) return rc;
    if (len && fwrite(data, 1, len, afile_fp(f)) != len) {
        rc = err_set(e, KBV_ERUNTIME, "%s: write failed: %s", path, strerror(errno));
        afile_abort(f);
        return rc;
    }
    return afile_commit(f, e);
}

int afile_mkdirs(const char *path, kbv_err *e)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return err_set(e, KBV_EINPUT, "bad directory path '%s'", path);
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return err_set(e, KBV_ERUNTIME, "%s: cannot create directory: %s", buf, strerror(errno));
            *p = saved;
            if (saved == '\0') break;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return err_set(e, KBV_EINPUT, "%s: not a directory", path);
    return 0;
}

int afile_open_regular(const char *path, int *fd, kbv_err *e)
{
    int d = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (d < 0) return err_set(e, KBV_EINPUT, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(d, &st) != 0) {
        int rc = err_set(e, KBV_ERUNTIME, "%s: %s", path, strerror(errno));
        close(d);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        close(d);
        return err_set(e, KBV_EINPUT, "%s: not a regular file (%s)", path,
                       S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "a special file");
    }
    int fl = fcntl(d, F_GETFL);
    if (fl >= 0) fcntl(d, F_SETFL, fl & ~O_NONBLOCK);
    *fd = d;
    return 0;
}

int afile_fopen_regular(const char *path, FILE **out, kbv_err *e)
{
    int fd;
    *out = NULL;
    int rc = afile_open_regular(path, &fd, e);
    if (rc) return rc;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return err_set(e, KBV_ENOMEM, "%s: %s", path, strerror(errno));
    }
    *out = f;
    return 0;
}

int afile_read_all(const char *path, char **data, size_t *len, kbv_err *e)
{
    FILE *f;
    int rc0 = afile_fopen_regular(path, &f, e);
    if (rc0) return rc0;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    int rc = 0;
    if (!buf) {
        rc = err_set(e, KBV_ENOMEM, "out of memory reading %s", path);
        goto done;
    }
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        char *bigger = realloc(buf, cap * 2 + 1);
        if (!bigger) {
            rc = err_set(e, KBV_ENOMEM, "out of memory reading %s", path);
            goto done;
        }
        buf = bigger;
        cap *= 2;
    }
    if (ferror(f)) {
        rc = err_set(e, KBV_EINPUT, "%s: read error", path);
        goto done;
    }
    buf[n] = '\0';
    *data = buf;
    if (len) *len = n;
    buf = NULL;
done:
    free(buf);
    fclose(f);
    return rc;
}
