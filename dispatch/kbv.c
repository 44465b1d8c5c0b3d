/* kbv - the dispatcher.  `kbv <command> ...` runs kbv-<command> from the
 * folder that holds this program (then from PATH), the way git runs its
 * sub-commands, so that each stage stays a small program of its own.
 * `verify`, `seal` and `report` are handled here: verify and seal are a few
 * lines over common/sums, and report is analyze then render.  After analyze
 * or render succeeds, SHA256SUMS gets the lines of their outputs
 * (analysis.json, report/); the lines of the raw files, which collect and
 * merge seal, are never rewritten here. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "err.h"
#include "sums.h"

static const char usage[] =
    "usage: kbv <command> [options]\n"
    "\n"
    "Verified benchmarks of candidate CUDA kernels against strict-FP32 and TF32 baselines.\n"
    "\n"
    "commands:\n"
    "  collect [--suite S] [--candidates DIR]... [--out RUN_DIR] [--seed N]\n"
    "          [--problems GLOB] [--shard I/N] [--gpus LIST] [--resume]\n"
    "                       run the verified benchmark on a GPU\n"
    "  analyze RUN_DIR      statistics, classes, memory -> RUN_DIR/analysis.json\n"
    "  render RUN_DIR [--template FILE]\n"
    "                       the report -> RUN_DIR/report/\n"
    "  report RUN_DIR       analyze, then render\n"
    "  verify [--pubkey PUB.pem] RUN_DIR\n"
    "                       check every file against RUN_DIR/SHA256SUMS\n"
    "  seal --key KEY.pem RUN_DIR\n"
    "                       sign RUN_DIR/SHA256SUMS (Ed25519) -> SHA256SUMS.sig\n"
    "  merge OUT_DIR RUN_DIR...\n"
    "                       join shards of one run\n"
    "  list [--json]        the problems of the suite\n"
    "  prompt PROBLEM       the text a model needs to write a candidate\n"
    "\n"
    "`kbv <command> --help` describes each command.  Exit status: 0 success,\n"
    "1 runtime failure, 2 bad usage or bad input.\n";

/* Runs kbv-<cmd> with argv, waits, and returns its exit status. */
static int run_stage(const char *cmd, char **argv)
{
    char dir[PATH_MAX], prog[PATH_MAX + 160], name[128];
    snprintf(name, sizeof name, "kbv-%s", cmd);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "kbv: cannot fork: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        argv[0] = name;
        if (cli_exe_dir(dir, sizeof dir) == 0) { /* build/kbv finds build/kbv-analyze */
            snprintf(prog, sizeof prog, "%s/%s", dir, name);
            if (access(prog, X_OK) == 0) execv(prog, argv);
        }
        execvp(name, argv);
        fprintf(stderr, "kbv: '%s' is not available: %s not found next to kbv or on PATH%s\n", cmd,
                name, strcmp(cmd, "collect") == 0 ? " (collect is built only where nvcc is found)" : "");
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return 1;
    if (WIFEXITED(status)) return WEXITSTATUS(status) == 127 ? 2 : WEXITSTATUS(status);
    /* A closed pipe (`kbv list | head`) is the reader's choice, not a failure
     * to report; exit as the shell would for the stage itself. */
    if (WTERMSIG(status) == SIGPIPE) return 128 + SIGPIPE;
    fprintf(stderr, "kbv: kbv-%s died of signal %d\n", cmd, WTERMSIG(status));
    return 1;
}

/* Adds the lines of a stage's outputs to SHA256SUMS. */
static int refresh_sums(const char *cmd, const char *run_dir)
{
    static const char *const analyze_out[] = {"analysis.json"};
    static const char *const render_out[] = {"report/"};
    static const char *const report_out[] = {"analysis.json", "report/"};
    const char *const *out = NULL;
    size_t n = 0;
    if (!strcmp(cmd, "analyze")) out = analyze_out, n = 1;
    else if (!strcmp(cmd, "render")) out = render_out, n = 1;
    else if (!strcmp(cmd, "report")) out = report_out, n = 2;
    if (!out) return 0;
    kbv_err e = {0};
    if (sums_update(run_dir, out, n, &e) != 0) {
        err_report("sums", &e);
        return err_exit_status(e.code);
    }
    return 0;
}

static int cmd_verify(int argc, char **argv)
{
    const char *pub = NULL, *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: kbv verify [--pubkey PUB.pem] RUN_DIR\n\n"
                   "Checks every file listed in RUN_DIR/SHA256SUMS; prints one line per file\n"
                   "(OK, FAILED, MISSING, NOT LISTED) and exits 0 only when all match, the\n"
                   "raw files (manifest.json, the journal) are listed and every file in\n"
                   "RUN_DIR's root is listed.  With --pubkey, also checks the Ed25519\n"
                   "signature RUN_DIR/SHA256SUMS.sig that `kbv seal` wrote.\n");
            return 0;
        }
        if (!strcmp(argv[i], "--pubkey") && i + 1 < argc) {
            pub = argv[++i];
        } else if (argv[i][0] == '-' || dir) {
            dir = NULL;
            break;
        } else {
            dir = argv[i];
        }
    }
    if (!dir) {
        fprintf(stderr, "kbv: verify: usage: kbv verify [--pubkey PUB.pem] RUN_DIR\n");
        return 2;
    }
    kbv_err e = {0};
    int n = 0;
    int rc = sums_verify(dir, stdout, &n, &e);
    if (!rc && pub) rc = sums_check_sig(dir, pub, &e);
    if (rc) {
        err_report("verify", &e);
        return err_exit_status(rc);
    }
    printf("kbv: verify: %d files match %s/SHA256SUMS%s\n", n, dir, pub ? ", signed by the key given" : "");
    return 0;
}

static int cmd_seal(int argc, char **argv)
{
    const char *key = NULL, *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: kbv seal --key KEY.pem RUN_DIR\n\n"
                   "Checks RUN_DIR as `kbv verify` does, then signs RUN_DIR/SHA256SUMS with the\n"
                   "Ed25519 private key KEY.pem and writes RUN_DIR/SHA256SUMS.sig, so that a\n"
                   "reader with the public key can check the archive with\n"
                   "`kbv verify --pubkey PUB.pem RUN_DIR`.  Make a key pair with\n"
                   "  openssl genpkey -algorithm ed25519 -out KEY.pem\n"
                   "  openssl pkey -in KEY.pem -pubout -out PUB.pem\n");
            return 0;
        }
        if (!strcmp(argv[i], "--key") && i + 1 < argc) {
            key = argv[++i];
        } else if (argv[i][0] == '-' || dir) {
            dir = NULL;
            break;
        } else {
            dir = argv[i];
        }
    }
    if (!dir || !key) {
        fprintf(stderr, "kbv: seal: usage: kbv seal --key KEY.pem RUN_DIR\n");
        return 2;
    }
    kbv_err e = {0};
    int n = 0;
    /* A signature vouches for what SHA256SUMS says; it must say the truth. */
    int rc = sums_verify(dir, NULL, &n, &e);
    if (rc) err_prefix(&e, "not signed");
    if (!rc) rc = sums_sign(dir, key, &e);
    if (rc) {
        err_report("seal", &e);
        return err_exit_status(rc);
    }
    printf("kbv: seal: %s/SHA256SUMS.sig signs %d files\n", dir, n);
    return 0;
}

/* The run directory a command writes into: its first non-option argument
 * (analyze, render, report), collect's --out, merge's OUT_DIR. */
static const char *run_dir_of(const char *cmd, int argc, char **argv)
{
    if (!strcmp(cmd, "collect")) {
        for (int i = 1; i + 1 < argc; i++)
            if (!strcmp(argv[i], "--out")) return argv[i + 1];
        return NULL;
    }
    if (strcmp(cmd, "analyze") && strcmp(cmd, "render") && strcmp(cmd, "report") && strcmp(cmd, "merge"))
        return NULL;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-') return argv[i];
        if (!strcmp(argv[i], "--template") || !strcmp(argv[i], "--style") || !strcmp(argv[i], "--seed") ||
            !strcmp(argv[i], "--resamples") || !strcmp(argv[i], "--jobs"))
            i++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        cli_print_version("kbv");
        return 0;
    }
    const char *cmd = argv[1];
    int sub_argc = argc - 1;
    char **sub_argv = argv + 1;
    if (!strcmp(cmd, "verify")) return cmd_verify(sub_argc, sub_argv);
    if (!strcmp(cmd, "seal")) return cmd_seal(sub_argc, sub_argv);
    if (cmd[0] == '-' || strchr(cmd, '/')) {
        fprintf(stderr, "kbv: unknown option or command '%s'\n%s", cmd, usage);
        return 2;
    }
    int wants_help = 0;
    for (int i = 1; i < sub_argc; i++)
        if (!strcmp(sub_argv[i], "--help") || !strcmp(sub_argv[i], "--version")) wants_help = 1;

    int rc;
    if (!strcmp(cmd, "report")) {
        if (wants_help || sub_argc != 2) {
            if (wants_help) {
                printf("usage: kbv report RUN_DIR\n\nRuns `kbv analyze RUN_DIR`, then `kbv render RUN_DIR`,\n"
                       "then puts their outputs' lines in RUN_DIR/SHA256SUMS.\n");
                return 0;
            }
            fprintf(stderr, "kbv: report: usage: kbv report RUN_DIR\n");
            return 2;
        }
        char *a_argv[] = {(char *)"analyze", sub_argv[1], NULL};
        rc = run_stage("analyze", a_argv);
        if (rc == 0) {
            char *r_argv[] = {(char *)"render", sub_argv[1], NULL};
            rc = run_stage("render", r_argv);
        }
    } else {
        char **copy = calloc((size_t)sub_argc + 1, sizeof *copy);
        if (!copy) return 1;
        memcpy(copy, sub_argv, (size_t)sub_argc * sizeof *copy);
        rc = run_stage(cmd, copy);
        free(copy);
    }
    if (rc == 0 && !wants_help) {
        const char *dir = run_dir_of(cmd, sub_argc, sub_argv);
        struct stat st;
        if (dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) rc = refresh_sums(cmd, dir);
    }
    return rc;
}
