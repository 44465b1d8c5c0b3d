/* err.h - error values and the one message that goes with them.
 *
 * Library functions return 0 on success or one of the negative KBV_E* codes
 * and, on failure, fill the caller's kbv_err with one message that names the
 * file (and line) and the problem.  Only main() prints it, as
 * "kbv: <stage>: <message>", and maps the code to an exit status.
 */
#ifndef KBV_ERR_H
#define KBV_ERR_H

#include <stdarg.h>

/* C linkage, so that the CUDA C++ parts of collect can call it. */
#ifdef __cplusplus
extern "C" {
#endif

enum {
    KBV_OK = 0,
    KBV_ERUNTIME = -1, /* the world failed: I/O, GPU, child process; exit 1 */
    KBV_EINPUT = -2,   /* a file or value the user gave is wrong; exit 2 */
    KBV_EUSAGE = -3,   /* bad command line; exit 2 */
    KBV_ENOMEM = -4    /* out of host memory; exit 1 */
};

#define KBV_ERR_MSG_MAX 1024

typedef struct kbv_err {
    int code;
    char msg[KBV_ERR_MSG_MAX];
} kbv_err;

/* Records code and a printf-style message in e (which may be NULL) and
 * returns code, so that callers can write `return err_set(e, ...)`. */
int err_set(kbv_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int err_vset(kbv_err *e, int code, const char *fmt, va_list ap);

/* Prefixes the message already in e with "prefix: " (for context such as a
 * file name added by an outer caller); returns e->code. */
int err_prefix(kbv_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The process exit status for a code: 0, 1 (runtime) or 2 (usage/input). */
int err_exit_status(int code);

/* Prints "kbv: <stage>: <message>\n" to stderr. */
void err_report(const char *stage, const kbv_err *e);

#ifdef __cplusplus
}
#endif

#endif
