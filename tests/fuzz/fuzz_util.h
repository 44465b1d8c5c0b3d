/* fuzz_util.h - shared by the libFuzzer harnesses of tests/fuzz/.
 *
 * The readers under test take paths, so each harness writes the fuzz input
 * to a file in one temporary folder per process, made on the first call and
 * removed at exit (with the files the harness names), so that runs leave
 * nothing behind in $TMPDIR.  Header-only: each harness is one program.
 */
#ifndef KBV_FUZZ_UTIL_H
#define KBV_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Names (relative to the folder) removed at exit; set by the harness. */
static const char *const *fuzz_cleanup_names;

static char fuzz_dir_buf[4096];

static inline void fuzz_cleanup(void)
{
    char p[4200];
    if (!fuzz_dir_buf[0]) return;
    for (int i = 0; fuzz_cleanup_names && fuzz_cleanup_names[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", fuzz_dir_buf, fuzz_cleanup_names[i]);
        unlink(p);
        rmdir(p);   /* a name may be a folder the harness made */
    }
    rmdir(fuzz_dir_buf);
}

/* The per-process folder; aborts when it cannot be made, since every
 * input would then fail for a reason that has nothing to do with it. */
static inline const char *fuzz_dir(void)
{
    if (fuzz_dir_buf[0]) return fuzz_dir_buf;
    const char *t = getenv("TMPDIR");
    snprintf(fuzz_dir_buf, sizeof fuzz_dir_buf, "%s/kbv-fuzz-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(fuzz_dir_buf)) {
        perror("kbv fuzz: mkdtemp");
        abort();
    }
    atexit(fuzz_cleanup);
    return fuzz_dir_buf;
}

/* path = <folder>/<name>; aborts on a path that does not fit. */
static inline void fuzz_path(char *out, size_t n, const char *name)
{
    if ((size_t)snprintf(out, n, "%s/%s", fuzz_dir(), name) >= n) abort();
}

/* Writes data[0..size) to <folder>/<name>. */
static inline void fuzz_write(const char *name, const void *data, size_t size)
{
    char p[4200];
    fuzz_path(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(p);
        abort();
    }
}

static inline void fuzz_remove(const char *name)
{
    char p[4200];
    fuzz_path(p, sizeof p, name);
    unlink(p);
}

/* Splits data at the first occurrence of sep: [0, *a_len) and the rest
 * after sep in *b, *b_len; without sep, all of it is a and b is empty. */
static inline void fuzz_split(const uint8_t *data, size_t size, const char *sep, size_t *a_len, const uint8_t **b,
                       size_t *b_len)
{
    size_t sl = strlen(sep);
    const uint8_t *hit = size >= sl ? memmem(data, size, sep, sl) : NULL;
    if (!hit) {
        *a_len = size;
        *b = data + size;
        *b_len = 0;
        return;
    }
    *a_len = (size_t)(hit - data);
    *b = hit + sl;
    *b_len = size - *a_len - sl;
}

/* A run folder's analysis.json from data, and its manifest.json from what
 * follows a line "--manifest--" (none without that line), for the
 * harnesses of render's readers. */
static inline void fuzz_write_analysis(const uint8_t *data, size_t size)
{
    size_t a_len, m_len;
    const uint8_t *m;
    fuzz_split(data, size, "\n--manifest--\n", &a_len, &m, &m_len);
    fuzz_write("analysis.json", data, a_len);
    if (m_len || m != data + size)
        fuzz_write("manifest.json", m, m_len);
    else
        fuzz_remove("manifest.json");
}

#endif
