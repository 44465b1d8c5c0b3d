/* report.h - the whole report of a run directory: RUN_DIR/report/ with
 * report.pdf, figures/<name>.svg and .png, tables/<name>.csv and .tex.
 *
 * The report is built in a temporary folder beside it (RUN_DIR/.report.tmp.
 * <pid>) and renamed into place at the end, so that a failure leaves the
 * previous report (or none) and no half-written file.  Everything written
 * depends only on the run directory, the templates and the fonts: the date
 * is the run's created_utc, or SOURCE_DATE_EPOCH when the caller passes it.
 */
#ifndef KBV_REPORT_H
#define KBV_REPORT_H

#include "err.h"

typedef struct report_opts {
    const char *run_dir;
    const char *template_path;   /* report.json */
    const char *style_path;      /* style.json */
    const char *source_date_epoch;   /* NULL unless set in the environment */
} report_opts;

typedef struct report_stats {
    int pages, figures, tables;
} report_stats;

int report_render(const report_opts *o, report_stats *stats, kbv_err *e);

/* Parses "YYYY-MM-DDTHH:MM:SS[.fff]Z" (or with +00:00); -1 when malformed. */
int report_parse_utc(const char *s, int *y, int *mo, int *d, int *h, int *mi, int *sec);

#endif
