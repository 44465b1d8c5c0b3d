#include "super.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"

struct super_child {
    pid_t pid;
    int fd;              /* read end of the record pipe; -1 after EOF */
    int reaped;
    int status;
    int timed_out;
    int truncated;
    int skipping;        /* discarding the rest of an over-long line */
    double started, deadline;
    char *buf;
    size_t len, cap;
    unsigned char key[CHAN_KEY_LEN];
    uint64_t seq;        /* the sequence number the next authentic line carries */
    char out_path[4200], err_path[4200];
    int out_fd, err_fd;  /* the worker's stdout and stderr files, as collect opened them */
};

void super_tail(int fd, char *buf, size_t n)
{
    buf[0] = 0;
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) == 0) {
        off_t off = st.st_size > (off_t)(n - 1) ? st.st_size - (off_t)(n - 1) : 0;
        ssize_t r = pread(fd, buf, n - 1, off);
        buf[r > 0 ? r : 0] = 0;
        /* Keep the text printable for a JSON string: NULs end it early. */
        for (ssize_t i = 0; i < r; i++)
            if (buf[i] == 0) buf[i] = ' ';
    }
}

/* Tasks (processes and threads) of this real user that /proc shows, or -1.
 * RLIMIT_NPROC counts them all, so a worker's limit is set above them. */
static long user_tasks(void)
{
    DIR *d = opendir("/proc");
    if (!d) return -1;
    uid_t me = getuid();
    long n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9') continue;
        char path[300], buf[4096];
        snprintf(path, sizeof path, "/proc/%s/status", de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t r = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (r <= 0) continue;
        buf[r] = 0;
        const char *u = strstr(buf, "\nUid:");
        const char *t = strstr(buf, "\nThreads:");
        unsigned long uid, threads;
        if (!u || !t || sscanf(u + 5, "%lu", &uid) != 1 || sscanf(t + 9, "%lu", &threads) != 1) continue;
        if ((uid_t)uid == me) n += (long)threads;
    }
    closedir(d);
    return n;
}

static void set_limit(int res, rlim_t v)
{
    struct rlimit rl = {v, v};
    struct rlimit cur;
    if (getrlimit(res, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && cur.rlim_max < v)
        rl.rlim_cur = rl.rlim_max = cur.rlim_max;
    setrlimit(res, &rl);
}

int super_start(const super_spec *s, super_child **out, kbv_err *e)
{
    *out = NULL;
    super_child *c = calloc(1, sizeof *c);
    if (!c) return err_set(e, KBV_ENOMEM, "worker: out of memory");
    c->fd = -1;
    snprintf(c->out_path, sizeof c->out_path, "%s/stdout.txt", s->scratch);
    snprintf(c->err_path, sizeof c->err_path, "%s/stderr.txt", s->scratch);
    int p[2], kp[2];
    if (s->key) memcpy(c->key, s->key, CHAN_KEY_LEN);
    if (pipe2(p, O_CLOEXEC) != 0) {
        free(c);
        return err_set(e, KBV_ERUNTIME, "worker: pipe: %s", strerror(errno));
    }
    /* The key travels on a pipe of its own, written before the fork (32
     * bytes fit any pipe's buffer) and closed behind it: the worker reads
     * it before it loads the candidate, which then finds no descriptor
     * to read it from. */
    if (pipe2(kp, O_CLOEXEC) != 0 || write(kp[1], c->key, CHAN_KEY_LEN) != CHAN_KEY_LEN) {
        int rc = err_set(e, KBV_ERUNTIME, "worker: key pipe: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        free(c);
        return rc;
    }
    close(kp[1]);
    /* Read back through these descriptors at the end, never by the path:
     * the worker may write its scratch folder, and a symbolic link or a
     * FIFO put there in their place must not make collect read another
     * file or wait. */
    int ofd = open(c->out_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    int efd = open(c->err_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (ofd < 0 || efd < 0) {
        int rc = err_set(e, KBV_ERUNTIME, "worker: %s: %s", c->out_path, strerror(errno));
        if (ofd >= 0) close(ofd);
        if (efd >= 0) close(efd);
        close(p[0]);
        close(p[1]);
        close(kp[0]);
        free(c);
        return rc;
    }
    c->started = log_now();
    c->deadline = c->started + s->timeout_s;
    fflush(NULL);
    pid_t parent = getpid();
    long tasks = user_tasks();
    pid_t pid = fork();
    if (pid < 0) {
        int rc = err_set(e, KBV_ERUNTIME, "worker: fork: %s", strerror(errno));
        close(ofd);
        close(efd);
        close(p[0]);
        close(p[1]);
        close(kp[0]);
        free(c);
        return rc;
    }
    if (pid == 0) {
        /* The child: its own process group (so that a timeout kills the
         * candidate's children too), its own folder, its own limits. */
        setpgid(0, 0);
        /* A worker dies with kbv-collect (kill -9 included), so that it
         * never runs on unsupervised; the check closes the race with a
         * parent that died before the call. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(125);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0);
        dup2(ofd, 1);
        dup2(efd, 2);
        dup2(p[1], SUPER_RECORD_FD);
        dup2(kp[0], CHAN_KEY_FD);
        /* Only 0-4 stay open: the journal and other workers' pipes are not
         * the worker's business. */
        if (close_range(CHAN_KEY_FD + 1, ~0u, 0) != 0)
            for (int fd = CHAN_KEY_FD + 1; fd < 65536; fd++) close(fd);
        if (chdir(s->scratch) != 0) _exit(126);
        set_limit(RLIMIT_CORE, 0);
        set_limit(RLIMIT_NOFILE, 4096);
        /* Processes: a fork bomb stops 4096 tasks above what the user runs
         * now (the CUDA runtime and libraries start a few dozen threads).
         * The kernel does not apply the limit to root. */
        if (tasks >= 0) set_limit(RLIMIT_NPROC, (rlim_t)tasks + 4096);
        if (s->fsize_limit) set_limit(RLIMIT_FSIZE, (rlim_t)s->fsize_limit);
        /* CPU seconds: the wall-clock limit plus headroom for busy host
         * threads; the wall clock is what ends a hang. */
        set_limit(RLIMIT_CPU, (rlim_t)(s->timeout_s * 4 + 60));
        if (s->gpu) setenv("CUDA_VISIBLE_DEVICES", s->gpu, 1);
        signal(SIGPIPE, SIG_DFL);
        execv(s->exe, s->argv);
        fprintf(stderr, "kbv: worker: cannot run %s: %s\n", s->exe, strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here, so that a kill never races the child's own call */
    close(kp[0]);
    c->out_fd = ofd;
    c->err_fd = efd;
    close(p[1]);
    c->pid = pid;
    c->fd = p[0];
    /* Non-blocking, so that draining a dead worker's pipe never waits on a
     * grandchild that escaped the process group and still holds it. */
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    *out = c;
    return 0;
}

/* Splits buffered bytes into lines for fn. */
static int deliver(super_child *c, super_line_fn fn, void *ctx, kbv_err *e)
{
    size_t start = 0;
    for (size_t i = 0; i < c->len; i++) {
        if (c->buf[i] != '\n') continue;
        if (!c->skipping) {
            c->buf[i] = 0;
            const char *text;
            size_t tl;
            /* Only an authentic line advances the sequence: the worker's own
             * lines still authenticate after a forged one. */
            int auth = chan_open(c->key, c->seq, c->buf + start, i - start, &text, &tl);
            if (auth) c->seq++;
            else {
                text = c->buf + start;
                tl = i - start;
            }
            int rc = fn ? fn(ctx, text, tl, auth, e) : 0;
            if (rc) return rc;
        }
        c->skipping = 0;
        start = i + 1;
    }
    memmove(c->buf, c->buf + start, c->len - start);
    c->len -= start;
    if (c->len >= SUPER_LINE_MAX) {
        c->truncated = 1;
        c->skipping = 1;
        c->len = 0;
    }
    return 0;
}

/* Reads what is available (the pipe is non-blocking): 0 after reading,
 * 1 at EOF, 2 when nothing is there now, or a negative code. */
static int read_some(super_child *c, super_line_fn fn, void *ctx, kbv_err *e)
{
    if (c->fd < 0) return 1;
    if (c->cap - c->len < 65536) {
        size_t ncap = c->cap ? c->cap * 2 : 262144;
        if (ncap > SUPER_LINE_MAX + 65536 * 2) ncap = SUPER_LINE_MAX + 65536 * 2;
        if (ncap > c->cap) {
            char *g = realloc(c->buf, ncap);
            if (!g) return err_set(e, KBV_ENOMEM, "worker: out of memory");
            c->buf = g;
            c->cap = ncap;
        }
    }
    ssize_t r = read(c->fd, c->buf + c->len, c->cap - c->len);
    if (r < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 2;
        if (errno == EINTR) return 0;
        r = 0;
    }
    if (r == 0) {
        close(c->fd);
        c->fd = -1;
        /* A last line without a newline is torn: the worker died writing it. */
        c->len = 0;
        return 1;
    }
    c->len += (size_t)r;
    int rc = deliver(c, fn, ctx, e);
    return rc < 0 ? rc : 0;
}

static void kill_child(super_child *c)
{
    if (c->reaped) return;
    kill(-c->pid, SIGKILL);
    kill(c->pid, SIGKILL);
}

void super_shorten_deadline(super_child *c, double seconds)
{
    double t = log_now() + seconds;
    if (t < c->deadline) c->deadline = t;
}

void super_kill(super_child *c)
{
    c->timed_out = 0;
    kill_child(c);
}

static void try_reap(super_child *c, int block)
{
    if (c->reaped) return;
    int st;
    pid_t w = waitpid(c->pid, &st, block ? 0 : WNOHANG);
    if (w == c->pid) {
        c->reaped = 1;
        c->status = st;
        /* Whatever the worker left running in its group goes too. */
        kill(-c->pid, SIGKILL);
    }
}

static int ended(super_child *c) { return c->reaped && c->fd < 0; }

int super_pump(super_child **cs, int n, double wait_s, super_line_fn *fns, void **ctxs,
               kbv_err *e)
{
    struct pollfd pf[64];
    int idx[64];
    double t_end = log_now() + wait_s;
    for (;;) {
        int np = 0;
        double now = log_now();
        double until = t_end;
        for (int i = 0; i < n && np < 64; i++) {
            super_child *c = cs[i];
            if (!c) continue;
            if (!c->reaped && now >= c->deadline) {
                c->timed_out = 1;
                kill_child(c);
                try_reap(c, 1);
            }
            try_reap(c, 0);
            if (c->reaped && c->fd >= 0) {
                /* Drain what the dead worker wrote; a grandchild that still
                 * holds the pipe was killed with the group. */
                int rc;
                do rc = read_some(c, fns[i], ctxs[i], e);
                while (rc == 0);
                if (rc < 0) return rc;
                if (c->fd >= 0) {
                    close(c->fd);
                    c->fd = -1;
                }
            }
            if (ended(c)) return i;
            if (c->deadline < until) until = c->deadline;
            if (c->fd >= 0) {
                pf[np].fd = c->fd;
                pf[np].events = POLLIN;
                idx[np++] = i;
            }
        }
        if (now >= t_end) return SUPER_NONE;
        /* Wake at least every 50 ms: waitpid is polled, not signalled, so
         * that a worker that closed its pipe and then hangs is still seen. */
        double wait = until - now;
        if (wait > 0.05) wait = 0.05;
        if (wait < 0) wait = 0;
        int pr = poll(pf, (nfds_t)np, (int)(wait * 1000) + 1);
        if (pr < 0 && errno != EINTR) return err_set(e, KBV_ERUNTIME, "worker: poll: %s", strerror(errno));
        for (int k = 0; pr > 0 && k < np; k++) {
            if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            int i = idx[k];
            int rc, reads = 0;
            do rc = read_some(cs[i], fns[i], ctxs[i], e);
            while (rc == 0 && ++reads < 16);
            if (rc < 0) return rc;
        }
    }
}

int super_finish(super_child *c, super_line_fn fn, void *ctx, super_result *r, kbv_err *e)
{
    memset(r, 0, sizeof *r);
    int rc = 0;
    while (!ended(c)) {
        super_child *one[1] = {c};
        super_line_fn fns[1] = {fn};
        void *ctxs[1] = {ctx};
        rc = super_pump(one, 1, 3600, fns, ctxs, e);
        if (rc == SUPER_NONE) continue;
        if (rc < 0) {
            kill_child(c);
            try_reap(c, 1);
            if (c->fd >= 0) close(c->fd);
            c->fd = -1;
            break;
        }
        rc = 0;
    }
    r->seconds = log_now() - c->started;
    r->timed_out = c->timed_out;
    r->truncated = c->truncated;
    if (WIFEXITED(c->status)) {
        r->exited = 1;
        r->code = WEXITSTATUS(c->status);
    } else if (WIFSIGNALED(c->status)) {
        r->signo = WTERMSIG(c->status);
    }
    super_tail(c->err_fd, r->err_tail, sizeof r->err_tail);
    super_tail(c->out_fd, r->out_tail, sizeof r->out_tail);
    close(c->err_fd);
    close(c->out_fd);
    free(c->buf);
    free(c);
    return rc;
}

/* The pid and parent pid of /proc/<name>/stat, or -1. */
static pid_t parent_of(const char *name)
{
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0) return -1;
    buf[r] = 0;
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses. */
    const char *p = strrchr(buf, ')');
    char state;
    int ppid;
    if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2) return -1;
    return (pid_t)ppid;
}

void super_guard_parent(void)
{
    /* Orphans of a worker's descendants come to this process instead of
     * init, so that super_reap_strays can end them. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    /* Not dumpable: a worker of the same user cannot open this process's
     * files (the journal) or memory through /proc/<pid>/fd or mem. */
    prctl(PR_SET_DUMPABLE, 0);
}

int super_reap_strays(super_child *const *cs, int n)
{
    pid_t me = getpid();
    int ended = 0;
    /* Killing one stray makes its own children orphans, which come here
     * too: a few passes. */
    for (int pass = 0; pass < 16; pass++) {
        DIR *d = opendir("/proc");
        if (!d) return ended;
        int found = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] < '1' || de->d_name[0] > '9') continue;
            if (parent_of(de->d_name) != me) continue;
            pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
            int live_worker = 0;
            for (int i = 0; i < n; i++)
                if (cs[i] && cs[i]->pid == pid && !cs[i]->reaped) live_worker = 1;
            if (live_worker) continue;
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            found++;
        }
        closedir(d);
        ended += found;
        if (!found) break;
    }
    return ended;
}
