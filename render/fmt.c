/* fmt.c - number formats of the report (see fmt.h). */
#include "fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Two decimals, or two significant digits below 0.095, so that a tiny
 * speedup or share never prints as "0.00" beside a real zero. */
static int put2(char *buf, size_t n, double v)
{
    if (v != 0 && fabs(v) < 0.095)
        return snprintf(buf, n, "%.2g", v);
    return snprintf(buf, n, "%.2f", v);
}

char *fmt_2(char *buf, size_t n, double v)
{
    if (isnan(v) || isinf(v))
        snprintf(buf, n, FMT_NA);
    else
        put2(buf, n, v);
    return buf;
}

char *fmt_ratio(char *buf, size_t n, const rm_est *x)
{
    if (!x->ok)
        snprintf(buf, n, FMT_NA);
    else
        snprintf(buf, n, "%sx", fmt_2((char[32]){0}, 32, x->est));
    return buf;
}

char *fmt_ci(char *buf, size_t n, const rm_est *x)
{
    if (!x->ok || isnan(x->lo) || isnan(x->hi))
        snprintf(buf, n, "[" FMT_NA "]");
    else
        snprintf(buf, n, "[%s, %s]", fmt_2((char[32]){0}, 32, x->lo), fmt_2((char[32]){0}, 32, x->hi));
    return buf;
}

char *fmt_range(char *buf, size_t n, const rm_est *x)
{
    if (!x->ok || isnan(x->lo) || isnan(x->hi))
        snprintf(buf, n, FMT_NA);
    else
        snprintf(buf, n, "%s\u2013%s", fmt_2((char[32]){0}, 32, x->lo), fmt_2((char[32]){0}, 32, x->hi));
    return buf;
}

char *fmt_est_ci(char *buf, size_t n, const rm_est *x)
{
    char a[64], b[80];
    if (!x->ok)
        snprintf(buf, n, FMT_NA);
    else
        snprintf(buf, n, "%s %s", fmt_2(a, sizeof a, x->est), fmt_ci(b, sizeof b, x));
    return buf;
}

char *fmt_ms(char *buf, size_t n, double ms)
{
    if (isnan(ms))
        snprintf(buf, n, FMT_NA);
    else
        snprintf(buf, n, "%.4g", ms);
    return buf;
}

char *fmt_mib(char *buf, size_t n, double bytes)
{
    if (isnan(bytes))
        snprintf(buf, n, FMT_NA);
    else
        snprintf(buf, n, "%.1f", bytes / 1048576.0);
    return buf;
}

char *fmt_g(char *buf, size_t n, double v)
{
    /* The fewest of 15, 16 or 17 significant digits that read back as the
     * same double, so that CSV values are exactly analysis.json's. */
    if (isnan(v) || isinf(v)) {
        buf[0] = 0;
        return buf;
    }
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, n, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}
