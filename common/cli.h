/* cli.h - command-line helpers shared by the stage programs. */
#ifndef KBV_CLI_H
#define KBV_CLI_H

#include <stddef.h>
#include "err.h"

/* C linkage, so that the CUDA C++ parts of collect can call it. */
#ifdef __cplusplus
extern "C" {
#endif

#define KBV_VERSION "0.1.0"

/* Strict numeric parsing: the whole string must be a number in range;
 * otherwise KBV_EUSAGE with a message naming the option. */
int cli_parse_long(const char *opt, const char *s, long lo, long hi, long *out, kbv_err *e);
int cli_parse_u64(const char *opt, const char *s, unsigned long long *out, kbv_err *e);
int cli_parse_double(const char *opt, const char *s, double lo, double hi, double *out, kbv_err *e);

/* Prints "<prog> (kbv) <version>" and the git commit baked in at build. */
void cli_print_version(const char *prog);

/* The git commit the harness was built from ("unknown" outside a checkout). */
const char *cli_git_commit(void);

/* The folder that holds the running program (from /proc/self/exe), so that
 * programs find their siblings and templates; 0, or -1 with buf "" when it
 * cannot be read. */
int cli_exe_dir(char *buf, size_t n);

/* Joins dir and name into buf (size n); KBV_EINPUT when it does not fit. */
int cli_path(char *buf, size_t n, const char *dir, const char *name, kbv_err *e);

/* 1 when path, resolved (symbolic links followed; the parts that do not
 * exist yet taken as written), is dir itself or lies inside it; 0 otherwise,
 * and 0 when dir does not exist.  For refusing an output folder inside an
 * input folder, where writing would change the input. */
int cli_path_inside(const char *path, const char *dir);

/* Whether id matches one of the comma-separated fnmatch(3) patterns of
 * globs (NULL matches every id); a pattern of 512 bytes or more matches
 * nothing.  The --problems option of collect and kbv-baseline-bench. */
int cli_glob_match(const char *globs, const char *id);

#ifdef __cplusplus
}
#endif

#endif
