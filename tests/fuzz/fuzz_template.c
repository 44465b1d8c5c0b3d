/* fuzz_template.c - render's report template reader: tmpl_load with
 * report.json = the input; then every text it accepted is expanded with
 * every placeholder name set, as the report does.  An input that does not
 * start with '{' edits templates/report.json instead. */
#include <stdint.h>
#include <stddef.h>

#include "fuzz_edit.h"
#include "fuzz_util.h"
#include "tmpl.h"

static const char *const names[] = {"report.json", NULL};

static void expand(const tmpl *t, const tvars *v, const char *s)
{
    kbv_err e = {0};
    char *out = NULL;
    if (!s) return;
    if (tmpl_expand(t, "fuzz", s, v, &out, &e) == 0 && !out) abort();
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cleanup_names = names;
    static char *base;
    if (!base) base = fuzz_read_file("templates/report.json", NULL);
    if (size > 0 && data[0] != '{' && base) {
        /* Edits of the default file (fuzz_edit.h). */
        fuzz_bytes fb = {data + 1, size - 1};
        char *t = fuzz_edit_doc(base, &fb);
        if (!t) abort();
        fuzz_write("report.json", t, strlen(t));
        free(t);
    } else {
        fuzz_write("report.json", data, size);
    }
    char p[4200];
    fuzz_path(p, sizeof p, "report.json");

    kbv_err e = {0};
    tmpl t;
    if (tmpl_load(&t, p, &e) != 0) return 0;
    tvars v = {0};
    const char *const *scopes[] = {tmpl_global_names, tmpl_set_names, tmpl_verdict_names};
    for (int s = 0; s < 3; s++)
        for (int i = 0; scopes[s][i]; i++) tvars_set(&v, scopes[s][i], "{{%s}}", scopes[s][i]);
    expand(&t, &v, t.title);
    expand(&t, &v, t.subtitle);
    for (int i = 0; i < t.n_sections; i++) {
        expand(&t, &v, t.sections[i].title);
        expand(&t, &v, t.sections[i].intro);
    }
    for (int i = 0; i < LBL_N; i++) expand(&t, &v, t.labels[i]);
    expand(&t, &v, t.verdict_sentence);
    tmpl_free(&t);
    return 0;
}
