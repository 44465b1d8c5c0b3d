/* copts.h - the command line of kbv-collect (DESIGN.md 3): the options, their
 * defaults and checks, and the help text.
 *
 * The option strings are borrowed from argv (which outlives the run); the
 * GPU ids point into the struct's own buffers.  No allocation. */
#ifndef KBV_COPTS_H
#define KBV_COPTS_H

#include <stdio.h>
#include "err.h"

#define COPTS_MAX_GPUS 64
/* The BF16 setting's tolerance, |out - ref| <= max(atol min(1, max |ref|),
 * 2^-23) + rtol |ref|, max |ref| over the output tensor's finite reference
 * values (verdict_bf16_atol; KernelBench-Verified's is 1e-2 + 1e-2 |ref|,
 * which this is never looser than).  ATOL_SCALE names the factor in the
 * manifest's config.tolerance_bf16. */
#define COPTS_BF16_ATOL 1e-2
#define COPTS_BF16_RTOL 1e-2
#define COPTS_BF16_ATOL_SCALE "min(1, max|ref|)"

typedef struct {
    const char *suite;
    const char *cand_dirs[256];
    int n_dirs;
    const char *out;
    unsigned long long seed;
    const char *glob;
    int shard_i, shard_n;
    const char *gpus[COPTS_MAX_GPUS];
    int n_gpus;
    char gpu_buf[1024];
    char vis_buf[4096];      /* the inherited CUDA_VISIBLE_DEVICES, split */
    int resume;
    double timeout_s;
    long trials;
    double atol, rtol;
    long jobs;
    int build_only;
    long arch;            /* 0: from the GPU (or 90 with --build-only) */
    double max_time_s;    /* the stopping rule's time cap per variant */
    const char *preroll;  /* --preroll's text (cstat_parse_preroll), or NULL for the default */
    const char *pins;     /* a kbv-pins/1 table of baseline kernel choices, or NULL */
    const char *precision;   /* "fp32", "bf16" or "all": which sets run (set.json "precision") */
    const char *sandbox;     /* "auto", "require" or "off": the workers' sandbox (sandbox.h) */
} copts;

/* Parses argv into *o (defaults first): 0, with *done set when --help or
 * --version was answered on stdout; KBV_EUSAGE with one message otherwise.
 * Under CUDA_VISIBLE_DEVICES, --gpus counts within that list. */
int copts_parse(int argc, char **argv, copts *o, int *done, kbv_err *e);

/* The help text. */
void copts_usage(FILE *f);

#endif
