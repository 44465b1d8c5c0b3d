/* fmt.h - how numbers are printed in the report, in one place.
 *
 * Ratios (speedups, memory ratios) and fractions (fast_p, shares) are
 * printed with two decimals ("%.2f"), or two significant digits below
 * 0.095 ("0.0062"), so that nothing but zero prints as "0.00"; times in ms with four significant
 * digits, memory in MiB with one decimal; an undefined value prints as
 * "n/a".  Tests read analysis.json and look for numbers printed by these
 * rules in the PDF's text.
 */
#ifndef KBV_FMT_H
#define KBV_FMT_H

#include <stddef.h>
#include "model.h"

#define FMT_NA "n/a"

/* Each writes into buf (size n) and returns buf. */
char *fmt_2(char *buf, size_t n, double v);                 /* "1.83" */
char *fmt_ratio(char *buf, size_t n, const rm_est *x);      /* "1.83x" */
char *fmt_ci(char *buf, size_t n, const rm_est *x);         /* "[1.61, 2.04]" */
char *fmt_range(char *buf, size_t n, const rm_est *x);      /* "1.61-2.04" (en dash) */
char *fmt_est_ci(char *buf, size_t n, const rm_est *x);     /* "1.83 [1.61, 2.04]" */
char *fmt_ms(char *buf, size_t n, double ms);               /* "0.1234" */
char *fmt_mib(char *buf, size_t n, double bytes);           /* "12.5" */
char *fmt_g(char *buf, size_t n, double v);                 /* "%.17g" for CSV */

#endif
