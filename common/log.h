/* log.h - messages and progress on stderr.
 *
 * Every line starts with "kbv: <stage>: ".  A progress meter redraws one line
 * (done/total, current item, ETA) when stderr is a terminal and prints plain
 * lines otherwise, so that logs of batch jobs stay readable.
 */
#ifndef KBV_LOG_H
#define KBV_LOG_H

#include <stdio.h>

/* C linkage, so that the CUDA C++ parts of collect can call it. */
#ifdef __cplusplus
extern "C" {
#endif

void log_info(const char *stage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_warn(const char *stage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef struct log_progress {
    const char *stage; /* borrowed; must outlive the meter */
    long total;
    long done;
    double started;    /* monotonic seconds */
    int is_tty;
    int drawn;         /* a partial line is on the terminal */
    long work_total;   /* > 0: the ETA counts these items only (log_progress_set_work) */
    long work_done;
} log_progress;

void log_progress_start(log_progress *p, const char *stage, long total);
/* Says that only work_total of the items take time (the others, such as a
 * resumed run's finished pairs or pairs without a candidate, are done at
 * once), so that the ETA is the time per such item times those left;
 * log_progress_work_done counts one of them finished. */
void log_progress_set_work(log_progress *p, long work_total);
void log_progress_work_done(log_progress *p);
/* Reports that item `what` (borrowed) is starting, after `done` items. */
void log_progress_step(log_progress *p, long done, const char *what);
void log_progress_end(log_progress *p);
/* The seconds left at time now (log_now's clock): elapsed time per item
 * done times the items left, counting only the timed items when
 * log_progress_set_work was called; -1 before the first item is done. */
double log_progress_eta(const log_progress *p, double now);

/* Monotonic clock in seconds. */
double log_now(void);

#ifdef __cplusplus
}
#endif

#endif
