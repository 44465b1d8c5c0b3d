/* kbv-analyze RUN_DIR: reads the manifest and the journal of a run and
 * writes RUN_DIR/analysis.json (DESIGN.md sections 6 and 7). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "levels.h"
#include "parity.h"
#include "cli.h"
#include "err.h"
#include "jio.h"
#include "log.h"
#include "run.h"

static const char *const usage =
    "usage: kbv-analyze [--seed N] [--resamples N] [--jobs N] RUN_DIR\n"
    "       kbv-analyze --parity-only RUN_DIR\n"
    "\n"
    "Reads RUN_DIR/manifest.json and RUN_DIR/samples.jsonl (or samples.jsonl.gz)\n"
    "and writes RUN_DIR/analysis.json: medians, speedups against the fp32 and\n"
    "tf32 baselines with bootstrap intervals, the class and flags of every\n"
    "(set, problem) with evidence, geometric means, fast_p, memory efficiency\n"
    "and the inflation decomposition.  The same run directory gives the same\n"
    "bytes.  When RUN_DIR/parity.json (docs/parity.md) is there, each\n"
    "problem's baseline parity with PyTorch is judged against the 1.05 limit.\n"
    "\n"
    "  --seed N        bootstrap seed (default: the manifest's config.seed)\n"
    "  --resamples N   bootstrap resamples (default 10000)\n"
    "  --jobs N        threads for reading and over candidate sets (default:\n"
    "                  up to 2); the output does not depend on it\n"
    "  --parity-only   only judge RUN_DIR/parity.json again, into the existing\n"
    "                  analysis.json (after a parity file was re-measured)\n"
    "  --help          this text\n"
    "  --version       version and git commit\n";

int main(int argc, char **argv)
{
    kbv_err e = {0};
    const char *dir = NULL;
    unsigned long long seed = 0;
    long resamples = 10000, jobs = 0;
    int have_seed = 0, parity_only = 0, rc = 0;
    run_data *r = NULL;
    cJSON *out = NULL;
    char path[4096];

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        if (strcmp(a, "--version") == 0) {
            cli_print_version("kbv-analyze");
            return 0;
        }
        if (strcmp(a, "--parity-only") == 0) {
            parity_only = 1;
            continue;
        }
        if (strcmp(a, "--seed") == 0 || strcmp(a, "--resamples") == 0 || strcmp(a, "--jobs") == 0) {
            if (i + 1 >= argc) {
                rc = err_set(&e, KBV_EUSAGE, "%s needs a value\n%s", a, usage);
                goto fail;
            }
            const char *v = argv[++i];
            if (strcmp(a, "--seed") == 0) {
                rc = cli_parse_u64(a, v, &seed, &e);
                have_seed = 1;
            } else if (strcmp(a, "--resamples") == 0) {
                rc = cli_parse_long(a, v, 1, 100000000, &resamples, &e);
            } else {
                rc = cli_parse_long(a, v, 1, 64, &jobs, &e);
            }
            if (rc) goto fail;
            continue;
        }
        if (a[0] == '-' && a[1]) {
            rc = err_set(&e, KBV_EUSAGE, "unknown option %s\n%s", a, usage);
            goto fail;
        }
        if (dir) {
            rc = err_set(&e, KBV_EUSAGE, "one RUN_DIR only\n%s", usage);
            goto fail;
        }
        dir = a;
    }
    if (!dir) {
        rc = err_set(&e, KBV_EUSAGE, "no RUN_DIR given\n%s", usage);
        goto fail;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        rc = err_set(&e, KBV_EINPUT, "%s: not a directory", dir);
        goto fail;
    }
    if ((rc = cli_path(path, sizeof path, dir, "analysis.json", &e))) goto fail;
    if (parity_only) {
        if ((rc = parity_update(dir, &e))) goto fail;
        log_info("analyze", "%s: parity judged again -> %s", dir, path);
        return 0;
    }

    double t0 = log_now();
    int threads = (int)jobs;
    if (threads <= 0) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        threads = ncpu >= 2 ? 2 : 1;
    }
    if ((rc = run_load_jobs(dir, threads, &r, &e))) goto fail;
    analysis_opts o;
    analysis_default_opts(r, &o);
    if (have_seed) o.seed = seed;
    o.resamples = (size_t)resamples;
    o.threads = threads;
    if ((rc = analysis_build(r, &o, &out, &e))) goto fail;
    /* The appendix's breakdowns (per level, failures, tolerance sweep) are
     * added to the finished tree, apart from the set's own statistics. */
    if ((rc = levels_add(r, &o, out, &e))) goto fail;
    /* The baselines' parity with PyTorch (RUN_DIR/parity.json), judged
     * here so that render only draws the verdicts. */
    if ((rc = parity_add(dir, r, out, &e))) goto fail;
    /* Journal texts (build logs, details) may hold any bytes; JSON readers
     * refuse a file that is not UTF-8. */
    size_t fixed = 0;
    if ((rc = jio_utf8_fix(out, &fixed, &e))) goto fail;
    if (fixed)
        log_warn("analyze", "%s: %zu bytes of invalid UTF-8 in the journal's texts written as U+FFFD", dir, fixed);
    if ((rc = jio_save(path, out, &e))) goto fail;
    size_t unfinished = run_unfinished_pairs(r);
    if (unfinished)
        log_warn("analyze",
                 "%s: %zu of %zu pairs have no status (an interrupted collect): they are classed error until "
                 "the run is continued with kbv collect --resume --out %s",
                 dir, unfinished, r->n_sets * r->n_problems, dir);
    log_info("analyze", "%s: %zu sets x %zu problems, %ld time samples, %.2f s -> %s", dir, r->n_sets,
             r->n_problems, r->n_time, log_now() - t0, path);
    cJSON_Delete(out);
    run_free(r);
    return 0;

fail:
    /* A failed analysis leaves the run directory as it was: an existing
     * analysis.json is replaced only by a complete new one (jio_save writes
     * a temporary name and renames it), so no bad input, full disk or
     * interruption can destroy it. */
    err_report("analyze", &e);
    cJSON_Delete(out);
    run_free(r);
    return err_exit_status(rc);
}
