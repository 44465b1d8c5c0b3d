#include "log.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double log_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void log_line(const char *stage, const char *kind, const char *fmt, va_list ap)
{
    fprintf(stderr, "kbv: %s: %s", stage, kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void log_info(const char *stage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line(stage, "", fmt, ap);
    va_end(ap);
}

void log_warn(const char *stage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line(stage, "warning: ", fmt, ap);
    va_end(ap);
}

void log_progress_start(log_progress *p, const char *stage, long total)
{
    memset(p, 0, sizeof *p);
    p->stage = stage;
    p->total = total;
    p->started = log_now();
    p->is_tty = isatty(STDERR_FILENO);
}

static void format_eta(char *buf, size_t n, double seconds)
{
    if (seconds < 0) {
        snprintf(buf, n, "--:--");
        return;
    }
    long s = (long)(seconds + 0.5);
    if (s >= 3600)
        snprintf(buf, n, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
    else
        snprintf(buf, n, "%ldm%02lds", s / 60, s % 60);
}

void log_progress_set_work(log_progress *p, long work_total)
{
    p->work_total = work_total;
    p->work_done = 0;
}

void log_progress_work_done(log_progress *p)
{
    p->work_done++;
}

double log_progress_eta(const log_progress *p, double now)
{
    double elapsed = now - p->started;
    long done = p->work_total > 0 ? p->work_done : p->done;
    long left = p->work_total > 0 ? p->work_total - p->work_done : p->total - p->done;
    if (done <= 0) return -1.0;
    return elapsed / (double)done * (double)(left > 0 ? left : 0);
}

void log_progress_step(log_progress *p, long done, const char *what)
{
    p->done = done;
    double eta = log_progress_eta(p, log_now());
    char eta_s[32];
    format_eta(eta_s, sizeof eta_s, eta);
    if (p->is_tty) {
        /* Redraw one line in place; \033[K clears what a longer line left. */
        fprintf(stderr, "\rkbv: %s: [%ld/%ld] %s  ETA %s\033[K", p->stage, done, p->total,
                what ? what : "", eta_s);
        p->drawn = 1;
    } else {
        fprintf(stderr, "kbv: %s: [%ld/%ld] %s (ETA %s)\n", p->stage, done, p->total,
                what ? what : "", eta_s);
    }
    fflush(stderr);
}

void log_progress_end(log_progress *p)
{
    if (p->is_tty && p->drawn) fputc('\n', stderr);
    p->drawn = 0;
    fprintf(stderr, "kbv: %s: %ld/%ld done in %.1f s\n", p->stage, p->done, p->total,
            log_now() - p->started);
}
