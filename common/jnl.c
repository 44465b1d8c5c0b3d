#include "jnl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "afile.h"
#include "jio.h"

/* The reader keeps one growing buffer: [start, end) holds bytes read but not
 * yet handed out.  zlib's gzread reads plain files unchanged, so one code
 * path serves samples.jsonl and samples.jsonl.gz. */
struct jnl_reader {
    gzFile gz;
    char *path;
    char *buf;
    size_t cap, start, end;
    long lineno;
    int eof;
};

#define JNL_CHUNK (1u << 20)

int jnl_open_file(const char *path, jnl_reader **out, kbv_err *e)
{
    jnl_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path)) || !(r->buf = malloc(JNL_CHUNK + 1))) {
        jnl_close(r);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    r->cap = JNL_CHUNK;
    int fd, rc = afile_open_regular(path, &fd, e);
    if (rc) {
        jnl_close(r);
        return rc;
    }
    r->gz = gzdopen(fd, "rb");
    if (!r->gz) {
        close(fd);
        rc = err_set(e, KBV_ENOMEM, "%s: %s", path, errno ? strerror(errno) : "cannot open");
        jnl_close(r);
        return rc;
    }
    gzbuffer(r->gz, 1u << 18);
    *out = r;
    return 0;
}

int jnl_find(const char *run_dir, char *path, size_t len, kbv_err *e)
{
    char plain[4096], gz[4096];
    struct stat st;
    snprintf(plain, sizeof plain, "%s/samples.jsonl", run_dir);
    snprintf(gz, sizeof gz, "%s/samples.jsonl.gz", run_dir);
    int have_plain = lstat(plain, &st) == 0, have_gz = lstat(gz, &st) == 0;
    if (have_plain && have_gz)
        return err_set(e, KBV_EINPUT,
                       "%s: both samples.jsonl and samples.jsonl.gz: which one holds the run cannot be told; "
                       "keep one", run_dir);
    if (!have_plain && !have_gz) return err_set(e, KBV_EINPUT, "%s: no samples.jsonl or samples.jsonl.gz", run_dir);
    if (snprintf(path, len, "%s", have_plain ? plain : gz) >= (int)len)
        return err_set(e, KBV_EINPUT, "%s: path too long", run_dir);
    return 0;
}

int jnl_open_dir(const char *run_dir, jnl_reader **out, kbv_err *e)
{
    char path[4096];
    int rc = jnl_find(run_dir, path, sizeof path, e);
    return rc ? rc : jnl_open_file(path, out, e);
}

const char *jnl_path(const jnl_reader *r) { return r->path; }

/* Reads more bytes behind r->end, moving pending bytes to the front first. */
static int fill(jnl_reader *r, kbv_err *e)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    if (r->cap - r->end < JNL_CHUNK / 2) {
        char *bigger = realloc(r->buf, r->cap * 2 + 1);
        if (!bigger) return err_set(e, KBV_ENOMEM, "%s: out of memory for a long line", r->path);
        r->buf = bigger;
        r->cap *= 2;
    }
    int n = gzread(r->gz, r->buf + r->end, (unsigned)(r->cap - r->end));
    if (n < 0) {
        int zerr;
        const char *msg = gzerror(r->gz, &zerr);
        return err_set(e, KBV_EINPUT, "%s: read error: %s", r->path, msg);
    }
    if (n == 0) {
        int zerr;
        gzerror(r->gz, &zerr);
        /* A truncated .gz stream reads as an early end with Z_BUF_ERROR
         * ("unexpected end of file"); gzeof() is set then too, so it cannot
         * tell the two apart.  A plain file never reports Z_BUF_ERROR. */
        if (zerr == Z_BUF_ERROR)
            return err_set(e, KBV_EINPUT, "%s: truncated compressed stream", r->path);
        r->eof = 1;
    }
    r->end += (size_t)n;
    return 0;
}

int jnl_next(jnl_reader *r, const char **line, size_t *len, long *lineno, int *torn, kbv_err *e)
{
    for (;;) {
        char *nl = r->end > r->start ? memchr(r->buf + r->start, '\n', r->end - r->start) : NULL;
        if (nl) {
            char *s = r->buf + r->start;
            size_t n = (size_t)(nl - s);
            *nl = '\0';
            if (n > 0 && s[n - 1] == '\r') s[--n] = '\0';
            r->start = (size_t)(nl - r->buf) + 1;
            *line = s;
            *len = n;
            *lineno = ++r->lineno;
            *torn = 0;
            return 1;
        }
        if (r->eof) {
            if (r->end == r->start) return 0;
            /* The last line has no newline: hand it out once, marked torn. */
            r->buf[r->end] = '\0';
            *line = r->buf + r->start;
            *len = r->end - r->start;
            *lineno = ++r->lineno;
            *torn = 1;
            r->start = r->end;
            return 1;
        }
        int rc = fill(r, e);
        if (rc) return rc;
    }
}

void jnl_close(jnl_reader *r)
{
    if (!r) return;
    if (r->gz) gzclose(r->gz);
    free(r->buf);
    free(r->path);
    free(r);
}

struct jnl_writer {
    int fd;
    char *path;
};

/* Cuts a torn last line (bytes after the last newline) off the file, so that
 * appending after an interrupted writer starts on a fresh line. */
static int cut_torn_tail(int fd, const char *path, kbv_err *e)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return err_set(e, KBV_ERUNTIME, "%s: %s", path, strerror(errno));
    off_t size = st.st_size, pos = size;
    char buf[4096];
    while (pos > 0) {
        size_t want = pos > (off_t)sizeof buf ? sizeof buf : (size_t)pos;
        ssize_t got = pread(fd, buf, want, pos - (off_t)want);
        if (got != (ssize_t)want) return err_set(e, KBV_ERUNTIME, "%s: read error", path);
        for (size_t i = want; i > 0; i--) {
            if (buf[i - 1] == '\n') {
                off_t keep = pos - (off_t)want + (off_t)i;
                if (keep != size && ftruncate(fd, keep) != 0)
                    return err_set(e, KBV_ERUNTIME, "%s: cannot cut torn line: %s", path, strerror(errno));
                return 0;
            }
        }
        pos -= (off_t)want;
    }
    if (size > 0 && ftruncate(fd, 0) != 0)
        return err_set(e, KBV_ERUNTIME, "%s: cannot cut torn line: %s", path, strerror(errno));
    return 0;
}

int jnl_open_append(const char *path, jnl_writer **out, kbv_err *e)
{
    jnl_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    w->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        int rc = err_set(e, KBV_ERUNTIME, "%s: cannot open for appending: %s", path, strerror(errno));
        free(w->path);
        free(w);
        return rc;
    }
    int rc = cut_torn_tail(w->fd, path, e);
    if (rc) {
        jnl_close_writer(w, NULL);
        return rc;
    }
    *out = w;
    return 0;
}

int jnl_append(jnl_writer *w, const cJSON *rec, kbv_err *e)
{
    char *s = jio_line(rec);
    if (!s) return err_set(e, KBV_ENOMEM, "%s: cannot serialise a record", w->path);
    size_t n = strlen(s);
    /* One write(2) of the line and its newline: O_APPEND makes it land whole
     * at the end, and it reaches the kernel before we return. */
    char *line = realloc(s, n + 2);
    if (!line) {
        free(s);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    line[n] = '\n';
    size_t done = 0;
    int rc = 0;
    while (done < n + 1) {
        ssize_t k = write(w->fd, line + done, n + 1 - done);
        if (k < 0) {
            if (errno == EINTR) continue;
            rc = err_set(e, KBV_ERUNTIME, "%s: write failed: %s", w->path, strerror(errno));
            break;
        }
        done += (size_t)k;
    }
    free(line);
    return rc;
}

int jnl_sync(jnl_writer *w, kbv_err *e)
{
    if (fsync(w->fd) != 0) return err_set(e, KBV_ERUNTIME, "%s: fsync failed: %s", w->path, strerror(errno));
    return 0;
}

int jnl_close_writer(jnl_writer *w, kbv_err *e)
{
    if (!w) return 0;
    int rc = 0;
    if (fsync(w->fd) != 0 && errno != EINVAL)
        rc = err_set(e, KBV_ERUNTIME, "%s: fsync failed: %s", w->path, strerror(errno));
    close(w->fd);
    free(w->path);
    free(w);
    return rc;
}
