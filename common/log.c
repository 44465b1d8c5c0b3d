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

void log_progress_step(log_progress *p, long done, const char *what)
{
    p->done = done;
    double elapsed = log_now() - p->started;
    double eta = done > 0 ? elapsed / (double)done * (double)(p->total - done) : -1.0;
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
