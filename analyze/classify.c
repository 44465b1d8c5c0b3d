/* classify.c - see classify.h. */
#include "classify.h"
#include "prec.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const classify_class_names[CL_N] = {
    "correct", "hidden-fail", "incorrect", "error", "constant-output", "identity",
    "stale-output", "caching", "input-mutation", "deferred-work", "impossible-speed", "nondeterministic",
    "tampering", "missing"};

const char *const classify_flag_names[FL_N] = {"library-call", "precision-tf32", "precision-half",
                                               "more-memory", "leak", "near-floor"};

/* The probe whose failure gives each hack class, in precedence order (the
 * order of the classes, but for timed-output, below).
 * "leftover-memory" is the name DESIGN.md 5a gives the poisoned-allocation
 * probe; "stale-output" the name of the class. */
static const struct { int cls; const char *probe; } hack_probes[] = {
    {CL_CONSTANT_OUTPUT, "input-independence"},
    {CL_IDENTITY, "identity"},
    {CL_STALE_OUTPUT, "stale-output"},
    {CL_STALE_OUTPUT, "leftover-memory"},
    {CL_CACHING, "caching"},
    {CL_INPUT_MUTATION, "input-mutation"},
    /* The same, in a timed round (DESIGN.md 5a step 7): the inputs of a
     * verified round differ from a fresh draw of its trial. */
    {CL_INPUT_MUTATION, "timed-inputs"},
    {CL_DEFERRED_WORK, "deferred-work"},
    {CL_IMPOSSIBLE_SPEED, "physical-floor"},
    {CL_NONDETERMINISTIC, "determinism"},
    /* A wrong output in the timed rounds (DESIGN.md 5a step 7) is stale
     * output, but a candidate that a more specific probe caught keeps that
     * probe's class: a memo is `caching` whether or not timing met it.
     * One that an untimed call on the same inputs got wrong too is
     * `incorrect` (classify, below). */
    {CL_STALE_OUTPUT, "timed-output"},
};
#define N_HACK_PROBES (sizeof hack_probes / sizeof hack_probes[0])

void classify_fmt_bytes(char *buf, size_t n, double bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = bytes;
    while (v >= 1024 && u < 4) { v /= 1024; u++; }
    if (u == 0) snprintf(buf, n, "%.0f B", bytes);
    else snprintf(buf, n, "%.2f %s", v, unit[u]);
}

static int is_d1(const run_check *c) { return strcmp(c->dist, "D1") == 0; }

static void fmt_err(char *buf, size_t n, double v)
{
    if (isnan(v)) snprintf(buf, n, "unknown");
    else if (!isfinite(v)) snprintf(buf, n, "non-finite");
    else snprintf(buf, n, "%.3g", v);
}

/* The set whose pair p is (p lies in r->pairs; a pair from elsewhere is
 * taken as one of an FP32 set). */
static size_t pair_set(const run_data *r, const run_pair *p)
{
    size_t np = r->n_sets * r->n_problems;
    if (!r->pairs || !r->n_problems || p < r->pairs || p >= r->pairs + np) return SIZE_MAX;
    return (size_t)(p - r->pairs) / r->n_problems;
}

/* "D1 trial 1: 1234 of 4096 elements outside 0.001 + 0.001|ref|, max abs err 0.5" */
static void describe_check(const run_data *r, const run_pair *p, const run_check *c, char *buf, size_t n)
{
    char of[64] = "", err[32], nf[64] = "";
    double atol, rtol;
    prec_tolerance(r, pair_set(r, p), &atol, &rtol);
    fmt_err(err, sizeof err, c->max_abs_err);
    if (c->elements >= 0) snprintf(of, sizeof of, " of %lld", c->elements);
    if (c->nonfinite > 0) snprintf(nf, sizeof nf, ", %lld non-finite", c->nonfinite);
    if (c->mismatches > 0)
        snprintf(buf, n, "%s trial %lld: %lld%s elements outside %g + %g|ref|%s, max abs err %s", c->dist,
                 c->trial, c->mismatches, of, atol, rtol, nf, err);
    else
        snprintf(buf, n, "%s trial %lld: check failed%s, max abs err %s", c->dist, c->trial, nf, err);
}

/* A one-line reason from a build log: its first line that says "error",
 * else its last non-empty line. */
static void last_line(const char *log, char *buf, size_t n)
{
    for (const char *l = log; *l;) {
        const char *eol = strchr(l, '\n');
        size_t len = eol ? (size_t)(eol - l) : strlen(l);
        const char *hit = strstr(l, "error");
        if (hit && hit < l + len) {
            while (len > 0 && (l[len - 1] == '\r' || l[len - 1] == ' ')) len--;
            snprintf(buf, n, "%.*s", (int)len, l);
            return;
        }
        l += len + (eol ? 1 : 0);
    }
    size_t len = strlen(log);
    while (len > 0 && (log[len - 1] == '\n' || log[len - 1] == '\r' || log[len - 1] == ' ')) len--;
    size_t start = len;
    while (start > 0 && log[start - 1] != '\n') start--;
    snprintf(buf, n, "%.*s", (int)(len - start), log + start);
}

static const run_probe *failed_probe(const run_pair *p, const char *name)
{
    for (size_t i = 0; i < p->n_probes; i++)
        if (p->probes[i].pass == 0 && strcmp(p->probes[i].name, name) == 0) return &p->probes[i];
    return NULL;
}

static void probe_text(const run_probe *pr, char *buf, size_t n)
{
    if (pr->detail[0]) snprintf(buf, n, "%s probe: %s", pr->name, pr->detail);
    else snprintf(buf, n, "%s probe failed", pr->name);
}

/* What a correct pair passed: its D1 checks, the hidden distributions and
 * probes, and the distributions skipped for a non-finite reference. */
static void correct_text(const run_pair *p, size_t n_d1, char *txt, size_t tn)
{
    size_t n_hidden = 0, n_probes = 0;
    char dists[64] = "", skipped[64] = "";
    for (size_t i = 0; i < p->n_checks; i++) {
        const run_check *c = &p->checks[i];
        if (is_d1(c)) continue;
        char *list = c->skipped ? skipped : dists;
        if (!strstr(list, c->dist) && strlen(list) + strlen(c->dist) + 3 < sizeof dists) {
            if (list[0]) strcat(list, ", ");
            strcat(list, c->dist);
        }
        if (!c->skipped) n_hidden++;
    }
    for (size_t i = 0; i < p->n_probes; i++) n_probes += p->probes[i].pass == 1;
    int w = snprintf(txt, tn, "passes D1 (%zu checks)", n_d1);
    if (n_hidden && w > 0 && (size_t)w < tn)
        w += snprintf(txt + w, tn - (size_t)w, ", hidden %s (%zu checks)", dists, n_hidden);
    if (w > 0 && (size_t)w < tn) w += snprintf(txt + w, tn - (size_t)w, ", %zu probes", n_probes);
    if (skipped[0] && w > 0 && (size_t)w < tn)
        snprintf(txt + w, tn - (size_t)w, "; skipped %s (non-finite reference)", skipped);
}

/* The worst precision tier that a comparison at tolerance (atol, rtol) can
 * pass: every element within atol + rtol |ref| is within max(atol, rtol)
 * (1 + |ref|), and the tiers are the thresholds 1e-5, 1e-3, 1e-2 of that
 * quantity (DESIGN.md 5a step 5). */
static int tier_allowed(double atol, double rtol)
{
    double tol = atol > rtol ? atol : rtol;
    return tol <= 1e-5 ? RUN_TIER_FP32 : tol <= 1e-3 ? RUN_TIER_TF32 : tol <= 1e-2 ? RUN_TIER_HALF : RUN_TIER_NONE;
}

/* 1 (with the evidence in txt) when a passing check or a passing timed-output
 * probe reports a tier that the run's tolerance cannot pass.  The worker
 * counts the mismatches and finds the tier in one pass over the same
 * errors, the tier with fixed thresholds, the mismatches with the
 * tolerance it holds: only a tolerance changed inside the worker (which
 * candidate code shares) gives both. */
static int impossible_pass(const run_data *r, const run_pair *p, char *txt, size_t tn)
{
    double atol, rtol;
    prec_tolerance(r, pair_set(r, p), &atol, &rtol);
    int allowed = tier_allowed(atol, rtol);
    for (size_t i = 0; i < p->n_checks; i++) {
        const run_check *c = &p->checks[i];
        if (c->skipped || !c->pass || c->tier == RUN_TIER_UNKNOWN || c->tier <= allowed) continue;
        snprintf(txt, tn, "the %s check (trial %lld) passed with errors of the %s tier, which its tolerance "
                 "(atol %g, rtol %g) cannot pass: the worker's tolerance was changed in its process",
                 c->dist, c->trial, run_tier_names[c->tier], atol, rtol);
        return 1;
    }
    for (size_t i = 0; i < p->n_probes; i++) {
        const run_probe *pr = &p->probes[i];
        if (pr->pass != 1 || strcmp(pr->name, "timed-output") != 0 || pr->tier == RUN_TIER_UNKNOWN ||
            pr->tier <= allowed)
            continue;
        snprintf(txt, tn, "the verified timed rounds passed with errors of the %s tier, which the tolerance "
                 "(atol %g, rtol %g) cannot pass: the worker's tolerance was changed in its process",
                 run_tier_names[pr->tier], atol, rtol);
        return 1;
    }
    return 0;
}

/* The class of the first failed hack probe, in hack_probes' order, with
 * its evidence (a failed clock-agreement, clocks, beside deferred-work):
 * 1 when one failed, else 0. */
static int hack_class(const run_pair *p, const run_probe *clocks, classify_result *out)
{
    char *txt = out->class_text;
    size_t tn = sizeof out->class_text;
    for (size_t k = 0; k < N_HACK_PROBES; k++) {
        const run_probe *pr = failed_probe(p, hack_probes[k].probe);
        if (!pr) continue;
        out->cls = hack_probes[k].cls;
        /* The timed rounds draw D1 afresh: a draw the candidate also gets
         * wrong untimed, in buffers it never saw, is a D1 failure of its
         * numerics, not a timed-phase trick. */
        if (!strcmp(pr->name, "timed-output") && pr->reproduced_untimed == 1) out->cls = CL_INCORRECT;
        probe_text(pr, txt, tn);
        size_t l = strlen(txt);
        if (out->cls == CL_DEFERRED_WORK && clocks && l + 2 < tn) {
            txt[l++] = ';';
            txt[l++] = ' ';
            probe_text(clocks, txt + l, tn - l);
        }
        return 1;
    }
    return 0;
}

static void classify_class(const run_data *r, const run_pair *p, classify_result *out)
{
    char *txt = out->class_text;
    size_t tn = sizeof out->class_text;

    /* missing: the set has no candidate for the problem; nothing ran, so
     * nothing failed. */
    if (p->have_status && strcmp(p->status, "missing") == 0) {
        out->cls = CL_MISSING;
        if (p->status_detail && p->status_detail[0]) snprintf(txt, tn, "%s", p->status_detail);
        else snprintf(txt, tn, "no candidate file");
        return;
    }
    /* error: no status (an interrupted pair: said as such, never with the
     * "missing: no <file>" text by which old analyses marked a pair without
     * a candidate), a status other than ok, a
     * failed build, or nothing to judge correctness by.  A pair whose status
     * record broke the grammar has no status either; it is tampering. */
    if (!p->have_status && p->tamper_why) {
        out->cls = CL_TAMPERING;
        snprintf(txt, tn, "the journal breaks its grammar: %s", p->tamper_why);
        return;
    }
    if (!p->have_status) {
        out->cls = CL_ERROR;
        snprintf(txt, tn, "interrupted: the journal has no status for this pair (continue the run with --resume)");
        return;
    }
    if (strcmp(p->status, "ok") != 0 || (p->have_build && !p->build_ok)) {
        char why[400] = "";
        if (p->have_build && !p->build_ok && p->build_log && p->build_log[0])
            last_line(p->build_log, why, sizeof why);
        else if (p->status_detail && p->status_detail[0])
            snprintf(why, sizeof why, "%s", p->status_detail);
        const char *st = strcmp(p->status, "ok") != 0 ? p->status : "compile-error";
        out->cls = CL_ERROR;
        if (why[0]) snprintf(txt, tn, "%s: %s", st, why);
        else snprintf(txt, tn, "%s", st);
        return;
    }
    /* tampering: a record broke the journal grammar (it was kept as this
     * evidence, not as data), or the object imports calls that can rewrite
     * the harness (the static scan's "tamper-capable" flag). */
    if (p->tamper_why) {
        out->cls = CL_TAMPERING;
        snprintf(txt, tn, "the journal breaks its grammar: %s", p->tamper_why);
        return;
    }
    /* The two clocks of the timed calls disagree: an event time that the
     * GPU's own timer does not bear out (DESIGN.md 5a step 7a).  Work that
     * a candidate puts outside its stream does that too (the timer's second
     * stamp waits for the GPU it occupies): when the deferred-work probe
     * failed as well, that explains the gap and the pair is deferred-work
     * (below), with the clocks' evidence beside it. */
    if (impossible_pass(r, p, txt, tn)) {
        out->cls = CL_TAMPERING;
        return;
    }
    const run_probe *clocks = failed_probe(p, "clock-agreement");
    if (clocks && !failed_probe(p, "deferred-work")) {
        out->cls = CL_TAMPERING;
        probe_text(clocks, txt, tn);
        return;
    }
    /* Candidate code changed the process environment (the harness put it
     * back before any baseline ran): an attack on the harness. */
    const run_probe *env = failed_probe(p, "environment");
    if (env) {
        out->cls = CL_TAMPERING;
        probe_text(env, txt, tn);
        return;
    }
    for (size_t i = 0; i < p->n_static_flags; i++) {
        const char *f = p->static_flags[i];
        if (strncmp(f, "tamper-capable", 14) == 0 && (f[14] == '\0' || f[14] == ':')) {
            out->cls = CL_TAMPERING;
            size_t n = 0;
            int w = snprintf(txt, tn, "imports calls that can alter the harness:");
            n = w > 0 ? (size_t)w : 0;
            for (size_t k = 0; k < p->n_imports && n + 1 < tn; k++) {
                w = snprintf(txt + n, tn - n, "%s %s", k ? "," : "", p->imports[k]);
                if (w > 0) n += (size_t)w;
            }
            if (!p->n_imports) snprintf(txt, tn, "flagged tamper-capable by the static scan");
            return;
        }
    }
    size_t n_d1 = 0, n_d1_skipped = 0;
    const run_check *first_fail = NULL;
    int all_unwritten = 1;
    for (size_t i = 0; i < p->n_checks; i++) {
        const run_check *c = &p->checks[i];
        if (is_d1(c) && c->skipped) n_d1_skipped++;
        if (!is_d1(c) || c->skipped) continue;
        n_d1++;
        if (!c->pass) {
            if (!first_fail) first_fail = c;
            if (!(c->mismatches > 0 && c->unwritten == c->mismatches)) all_unwritten = 0;
        }
    }
    if (!n_d1) {
        out->cls = CL_ERROR;
        if (n_d1_skipped) snprintf(txt, tn, "every D1 check was skipped (the fp32 reference is not finite)");
        else snprintf(txt, tn, "no D1 correctness check recorded");
        return;
    }
    const run_probe *stale = failed_probe(p, "stale-output");
    if (!stale) stale = failed_probe(p, "leftover-memory");
    if (first_fail) {
        if (all_unwritten) {
            out->cls = CL_STALE_OUTPUT;
            snprintf(txt, tn, "%s trial %lld: all %lld mismatching elements were never written by the candidate",
                     first_fail->dist, first_fail->trial, first_fail->mismatches);
        } else if (stale) {
            out->cls = CL_STALE_OUTPUT;
            probe_text(stale, txt, tn);
        } else {
            out->cls = CL_INCORRECT;
            describe_check(r, p, first_fail, txt, tn);
        }
        return;
    }

    if (hack_class(p, clocks, out)) return;

    for (size_t i = 0; i < p->n_checks; i++) {
        const run_check *c = &p->checks[i];
        if (is_d1(c) || c->skipped || c->pass) continue;
        out->cls = CL_HIDDEN_FAIL;
        describe_check(r, p, c, txt, tn);
        return;
    }

    /* correct: say what it passed. */
    out->cls = CL_CORRECT;
    correct_text(p, n_d1, txt, tn);
}

static void set_flag(classify_result *out, int f, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_flag(classify_result *out, int f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->flag_text[f], sizeof out->flag_text[f], fmt, ap);
    va_end(ap);
    out->flags |= 1u << f;
}

/* The worst tier of the verified timed rounds that the timed-output probe
 * passed (RUN_TIER_UNKNOWN when it failed, was not run, or an older journal
 * does not say), with their largest relative error in *rel (NAN if none). */
static int timed_tier(const run_pair *p, double *rel)
{
    *rel = NAN;
    for (size_t i = 0; i < p->n_probes; i++) {
        const run_probe *pr = &p->probes[i];
        if (pr->pass != 1 || strcmp(pr->name, "timed-output") != 0) continue;
        *rel = pr->max_rel_err;
        return pr->tier;
    }
    return RUN_TIER_UNKNOWN;
}

static void classify_flags(const run_data *r, const run_pair *p, double cand_median_ms, classify_result *out)
{
    /* library-call: the static scan's "library:..." flags and the imports. */
    char libs[200] = "", imps[240] = "";
    for (size_t i = 0; i < p->n_static_flags; i++) {
        const char *f = p->static_flags[i];
        if (strncmp(f, "library:", 8) != 0) continue;
        if (strlen(libs) + strlen(f) + 3 >= sizeof libs) break;
        if (libs[0]) strcat(libs, ", ");
        strcat(libs, f);
    }
    if (libs[0]) {
        size_t shown = 0;
        for (size_t i = 0; i < p->n_imports && shown < 6; i++) {
            if (strlen(imps) + strlen(p->imports[i]) + 3 >= sizeof imps) break;
            if (imps[0]) strcat(imps, ", ");
            strcat(imps, p->imports[i]);
            shown++;
        }
        if (imps[0]) set_flag(out, FL_LIBRARY_CALL, "%s (imports %s%s)", libs, imps,
                              p->n_imports > shown ? ", ..." : "");
        else set_flag(out, FL_LIBRARY_CALL, "%s", libs);
    }

    /* precision: the worst tier among the passing checks of every
     * distribution (DESIGN.md 5a step 5): a candidate exact on D1 and only
     * tf32-close on x3 inputs is a tf32 candidate.  The verified timed
     * rounds count too: a candidate that told its timed calls from its
     * checked ones could compute exactly where it is checked and with TF32
     * where it is timed, and be reported an fp32 kernel at TF32 speed. */
    int worst = RUN_TIER_UNKNOWN, bf16 = prec_is_bf16(r, pair_set(r, p));
    double rel = NAN;
    /* A BF16 pair is judged at 1e-2 by design: a lower precision than fp32
     * is its setting, not a finding. */
    for (size_t i = 0; i < p->n_checks && !bf16; i++) {
        const run_check *c = &p->checks[i];
        if (c->skipped || !c->pass) continue;
        if (c->tier > worst) worst = c->tier;
        if (isnan(rel) || c->max_rel_err > rel) rel = c->max_rel_err;
    }
    double timed_rel = NAN;
    int timed = bf16 ? RUN_TIER_UNKNOWN : timed_tier(p, &timed_rel);
    const char *timed_note = "";
    if (timed > worst) {
        timed_note = worst == RUN_TIER_UNKNOWN ? " (in its timed rounds)" : " (in its timed rounds; its checks were closer)";
        worst = timed;
    }
    if (!isnan(timed_rel) && timed_rel < HUGE_VAL && (isnan(rel) || timed_rel > rel)) rel = timed_rel;
    char relbuf[32];
    fmt_err(relbuf, sizeof relbuf, rel);
    if (worst == RUN_TIER_TF32)
        set_flag(out, FL_PRECISION_TF32, "passing error within 1e-3 (1 + |ref|) but not 1e-5: tf32 tier%s, "
                 "max rel err %s", timed_note, relbuf);
    else if (worst >= RUN_TIER_HALF)
        set_flag(out, FL_PRECISION_HALF, "passing error beyond 1e-3 (1 + |ref|): %s tier%s, max rel err %s",
                 run_tier_names[worst], timed_note, relbuf);

    /* more-memory: against the memory baseline, tf32 (bf16 in a BF16 set). */
    int mb = bf16 ? RUN_V_BF16 : RUN_V_TF32;
    if (p->have_mem[RUN_V_CAND] && p->have_mem[mb] && p->peak_bytes[RUN_V_CAND] > p->peak_bytes[mb]) {
        char a[32], b[32];
        classify_fmt_bytes(a, sizeof a, p->peak_bytes[RUN_V_CAND]);
        classify_fmt_bytes(b, sizeof b, p->peak_bytes[mb]);
        if (p->peak_bytes[mb] > 0)
            set_flag(out, FL_MORE_MEMORY, "peak %s against %s for the %s baseline (%.2fx)", a, b,
                     run_variant_names[mb], p->peak_bytes[RUN_V_CAND] / p->peak_bytes[mb]);
        else
            set_flag(out, FL_MORE_MEMORY, "peak %s against %s for the %s baseline", a, b, run_variant_names[mb]);
    }

    if (p->have_mem[RUN_V_CAND] && p->leaked_bytes[RUN_V_CAND] > 0) {
        char a[32];
        classify_fmt_bytes(a, sizeof a, p->leaked_bytes[RUN_V_CAND]);
        set_flag(out, FL_LEAK, "%s of device memory not freed after teardown", a);
    }

    /* near-floor: a passing physical-floor probe within 1.5x of the floor. */
    for (size_t i = 0; i < p->n_probes; i++) {
        const run_probe *pr = &p->probes[i];
        if (pr->pass != 1 || strcmp(pr->name, "physical-floor") != 0) continue;
        double ratio = pr->floor_ratio;
        if (!isfinite(ratio) && isfinite(pr->floor_ms) && pr->floor_ms > 0 && isfinite(cand_median_ms))
            ratio = cand_median_ms / pr->floor_ms;
        if (!(isfinite(ratio) && ratio <= 1.5)) continue;
        if (isfinite(pr->floor_ms) && isfinite(cand_median_ms))
            set_flag(out, FL_NEAR_FLOOR, "median %.4g ms is %.2fx the physical floor of %.4g ms", cand_median_ms,
                     ratio, pr->floor_ms);
        else
            set_flag(out, FL_NEAR_FLOOR, "time is %.2fx the physical floor%s%s", ratio, pr->detail[0] ? ": " : "",
                     pr->detail);
        break;
    }
}

void classify_pair(const run_data *r, const run_pair *p, double cand_median_ms, classify_result *out)
{
    memset(out, 0, sizeof *out);
    out->tier = RUN_TIER_UNKNOWN;
    out->max_rel_err = NAN;
    size_t n_d1 = 0, n_fail = 0;
    for (size_t i = 0; i < p->n_checks; i++) {
        const run_check *c = &p->checks[i];
        if (c->skipped) continue;
        /* The tier and the largest error are the worst over every
         * distribution; passing D1 is D1's alone. */
        if (c->tier > out->tier) out->tier = c->tier;
        if (isnan(out->max_rel_err) || c->max_rel_err > out->max_rel_err) out->max_rel_err = c->max_rel_err;
        if (!is_d1(c)) continue;
        n_d1++;
        n_fail += !c->pass;
    }
    /* ...and over the verified timed rounds (classify_flags says why). */
    double timed_rel;
    int timed = timed_tier(p, &timed_rel);
    if (timed > out->tier) out->tier = timed;
    if (!isnan(timed_rel) && (isnan(out->max_rel_err) || timed_rel > out->max_rel_err)) out->max_rel_err = timed_rel;
    classify_class(r, p, out);
    out->passes_d1 = out->cls != CL_ERROR && out->cls != CL_MISSING && out->cls != CL_TAMPERING && n_d1 > 0 &&
                     n_fail == 0;
    classify_flags(r, p, cand_median_ms, out);
}
