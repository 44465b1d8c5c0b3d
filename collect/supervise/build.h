/* build.h - candidate builds (DESIGN.md 5a steps 1 and 2).
 *
 * Each candidate is compiled by nvcc into a shared object, in parallel, and
 * cached under the SHA-256 of its source, the flags, the compiler's version
 * text and kbv.h, so that an unchanged candidate is never rebuilt.  A failed
 * build is a result (ok = 0 and its log), not an error of the run.  The
 * static scan lists the object's dynamic imports and suspicious definitions
 * (nm -D).  Children are run with fork/exec; no CUDA. */
#ifndef KBV_BUILD_H
#define KBV_BUILD_H

#include "err.h"
#include "sha.h"

typedef struct {
    const char *nvcc;          /* the compiler command; borrowed */
    const char *include_dir;   /* folder holding kbv.h; borrowed */
    int arch;                  /* compute capability as 90, 100, ... */
    const char *cache_dir;     /* created when missing; borrowed */
    int jobs;                  /* parallel compilers, >= 1 */
    double timeout_s;          /* per build */
} build_cfg;

typedef struct {
    const char *src;           /* borrowed */
    char key[SHA_HEX_LEN + 1];
    char *so_path;             /* owned; NULL when the build failed */
    int ok;
    int cached;                /* 1 when the object came from the cache */
    double seconds;            /* this run's build time (0 for a cache hit) */
    char *log;                 /* owned, NUL-terminated, at most BUILD_LOG_MAX bytes */
    /* static scan (build_scan) */
    char **imports;            /* owned, sorted */
    int n_imports;
    char **defines;            /* owned: definitions that raised a flag */
    int n_defines;
    unsigned flags;            /* verdict.h SCAN_* bits */
} build_item;

#define BUILD_LOG_MAX 65536

/* ${KBV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kbv} into buf. */
int build_cache_dir(char *buf, size_t n, kbv_err *e);
/* The text of `nvcc --version`; *out owned by the caller. */
int build_compiler_id(const char *nvcc, char **out, kbv_err *e);

/* Builds every item (items with equal keys share one build).  progress, if
 * not NULL, is called after each finished build. */
typedef void (*build_progress_fn)(void *ctx, int done, int total, const char *src);
int build_run(const build_cfg *c, build_item *items, int n, build_progress_fn progress, void *ctx,
              kbv_err *e);

/* Runs nm -D on it->so_path and fills the scan fields. */
int build_scan(build_item *it, kbv_err *e);
/* Parses nm -D output (for tests and build_scan). */
int build_scan_text(const char *nm_out, build_item *it, kbv_err *e);
/* Parses objdump -d output: a system call instruction (syscall, sysenter,
 * int $0x80) in the object's own code reaches the kernel past every
 * import the scan sees (a raw mprotect, say), so it flags tamper-capable
 * and is listed among the imports as "<syscall instruction>". */
int build_scan_asm_text(const char *objdump_out, build_item *it, kbv_err *e);

void build_item_clear(build_item *it);

/* Runs argv (argv[0] found through PATH) with stdout and stderr captured into
 * *out (owned by the caller, at most cap bytes kept), killing it after
 * timeout_s; *status is the wait status, or -1 on timeout. */
int build_capture(char *const argv[], size_t cap, double timeout_s, char **out, int *status,
                  kbv_err *e);

/* The folder holding kbv.h into buf (n bytes): $KBV_INCLUDE, else
 * <dir>/../include or <dir>/include (dir: the program's folder; build/ in
 * a checkout, PREFIX/bin when installed), else ./include.  0, or an error
 * when none has kbv.h. */
int build_find_include(const char *dir, char *buf, size_t n, kbv_err *e);
/* The nvcc to run: $NVCC, else "nvcc" when PATH has one, else
 * /usr/local/cuda/bin/nvcc when it exists, else "nvcc".  Borrowed. */
const char *build_find_nvcc(void);

#endif
