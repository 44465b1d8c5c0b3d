/* main.c - kbv-render RUN_DIR [--template FILE] [--style FILE]
 *
 * Writes RUN_DIR/report/ from RUN_DIR/analysis.json (and manifest.json for
 * the run summary).  Templates default to report.json and style.json in
 * $KBV_TEMPLATES, else in the templates/ folder beside the build folder of
 * this executable (build/../templates), else in the installed share folder.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "err.h"
#include "log.h"
#include "report.h"

#ifndef KBV_PREFIX
#define KBV_PREFIX "/usr/local"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kbv-render RUN_DIR [--template FILE] [--style FILE]\n"
            "\n"
            "Writes RUN_DIR/report/: report.pdf, figures/<name>.svg and .png, and\n"
            "tables/<name>.csv and .tex, from RUN_DIR/analysis.json and manifest.json.\n"
            "The same run directory gives byte-identical files; the date shown is the\n"
            "run's created_utc, or SOURCE_DATE_EPOCH when that is set.\n"
            "\n"
            "  --template FILE  sections and captions (default: report.json, see below)\n"
            "  --style FILE     fonts, sizes and colours (default: style.json)\n"
            "  --help           this text\n"
            "  --version        version and commit\n"
            "\n"
            "Default templates are looked for in $KBV_TEMPLATES, then in templates/\n"
            "beside the folder of this program, then in %s/share/kbv/templates.\n"
            "Exit status: 0 ok, 1 runtime failure, 2 bad usage or input.\n",
            KBV_PREFIX);
}

static int exists(const char *p)
{
    return access(p, R_OK) == 0;
}

/* Finds name among the default template folders; fills tried with the
 * folders looked in, for the message when it is nowhere. */
static int find_template(const char *name, char *out, size_t n, char *tried, size_t tn)
{
    char dirs[4][PATH_MAX];
    int nd = 0;
    const char *env = getenv("KBV_TEMPLATES");
    if (env && *env)
        snprintf(dirs[nd++], PATH_MAX, "%s", env);
    char exe[PATH_MAX];
    if (cli_exe_dir(exe, sizeof exe) == 0) {
        snprintf(dirs[nd++], PATH_MAX, "%.*s/../templates", PATH_MAX - 20, exe);
        /* An installed tree moved as a whole (DESTDIR staging, a relocated
         * prefix) still finds its own share folder. */
        snprintf(dirs[nd++], PATH_MAX, "%.*s/../share/kbv/templates", PATH_MAX - 30, exe);
    }
    snprintf(dirs[nd++], PATH_MAX, "%s/share/kbv/templates", KBV_PREFIX);
    tried[0] = 0;
    size_t k = 0;
    for (int i = 0; i < nd; i++) {
        snprintf(out, n, "%s/%s", dirs[i], name);
        if (exists(out))
            return 0;
        int w = snprintf(tried + k, tn - k, "%s%s", k ? ", " : "", dirs[i]);
        if (w > 0 && (size_t)w < tn - k)
            k += (size_t)w;
    }
    return -1;
}

int main(int argc, char **argv)
{
    const char *run_dir = NULL, *tpl = NULL, *sty = NULL;
    kbv_err e = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--version") == 0) {
            cli_print_version("kbv-render");
            return 0;
        }
        if (strcmp(a, "--template") == 0 || strcmp(a, "--style") == 0) {
            if (i + 1 >= argc) {
                err_set(&e, KBV_EUSAGE, "%s needs a FILE", a);
                goto fail;
            }
            if (a[2] == 't')
                tpl = argv[++i];
            else
                sty = argv[++i];
        } else if (strncmp(a, "--template=", 11) == 0) {
            tpl = a + 11;
        } else if (strncmp(a, "--style=", 8) == 0) {
            sty = a + 8;
        } else if (a[0] == '-' && a[1]) {
            err_set(&e, KBV_EUSAGE, "unknown option '%s' (see --help)", a);
            goto fail;
        } else if (!run_dir) {
            run_dir = a;
        } else {
            err_set(&e, KBV_EUSAGE, "one RUN_DIR only ('%s' is extra; see --help)", a);
            goto fail;
        }
    }
    if (!run_dir) {
        usage(stderr);
        err_set(&e, KBV_EUSAGE, "RUN_DIR is missing");
        goto fail;
    }
    char tbuf[PATH_MAX], sbuf[PATH_MAX], tried[3 * PATH_MAX + 8];
    if (!tpl) {
        if (find_template("report.json", tbuf, sizeof tbuf, tried, sizeof tried)) {
            err_set(&e, KBV_EINPUT, "report.json template not found in %s (use --template FILE or set KBV_TEMPLATES)",
                    tried);
            goto fail;
        }
        tpl = tbuf;
    }
    if (!sty) {
        if (find_template("style.json", sbuf, sizeof sbuf, tried, sizeof tried)) {
            err_set(&e, KBV_EINPUT, "style.json not found in %s (use --style FILE or set KBV_TEMPLATES)", tried);
            goto fail;
        }
        sty = sbuf;
    }
    report_opts o = {run_dir, tpl, sty, getenv("SOURCE_DATE_EPOCH")};
    if (o.source_date_epoch && !*o.source_date_epoch)
        o.source_date_epoch = NULL;
    report_stats st = {0};
    double t0 = log_now();
    if (report_render(&o, &st, &e))
        goto fail;
    log_info("render", "wrote %s/report: report.pdf (%d pages), %d figures (SVG and PNG), %d tables (CSV and "
             "LaTeX) in %.2f s", run_dir, st.pages, st.figures, st.tables, log_now() - t0);
    return 0;
fail:
    err_report("render", &e);
    return err_exit_status(e.code);
}
