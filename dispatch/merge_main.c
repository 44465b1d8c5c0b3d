/* kbv-merge OUT_DIR RUN_DIR... - the command line of merge (dispatch/merge.h
 * does the work). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "err.h"
#include "merge.h"

static const char usage[] =
    "usage: kbv merge OUT_DIR RUN_DIR...\n"
    "\n"
    "Joins the shards of one run (made with `kbv collect --shard I/N`) into\n"
    "OUT_DIR, a run directory that analyze treats like any other.  Refuses\n"
    "shards of different runs (configuration, suite, seed or candidate\n"
    "sources differ), a (set, problem) pair found in two shards, a pair\n"
    "found in none, and a shard that fails `kbv verify`.  OUT_DIR must not\n"
    "exist yet, nor lie inside a shard.\n";

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--version")) {
            cli_print_version("kbv-merge");
            return 0;
        }
        if (argv[i][0] == '-') {
            fprintf(stderr, "kbv: merge: unknown option '%s'\n%s", argv[i], usage);
            return 2;
        }
    }
    if (argc < 3) {
        fprintf(stderr, "kbv: merge: %s\n%s", argc < 2 ? "no OUT_DIR given" : "no RUN_DIR given", usage);
        return 2;
    }
    kbv_err e = {0};
    int rc = merge_run(argv[1], argc - 2, argv + 2, &e);
    if (rc) {
        err_report("merge", &e);
        return err_exit_status(rc);
    }
    return 0;
}
