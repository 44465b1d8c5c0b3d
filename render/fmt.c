/* fmt.c - number formats of the report (see fmt.h). */
#include "fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

char *fmt_2(char *buf, size_t n, double v)
{
    if (isnan(v) || isinf(v))
        snprintf(buf, n, FMT_NA);
    else
        snprintf(buf, n, "%.2f", v);
    return buf;
}

char *fmt_ratio(char *buf, size_t n, const rm_est *x)
{
    if (!x->ok)
        snprintf(buf, n, FMT_NA);
    else
        snprintf(buf, n, "%.2fx", x->est);
    return buf;
}

char *fmt_ci(char *buf, size_t n, const rm_est *x)
{
    if (!x->ok || isnan(x->lo) || isnan(x->hi))
        snprintf(buf, n, "[" FMT_NA "]");
    else
        snprintf(buf, n, "[%.2f, %.2f]", x->lo, x->hi);
    return buf;
}

char *fmt_range(char *buf, size_t n, const rm_est *x)
{
    if (!x->ok || isnan(x->lo) || isnan(x->hi))
        snprintf(buf, n, FMT_NA);
    else
        snprintf(buf, n, "%.2f\u2013%.2f", x->lo, x->hi);
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
