#include "build.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "afile.h"
#include "log.h"
#include "verdict.h"

int build_cache_dir(char *buf, size_t n, kbv_err *e)
{
    const char *kc = getenv("KBV_CACHE");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int w;
    if (kc && *kc) w = snprintf(buf, n, "%s", kc);
    else if (xdg && *xdg) w = snprintf(buf, n, "%s/kbv", xdg);
    else if (home && *home) w = snprintf(buf, n, "%s/.cache/kbv", home);
    else w = snprintf(buf, n, "/tmp/kbv-cache-%ld", (long)getuid());
    if (w < 0 || (size_t)w >= n) return err_set(e, KBV_EINPUT, "build: cache path too long");
    return 0;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Reads a file into a capped, NUL-terminated string: the head and the tail
 * of a long log, which hold the first error and the summary. */
static char *read_capped(const char *path, size_t cap)
{
    char *data = NULL;
    size_t len = 0;
    kbv_err e;
    if (afile_read_all(path, &data, &len, &e)) return strdup("");
    if (len <= cap) return data;
    size_t head = cap * 3 / 4, tail = cap - head - 64;
    char *out = malloc(cap + 1);
    if (!out) {
        free(data);
        return NULL;
    }
    int m = snprintf(out, cap + 1, "%.*s\n[... %zu bytes cut ...]\n", (int)head, data,
                     len - head - tail);
    memcpy(out + m, data + len - tail, tail);
    out[m + tail] = 0;
    free(data);
    return out;
}

int build_capture(char *const argv[], size_t cap, double timeout_s, char **out, int *status,
                  kbv_err *e)
{
    *out = NULL;
    char tmpl[] = "/tmp/kbv-capture-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) return err_set(e, KBV_ERUNTIME, "build: mkstemp: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fd);
        unlink(tmpl);
        return err_set(e, KBV_ERUNTIME, "build: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0);
        setpgid(0, 0);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd);
    double t0 = log_now();
    int st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) {
            st = -1;
            break;
        }
        if (log_now() - t0 > timeout_s) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            st = -1;
            break;
        }
        sleep_ms(10);
    }
    *out = read_capped(tmpl, cap);
    unlink(tmpl);
    *status = st;
    if (!*out) return err_set(e, KBV_ENOMEM, "build: out of memory");
    return 0;
}

int build_compiler_id(const char *nvcc, char **out, kbv_err *e)
{
    char *argv[] = {(char *)nvcc, "--version", NULL};
    int st;
    int rc = build_capture(argv, 8192, 60, out, &st, e);
    if (rc) return rc;
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        rc = err_set(e, KBV_ERUNTIME, "build: '%s --version' failed: %.300s", nvcc, *out);
        free(*out);
        *out = NULL;
        return rc;
    }
    return 0;
}

/* The flags, as one string for the cache key and as argv for nvcc. */
#define N_FLAGS 10
static void make_flags(const build_cfg *c, char arch[32], char inc[4200], const char *flags[N_FLAGS])
{
    snprintf(arch, 32, "-arch=sm_%d", c->arch);
    snprintf(inc, 4200, "-I%s", c->include_dir);
    const char *f[N_FLAGS] = {"-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", arch,
                              "-O3",     "-std=c++17", "-lineinfo", inc};
    memcpy(flags, f, sizeof f);
}

/* The path of the private copy of an item's source: cache/<key>/<name>. */
static void copy_path(const build_cfg *c, const build_item *it, char *buf, size_t n)
{
    const char *base = strrchr(it->src, '/');
    snprintf(buf, n, "%s/%s/%s", c->cache_dir, it->key, base ? base + 1 : it->src);
}

static int write_copy(const build_cfg *c, const build_item *it, const char *src, size_t len, kbv_err *e)
{
    char dir[4200], path[4400];
    snprintf(dir, sizeof dir, "%s/%s", c->cache_dir, it->key);
    int rc = afile_mkdirs(dir, e);
    copy_path(c, it, path, sizeof path);
    if (!rc) rc = afile_write_all(path, src, len, e);
    return rc;
}

static int item_key(const build_cfg *c, const char *compiler_id, const char *kbv_h, build_item *it,
                    kbv_err *e)
{
    char *src = NULL;
    size_t len = 0;
    int rc = afile_read_all(it->src, &src, &len, e);
    if (rc) return rc;
    char arch[32], inc[4200];
    const char *flags[N_FLAGS];
    make_flags(c, arch, inc, flags);
    sha_ctx *h = NULL;
    rc = sha_begin(&h, e);
    if (rc) {
        free(src);
        return rc;
    }
    static const char tag[] = "kbv-build-1";
    rc = sha_add(h, tag, sizeof tag, e);
    if (!rc) rc = sha_add(h, src, len + 1, e);
    /* The include flag names a folder that differs between checkouts; the
     * header's contents (hashed below) are what matter, so it is left out. */
    for (int i = 0; !rc && i < N_FLAGS - 1; i++) rc = sha_add(h, flags[i], strlen(flags[i]) + 1, e);
    if (!rc) rc = sha_add(h, compiler_id, strlen(compiler_id) + 1, e);
    if (!rc) rc = sha_add(h, kbv_h, strlen(kbv_h) + 1, e);
    int rc2 = sha_end(h, rc ? NULL : it->key, e);
    /* nvcc compiles a private copy of exactly the bytes hashed (under the
     * candidate's own file name, so that its messages name it): a
     * candidate file swapped for another, or for a link, after it was read
     * cannot change what is built. */
    if (!rc && !rc2) rc2 = write_copy(c, it, src, len, e);
    free(src);
    return rc ? rc : rc2;
}

typedef struct {
    int item;         /* first item with this key */
    pid_t pid;
    double started;
    char tmp_so[4200], tmp_log[4200];
    char src_copy[4400];   /* the private copy nvcc compiles */
} job;

static int start_job(const build_cfg *c, build_item *it, job *j, int serial, kbv_err *e)
{
    snprintf(j->tmp_so, sizeof j->tmp_so, "%s/%s.so.tmp.%ld.%d", c->cache_dir, it->key,
             (long)getpid(), serial);
    snprintf(j->tmp_log, sizeof j->tmp_log, "%s/%s.log.tmp.%ld.%d", c->cache_dir, it->key,
             (long)getpid(), serial);
    copy_path(c, it, j->src_copy, sizeof j->src_copy);
    char arch[32], inc[4200];
    const char *flags[N_FLAGS];
    make_flags(c, arch, inc, flags);
    int fd = open(j->tmp_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return err_set(e, KBV_ERUNTIME, "%s: %s", j->tmp_log, strerror(errno));
    j->started = log_now();
    pid_t pid = fork();
    if (pid < 0) {
        close(fd);
        return err_set(e, KBV_ERUNTIME, "build: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        const char *argv[N_FLAGS + 5];
        int k = 0;
        argv[k++] = c->nvcc;
        for (int i = 0; i < N_FLAGS; i++) argv[k++] = flags[i];
        argv[k++] = "-o";
        argv[k++] = j->tmp_so;
        argv[k++] = j->src_copy;
        argv[k] = NULL;
        dup2(fd, 1);
        dup2(fd, 2);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0);
        setpgid(0, 0);
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd);
    j->pid = pid;
    return 0;
}

static int finish_job(const build_cfg *c, build_item *it, job *j, int status, kbv_err *e)
{
    it->seconds = log_now() - j->started;
    it->log = read_capped(j->tmp_log, BUILD_LOG_MAX);
    if (!it->log) return err_set(e, KBV_ENOMEM, "build: out of memory");
    struct stat st;
    int ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
             stat(j->tmp_so, &st) == 0 && st.st_size > 0;
    if (status == -1) {
        size_t n = strlen(it->log);
        char *g = realloc(it->log, n + 64);
        if (g) {
            snprintf(g + n, 64, "\nkbv: build killed after %.0f s\n", c->timeout_s);
            it->log = g;
        }
    }
    if (ok) {
        char so[4200], lg[4200];
        snprintf(so, sizeof so, "%s/%s.so", c->cache_dir, it->key);
        snprintf(lg, sizeof lg, "%s/%s.log", c->cache_dir, it->key);
        if (rename(j->tmp_log, lg) != 0 || rename(j->tmp_so, so) != 0) {
            unlink(j->tmp_so);
            unlink(j->tmp_log);
            return err_set(e, KBV_ERUNTIME, "build: cannot store %s: %s", so, strerror(errno));
        }
        it->so_path = strdup(so);
        if (!it->so_path) return err_set(e, KBV_ENOMEM, "build: out of memory");
        it->ok = 1;
    } else {
        /* A failed build is not cached: the next run tries again. */
        unlink(j->tmp_so);
        unlink(j->tmp_log);
    }
    return 0;
}

static int copy_result(const build_item *from, build_item *to, kbv_err *e)
{
    to->ok = from->ok;
    to->cached = from->cached;
    to->seconds = from->seconds;
    to->log = strdup(from->log ? from->log : "");
    to->so_path = from->so_path ? strdup(from->so_path) : NULL;
    if (!to->log || (from->so_path && !to->so_path))
        return err_set(e, KBV_ENOMEM, "build: out of memory");
    return 0;
}

int build_run(const build_cfg *c, build_item *items, int n, build_progress_fn progress, void *ctx,
              kbv_err *e)
{
    int rc = afile_mkdirs(c->cache_dir, e);
    if (rc) return rc;
    char *compiler_id = NULL, *kbv_h = NULL;
    size_t len;
    char hpath[4200];
    snprintf(hpath, sizeof hpath, "%s/kbv.h", c->include_dir);
    rc = afile_read_all(hpath, &kbv_h, &len, e);
    if (rc) return err_prefix(e, "build: the candidate header");
    rc = build_compiler_id(c->nvcc, &compiler_id, e);
    if (rc) {
        free(kbv_h);
        return rc;
    }
    int *first = malloc((size_t)(n > 0 ? n : 1) * sizeof *first);
    job *jobs = calloc((size_t)(c->jobs > 0 ? c->jobs : 1), sizeof *jobs);
    int *todo = malloc((size_t)(n > 0 ? n : 1) * sizeof *todo);
    if (!first || !jobs || !todo) {
        rc = err_set(e, KBV_ENOMEM, "build: out of memory");
        goto done;
    }
    int n_todo = 0, n_done = 0;
    for (int i = 0; i < n; i++) {
        rc = item_key(c, compiler_id, kbv_h, &items[i], e);
        if (rc) goto done;
        first[i] = i;
        for (int k = 0; k < i; k++)
            if (strcmp(items[k].key, items[i].key) == 0) {
                first[i] = k;
                break;
            }
        if (first[i] != i) continue;
        char so[4200], lg[4200];
        snprintf(so, sizeof so, "%s/%s.so", c->cache_dir, items[i].key);
        snprintf(lg, sizeof lg, "%s/%s.log", c->cache_dir, items[i].key);
        if (access(so, R_OK) == 0) {
            items[i].ok = 1;
            items[i].cached = 1;
            items[i].so_path = strdup(so);
            items[i].log = access(lg, R_OK) == 0 ? read_capped(lg, BUILD_LOG_MAX) : strdup("");
            if (!items[i].so_path || !items[i].log) {
                rc = err_set(e, KBV_ENOMEM, "build: out of memory");
                goto done;
            }
            n_done++;
            if (progress) progress(ctx, n_done, n, items[i].src);
        } else {
            todo[n_todo++] = i;
        }
    }
    int slots = c->jobs > 0 ? c->jobs : 1, running = 0, next = 0, serial = 0;
    while (next < n_todo || running > 0) {
        while (running < slots && next < n_todo) {
            int s = 0;
            while (jobs[s].pid) s++;
            jobs[s].item = todo[next++];
            rc = start_job(c, &items[jobs[s].item], &jobs[s], serial++, e);
            if (rc) goto done;
            running++;
        }
        int reaped = 0;
        for (int s = 0; s < slots; s++) {
            if (!jobs[s].pid) continue;
            int st = 0;
            pid_t w = waitpid(jobs[s].pid, &st, WNOHANG);
            if (w == 0 && log_now() - jobs[s].started > c->timeout_s) {
                kill(-jobs[s].pid, SIGKILL);
                kill(jobs[s].pid, SIGKILL);
                waitpid(jobs[s].pid, &st, 0);
                st = -1;
                w = jobs[s].pid;
            }
            if (w != jobs[s].pid) continue;
            jobs[s].pid = 0;
            running--;
            reaped++;
            rc = finish_job(c, &items[jobs[s].item], &jobs[s], st, e);
            if (rc) goto done;
            n_done++;
            if (progress) progress(ctx, n_done, n, items[jobs[s].item].src);
        }
        if (!reaped) sleep_ms(10);
    }
    for (int i = 0; i < n; i++)
        if (first[i] != i) {
            rc = copy_result(&items[first[i]], &items[i], e);
            if (rc) goto done;
        }
done:
    if (rc && jobs)
        for (int s = 0; s < (c->jobs > 0 ? c->jobs : 1); s++)
            if (jobs[s].pid) {
                kill(-jobs[s].pid, SIGKILL);
                waitpid(jobs[s].pid, NULL, 0);
                unlink(jobs[s].tmp_so);
                unlink(jobs[s].tmp_log);
            }
    free(first);
    free(jobs);
    free(todo);
    free(compiler_id);
    free(kbv_h);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int push(char ***arr, int *n, const char *s, size_t len)
{
    for (int i = 0; i < *n; i++)
        if (strlen((*arr)[i]) == len && strncmp((*arr)[i], s, len) == 0) return 0;
    char **g = realloc(*arr, (size_t)(*n + 1) * sizeof *g);
    if (!g) return -1;
    *arr = g;
    if (!(g[*n] = strndup(s, len))) return -1;
    (*n)++;
    return 0;
}

int build_scan_text(const char *nm_out, build_item *it, kbv_err *e)
{
    const char *p = nm_out;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        char line[1024];
        if (ll < sizeof line) {
            memcpy(line, p, ll);
            line[ll] = 0;
            /* "<addr or spaces> <type> <name>[@version]" */
            char *name = strrchr(line, ' ');
            if (name && name > line + 1 && name[-2] == ' ') {
                char type = name[-1];
                name++;
                char *at = strchr(name, '@');
                size_t nl = at ? (size_t)(at - name) : strlen(name);
                char sym[1024];
                memcpy(sym, name, nl);
                sym[nl] = 0;
                if (nl > 0 && (type == 'U' || type == 'w' || type == 'v')) {
                    it->flags |= verdict_scan_import(sym);
                    if (!verdict_scan_boring(sym) && push(&it->imports, &it->n_imports, sym, nl))
                        return err_set(e, KBV_ENOMEM, "build: out of memory");
                } else if (nl > 0) {
                    unsigned f = verdict_scan_define(sym);
                    it->flags |= f;
                    if (f && push(&it->defines, &it->n_defines, sym, nl))
                        return err_set(e, KBV_ENOMEM, "build: out of memory");
                }
            }
        }
        p += ll;
        if (*p == '\n') p++;
    }
    if (it->n_imports) qsort(it->imports, (size_t)it->n_imports, sizeof *it->imports, cmp_str);
    if (it->n_defines) qsort(it->defines, (size_t)it->n_defines, sizeof *it->defines, cmp_str);
    return 0;
}

/* The object's own bytes: strings that name a way around the worker
 * (verdict_scan_bytes).  The object is kbv's own build output, at most a
 * few hundred MB. */
static int scan_bytes(build_item *it, kbv_err *e)
{
    int fd = open(it->so_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return err_set(e, KBV_ERUNTIME, "build: %s: %s", it->so_path, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = err_set(e, KBV_ERUNTIME, "build: %s is not a regular file", it->so_path);
    } else if (st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            rc = err_set(e, KBV_ERUNTIME, "build: %s: mmap: %s", it->so_path, strerror(errno));
        } else {
            it->flags |= verdict_scan_bytes(m, (size_t)st.st_size);
            munmap(m, (size_t)st.st_size);
        }
    }
    close(fd);
    return rc;
}

int build_scan_asm_text(const char *objdump_out, build_item *it, kbv_err *e)
{
    for (const char *p = objdump_out; *p;) {
        const char *eol = strchr(p, '\n');
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        /* "  1234:\tsyscall" (with --no-show-raw-insn): the mnemonic follows
         * the address's tab. */
        const char *tab = memchr(p, '\t', ll);
        if (tab) {
            const char *m = tab + 1;
            size_t ml = ll - (size_t)(m - p);
            int hit = (ml >= 7 && strncmp(m, "syscall", 7) == 0) || (ml >= 8 && strncmp(m, "sysenter", 8) == 0) ||
                      (ml >= 3 && strncmp(m, "int", 3) == 0 && memmem(m, ml, "$0x80", 5));
            if (hit) {
                it->flags |= SCAN_TAMPER;
                static const char name[] = "<syscall instruction>";
                for (int i = 0; i < it->n_imports; i++)
                    if (strcmp(it->imports[i], name) == 0) return 0;
                if (push(&it->imports, &it->n_imports, name, sizeof name - 1))
                    return err_set(e, KBV_ENOMEM, "build: out of memory");
                qsort(it->imports, (size_t)it->n_imports, sizeof *it->imports, cmp_str);
                return 0;
            }
        }
        p += ll;
        if (*p == '\n') p++;
    }
    return 0;
}

/* objdump -d of the object's code for build_scan_asm_text; an object
 * objdump cannot read is left to the other scans. */
static int scan_asm(build_item *it, kbv_err *e)
{
    char *argv[] = {"objdump", "-d", "--no-show-raw-insn", it->so_path, NULL};
    char *out = NULL;
    int st;
    int rc = build_capture(argv, (size_t)64 << 20, 120, &out, &st, e);
    if (rc) return rc;
    if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0) rc = build_scan_asm_text(out, it, e);
    free(out);
    return rc;
}

int build_scan(build_item *it, kbv_err *e)
{
    if (!it->so_path) return 0;
    char *argv[] = {"nm", "-D", it->so_path, NULL};
    char *out = NULL;
    int st;
    int rc = build_capture(argv, (size_t)16 << 20, 60, &out, &st, e);
    if (rc) return rc;
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        rc = err_set(e, KBV_ERUNTIME, "build: nm -D %s failed: %.300s", it->so_path, out);
        free(out);
        return rc;
    }
    rc = build_scan_text(out, it, e);
    free(out);
    if (!rc) rc = scan_bytes(it, e);
    if (!rc) rc = scan_asm(it, e);
    return rc;
}

void build_item_clear(build_item *it)
{
    if (!it) return;
    free(it->so_path);
    free(it->log);
    for (int i = 0; i < it->n_imports; i++) free(it->imports[i]);
    for (int i = 0; i < it->n_defines; i++) free(it->defines[i]);
    free(it->imports);
    free(it->defines);
    const char *src = it->src;
    memset(it, 0, sizeof *it);
    it->src = src;
}

int build_find_include(const char *dir, char *buf, size_t n, kbv_err *e)
{
    const char *env = getenv("KBV_INCLUDE");
    char probe[PATH_MAX + 32];
    if (env && *env) {
        snprintf(buf, n, "%s", env);
        return 0;
    }
    const char *cands[] = {"/../include", "/include", NULL};
    for (int i = 0; cands[i]; i++) {
        char d[PATH_MAX];
        snprintf(d, sizeof d, "%s%s", dir, cands[i]);
        snprintf(probe, sizeof probe, "%s/kbv.h", d);
        if (access(probe, R_OK) == 0) {
            if (!realpath(d, buf)) snprintf(buf, n, "%s", d);
            return 0;
        }
    }
    if (access("include/kbv.h", R_OK) == 0 && realpath("include", buf)) return 0;
    return err_set(e, KBV_ERUNTIME, "cannot find kbv.h (set KBV_INCLUDE)");
}

const char *build_find_nvcc(void)
{
    const char *env = getenv("NVCC");
    if (env && *env) return env;
    const char *path = getenv("PATH");
    if (path) {
        char buf[PATH_MAX];
        const char *p = path;
        while (*p) {
            const char *c = strchr(p, ':');
            size_t l = c ? (size_t)(c - p) : strlen(p);
            snprintf(buf, sizeof buf, "%.*s/nvcc", (int)l, p);
            if (l && access(buf, X_OK) == 0) return "nvcc";
            p += l;
            if (*p == ':') p++;
        }
    }
    if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0) return "/usr/local/cuda/bin/nvcc";
    return "nvcc";
}
