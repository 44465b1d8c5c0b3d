#include "err.h"

#include <stdio.h>
#include <string.h>

int err_vset(kbv_err *e, int code, const char *fmt, va_list ap)
{
    if (e) {
        e->code = code;
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    }
    return code;
}

int err_set(kbv_err *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(e, code, fmt, ap);
    va_end(ap);
    return code;
}

int err_prefix(kbv_err *e, const char *fmt, ...)
{
    if (!e) return KBV_ERUNTIME;
    char head[KBV_ERR_MSG_MAX], old[KBV_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    snprintf(e->msg, sizeof e->msg, "%s: %s", head, old);
    return e->code;
}

int err_exit_status(int code)
{
    switch (code) {
    case KBV_OK: return 0;
    case KBV_EINPUT:
    case KBV_EUSAGE: return 2;
    default: return 1;
    }
}

void err_report(const char *stage, const kbv_err *e)
{
    fprintf(stderr, "kbv: %s: %s\n", stage, e && e->msg[0] ? e->msg : "unknown error");
}
