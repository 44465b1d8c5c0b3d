/* kbv-list - `kbv list [--json]`: the problems of the suite with their
 * inputs, outputs, attributes, FLOPs, minimum bytes and baselines.
 *
 * The JSON form is the issue's: {"problems": [{"id", "level", "name",
 * "inputs": [{"name", "shape", "dtype", "role"}], "outputs": [{"shape",
 * "dtype"}], "attrs": [{"name", "value"}], "flops", "min_bytes",
 * "baselines": ["fp32", "tf32"]}]}, plus "available": false and
 * "unavailable_reason" for a problem whose baseline cannot run on this
 * host (a library it needs is missing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "cli.h"
#include "err.h"
#include "sbuf.h"
#include "suite.h"
#include "bf16path.h"
#include "suite_host.h"

static const char *dtype_name(kbv_dtype d)
{
    return d == KBV_I64 ? "int64" : "float32";
}

static cJSON *shape_json(const suite_tensor *t)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < t->ndim; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)t->shape[i]));
    return a;
}

static cJSON *problem_json(const suite_problem *p)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "id", p->id);
    cJSON_AddNumberToObject(o, "level", p->level);
    cJSON_AddStringToObject(o, "name", p->name);
    cJSON *ins = cJSON_AddArrayToObject(o, "inputs");
    for (int i = 0; ins && i < p->n_inputs; i++) {
        const suite_tensor *t = &p->inputs[i];
        cJSON *it = cJSON_CreateObject();
        cJSON_AddStringToObject(it, "name", t->name);
        cJSON_AddItemToObject(it, "shape", shape_json(t));
        cJSON_AddStringToObject(it, "dtype", dtype_name(t->dtype));
        cJSON_AddStringToObject(it, "role", t->role == SUITE_ROLE_PARAM ? "parameter" : "input");
        cJSON_AddItemToArray(ins, it);
    }
    cJSON *outs = cJSON_AddArrayToObject(o, "outputs");
    for (int i = 0; outs && i < p->n_outputs; i++) {
        cJSON *it = cJSON_CreateObject();
        cJSON_AddItemToObject(it, "shape", shape_json(&p->outputs[i]));
        cJSON_AddStringToObject(it, "dtype", dtype_name(p->outputs[i].dtype));
        cJSON_AddItemToArray(outs, it);
    }
    cJSON *attrs = cJSON_AddArrayToObject(o, "attrs");
    for (int i = 0; attrs && i < p->n_attrs; i++) {
        cJSON *it = cJSON_CreateObject();
        cJSON_AddStringToObject(it, "name", p->attrs[i].name);
        cJSON_AddNumberToObject(it, "value", p->attrs[i].value);
        cJSON_AddItemToArray(attrs, it);
    }
    cJSON_AddNumberToObject(o, "flops", p->flops);
    cJSON_AddNumberToObject(o, "min_bytes", p->min_bytes);
    if (p->floor_flops > 0) cJSON_AddNumberToObject(o, "floor_flops", p->floor_flops);
    /* The problem's own hard case in words, where it has one. */
    sbuf d5 = {0};
    if (suite_d5_text(&d5, p) && d5.s) cJSON_AddStringToObject(o, "d5", d5.s);
    sb_free(&d5);
    if (suite_d5_label(&d5, p) && d5.s) cJSON_AddStringToObject(o, "d5_label", d5.s);
    sb_free(&d5);
    cJSON *bl = cJSON_AddArrayToObject(o, "baselines");
    cJSON_AddItemToArray(bl, cJSON_CreateString("fp32"));
    cJSON_AddItemToArray(bl, cJSON_CreateString("tf32"));
    /* how the BF16 setting's baseline runs it (DESIGN 5b) */
    cJSON_AddStringToObject(o, "bf16_baseline", suite_bf16_path_name(suite_bf16_path(p)));
    const char *why = NULL;
    if (!suite_host_available(p, &why)) {
        cJSON_AddBoolToObject(o, "available", 0);
        cJSON_AddStringToObject(o, "unavailable_reason", why ? why : "unavailable");
    }
    return o;
}

static int list_json(kbv_err *e)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = root ? cJSON_AddArrayToObject(root, "problems") : NULL;
    if (!arr) {
        cJSON_Delete(root);
        return err_set(e, KBV_ENOMEM, "list: out of memory");
    }
    int n = suite_count();
    for (int i = 0; i < n; i++) {
        cJSON *o = problem_json(suite_get(i));
        if (!o) {
            cJSON_Delete(root);
            return err_set(e, KBV_ENOMEM, "list: out of memory");
        }
        cJSON_AddItemToArray(arr, o);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return err_set(e, KBV_ENOMEM, "list: out of memory");
    int bad = fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF;
    free(text);
    if (bad || fflush(stdout) != 0) return err_set(e, KBV_ERUNTIME, "list: cannot write to stdout");
    return 0;
}

static void shape_text(const suite_tensor *t, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < t->ndim && used < n; i++) {
        int w = snprintf(buf + used, n - used, "%s%lld", i ? "x" : "", (long long)t->shape[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
    if (t->ndim == 0 && n > 2) snprintf(buf, n, "()");
}

static int list_text(kbv_err *e)
{
    int n = suite_count();
    printf("%-72s %10s %10s  %s\n", "problem", "GFLOP", "min MB", "inputs -> output");
    for (int i = 0; i < n; i++) {
        const suite_problem *p = suite_get(i);
        char line[1024], sh[128];
        size_t used = 0;
        line[0] = 0;
        for (int k = 0; k < p->n_inputs; k++) {
            shape_text(&p->inputs[k], sh, sizeof sh);
            int w = snprintf(line + used, sizeof line - used, "%s%s%s[%s]", k ? " " : "",
                             p->inputs[k].role == SUITE_ROLE_PARAM ? "*" : "", p->inputs[k].name, sh);
            if (w < 0 || (size_t)w >= sizeof line - used) break;
            used += (size_t)w;
        }
        if (p->n_outputs > 0) {
            shape_text(&p->outputs[0], sh, sizeof sh);
            snprintf(line + used, sizeof line - used, " -> [%s]", sh);
        }
        const char *why = NULL;
        int ok = suite_host_available(p, &why);
        if (ok)
            printf("%-72s %10.3f %10.1f  %s\n", p->id, p->flops / 1e9, p->min_bytes / 1e6, line);
        else
            printf("%-72s %10.3f %10.1f  %s  (unavailable: %s)\n", p->id, p->flops / 1e9,
                   p->min_bytes / 1e6, line, why ? why : "?");
    }
    printf("%d problems (* marks parameters)\n", n);
    if (fflush(stdout) != 0) return err_set(e, KBV_ERUNTIME, "list: cannot write to stdout");
    return 0;
}

static void usage(FILE *f)
{
    fputs("usage: kbv list [--json]\n\n"
          "Lists the problems of the suite: inputs (shapes; * marks parameters), output,\n"
          "FLOPs and minimum bytes (each input read once, each output written once).\n"
          "--json prints {\"problems\": [...]} with inputs, outputs, attributes and baselines.\n"
          "A problem whose baseline cannot run on this host is marked unavailable.\n", f);
}

int main(int argc, char **argv)
{
    int json = 0;
    kbv_err e = { 0, "" };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            cli_print_version("kbv-list");
            return 0;
        } else {
            err_set(&e, KBV_EUSAGE, "unknown argument '%s' (try --help)", argv[i]);
            err_report("list", &e);
            return err_exit_status(e.code);
        }
    }
    int rc = json ? list_json(&e) : list_text(&e);
    if (rc) {
        err_report("list", &e);
        return err_exit_status(rc);
    }
    return 0;
}
