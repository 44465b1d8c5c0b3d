/* copts.c - the command line of kbv-collect (see copts.h). */
#include "copts.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cstat.h"
#include "plan.h"

void copts_usage(FILE *f)
{
    fprintf(f,
            "usage: kbv collect [--suite S] [--candidates DIR]... [--out RUN_DIR] [--seed N]\n"
            "                   [--problems GLOB] [--shard I/N] [--gpus LIST] [--resume]\n"
            "                   [--timeout SECONDS] [--trials T] [--atol X] [--rtol X]\n"
            "                   [--jobs N] [--arch SM] [--max-time S] [--pins FILE] [--build-only]\n"
            "                   [--precision fp32|bf16|all] [--preroll MS[:MIN:MAX]]\n"
            "                   [--sandbox auto|require|off]\n"
            "\n"
            "Builds every candidate, checks it on hidden input distributions and probes,\n"
            "times it against the strict fp32 and the tf32 baselines, and writes\n"
            "RUN_DIR/manifest.json and RUN_DIR/samples.jsonl (docs/DESIGN.md 5a, 6).\n"
            "\n"
            "  --suite S          smoke, level1, level2, level3 or all (default all)\n"
            "  --candidates DIR   a set folder (<problem>.cu files, set.json) or a folder of\n"
            "                     sets; repeatable (default: data/candidates/*/ with set.json)\n"
            "  --out RUN_DIR      the run folder (default runs/<run id>)\n"
            "  --seed N           the run seed of every input (default 7)\n"
            "  --problems GLOB    only problems whose id matches (fnmatch; several patterns\n"
            "                     separated by commas, e.g. 'L1_001*,L2_0[1-3]*')\n"
            "  --shard I/N        only every N-th (set, problem) pair, starting at the I-th\n"
            "                     (1 <= I <= N)\n"
            "  --gpus LIST        GPUs to use, one worker each, e.g. 0,1 (default 0)\n"
            "  --resume           continue an interrupted run in RUN_DIR\n"
            "  --timeout SECONDS  wall-clock limit of one pair (default 120)\n"
            "  --trials T         correctness trials per distribution (default 3)\n"
            "  --atol X, --rtol X the tolerance |out - ref| <= atol + rtol |ref| (1e-3); the\n"
            "                     BF16 setting's is fixed: max(1e-2 min(1, max|ref|), 2^-23) + 1e-2 |ref|\n"
            "  --jobs N           parallel compilers (default: the number of CPUs)\n"
            "  --arch SM          compile for sm_SM (default: the GPU's own; 90 without one)\n"
            "  --max-time S       the stopping rule's time cap: a pair's timed rounds, every variant summed (default 10)\n"
            "  --preroll MS[:MIN:MAX]\n"
            "                     before each timed call, run the same variant untimed for\n"
            "                     about MS milliseconds of its own work, MIN to MAX calls\n"
            "                     (default 1:0:32; 0 turns the pre-roll off)\n"
            "  --pins FILE        baseline kernel choices made once (kbv-pins/1, scripts/pins.py),\n"
            "                     used instead of timing where GPU and cuBLAS match\n"
            "  --build-only       build and scan only: build and static records, no GPU\n"
            "  --precision P      the sets to run by their set.json \"precision\": fp32, bf16\n"
            "                     (bfloat16 tensors, timed against the bf16 baseline) or all\n"
            "                     (default all)\n"
            "  --sandbox MODE     what each worker denies itself before it loads the\n"
            "                     candidate: file writes outside its scratch folder and /dev\n"
            "                     (Landlock), other processes' memory and new seccomp filters\n"
            "                     (seccomp); auto applies what the kernel offers, require\n"
            "                     fails without both, off applies none (default auto)\n"
            "  --help, --version\n");
}

/* A comma-separated list of distinct GPU ids: an empty item ("0,,1") or
 * an id given twice ("0,0") would run two workers on one GPU, and their
 * timings would disturb each other. */
static int parse_gpus(copts *o, const char *s, kbv_err *e)
{
    if (snprintf(o->gpu_buf, sizeof o->gpu_buf, "%s", s) >= (int)sizeof o->gpu_buf)
        return err_set(e, KBV_EUSAGE, "--gpus: list too long");
    o->n_gpus = 0;
    long ids[COPTS_MAX_GPUS];
    for (char *t = o->gpu_buf; t;) {
        char *comma = strchr(t, ',');
        if (comma) *comma = '\0';
        if (!*t) return err_set(e, KBV_EUSAGE, "--gpus %s: an empty GPU id", s);
        long v;
        int rc = cli_parse_long("--gpus", t, 0, 1023, &v, e);
        if (rc) return rc;
        for (int i = 0; i < o->n_gpus; i++)
            if (ids[i] == v) return err_set(e, KBV_EUSAGE, "--gpus %s: GPU %ld is given twice", s, v);
        if (o->n_gpus == COPTS_MAX_GPUS) return err_set(e, KBV_EUSAGE, "--gpus: at most %d GPUs", COPTS_MAX_GPUS);
        ids[o->n_gpus] = v;
        o->gpus[o->n_gpus++] = t;
        t = comma ? comma + 1 : NULL;
    }
    if (o->n_gpus == 0) return err_set(e, KBV_EUSAGE, "--gpus: empty list");
    return 0;
}

int copts_parse(int argc, char **argv, copts *o, int *done, kbv_err *e)
{
    enum { O_SUITE = 256, O_CAND, O_OUT, O_SEED, O_PROBLEMS, O_SHARD, O_GPUS, O_RESUME, O_TIMEOUT,
           O_TRIALS, O_ATOL, O_RTOL, O_JOBS, O_BUILD_ONLY, O_ARCH, O_MAXTIME, O_PINS, O_PRECISION, O_PREROLL, O_SANDBOX, O_HELP, O_VERSION };
    static const struct option lo[] = {
        {"suite", required_argument, 0, O_SUITE},     {"candidates", required_argument, 0, O_CAND},
        {"out", required_argument, 0, O_OUT},         {"seed", required_argument, 0, O_SEED},
        {"problems", required_argument, 0, O_PROBLEMS}, {"shard", required_argument, 0, O_SHARD},
        {"gpus", required_argument, 0, O_GPUS},       {"resume", no_argument, 0, O_RESUME},
        {"timeout", required_argument, 0, O_TIMEOUT}, {"trials", required_argument, 0, O_TRIALS},
        {"atol", required_argument, 0, O_ATOL},       {"rtol", required_argument, 0, O_RTOL},
        {"jobs", required_argument, 0, O_JOBS},       {"build-only", no_argument, 0, O_BUILD_ONLY},
        {"arch", required_argument, 0, O_ARCH},       {"max-time", required_argument, 0, O_MAXTIME},
        {"pins", required_argument, 0, O_PINS},       {"precision", required_argument, 0, O_PRECISION},
        {"preroll", required_argument, 0, O_PREROLL}, {"sandbox", required_argument, 0, O_SANDBOX},
        {"help", no_argument, 0, O_HELP},             {"version", no_argument, 0, O_VERSION},
        {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->suite = "all";
    o->seed = 7;
    o->shard_i = o->shard_n = 1;
    o->timeout_s = 120;
    o->trials = 3;
    o->atol = o->rtol = 1e-3;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    o->jobs = ncpu > 0 ? ncpu : 1;
    o->max_time_s = 10;
    o->precision = "all";
    o->sandbox = "auto";
    *done = 0;
    opterr = 0;
    int c, rc = 0;
    while (!rc && (c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case O_SUITE: o->suite = optarg; break;
        case O_CAND:
            if (o->n_dirs == 256) return err_set(e, KBV_EUSAGE, "--candidates: at most 256");
            o->cand_dirs[o->n_dirs++] = optarg;
            break;
        case O_OUT: o->out = optarg; break;
        case O_SEED: rc = cli_parse_u64("--seed", optarg, &o->seed, e); break;
        case O_PROBLEMS: o->glob = optarg; break;
        case O_SHARD: rc = plan_parse_shard(optarg, &o->shard_i, &o->shard_n, e); break;
        case O_GPUS: rc = parse_gpus(o, optarg, e); break;
        case O_RESUME: o->resume = 1; break;
        case O_TIMEOUT: rc = cli_parse_double("--timeout", optarg, 1, 86400, &o->timeout_s, e); break;
        case O_TRIALS:
            rc = cli_parse_long("--trials", optarg, 1, 100, &o->trials, e);
            break;
        case O_ATOL: rc = cli_parse_double("--atol", optarg, 0, 1e6, &o->atol, e); break;
        case O_RTOL: rc = cli_parse_double("--rtol", optarg, 0, 1e6, &o->rtol, e); break;
        case O_JOBS: rc = cli_parse_long("--jobs", optarg, 1, 1024, &o->jobs, e); break;
        case O_BUILD_ONLY: o->build_only = 1; break;
        case O_ARCH: rc = cli_parse_long("--arch", optarg, 50, 1000, &o->arch, e); break;
        case O_MAXTIME: rc = cli_parse_double("--max-time", optarg, 0.01, 3600, &o->max_time_s, e); break;
        case O_PINS: o->pins = optarg; break;
        case O_PREROLL: {
            cstat_rule check;
            cstat_rule_default(&check);
            if (cstat_parse_preroll(optarg, &check))
                return err_set(e, KBV_EUSAGE,
                               "--preroll %s: MS or MS:MIN:MAX (0 <= MS <= 1000, 0 <= MIN <= MAX <= 1000)", optarg);
            o->preroll = optarg;
            break;
        }
        case O_PRECISION:
            if (strcmp(optarg, "fp32") && strcmp(optarg, "bf16") && strcmp(optarg, "all"))
                return err_set(e, KBV_EUSAGE, "--precision %s: fp32, bf16 or all", optarg);
            o->precision = optarg;
            break;
        case O_SANDBOX:
            if (strcmp(optarg, "auto") && strcmp(optarg, "require") && strcmp(optarg, "off"))
                return err_set(e, KBV_EUSAGE, "--sandbox %s: auto, require or off", optarg);
            o->sandbox = optarg;
            break;
        case O_HELP: copts_usage(stdout); *done = 1; return 0;
        case O_VERSION: cli_print_version("kbv-collect"); *done = 1; return 0;
        default:
            return err_set(e, KBV_EUSAGE, "unknown or incomplete option '%s' (see --help)",
                           argv[optind - 1]);
        }
    }
    if (rc) return rc;
    if (optind < argc) return err_set(e, KBV_EUSAGE, "unexpected argument '%s' (see --help)", argv[optind]);
    if (o->n_gpus == 0) {
        o->gpus[0] = "0";
        o->n_gpus = 1;
    }
    /* Under a scheduler that set CUDA_VISIBLE_DEVICES (Slurm does), --gpus
     * counts within that list: a worker must never see a GPU this process
     * was not given. */
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (vis && *vis) {
        snprintf(o->vis_buf, sizeof o->vis_buf, "%s", vis);
        const char *items[COPTS_MAX_GPUS];
        int n_items = 0;
        for (char *save = NULL, *t = strtok_r(o->vis_buf, ",", &save); t && n_items < COPTS_MAX_GPUS;
             t = strtok_r(NULL, ",", &save))
            items[n_items++] = t;
        for (int g = 0; g < o->n_gpus; g++) {
            long idx = strtol(o->gpus[g], NULL, 10);
            if (idx >= n_items)
                return err_set(e, KBV_EUSAGE, "--gpus: GPU %ld is not among CUDA_VISIBLE_DEVICES=%s", idx, vis);
            o->gpus[g] = items[idx];
        }
    }
    if (o->resume && !o->out) return err_set(e, KBV_EUSAGE, "--resume needs --out RUN_DIR");
    return 0;
}
