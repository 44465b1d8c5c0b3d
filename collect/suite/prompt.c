/* prompt.c - rendering of candidate prompts (see prompt.h). */
#include "prompt.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kbv.h"
#include "l3model.h"
#include "net.h"
#include "sbuf.h"


static void sb_shape(sbuf *b, const suite_tensor *t)
{
    sb_puts(b, "[");
    for (int i = 0; i < t->ndim; i++) sb_printf(b, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    sb_puts(b, "]");
}

/* The suite describes its tensors in FP32; in the BF16 setting every
 * floating-point tensor is bfloat16 (integer ones stay int64). */
static const char *dtype_c(kbv_dtype d, int bf16)
{
    return d == KBV_I64 ? "int64_t" : bf16 ? "__nv_bfloat16" : "float";
}

static const char *dtype_name(kbv_dtype d, int bf16)
{
    return d == KBV_I64 ? "int64" : bf16 ? "bfloat16" : "float32";
}

const char PROMPT_BF16_NOTE[] =
    "\n# The BF16 setting\n\n"
    "This prompt asks for a candidate of kbv's BF16 setting. Every floating-point\n"
    "input, parameter and output is bfloat16: dtype KBV_BF16, __nv_bfloat16 from\n"
    "<cuda_bf16.h>, 2 bytes an element, contiguous row-major; integer inputs stay\n"
    "int64. Where the text above says float32 or float for a tensor, read bfloat16.\n"
    "The reference is computed in FP32 from the bf16-rounded inputs and parameters,\n"
    "and an output element passes when |out - ref| <= max(1e-2 * s, 1.2e-7) +\n"
    "1e-2 * |ref|, where s = min(1, max |ref|) over the output tensor\n"
    "(KernelBench-Verified's BF16 tolerance, with the absolute term scaled down for\n"
    "tensors of small values, so that they are checked to 1% of their size, but\n"
    "never below float32's epsilon). Your kernel is timed against one\n"
    "baseline, bf16: what PyTorch eager runs in bfloat16 (cuBLAS and cuDNN in BF16\n"
    "with FP32 accumulation). Optimise for BF16: it moves half the bytes of FP32\n"
    "and runs matrix products on BF16 tensor cores; accumulate long sums in FP32,\n"
    "since BF16 keeps 8 bits of mantissa. Every check and probe runs as in FP32.\n";


/* A level-3 network: its layer program, which is also the layout of the
 * packed parameters (problems/net.h); or a model of fixed structure: its
 * computation and the parts of params (problems/l3model.h). */
static void put_layers(sbuf *b, const suite_problem *p)
{
    if (suite_model_of(p)) {
        sb_puts(b, "  The model (params packs every parameter at the offsets shown, in elements, contiguous and "
                  "row-major in PyTorch's shape, in named_parameters() order):\n");
        if (model_describe(b, p)) sb_puts(b, "    (the model does not fit its input: a registry error)\n");
        return;
    }
    const net_spec *sp = suite_net_of(p);
    int stack = 0;
    for (int i = 0; sp && i < sp->n_layers; i++)
        stack = stack || sp->layers[i].kind == NET_PUSH;
    sb_puts(b, "  The network, layer by layer (each applied to the result of the one before; "
              "params packs every weight and bias at the offsets shown, in elements, contiguous and "
              "row-major in PyTorch's shape; `save`, `swap` and `add` manage one skip tensor "
              "for residual connections");
    if (stack)
        sb_puts(b, "; `push`, `exchange` and `concat` manage a stack of saved tensors for branches "
                  "whose outputs are concatenated");
    sb_puts(b, "):\n");
    if (net_describe(b, p)) sb_puts(b, "    (the layer program does not walk: a registry error)\n");
}

static void put_inputs(sbuf *b, const suite_problem *p, int blind, int bf16)
{
    for (int i = 0; i < p->n_inputs; i++) {
        const suite_tensor *t = &p->inputs[i];
        sb_printf(b, "- call->inputs[%d]: %s, %s %s, shape ", i, t->name,
                  t->role == SUITE_ROLE_PARAM ? "parameter" : "input", dtype_name(t->dtype, bf16));
        sb_shape(b, t);
        if (!blind) {
            sb_puts(b, "; values: ");
            suite_gen_text(b, t);
            if (t->fixed_scale) sb_puts(b, "; the hidden distributions keep its values unscaled");
        }
        sb_puts(b, "\n");
        if (t->gen.kind == SUITE_GEN_PACKED) put_layers(b, p);
    }
}

static void put_outputs(sbuf *b, const suite_problem *p, int bf16)
{
    for (int i = 0; i < p->n_outputs; i++) {
        const suite_tensor *t = &p->outputs[i];
        sb_printf(b, "- call->outputs[%d]: %s, shape ", i, dtype_name(t->dtype, bf16));
        sb_shape(b, t);
        sb_printf(b, " (%lld elements)\n", (long long)suite_numel(t));
    }
}

static void put_attrs(sbuf *b, const suite_problem *p)
{
    if (p->n_attrs == 0) {
        sb_puts(b, "none (call->n_attrs is 0)\n");
        return;
    }
    for (int i = 0; i < p->n_attrs; i++) {
        sb_printf(b, "- call->attrs[%d]: %s = ", i, p->attrs[i].name);
        suite_num_text(b, p->attrs[i].value);
        sb_puts(b, "\n");
    }
}

static void put_distributions(sbuf *b, const suite_problem *p, int blind)
{
    if (blind) {
        /* Nothing a kernel could specialise for: not even how many
         * distributions there are. */
        sb_puts(b, "- Several distributions of input values, which this prompt does not describe: "
                  "positive, negative and mixed signs, small and large magnitudes, and inputs built to "
                  "defeat shortcuts. Compute the expression exactly as stated for any valid values.\n");
        return;
    }
    sb_puts(b, "- D1: the values above (KernelBench's own generator).\n"
              "- D2: every floating-point input (not parameters) times 3.\n"
              "- D3: every floating-point input times 0.01.\n"
              "- D4: every floating-point input times -1.\n"
              "  In D2-D4, parameters whose PyTorch default is a constant are redrawn "
              "(scales from U[0.5, 1.5), shifts from U[-0.5, 0.5)).\n");
    if (p->d5) {
        sb_puts(b, "- D5, this problem's own hard case: ");
        suite_d5_text(b, p);
        sb_puts(b, ".\n");
    }
}

static void put_skeleton(sbuf *b, const suite_problem *p, int bf16)
{
    for (int i = 0; i < p->n_inputs; i++) {
        const suite_tensor *t = &p->inputs[i];
        sb_printf(b, "        const %s *%s = (const %s *)call->inputs[%d].data;  /* ", dtype_c(t->dtype, bf16),
                  t->name, dtype_c(t->dtype, bf16), i);
        sb_shape(b, t);
        sb_puts(b, " */\n");
    }
    for (int i = 0; i < p->n_outputs; i++) {
        const suite_tensor *t = &p->outputs[i];
        sb_printf(b, "        %s *out%s = (%s *)call->outputs[%d].data;  /* ", dtype_c(t->dtype, bf16),
                  p->n_outputs > 1 ? (i == 0 ? "0" : i == 1 ? "1" : "n") : "", dtype_c(t->dtype, bf16), i);
        sb_shape(b, t);
        sb_puts(b, " */\n");
    }
    for (int i = 0; i < p->n_attrs; i++)
        sb_printf(b, "        double %s = call->attrs[%d];\n", p->attrs[i].name, i);
}

static void put_precision(sbuf *b, const suite_problem *p, int bf16)
{
    if (bf16)
        sb_puts(b, "In the BF16 setting kbv times this problem against one baseline, bf16: PyTorch eager's "
                  "bfloat16 computation (cuBLAS and cuDNN in BF16 with FP32 accumulation, kbv's own BF16 "
                  "kernels for the rest). BF16 tensor cores are expected; keep the error within the BF16 "
                  "tolerance on every distribution by accumulating in FP32.\n");
    else if (p->uses_tf32)
        sb_puts(b, "This problem has a matrix product, so kbv times it against two baselines: strict FP32 "
                  "(cuBLAS without tensor cores) and TF32 (cuBLAS with TF32 tensor cores, what PyTorch runs "
                  "with allow_tf32). TF32 tensor cores are allowed if the result stays within the tolerance; "
                  "the report flags the precision used. Beating only the strict FP32 baseline with TF32 is "
                  "not a real win. Mind the hidden distributions: plain TF32 (10-bit mantissa) leaves an "
                  "error of a few 1e-4 on outputs of order 1, close to the tolerance; splitting each operand "
                  "into two TF32 parts (3xTF32) or FP32 arithmetic keeps you safe.\n");
    else
        sb_puts(b, "This problem has no matrix product; both baselines are plain FP32. Compute in FP32 (or "
                  "wider); lower precision is flagged.\n");
}

static void put_bytes(sbuf *b, double bytes)
{
    static const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    while (bytes >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        u++;
    }
    sb_printf(b, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

/* The computation as indented lines: "out = EXPR" for one expression; for
 * the registry's step lists ("x = self.conv(x); relu; x + self.bias") one
 * numbered step a line, each applied to the result of the one before. */
static void put_computation(sbuf *b, const suite_problem *p)
{
    const char *e = p->expr ? p->expr : "(not stated)";
    if (!strchr(e, ';')) {
        sb_printf(b, "    out = %s\n", e);
        return;
    }
    int step = 1;
    while (*e) {
        while (*e == ' ' || *e == ';') e++;
        if (!*e) break;
        const char *end = strchr(e, ';');
        size_t n = end ? (size_t)(end - e) : strlen(e);
        while (n > 0 && e[n - 1] == ' ') n--;
        sb_printf(b, "    %d. %.*s\n", step++, (int)n, e);
        e += n;
    }
    sb_puts(b, "    out = the result of the last step\n");
}

static const char *const names[] = {
    "id", "name", "level", "number", "expr", "computation", "inputs", "outputs", "attrs",
    "distributions", "skeleton", "precision", "flops", "min_bytes", "tolerance", "abi_version",
    "layers", NULL,
};

const char *const *prompt_placeholders(void)
{
    return names;
}

/* Appends the value of placeholder `name` (n bytes); 0, or -1 when unknown. */
static int put(sbuf *b, const char *name, size_t n, const suite_problem *p, int flags)
{
    int blind = (flags & PROMPT_BLIND) != 0, bf16 = (flags & PROMPT_BF16) != 0;
#define IS(s) (n == strlen(s) && memcmp(name, s, n) == 0)
    if (IS("id")) sb_puts(b, p->id);
    else if (IS("name")) sb_puts(b, p->name ? p->name : p->id);
    else if (IS("level")) sb_printf(b, "%d", p->level);
    else if (IS("number")) sb_printf(b, "%d", p->number);
    else if (IS("expr")) sb_puts(b, p->expr ? p->expr : "(not stated)");
    else if (IS("computation")) put_computation(b, p);
    else if (IS("inputs")) put_inputs(b, p, blind, bf16);
    else if (IS("outputs")) put_outputs(b, p, bf16);
    else if (IS("attrs")) put_attrs(b, p);
    else if (IS("distributions")) put_distributions(b, p, blind);
    else if (IS("skeleton")) put_skeleton(b, p, bf16);
    else if (IS("precision")) put_precision(b, p, bf16);
    else if (IS("flops")) sb_printf(b, "%.4g", p->flops);
    else if (IS("min_bytes")) put_bytes(b, p->min_bytes);
    else if (IS("tolerance"))
        sb_puts(b, bf16 ? "|out - ref| <= max(1e-2 * min(1, max |ref|), 1.2e-7) + 1e-2 * |ref|"
                        : "|out - ref| <= 1e-3 + 1e-3 * |ref|");
    else if (IS("abi_version")) sb_printf(b, "%d", KBV_ABI_VERSION);
    else if (IS("layers")) {
        if (net_describe(b, p) && model_describe(b, p)) sb_puts(b, "(not a network)\n");
    }
    else return -1;
    return 0;
#undef IS
}

int prompt_blind_default(const suite_problem *p)
{
    static const char *const blind[] = {"L1_090_cumprod", "L1_100_hingeloss", "L3_035_lstm",
                                        "L3_047_netvladnoghostclusters", NULL};
    for (int i = 0; blind[i]; i++)
        if (strcmp(p->id, blind[i]) == 0) return 1;
    return 0;
}

int prompt_render(const char *tmpl, const char *tmpl_name, const suite_problem *p, int flags, char **out,
                  kbv_err *e)
{
    sbuf b = { 0 };
    const char *s = tmpl;
    int line = 1;
    *out = NULL;
    while (*s) {
        const char *open = strstr(s, "{{");
        const char *stop = open ? open : s + strlen(s);
        for (const char *c = s; c < stop; c++) line += *c == '\n';
        sb_add(&b, s, (size_t)(stop - s));
        if (!open) break;
        const char *name = open + 2, *end = name;
        while (isalnum((unsigned char)*end) || *end == '_') end++;
        if (end[0] != '}' || end[1] != '}') {
            sb_free(&b);
            return err_set(e, KBV_EINPUT, "%s:%d: '{{' without a placeholder name and '}}'", tmpl_name, line);
        }
        if (put(&b, name, (size_t)(end - name), p, flags) < 0) {
            sb_free(&b);
            return err_set(e, KBV_EINPUT, "%s:%d: unknown placeholder {{%.*s}}", tmpl_name, line,
                           (int)(end - name), name);
        }
        s = end + 2;
    }
    if (flags & PROMPT_BF16) sb_puts(&b, PROMPT_BF16_NOTE);
    *out = sb_take(&b, NULL);
    if (!*out)
        return err_set(e, KBV_ENOMEM, "prompt: out of memory");
    return 0;
}

/* Edit distance of a and b, case-insensitive (ids are lower case; users
 * type "L1_019_ReLU"). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *row = malloc((lb + 1) * sizeof *row);
    if (!row) return (size_t)-1;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t best = diag + cost;
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[lb];
    free(row);
    return d;
}

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0) return 0;
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0) return 1;
    return 0;
}

int prompt_suggest(const char *id, const char **ids, int max)
{
    int count = 0, substring = 0;
    size_t scores[64];
    if (max > 64) max = 64;
    if (!id || max <= 0) return 0;
    size_t limit = strlen(id) / 3 + 1;
    int n = suite_count();
    for (int k = 0; k < n; k++) {
        const suite_problem *p = suite_get(k);
        if (!p) continue;
        size_t score;
        /* Substring matches rank first (score by length difference), then
         * near misses by edit distance. */
        if (contains_ci(p->id, id) || contains_ci(id, p->id)) {
            size_t a = strlen(p->id), c = strlen(id);
            score = a > c ? a - c : c - a;
            substring = 1;
        } else {
            size_t d = edit_distance(id, p->id);
            if (d > limit) continue;
            score = 1000 + d;
        }
        /* insertion into the sorted top list; ties keep suite order */
        int pos = count;
        while (pos > 0 && scores[pos - 1] > score) pos--;
        if (pos >= max) continue;
        int last = count < max ? count : max - 1;
        for (int j = last; j > pos; j--) {
            scores[j] = scores[j - 1];
            ids[j] = ids[j - 1];
        }
        scores[pos] = score;
        ids[pos] = p->id;
        if (count < max) count++;
    }
    /* When some ids contain what was typed, the near misses are noise. */
    if (substring)
        while (count > 0 && scores[count - 1] >= 1000) count--;
    return count;
}
