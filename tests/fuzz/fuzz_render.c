/* fuzz_render.c - the whole of render over a fuzzed analysis.json: what the
 * model loader accepts is drawn (PDF, SVG, PNG) and tabulated (CSV, LaTeX)
 * with the default templates, so that odd numbers it lets through (NaN,
 * huge, negative, inverted intervals, empty sets) reach the charts and the
 * tables.  An input that starts with '{' is analysis.json itself, as for
 * fuzz_analysis ("--manifest--" line optional).  Any other input edits the
 * fixture tests/fixtures/render_run/analysis.json (fuzz_edit.h), so that
 * the mutations reach the charts instead of stopping at the JSON parser;
 * a first byte 1 or 2 edits the default report.json or style.json instead,
 * and a first byte 3 edits tests/fixtures/render_parity.json, written as
 * the run's parity.json, which render must ignore: since kbv-parity/1
 * analyze judges it (analyze/parity.c) and render reads only the verdicts
 * in analysis.json.
 * Runs from the repository root (templates/, tests/fixtures/); slower than
 * the loaders alone. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdint.h>
#include <stddef.h>

#include "fuzz_edit.h"
#include "fuzz_util.h"
#include "report.h"

static const char *const names[] = {"analysis.json", "manifest.json", "report.json", "style.json",
                                    "parity.json", NULL};

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Removes <folder>/report and any temporary folder a failed render left. */
static void clean(void)
{
    char p[4200];
    fuzz_path(p, sizeof p, "report");
    nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cleanup_names = names;
    static char tmpl[4096], style[4096];
    if (!tmpl[0]) {
        const char *t = getenv("KBV_TEMPLATES");
        snprintf(tmpl, sizeof tmpl, "%s/report.json", t && *t ? t : "templates");
        snprintf(style, sizeof style, "%s/style.json", t && *t ? t : "templates");
        atexit(clean);
    }
    static char *base, *base_tmpl, *base_style, *base_parity;
    if (!base) {
        base = fuzz_read_file("tests/fixtures/render_run/analysis.json", NULL);
        base_parity = fuzz_read_file("tests/fixtures/render_parity.json", NULL);
        base_tmpl = fuzz_read_file(tmpl, NULL);
        base_style = fuzz_read_file(style, NULL);
    }
    const char *use_tmpl = tmpl, *use_style = style;
    char edited[4200];
    fuzz_remove("parity.json");
    if (size > 0 && data[0] == 3 && base && base_parity) {
        /* 3: edits of a parity.json beside the fixture's analysis */
        fuzz_bytes fb = {data + 1, size - 1};
        char *text = fuzz_edit_doc(base_parity, &fb);
        if (!text) abort();
        fuzz_write("parity.json", text, strlen(text));
        free(text);
        fuzz_write("analysis.json", base, strlen(base));
        fuzz_remove("manifest.json");
    } else if (size > 0 && (data[0] == 1 || data[0] == 2) && base && base_tmpl && base_style) {
        /* 1: edits of the report template, 2: of the style, over the fixture. */
        fuzz_bytes fb = {data + 1, size - 1};
        char *text = fuzz_edit_doc(data[0] == 1 ? base_tmpl : base_style, &fb);
        if (!text) abort();
        fuzz_write(data[0] == 1 ? "report.json" : "style.json", text, strlen(text));
        free(text);
        fuzz_path(edited, sizeof edited, data[0] == 1 ? "report.json" : "style.json");
        if (data[0] == 1) use_tmpl = edited;
        else use_style = edited;
        fuzz_write("analysis.json", base, strlen(base));
        fuzz_remove("manifest.json");
    } else if (size > 0 && data[0] != '{' && base) {
        fuzz_bytes fb = {data, size};
        char *text = fuzz_edit_doc(base, &fb);
        if (!text) abort();
        fuzz_write("analysis.json", text, strlen(text));
        free(text);
        fuzz_remove("manifest.json");
    } else {
        fuzz_write_analysis(data, size);
    }

    report_opts o = {fuzz_dir(), use_tmpl, use_style, "0"};
    report_stats st;
    kbv_err e = {0};
    report_render(&o, &st, &e);
    /* Success or failure, the temporary and the old report are gone. */
    char p[4200];
    const char *left[] = {".report.tmp", ".report.old"};
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s.%ld", fuzz_dir(), left[i], (long)getpid());
        if (access(p, F_OK) == 0) {
            fprintf(stderr, "render left %s behind (%s)\n", p, e.msg);
            abort();
        }
    }
    clean();
    return 0;
}
