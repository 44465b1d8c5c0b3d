/* kbv-collect: runs the verified benchmark (DESIGN.md 3, 5a, 6).
 *
 * This process never touches the GPU itself: it plans the (set, problem)
 * pairs, builds the candidates, asks a worker for the device's calibration,
 * then runs one worker process per pair (one at a time per GPU) and appends
 * every record the worker sends to RUN_DIR/samples.jsonl as it arrives.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"
#include "copts.h"
#include "floorchk.h"
#include "cstat.h"
#include "schema.h"
#include "build.h"
#include "chan.h"
#include "jgram.h"
#include "pins.h"
#include "cli.h"
#include "err.h"
#include "jio.h"
#include "jnl.h"
#include "log.h"
#include "manifest.h"
#include "plan.h"
#include "rec.h"
#include "resume.h"
#include "sandbox.h"
#include "sums.h"
#include "super.h"
#include "verdict.h"

#define STAGE "collect"
#define MAX_GPUS COPTS_MAX_GPUS

/* The folder of this program, where kbv-worker lives too. */
static int self_dir(char *buf, size_t n, kbv_err *e)
{
    if (cli_exe_dir(buf, n) != 0)
        return err_set(e, KBV_ERUNTIME, "cannot find my own program: %s", strerror(errno));
    return 0;
}

/* --- worker runs ------------------------------------------------------------ */

typedef struct {
    jnl_writer *jw;
    const char *set;
    const char *problem;
    cJSON *status;        /* the worker's own status record, kept for the end */
    super_child *child;   /* borrowed, for the deadline */
    cJSON *single;        /* for one-shot modes: the result (or error) line */
    cJSON *info;          /* and a device-info line */
    long records;
    long tampered;        /* lines kept as evidence, never as data */
    char last[160];       /* what the worker did last, for a timeout's detail */
    char evidence[1024];  /* the first few of them, described */
    jgram *gram;          /* the run's journal grammar (borrowed) */
    floorchk floor;       /* collect's own check of the physical floor */
    double copy_gbps, tf32_tflops;   /* the calibration the worker was handed */
} pair_ctx;

/* Keeps a line that broke the channel's rules as evidence: counted, the
 * first few described (DESIGN.md 5a step 7a). */
static void note_tamper(pair_ctx *c, const char *why, const char *line, size_t len)
{
    if (c->tampered++ >= 3) return;
    size_t l = strlen(c->evidence);
    char shown[160];
    size_t n = len < sizeof shown - 1 ? len : sizeof shown - 1;
    memcpy(shown, line, n);
    shown[n] = 0;
    rec_utf8_clean(shown);
    snprintf(c->evidence + l, sizeof c->evidence - l, "%s%s: '%s%s'", l ? "; " : "", why, shown,
             len > n ? "..." : "");
}

static int on_line(void *vctx, const char *line, size_t len, int authentic, kbv_err *e)
{
    pair_ctx *c = vctx;
    kbv_err le = {0};
    cJSON *rec = NULL;
    if (!c->jw) {
        /* One-shot modes (no candidate runs): a "device-info" line (which
         * the calibration also sends first, so that builds can start) and
         * the result line. */
        cJSON *o = authentic ? cJSON_ParseWithLength(line, len) : NULL;
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, KBV_K_TYPE);
        if (!cJSON_IsObject(o)) {
            cJSON_Delete(o);
        } else if (cJSON_IsString(t) && !strcmp(t->valuestring, "device-info") && !c->info &&
                   !cJSON_GetObjectItemCaseSensitive(o, "error")) {
            c->info = o;
        } else if (!c->single) {
            c->single = o;
        } else {
            cJSON_Delete(o);
        }
        return 0;
    }
    if (!authentic) {
        note_tamper(c, "a line that does not authenticate", line, len);
        return 0;
    }
    if (c->status) {
        note_tamper(c, "an authentic line after the status record", line, len);
        return 0;
    }
    if (rec_from_worker(line, len, c->set, c->problem, &rec, &le)) {
        note_tamper(c, le.msg, line, len);
        return 0;
    }
    const char *type = cJSON_GetObjectItemCaseSensitive(rec, KBV_K_TYPE)->valuestring;
    if (floorchk_note(&c->floor, rec)) {
        cJSON_Delete(rec);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    /* The journal's grammar (jgram.h), as analyze applies it: known keys,
     * time rounds of each variant 0, 1, 2, ... once and in order. */
    char why[200];
    int g = jgram_feed(c->gram, rec, why, sizeof why);
    if (g != 0) {
        if (g < 0) {
            cJSON_Delete(rec);
            return err_set(e, KBV_ENOMEM, "journal grammar: %s", why);
        }
        note_tamper(c, why, line, len);
        cJSON_Delete(rec);
        return 0;
    }
    if (strcmp(type, KBV_REC_STATUS) == 0) {
        cJSON_Delete(c->status);
        c->status = rec;
        /* All results are in: the worker only has to exit now. */
        if (c->child) super_shorten_deadline(c->child, 30);
        return 0;
    }
    /* What the worker was doing, for the detail of a later timeout. */
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(rec, "dist");
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(rec, KBV_K_PROBE);
    const cJSON *va = cJSON_GetObjectItemCaseSensitive(rec, KBV_K_VARIANT);
    snprintf(c->last, sizeof c->last, "%s%s%s", type,
             cJSON_IsString(d) ? " " : cJSON_IsString(pr) ? " " : cJSON_IsString(va) ? " " : "",
             cJSON_IsString(d) ? d->valuestring
             : cJSON_IsString(pr) ? pr->valuestring
             : cJSON_IsString(va) ? va->valuestring : "");
    int rc = jnl_append(c->jw, rec, e);
    cJSON_Delete(rec);
    c->records++;
    return rc;
}

static const char *signal_name(int s)
{
    switch (s) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    default: return "signal";
    }
}

/* The status of a finished pair from what the worker said and how it ended. */
static void decide_status(const pair_ctx *c, const super_result *r, double timeout_s,
                          const char **status, char *detail, size_t n)
{
    const cJSON *ws = c->status ? cJSON_GetObjectItemCaseSensitive(c->status, KBV_K_STATUS) : NULL;
    const cJSON *wd = c->status ? cJSON_GetObjectItemCaseSensitive(c->status, KBV_K_DETAIL) : NULL;
    const char *tail = r->err_tail[0] ? r->err_tail : r->out_tail;
    /* Only the last 1.5 KB of output goes into the journal. */
    size_t tl = strlen(tail);
    if (tl > 1536) tail += tl - 1536;
    if (cJSON_IsString(ws)) {
        /* The worker's own word: it had all its results when it sent it.  How
         * it ended afterwards (a candidate's destructor crashing at exit, a
         * slow context teardown) is noted, not held against the results. */
        *status = ws->valuestring;
        const char *wdt = cJSON_IsString(wd) ? wd->valuestring : "";
        char after[128] = "";
        if (r->timed_out)
            snprintf(after, sizeof after, " (the worker then did not exit and was killed)");
        else if (r->signo > 0)
            snprintf(after, sizeof after, " (the worker then ended by %s)", signal_name(r->signo));
        if (strcmp(*status, "ok") == 0)
            snprintf(detail, n, "%s%s", wdt, after);
        else
            snprintf(detail, n, "%s%s%s%s", wdt, after, tail[0] ? "; output: " : "", tail);
    } else if (r->timed_out) {
        *status = "timeout";
        snprintf(detail, n, "no result within %.0f s (killed); last record: %s%s%s", timeout_s,
                 c->last[0] ? c->last : "none", tail[0] ? "; output: " : "", tail);
    } else if (r->signo > 0) {
        *status = "crash";
        snprintf(detail, n, "worker killed by %s (%d) %s%s%s%s", signal_name(r->signo), r->signo,
                 c->last[0] ? "after " : "before its first record", c->last, tail[0] ? "; output: " : "",
                 tail);
    } else {
        *status = "crash";
        snprintf(detail, n, "worker exited with status %d without a result, %s%s%s%s", r->code,
                 c->last[0] ? "after " : "before its first record", c->last, tail[0] ? "; output: " : "",
                 tail);
    }
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void rm_tree(const char *path) { nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* Runs the worker in a one-shot mode and returns the object it printed. */
static int worker_oneshot(const char *worker, const char *mode, const char *scratch_root,
                          const char *gpu, double timeout_s, char *const extra[], cJSON **out,
                          kbv_err *e)
{
    *out = NULL;
    char scratch[PATH_MAX];
    snprintf(scratch, sizeof scratch, "%s/%s", scratch_root, mode + 2);
    int rc = afile_mkdirs(scratch, e);
    if (rc) return rc;
    char *argv[32];
    int k = 0;
    argv[k++] = (char *)worker;
    argv[k++] = (char *)mode;
    for (int i = 0; extra && extra[i] && k < 30; i++) argv[k++] = extra[i];
    argv[k] = NULL;
    unsigned char key[CHAN_KEY_LEN];
    rc = chan_new_key(key, e);
    if (rc) return rc;
    super_spec sp = {worker, argv, scratch, gpu, timeout_s, 64ull << 20, key};
    super_child *ch = NULL;
    rc = super_start(&sp, &ch, e);
    if (rc) return rc;
    pair_ctx c = {0};
    super_result r;
    rc = super_finish(ch, on_line, &c, &r, e);
    rm_tree(scratch);
    if (rc) {
        cJSON_Delete(c.single);
        return rc;
    }
    if (!c.single && c.info) {
        c.single = c.info;
        c.info = NULL;
    }
    cJSON_Delete(c.info);
    const cJSON *err = c.single ? cJSON_GetObjectItemCaseSensitive(c.single, "error") : NULL;
    if (!c.single || cJSON_IsString(err) || !r.exited || r.code != 0) {
        rc = err_set(e, KBV_ERUNTIME, "kbv-worker %s failed (%s%s): %s%s", mode,
                     r.timed_out ? "timed out" : r.signo ? signal_name(r.signo) : "exit status",
                     r.timed_out || r.signo ? "" : r.code ? " non-zero" : " 0",
                     cJSON_IsString(err) ? err->valuestring : "", r.err_tail);
        cJSON_Delete(c.single);
        return rc;
    }
    *out = c.single;
    return 0;
}

/* --- the run ------------------------------------------------------------------ */

typedef struct {
    copts *o;
    plan pl;
    build_item *items;     /* one per pair, src NULL for missing */
    char run_dir[PATH_MAX];
    char journal[PATH_MAX + 32];
    char worker[PATH_MAX + 32];
    char scratch_root[PATH_MAX];
    cJSON *device;
    cJSON *manifest;
    jnl_writer *jw;
    jgram *gram;           /* the grammar of the worker records of this run */
    pins_table pins;       /* --pins, loaded (empty without) */
    sandbox_support sandbox; /* what a worker holds (choose_sandbox); zeros: none */
    char sandbox_note[320];  /* why none, under auto */
    resume_done done;
    log_progress prog;
    long n_done;
} run;

/* The worker's --sandbox: what collect's trial found it can hold. */
static char *worker_sandbox(const run *R)
{
    if (!R->sandbox.landlock_abi && !R->sandbox.seccomp) return "off";
    return !strcmp(R->o->sandbox, "require") ? "require" : "auto";
}

static int run_pair_start(run *R, int pi, const char *gpu, super_child **ch, pair_ctx *pc,
                          char *scratch, size_t sn, kbv_err *e)
{
    const plan_pair *pp = &R->pl.pairs[pi];
    const build_item *b = &R->items[pi];
    snprintf(scratch, sn, "%s/pair-%d", R->scratch_root, pi);
    int rc = afile_mkdirs(scratch, e);
    if (rc) return rc;
    const cJSON *dev = R->device;
    double copy = 0, f32 = 0, t32 = 0;
    const cJSON *v;
    if ((v = cJSON_GetObjectItemCaseSensitive(dev, "copy_bandwidth_gbps")) && cJSON_IsNumber(v)) copy = v->valuedouble;
    if ((v = cJSON_GetObjectItemCaseSensitive(dev, "fp32_tflops")) && cJSON_IsNumber(v)) f32 = v->valuedouble;
    if ((v = cJSON_GetObjectItemCaseSensitive(dev, "tf32_tflops")) && cJSON_IsNumber(v)) t32 = v->valuedouble;
    static char a_seed[32], a_trials[32], a_atol[32], a_rtol[32], a_copy[32], a_f32[32], a_t32[32],
        a_max[32];
    static char a_pre[64];
    /* The strings are copied by exec in the child before this function runs
     * again, so static buffers are safe here. */
    snprintf(a_seed, sizeof a_seed, "%llu", R->o->seed);
    snprintf(a_trials, sizeof a_trials, "%ld", R->o->trials);
    int bf16 = R->pl.sets[pp->set].bf16;
    snprintf(a_atol, sizeof a_atol, "%.17g", bf16 ? COPTS_BF16_ATOL : R->o->atol);
    snprintf(a_rtol, sizeof a_rtol, "%.17g", bf16 ? COPTS_BF16_RTOL : R->o->rtol);
    snprintf(a_copy, sizeof a_copy, "%.17g", copy);
    snprintf(a_f32, sizeof a_f32, "%.17g", f32);
    snprintf(a_t32, sizeof a_t32, "%.17g", t32);
    snprintf(a_max, sizeof a_max, "%.17g", R->o->max_time_s);
    cstat_rule rule;
    cstat_rule_default(&rule);
    if (R->o->preroll) cstat_parse_preroll(R->o->preroll, &rule);
    snprintf(a_pre, sizeof a_pre, "%.17g:%d:%d", rule.preroll_ms, rule.preroll_min, rule.preroll_max);
    const char *pins = pins_for(&R->pins, pp->p->id);
    char *argv[] = {R->worker, "--run", "--so", b->so_path, "--problem", (char *)pp->p->id,
                    "--seed", a_seed, "--trials", a_trials, "--atol", a_atol, "--rtol", a_rtol,
                    "--copy-gbps", a_copy, "--fp32-tflops", a_f32, "--tf32-tflops", a_t32,
                    "--max-time", a_max, "--preroll", a_pre, "--precision", bf16 ? "bf16" : "fp32",
                    "--sandbox", worker_sandbox(R), pins ? "--pins" : NULL,
                    (char *)pins, NULL};
    /* A key of its own for every pair (chan.h). */
    unsigned char key[CHAN_KEY_LEN];
    rc = chan_new_key(key, e);
    if (rc) return rc;
    super_spec sp = {R->worker, argv, scratch, gpu, R->o->timeout_s, 256ull << 20, key};
    memset(pc, 0, sizeof *pc);
    pc->jw = R->jw;
    pc->gram = R->gram;
    pc->set = R->pl.sets[pp->set].name;
    pc->problem = pp->p->id;
    pc->copy_gbps = copy;
    pc->tf32_tflops = t32;
    rc = super_start(&sp, ch, e);
    if (!rc) pc->child = *ch;
    return rc;
}

/* Appends the build and static records of pair pi; returns 1 when the pair
 * is finished already (missing or not built) with its status appended. */
static int pair_prologue(run *R, int pi, kbv_err *e)
{
    const plan_pair *pp = &R->pl.pairs[pi];
    const char *set = R->pl.sets[pp->set].name;
    const build_item *b = &R->items[pi];
    cJSON *rec;
    int rc;
    if (!pp->src) {
        char detail[4400];
        snprintf(detail, sizeof detail, "no %s/%s.cu", R->pl.sets[pp->set].dir, pp->p->id);
        rec = rec_status(set, pp->p->id, "missing", detail);
        rc = rec ? jnl_append(R->jw, rec, e) : err_set(e, KBV_ENOMEM, "out of memory");
        cJSON_Delete(rec);
        return rc ? rc : 1;
    }
    rec = rec_build(set, pp->p->id, b);
    rc = rec ? jnl_append(R->jw, rec, e) : err_set(e, KBV_ENOMEM, "out of memory");
    cJSON_Delete(rec);
    if (rc) return rc;
    if (!b->ok) {
        /* The first lines of the log name the first error. */
        char detail[2048];
        snprintf(detail, sizeof detail, "nvcc failed: %.1900s", b->log ? b->log : "");
        rec = rec_status(set, pp->p->id, "compile-error", detail);
        rc = rec ? jnl_append(R->jw, rec, e) : err_set(e, KBV_ENOMEM, "out of memory");
        cJSON_Delete(rec);
        return rc ? rc : 1;
    }
    rec = rec_static(set, pp->p->id, b);
    rc = rec ? jnl_append(R->jw, rec, e) : err_set(e, KBV_ENOMEM, "out of memory");
    cJSON_Delete(rec);
    return rc;
}

static int pair_epilogue(run *R, int pi, pair_ctx *pc, const super_result *r, kbv_err *e)
{
    const char *status;
    char detail[8192];
    decide_status(pc, r, R->o->timeout_s, &status, detail, sizeof detail);
    const plan_pair *pp = &R->pl.pairs[pi];
    char fl[600];
    if (!strcmp(status, "ok") && floorchk_contradicts(&pc->floor, pp->p, R->pl.sets[pp->set].bf16, pc->copy_gbps,
                                                      pc->tf32_tflops, fl, sizeof fl)) {
        cJSON *t = rec_tamper(pc->set, pc->problem, fl);
        int trc = t ? jnl_append(R->jw, t, e) : err_set(e, KBV_ENOMEM, "out of memory");
        cJSON_Delete(t);
        if (trc) return trc;
    }
    floorchk_free(&pc->floor);
    if (pc->tampered) {
        /* The evidence goes before the status, which ends the pair. */
        char ev[1200];
        snprintf(ev, sizeof ev, "%ld worker line(s) broke the record channel's rules: %s", pc->tampered,
                 pc->evidence);
        cJSON *t = rec_tamper(pc->set, pc->problem, ev);
        int trc = t ? jnl_append(R->jw, t, e) : err_set(e, KBV_ENOMEM, "out of memory");
        cJSON_Delete(t);
        if (trc) return trc;
    }
    cJSON *rec = rec_status(pc->set, pc->problem, status, detail);
    if (rec) cJSON_AddNumberToObject(rec, "seconds", r->seconds);
    int rc = rec ? jnl_append(R->jw, rec, e) : err_set(e, KBV_ENOMEM, "out of memory");
    if (!rc) rc = jnl_sync(R->jw, e);
    /* status may point into pc->status: report before freeing it. */
    if (strcmp(status, "ok") != 0)
        log_info(STAGE, "%s/%s: %s: %.200s", pc->set, pc->problem, status, detail);
    cJSON_Delete(rec);
    cJSON_Delete(pc->status);
    pc->status = NULL;
    return rc;
}

static void build_progress(void *ctx, int done, int total, const char *src)
{
    log_progress *p = ctx;
    (void)total;
    log_progress_step(p, done, src);
}

/* Set by SIGINT/SIGTERM.  A signal handler can only reach a global, so this
 * one flag is process-wide; the pair loop polls it at least once a second
 * and then kills its workers (which live in process groups of their own and
 * would not see a terminal's ^C). */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig) { stop_signal = sig; }

static int run_pairs(run *R, kbv_err *e)
{
    int ng = R->o->n_gpus;
    super_child *ch[MAX_GPUS] = {0};
    pair_ctx pc[MAX_GPUS];
    int pair_of[MAX_GPUS];
    char scratch[MAX_GPUS][PATH_MAX + 32];
    super_line_fn fns[MAX_GPUS];
    void *ctxs[MAX_GPUS];
    for (int g = 0; g < ng; g++) {
        fns[g] = on_line;
        ctxs[g] = &pc[g];
        pair_of[g] = -1;
    }
    int rc = 0, next = 0, running = 0;
    long total = R->pl.n_pairs, work = 0;
    log_progress_start(&R->prog, STAGE, total);
    /* The ETA counts only the pairs that start a worker (resumed and
     * missing ones take no time). */
    for (const plan_pair *pp = R->pl.pairs; pp < R->pl.pairs + R->pl.n_pairs; pp++)
        work += !resume_is_done(&R->done, R->pl.sets[pp->set].name, pp->p->id) && pp->src && R->items[pp - R->pl.pairs].ok;
    log_progress_set_work(&R->prog, work);
    /* From here on the workers are this process's only children: what else
     * turns up as a child is a candidate's stray, ended after each pair. */
    super_guard_parent();
    for (;;) {
        if (stop_signal) {
            rc = err_set(e, KBV_ERUNTIME, "interrupted by signal %d; continue with --resume",
                         (int)stop_signal);
            break;
        }
        /* Fill idle GPUs with the next pairs that need a worker. */
        for (int g = 0; g < ng && !rc; g++) {
            while (!ch[g] && next < R->pl.n_pairs) {
                int pi = next++;
                const plan_pair *pp = &R->pl.pairs[pi];
                const char *set = R->pl.sets[pp->set].name;
                if (resume_is_done(&R->done, set, pp->p->id)) {
                    R->n_done++;
                    continue;
                }
                char what[512];
                snprintf(what, sizeof what, "%s/%s", set, pp->p->id);
                log_progress_step(&R->prog, R->n_done, what);
                rc = pair_prologue(R, pi, e);
                if (rc < 0) break;
                if (rc == 1) {
                    rc = jnl_sync(R->jw, e);
                    R->n_done++;
                    if (rc) break;
                    continue;
                }
                rc = run_pair_start(R, pi, R->o->gpus[g], &ch[g], &pc[g], scratch[g],
                                    sizeof scratch[g], e);
                if (rc) break;
                pair_of[g] = pi;
                running++;
            }
        }
        if (rc || running == 0) break;
        int g = super_pump(ch, ng, 1.0, fns, ctxs, e);
        if (g == SUPER_NONE) continue;
        if (g < 0) {
            rc = g;
            break;
        }
        super_result r;
        rc = super_finish(ch[g], on_line, &pc[g], &r, e);
        ch[g] = NULL;
        running--;
        super_reap_strays(ch, ng);
        rm_tree(scratch[g]);
        if (!rc) rc = pair_epilogue(R, pair_of[g], &pc[g], &r, e);
        floorchk_free(&pc[g].floor);
        pair_of[g] = -1;
        R->n_done++;
        log_progress_work_done(&R->prog);
        if (rc) break;
    }
    if (rc) {
        /* Stop the others: their pairs have no status and are redone on
         * --resume. */
        for (int g = 0; g < ng; g++)
            if (ch[g]) {
                super_result r;
                kbv_err ignore;
                super_kill(ch[g]);
                super_finish(ch[g], NULL, NULL, &r, &ignore);
                cJSON_Delete(pc[g].status);
                floorchk_free(&pc[g].floor);
                ch[g] = NULL;
            }
        super_reap_strays(ch, ng);
    }
    R->prog.done = R->n_done;
    log_progress_end(&R->prog);
    return rc;
}

static int make_manifest(run *R, const char *run_id, const char *created, int arch, kbv_err *e)
{
    cJSON *config = manifest_config(R->o, &R->pl);
    if (!config) return err_set(e, KBV_ENOMEM, "out of memory");
    cJSON_AddNumberToObject(config, "arch", arch);
    if (R->pins.doc) {
        /* Which table, and whether it fits this GPU and cuBLAS (else every
         * baseline chooses by timing, as without one). */
        pins_match(&R->pins, R->device);
        cJSON *pj = cJSON_AddObjectToObject(config, "pins");
        cJSON_AddStringToObject(pj, "sha256", R->pins.sha256);
        cJSON_AddBoolToObject(pj, "applies", R->pins.applies);
        if (!R->pins.applies)
            log_info(STAGE, "--pins %s is for another GPU or cuBLAS: baselines choose by timing", R->o->pins);
    }
    cJSON *sb = cJSON_AddObjectToObject(config, "sandbox");
    char held[64];
    cJSON_AddStringToObject(sb, "mode", R->o->sandbox);
    cJSON_AddStringToObject(sb, "applied", sandbox_describe(&R->sandbox, held, sizeof held));
    cJSON_AddStringToObject(sb, "rule", SANDBOX_RULE);
    if (R->sandbox_note[0]) cJSON_AddStringToObject(sb, "refused", R->sandbox_note);
    int rc = manifest_build(run_id, created, R->device, config, &R->pl, &R->manifest, e);
    cJSON_Delete(config);
    if (rc) return rc;
    if (R->o->shard_n > 1) {
        char sh[64];
        snprintf(sh, sizeof sh, "%d/%d", R->o->shard_i, R->o->shard_n);
        cJSON_AddStringToObject(R->manifest, "shard", sh);
    }
    if (R->o->build_only) cJSON_AddBoolToObject(R->manifest, "build_only", 1);
    return 0;
}

/* The run folder: RUN_DIR of an interrupted run (--resume: its manifest in
 * *old_m, owned by the caller, and its run id and creation time) or a new
 * one with a fresh id, and the scratch folder of the workers. */
static int open_run_dir(run *R, cJSON **old_m, char *run_id, size_t run_id_len, char *created, size_t created_len,
                        kbv_err *e)
{
    const copts *o = R->o;
    int rc;
    if (o->resume) {
        snprintf(R->run_dir, sizeof R->run_dir, "%s", o->out);
        char mp[PATH_MAX + 32];
        snprintf(mp, sizeof mp, "%s/manifest.json", R->run_dir);
        rc = jio_load(mp, old_m, e);
        if (rc) {
            err_prefix(e, "--resume");
            return rc;
        }
        const cJSON *rid = cJSON_GetObjectItemCaseSensitive(*old_m, "run_id");
        const cJSON *cu = cJSON_GetObjectItemCaseSensitive(*old_m, "created_utc");
        snprintf(run_id, run_id_len, "%s", cJSON_IsString(rid) ? rid->valuestring : "unknown");
        snprintf(created, created_len, "%s", cJSON_IsString(cu) ? cu->valuestring : "");
    } else {
        rc = manifest_run_id(run_id, run_id_len, e);
        if (rc) return rc;
        manifest_utc_now(created, created_len);
        if (o->out) snprintf(R->run_dir, sizeof R->run_dir, "%s", o->out);
        else snprintf(R->run_dir, sizeof R->run_dir, "runs/%s", run_id);
        char jp[PATH_MAX + 32];
        snprintf(jp, sizeof jp, "%s/samples.jsonl", R->run_dir);
        if (access(jp, F_OK) == 0) {
            rc = err_set(e, KBV_EUSAGE, "%s already holds a journal; use --resume or another --out",
                         R->run_dir);
            return rc;
        }
    }
    rc = afile_mkdirs(R->run_dir, e);
    if (rc) return rc;
    snprintf(R->journal, sizeof R->journal, "%s/samples.jsonl", R->run_dir);
    snprintf(R->scratch_root, sizeof R->scratch_root, "%s/kbv-%s-XXXXXX",
             getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", run_id);
    if (!mkdtemp(R->scratch_root)) {
        rc = err_set(e, KBV_ERUNTIME, "%s: %s", R->scratch_root, strerror(errno));
        R->scratch_root[0] = 0;
        return rc;
    }

    return 0;
}

/* What a worker can deny itself here (R->sandbox): what the kernel
 * offers, tried in a child, then a worker that starts CUDA under it (the
 * driver's start is what a kernel rule can break).  Under auto a refusal
 * is logged and noted in the manifest, and the workers run without;
 * under require it is the error. */
static int choose_sandbox(run *R, kbv_err *e)
{
    const copts *o = R->o;
    int require = !strcmp(o->sandbox, "require");
    if (!strcmp(o->sandbox, "off")) return 0;
    int rc = sandbox_try(R->scratch_root, require, &R->sandbox, e);
    if (!rc && !o->build_only && (R->sandbox.landlock_abi || R->sandbox.seccomp)) {
        char *extra[] = {"--sandbox", worker_sandbox(R), NULL};
        cJSON *info = NULL;
        rc = worker_oneshot(R->worker, "--device-info", R->scratch_root, o->gpus[0], 120, extra, &info, e);
        cJSON_Delete(info);
        if (rc) err_prefix(e, "CUDA under the worker sandbox");
    }
    if (rc && require) return rc;
    if (rc) {
        log_info(STAGE, "no worker sandbox: %s", e->msg);
        snprintf(R->sandbox_note, sizeof R->sandbox_note, "%s", e->msg);
        memset(&R->sandbox, 0, sizeof R->sandbox);
    }
    return 0;
}

/* The device's compute capability (for -arch, where *arch is 0): from a
 * one-shot worker when resuming old_m (its manifest has the calibration;
 * resume_note_gpu), else from the first line of the calibrating worker
 * *calib, started here and left running while the candidates build (its
 * context calib_ctx); *failed: it ended without its device line. */
static int start_device(run *R, const cJSON *old_m, super_child **calib, pair_ctx *calib_ctx, int *arch,
                        int *failed, kbv_err *e)
{
    const copts *o = R->o;
    int rc;
    if (old_m) {
        cJSON *info = NULL;
        rc = worker_oneshot(R->worker, "--device-info", R->scratch_root, o->gpus[0], 120, NULL, &info, e);
        if (rc) return rc;
        const cJSON *cc = cJSON_GetObjectItemCaseSensitive(info, "cc");
        if (!*arch && cJSON_IsNumber(cc)) *arch = cc->valueint;
        resume_note_gpu(old_m, info);
        cJSON_Delete(info);
    } else {
        /* One worker process calibrates; its first line is the compute
         * capability, and the builds start as soon as it is there. */
        char sdir[PATH_MAX + 32];
        snprintf(sdir, sizeof sdir, "%s/calibrate", R->scratch_root);
        if ((rc = afile_mkdirs(sdir, e))) return rc;
        static char *cargv[3];
        cargv[0] = R->worker;
        cargv[1] = "--calibrate";
        cargv[2] = NULL;
        unsigned char key[CHAN_KEY_LEN];
        rc = chan_new_key(key, e);
        if (rc) return rc;
        super_spec sp = {R->worker, cargv, sdir, o->gpus[0], 300, 64ull << 20, key};
        rc = super_start(&sp, calib, e);
        if (rc) return rc;
        super_line_fn fn1[1] = {on_line};
        void *ctx1[1] = {calib_ctx};
        while (!calib_ctx->info) {
            int g = super_pump(calib, 1, 0.05, fn1, ctx1, e);
            if (g == SUPER_NONE) continue;
            if (g < 0) rc = g;
            break; /* ended without a device-info line: reported below */
        }
        if (rc) return rc;
        const cJSON *cc = calib_ctx->info ? cJSON_GetObjectItemCaseSensitive(calib_ctx->info, "cc") : NULL;
        if (!*arch && cJSON_IsNumber(cc)) *arch = cc->valueint;
        /* The worker failed: its error is reported when it is finished. */
        if (!cJSON_IsNumber(cc)) *failed = 1;
    }
    return 0;
}

/* A resumed run must be the same run: checked before anything in the
 * journal changes; then the journal loses the records of unfinished pairs
 * and R->done lists the finished ones. */
static int resume_check(run *R, const cJSON *old_m, const char *run_id, const char *created, int arch, kbv_err *e)
{
    int rc;
    if (!R->device) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(old_m, "device");
        R->device = d ? cJSON_Duplicate(d, 1) : cJSON_CreateObject();
    }
    rc = make_manifest(R, run_id, created, arch, e);
    if (rc) return rc;
    char why[512];
    if (!manifest_compatible(old_m, R->manifest, why, sizeof why)) {
        return err_set(e, KBV_EINPUT, "--resume %s: %s; start a new run instead", R->run_dir, why);
    }
    cJSON_Delete(R->manifest);
    R->manifest = NULL;
    resume_stats st;
    rc = resume_prepare(R->journal, &R->done, &st, e);
    if (rc) return rc;
    log_info(STAGE, "resume: %d pairs done; %ld records of unfinished pairs dropped%s", R->done.n,
             st.dropped, st.torn ? ", and a torn last line" : "");
    return 0;
}

/* Builds the candidates of the pairs still to run, in parallel and cached,
 * and scans each object (R->items, one per pair, owns the results). */
static int build_candidates(run *R, const char *inc, const char *cache, int arch, kbv_err *e)
{
    int rc;
    int n_src = 0;
    R->items = calloc((size_t)(R->pl.n_pairs > 0 ? R->pl.n_pairs : 1), sizeof *R->items);
    build_item *todo = calloc((size_t)(R->pl.n_pairs > 0 ? R->pl.n_pairs : 1), sizeof *todo);
    int *map = calloc((size_t)(R->pl.n_pairs > 0 ? R->pl.n_pairs : 1), sizeof *map);
    if (!R->items || !todo || !map) {
        free(todo);
        free(map);
        return err_set(e, KBV_ENOMEM, "out of memory");
    }
    for (int i = 0; i < R->pl.n_pairs; i++) {
        R->items[i].src = R->pl.pairs[i].src;
        if (!R->pl.pairs[i].src) continue;
        if (R->o->resume && resume_is_done(&R->done, R->pl.sets[R->pl.pairs[i].set].name, R->pl.pairs[i].p->id))
            continue;
        todo[n_src].src = R->pl.pairs[i].src;
        map[n_src++] = i;
    }
    {
        build_cfg bc = {build_find_nvcc(), inc, arch, cache, (int)R->o->jobs, 600};
        log_progress bp;
        log_progress_start(&bp, "collect: build", n_src);
        rc = build_run(&bc, todo, n_src, build_progress, &bp, e);
        log_progress_end(&bp);
        /* R->items owns the results from here on. */
        for (int k = 0; k < n_src; k++) R->items[map[k]] = todo[k];
        /* A failed scan (no nm here, say) loses the flags, not the run. */
        for (int k = 0; !rc && k < n_src; k++) {
            kbv_err se = {0};
            if (R->items[map[k]].ok && build_scan(&R->items[map[k]], &se))
                log_warn(STAGE, "static scan of %s: %s", R->items[map[k]].src, se.msg);
        }
        free(todo);
        free(map);
    }
    return rc;
}

/* Ends the calibrating worker (killed when rc already says the run
 * failed) and takes its device record into R->device; returns the run's
 * status. */
static int finish_calibration(run *R, super_child *calib, pair_ctx *calib_ctx, int rc, kbv_err *e)
{
    super_result r;
    if (rc) super_kill(calib);
    int rc2 = super_finish(calib, on_line, calib_ctx, &r, e);
    if (!rc && !rc2) {
        const cJSON *err = calib_ctx->single ? cJSON_GetObjectItemCaseSensitive(calib_ctx->single, "error") : NULL;
        if (!calib_ctx->single || cJSON_IsString(err) || !r.exited || r.code != 0)
            rc = err_set(e, KBV_ERUNTIME, "kbv-worker --calibrate failed: %s%s",
                         cJSON_IsString(err) ? err->valuestring : "", r.err_tail);
        else {
            cJSON_DeleteItemFromObjectCaseSensitive(calib_ctx->single, KBV_K_TYPE);
            R->device = calib_ctx->single;
            calib_ctx->single = NULL;
        }
    } else if (!rc) {
        rc = rc2;
    }
    cJSON_Delete(calib_ctx->single);
    cJSON_Delete(calib_ctx->info);
    return rc;
}

static int collect_main(copts *o, kbv_err *e)
{
    run R;
    memset(&R, 0, sizeof R);
    R.o = o;
    char here[PATH_MAX], inc[PATH_MAX];
    char cache[PATH_MAX];
    cJSON *old_m = NULL;
    int rc = self_dir(here, sizeof here, e);
    if (rc) return rc;
    snprintf(R.worker, sizeof R.worker, "%s/kbv-worker", here);

    /* The inputs first: a bad candidate folder is the user's to fix, and is
     * said before any GPU work. */
    rc = plan_make(&R.pl, o->suite, o->cand_dirs, o->n_dirs, o->glob, o->shard_i, o->shard_n, o->precision, e);
    if (rc) return rc;
    /* A run folder inside an input would change the input it measures (and
     * a later collect would take the run for a set). */
    for (int s = 0; o->out && s < R.pl.n_sets + o->n_dirs; s++) {
        const char *in = s < R.pl.n_sets ? R.pl.sets[s].dir : o->cand_dirs[s - R.pl.n_sets];
        if (cli_path_inside(o->out, in)) {
            rc = err_set(e, KBV_EUSAGE, "--out %s lies inside the candidate folder %s; choose a folder outside "
                         "the inputs", o->out, in);
            goto out;
        }
    }
    if (o->pins && (rc = pins_load(o->pins, &R.pins, e))) goto out;
    if (!o->build_only && access(R.worker, X_OK) != 0) {
        rc = err_set(e, KBV_ERUNTIME, "%s: not found (built only where nvcc is)", R.worker);
        goto out;
    }
    rc = build_find_include(here, inc, sizeof inc, e);
    if (rc) goto out;
    rc = build_cache_dir(cache, sizeof cache, e);
    if (rc) goto out;
    /* Workers run in folders of their own: every path they get is absolute. */
    rc = afile_mkdirs(cache, e);
    if (rc) goto out;
    {
        char abs[PATH_MAX];
        if (realpath(cache, abs)) snprintf(cache, sizeof cache, "%s", abs);
    }

    /* The run folder. */
    char run_id[64];
    char created[32];
    rc = open_run_dir(&R, &old_m, run_id, sizeof run_id, created, sizeof created, e);
    if (rc) goto out;
    if ((rc = choose_sandbox(&R, e))) goto out;

    /* The device: its compute capability first (for -arch), then the
     * calibration, which runs while the candidates build. */
    int arch = (int)o->arch, calib_failed = 0;
    super_child *calib = NULL;
    pair_ctx calib_ctx = {0};
    if (!o->build_only) {
        rc = start_device(&R, old_m, &calib, &calib_ctx, &arch, &calib_failed, e);
        if (rc || calib_failed) goto out_calib;
    }
    if (!arch) arch = 90;
    if (old_m && (rc = resume_check(&R, old_m, run_id, created, arch, e))) goto out_calib;

    /* Builds, in parallel, cached. */
    if ((rc = build_candidates(&R, inc, cache, arch, e))) goto out_calib;

out_calib:
    if (calib) rc = finish_calibration(&R, calib, &calib_ctx, rc, e);
    if (rc) goto out;

    /* The manifest: new, or the old one checked against this run. */
    if (!o->build_only && !old_m && !R.device) {
        rc = err_set(e, KBV_ERUNTIME, "no calibration of the device");
        goto out;
    }
    if (!R.device) {
        R.device = cJSON_CreateObject();
        cJSON_AddStringToObject(R.device, "name", "none (--build-only)");
    }
    rc = make_manifest(&R, run_id, created, arch, e);
    if (rc) goto out;
    if (!old_m) {
        char mp[PATH_MAX + 32];
        snprintf(mp, sizeof mp, "%s/manifest.json", R.run_dir);
        rc = jio_save(mp, R.manifest, e);
        if (rc) goto out;
    }

    /* The journal. */
    rc = jnl_open_append(R.journal, &R.jw, e);
    if (!rc) rc = jgram_new(&R.gram, e);
    if (rc) goto out;

    if (o->build_only) {
        for (int i = 0; !rc && i < R.pl.n_pairs; i++) {
            const plan_pair *pp = &R.pl.pairs[i];
            const char *set = R.pl.sets[pp->set].name;
            if (resume_is_done(&R.done, set, pp->p->id)) continue;
            int r1 = pair_prologue(&R, i, e);
            if (r1 < 0) rc = r1;
        }
        if (!rc) rc = jnl_sync(R.jw, e);
    } else {
        rc = run_pairs(&R, e);
    }

out:
    jgram_free(R.gram);
    if (R.jw) {
        kbv_err ce;
        int rc2 = jnl_close_writer(R.jw, &ce);
        if (!rc && rc2) {
            *e = ce;
            rc = rc2;
        }
        /* Seal what was measured: SHA256SUMS gets the lines of the manifest
         * and the journal, which analyze and render never rewrite.  An
         * interrupted run is sealed by the --resume that completes it. */
        if (!rc && !o->build_only) rc = manifest_record_choices(R.run_dir, e);
        if (!rc) rc = sums_seal_raw(R.run_dir, e);
        if (!rc) log_info(STAGE, "wrote %s", R.run_dir);
    }
    if (R.scratch_root[0]) rm_tree(R.scratch_root);
    if (R.items)
        for (int i = 0; i < R.pl.n_pairs; i++) build_item_clear(&R.items[i]);
    free(R.items);
    cJSON_Delete(R.device);
    cJSON_Delete(R.manifest);
    cJSON_Delete(old_m);
    resume_done_free(&R.done);
    pins_free(&R.pins);
    plan_free(&R.pl);
    return rc;
}

int main(int argc, char **argv)
{
    copts o;
    kbv_err e = {0};
    int done = 0;
    int rc = copts_parse(argc, argv, &o, &done, &e);
    if (rc) {
        err_report(STAGE, &e);
        return err_exit_status(rc);
    }
    if (done) return 0;
    /* A dying worker must not take collect with it through its pipe. */
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    rc = collect_main(&o, &e);
    if (rc) {
        err_report(STAGE, &e);
        return err_exit_status(rc);
    }
    return 0;
}
