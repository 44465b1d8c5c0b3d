/* kbv-prompt - `kbv prompt PROBLEM`: prints the text a code-generating
 * model needs to write a candidate for PROBLEM (the ABI, the problem's
 * PyTorch expression, inputs with shapes and roles, attributes, outputs,
 * hidden distributions, tolerance and what is not allowed), made from
 * templates/prompts/candidate.txt. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "afile.h"
#include "cli.h"
#include "err.h"
#include "prompt.h"
#include "suite.h"

#define STAGE "prompt"
#define TEMPLATE_REL "prompts/candidate.txt"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kbv prompt [--template FILE] [--out FILE] [--blind | --no-blind]\n"
            "                  [--precision fp32|bf16] PROBLEM\n"
            "\n"
            "Prints the prompt for a code-generating model that asks for a kbv candidate\n"
            "for PROBLEM (an id of `kbv list`): the candidate ABI, the problem's semantics\n"
            "as a PyTorch expression, inputs with shapes and roles, attributes, outputs,\n"
            "hidden input distributions, tolerance and the rules.  Save the model's answer\n"
            "as DIR/PROBLEM.cu and run `kbv collect --candidates DIR`.\n"
            "\n"
            "  --template FILE  template with {{placeholders}} (default: the first of\n"
            "                   $KBV_TEMPLATES/" TEMPLATE_REL ", the templates/ folder beside\n"
            "                   the program's build or install folder, ./templates/)\n"
            "  --out FILE       write the prompt to FILE instead of standard output\n"
            "  --blind          leave out every value distribution and test-specific input\n"
            "                   setting (the default for L1_090_cumprod, L1_100_hingeloss,\n"
            "                   L3_035_lstm and L3_047_netvladnoghostclusters, whose inputs\n"
            "                   invite a shortcut, as in KernelBench-Verified)\n"
            "  --no-blind       describe the inputs' values and the hidden distributions\n"
            "                   (the default for every other problem)\n"
            "  --precision P    fp32 (default): the FP32 setting; bf16: tensors are\n"
            "                   bfloat16, the tolerance is max(1e-2 min(1, max|ref|), 1.2e-7)\n"
            "                   + 1e-2 |ref|,\n"
            "                   the baseline\n"
            "                   is bf16, and a note on the BF16 setting is appended\n"
            "  --placeholders   list the placeholders a template may use, and exit\n"
            "  --help, --version\n"
            "\n"
            "Exit status: 0 ok, 1 runtime failure, 2 unknown problem or bad template.\n");
}


/* Finds the default template; writes its path into buf.  0 or KBV_EINPUT. */
static int find_template(char *buf, size_t n, kbv_err *e)
{
    char dir[PATH_MAX];
    const char *env = getenv("KBV_TEMPLATES");
    if (env && *env) {
        snprintf(buf, n, "%s/%s", env, TEMPLATE_REL);
        if (access(buf, R_OK) == 0) return 0;
    }
    cli_exe_dir(dir, sizeof dir);
    if (dir[0]) {
        static const char *const rel[] = { "../templates", "../share/kbv/templates" };
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            if ((size_t)snprintf(buf, n, "%s/%s/%s", dir, rel[i], TEMPLATE_REL) >= n) continue;
            if (access(buf, R_OK) == 0) return 0;
        }
    }
    snprintf(buf, n, "templates/%s", TEMPLATE_REL);
    if (access(buf, R_OK) == 0) return 0;
    return err_set(e, KBV_EINPUT,
                   "no prompt template found (looked in $KBV_TEMPLATES, beside the program and in ./templates); "
                   "pass --template FILE");
}

static int unknown_problem(const char *id, kbv_err *e)
{
    const char *near[5];
    int k = prompt_suggest(id, near, 5);
    char list[512] = "";
    size_t used = 0;
    for (int i = 0; i < k && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", near[i]);
    if (k > 0)
        return err_set(e, KBV_EINPUT, "unknown problem '%s'; did you mean %s%s? (`kbv list` shows all %d)", id,
                       k > 1 ? "one of " : "", list, suite_count());
    return err_set(e, KBV_EINPUT, "unknown problem '%s' (`kbv list` shows the %d problems of the suite)", id,
                   suite_count());
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "template", required_argument, NULL, 't' },
        { "out", required_argument, NULL, 'o' },
        { "placeholders", no_argument, NULL, 'p' },
        { "blind", no_argument, NULL, 'b' },
        { "no-blind", no_argument, NULL, 'B' },
        { "precision", required_argument, NULL, 'P' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *tmpl_path = NULL, *out_path = NULL;
    int blind = -1;   /* -1: the problem's default */
    int bf16 = 0;
    char found[PATH_MAX];
    char *tmpl = NULL, *text = NULL;
    kbv_err e = { 0 };
    int rc = 0, c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 't': tmpl_path = optarg; break;
        case 'o': out_path = optarg; break;
        case 'b': blind = 1; break;
        case 'B': blind = 0; break;
        case 'P':
            if (strcmp(optarg, "fp32") != 0 && strcmp(optarg, "bf16") != 0) {
                rc = err_set(&e, KBV_EUSAGE, "--precision '%s': expected fp32 or bf16", optarg);
                goto done;
            }
            bf16 = strcmp(optarg, "bf16") == 0;
            break;
        case 'p':
            for (const char *const *n = prompt_placeholders(); *n; n++) printf("{{%s}}\n", *n);
            return 0;
        case 'h': usage(stdout); return 0;
        case 'V': cli_print_version("kbv-prompt"); return 0;
        default:
            rc = err_set(&e, KBV_EUSAGE, "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
            goto done;
        }
    }
    if (argc - optind != 1) {
        rc = err_set(&e, KBV_EUSAGE, "%s (usage: kbv prompt [--template FILE] [--out FILE] [--blind] PROBLEM)",
                     argc - optind < 1 ? "no PROBLEM given" : "one PROBLEM at a time");
        goto done;
    }
    const char *id = argv[optind];
    const suite_problem *p = suite_find(id);
    if (!p) {
        rc = unknown_problem(id, &e);
        goto done;
    }
    if (!tmpl_path) {
        if ((rc = find_template(found, sizeof found, &e)) < 0) goto done;
        tmpl_path = found;
    }
    size_t len = 0;
    if ((rc = afile_read_all(tmpl_path, &tmpl, &len, &e)) < 0) {
        /* A missing or unreadable template is the user's input. */
        e.code = rc = KBV_EINPUT;
        goto done;
    }
    if (strlen(tmpl) != len) {
        rc = err_set(&e, KBV_EINPUT, "%s: template contains a NUL byte", tmpl_path);
        goto done;
    }
    if (blind < 0) blind = prompt_blind_default(p);
    if ((rc = prompt_render(tmpl, tmpl_path, p, (blind ? PROMPT_BLIND : 0) | (bf16 ? PROMPT_BF16 : 0), &text,
                            &e)) < 0)
        goto done;
    if (out_path) {
        rc = afile_write_all(out_path, text, strlen(text), &e);
    } else if (fputs(text, stdout) == EOF || fflush(stdout) != 0) {
        rc = err_set(&e, KBV_ERUNTIME, "writing standard output: %s", strerror(errno));
    }

done:
    free(tmpl);
    free(text);
    if (rc < 0) {
        err_report(STAGE, &e);
        return err_exit_status(rc);
    }
    return 0;
}
