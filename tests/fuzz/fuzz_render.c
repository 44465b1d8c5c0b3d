/* fuzz_render.c - the whole of render over a fuzzed analysis.json: what the
 * model loader accepts is drawn (PDF, SVG, PNG) and tabulated (CSV, LaTeX)
 * with the default templates, so that odd numbers it lets through (NaN,
 * huge, negative, inverted intervals, empty sets) reach the charts and the
 * tables.  An input that starts with '{' is analysis.json itself, as for
 * fuzz_analysis ("--manifest--" line optional).  Any other input edits the
 * fixture tests/fixtures/render_run/analysis.json: its bytes, one node at a
 * time, keep a number or put an edge value in its place (0, -1, NaN as
 * null, 1e308, a denormal, a raw double), keep a string or put an odd one
 * there, and cut arrays short, so that the mutations reach the charts
 * instead of stopping at the JSON parser.  Runs from the repository root
 * (templates/, tests/fixtures/); slower than the loaders alone. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdint.h>
#include <stddef.h>

#include <cjson/cJSON.h>
#include <math.h>

#include "fuzz_util.h"
#include "report.h"

typedef struct {
    const uint8_t *p;
    size_t n;
} bytes;

static unsigned take(bytes *b)
{
    if (!b->n) return 0;
    b->n--;
    return *b->p++;
}

static const char *const odd_strings[] = {
    "", "correct", "hidden-fail", "identity", "error", "incorrect", "tf32", "fp32", "{{run_id}}", "}}",
    "\xff\xfe", "a very long name that goes on and on and on and on and on and on and on and on and on",
    "0", "null", "%s%n", "&<>\"'\\_^#$", "L1_001_square_matrix_multiplication"};

/* Edits v in place, steered by the bytes: byte 0..159 keeps a node. */
static void edit(cJSON *v, bytes *b)
{
    if (!b->n) return;
    if (cJSON_IsNumber(v)) {
        unsigned c = take(b);
        if (c < 160) return;
        static const double edge[] = {0, -1, 1, 1e308, -1e308, 4.9e-324, 1e-300, 0.5, 1e9, 2147483648.0,
                                      -2147483649.0, 9.3e18, 100, 1e-3};
        double x;
        if (c < 160 + 14) {
            x = edge[c - 160];
        } else if (c < 200) {
            cJSON_SetNumberValue(v, 0);
            v->type = cJSON_NULL;   /* a non-finite value as written */
            return;
        } else {
            uint64_t u = 0;
            for (int i = 0; i < 8; i++) u = u << 8 | take(b);
            memcpy(&x, &u, sizeof x);
            if (!isfinite(x)) x = 1e300;   /* JSON has no such number */
        }
        cJSON_SetNumberValue(v, x);
        return;
    }
    if (cJSON_IsString(v)) {
        unsigned c = take(b);
        if (c < 160) return;
        cJSON_SetValuestring(v, odd_strings[c % (sizeof odd_strings / sizeof *odd_strings)]);
        return;
    }
    if (cJSON_IsArray(v)) {
        unsigned c = take(b);
        if (c >= 240) {
            int keep = (int)(c - 240);
            while (cJSON_GetArraySize(v) > keep) cJSON_DeleteItemFromArray(v, cJSON_GetArraySize(v) - 1);
        }
    }
    if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        cJSON *it = v->child;
        while (it && b->n) {
            cJSON *next = it->next;
            if (cJSON_IsObject(v) && take(b) == 255) {
                cJSON_Delete(cJSON_DetachItemViaPointer(v, it));   /* a missing key */
            } else {
                edit(it, b);
            }
            it = next;
        }
    }
}

/* The fixture, read once; NULL when it is not there. */
static cJSON *fixture(void)
{
    static cJSON *root;
    static int tried;
    if (!tried) {
        tried = 1;
        FILE *f = fopen("tests/fixtures/render_run/analysis.json", "rb");
        if (f) {
            static char buf[1 << 20];
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = 0;
            root = cJSON_Parse(buf);
        }
    }
    return root;
}

static const char *const names[] = {"analysis.json", "manifest.json", NULL};

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
    if (size > 0 && data[0] != '{' && fixture()) {
        cJSON *copy = cJSON_Duplicate(fixture(), 1);
        bytes bb = {data, size};
        edit(copy, &bb);
        char *text = cJSON_PrintUnformatted(copy);
        cJSON_Delete(copy);
        if (!text) abort();
        fuzz_write("analysis.json", text, strlen(text));
        free(text);
        fuzz_remove("manifest.json");
    } else {
        size_t a_len, m_len;
        const uint8_t *m;
        fuzz_split(data, size, "\n--manifest--\n", &a_len, &m, &m_len);
        fuzz_write("analysis.json", data, a_len);
        if (m_len || m != data + size)
            fuzz_write("manifest.json", m, m_len);
        else
            fuzz_remove("manifest.json");
    }

    report_opts o = {fuzz_dir(), tmpl, style, "0"};
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
