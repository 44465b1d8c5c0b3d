/* contest.cu - kernel choice by timing, for the baseline families that
 * pick among a library's algorithms (see base_impl.h).
 *
 * Why this shape.  A choice made by timing is only as stable as the
 * timing: with one warm-up and three back-to-back runs per contestant,
 * timed one contestant after the other, two workers of one run picked
 * different cuBLAS kernels for the same tf32 GEMM (13% apart), and the
 * GPU's clock, which drops by up to a quarter when a tensor-core-heavy
 * kernel meets the power limit, moved under the contest.  So contestants
 * are timed like the worker times a variant (cold L2, events), in
 * interleaved rounds (a clock change shifts all of them), by their
 * medians, and the library's own choice keeps its place unless another
 * is clearly faster (base_contest_winner's margin).
 */
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base_impl.h"

namespace {

const int MIN_ROUNDS = 3;
const int MAX_ROUNDS = 7;
/* A contestant this much slower than the fastest in the second warm-up
 * pass cannot win by the margin, whatever the rounds show. */
const float PRUNE = 1.25f;

struct contest_io {
    cudaStream_t s;
    cudaEvent_t ev[2];
    void *flush;
    size_t flush_bytes;
};

/* One timed run of contestant i: flush, event, run, event, wait.  *ms is
 * its time, or -1 when it cannot run.  Only a CUDA error is an error. */
int time_run(base_ctx *b, contest_io *io, base_contestant run, void *ctx, int i, float *ms,
             kbv_err *e)
{
    *ms = -1.0f;
    cudaError_t ce = cudaSuccess;
    if (io->flush) ce = cudaMemsetAsync(io->flush, i & 0xff, io->flush_bytes, io->s);
    if (ce == cudaSuccess) ce = cudaEventRecord(io->ev[0], io->s);
    int bad = ce == cudaSuccess ? run(ctx, i, io->s) : 0;
    if (ce == cudaSuccess) ce = cudaEventRecord(io->ev[1], io->s);
    if (ce == cudaSuccess) ce = cudaEventSynchronize(io->ev[1]);
    float t = 0.0f;
    if (ce == cudaSuccess) ce = cudaEventElapsedTime(&t, io->ev[0], io->ev[1]);
    if (ce != cudaSuccess) return base_cuda_err(e, b, "algorithm timing", ce);
    if (!bad) *ms = t;
    return 0;
}

float median_of(float *x, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && x[j] < x[j - 1]; j--) {
            float tmp = x[j];
            x[j] = x[j - 1];
            x[j - 1] = tmp;
        }
    return n % 2 ? x[n / 2] : 0.5f * (x[n / 2 - 1] + x[n / 2]);
}

} /* namespace */

int base_contest(base_ctx *b, int n, base_contestant run, void *ctx, cudaStream_t s,
                 float budget_ms, float *med, kbv_err *e)
{
    if (n > BASE_CONTEST_MAX) n = BASE_CONTEST_MAX;
    for (int i = 0; i < n; i++) med[i] = -1.0f;
    if (n <= 0) return 0;
    contest_io io = { s, { NULL, NULL }, NULL, 0 };
    if (cudaEventCreate(&io.ev[0]) != cudaSuccess || cudaEventCreate(&io.ev[1]) != cudaSuccess) {
        if (io.ev[0]) cudaEventDestroy(io.ev[0]);
        cudaGetLastError();   /* a failed event creation is not sticky */
        return 0;             /* no timing: every median stays -1 */
    }
    int l2 = 0;
    if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, b->device) == cudaSuccess && l2 > 0) {
        io.flush_bytes = 2 * (size_t)l2;
        if (cudaMalloc(&io.flush, io.flush_bytes) != cudaSuccess) {
            io.flush = NULL;   /* no room: warm runs, still interleaved */
            cudaGetLastError();
        }
    }
    int rc = 0, alive = 0;
    float warm[BASE_CONTEST_MAX], best = -1.0f, round_ms = 0.0f;
    for (int i = 0; i < n; i++) warm[i] = -1.0f;
    /* two warm-up passes; the second's times prune and size the rounds */
    for (int pass = 0; pass < 2 && !rc; pass++)
        for (int i = 0; i < n && !rc; i++) {
            if (pass == 1 && warm[i] < 0.0f) continue;
            rc = time_run(b, &io, run, ctx, i, &warm[i], e);
            if (!rc && pass == 1 && warm[i] >= 0.0f && (best < 0.0f || warm[i] < best)) best = warm[i];
        }
    float x[BASE_CONTEST_MAX][MAX_ROUNDS];
    int ok[BASE_CONTEST_MAX];
    for (int i = 0; i < n; i++) {
        ok[i] = !rc && warm[i] >= 0.0f && warm[i] <= PRUNE * best;
        if (ok[i]) {
            alive++;
            round_ms += warm[i];
        }
    }
    int rounds = MIN_ROUNDS;
    while (rounds < MAX_ROUNDS && (rounds + 1) * round_ms <= budget_ms) rounds++;
    int got[BASE_CONTEST_MAX] = { 0 };
    for (int r = 0; r < rounds && alive > 1 && !rc; r++)
        for (int k = 0; k < n && !rc; k++) {
            int i = (k + r) % n;
            if (!ok[i]) continue;
            float t = -1.0f;
            rc = time_run(b, &io, run, ctx, i, &t, e);
            if (!rc && t >= 0.0f) x[i][got[i]++] = t;
        }
    for (int i = 0; i < n && !rc; i++) {
        if (!ok[i]) continue;
        /* a lone survivor needs no rounds: its warm-up time stands */
        med[i] = alive == 1 ? warm[i] : got[i] > 0 ? median_of(x[i], got[i]) : -1.0f;
    }
    if (io.flush) cudaFree(io.flush);
    cudaEventDestroy(io.ev[0]);
    cudaEventDestroy(io.ev[1]);
    return rc;
}

int base_contest_winner(const float *med, int n)
{
    int fastest = -1;
    for (int i = 0; i < n; i++)
        if (med[i] >= 0.0f && (fastest < 0 || med[i] < med[fastest])) fastest = i;
    if (fastest <= 0 || med[0] < 0.0f) return fastest;
    return med[fastest] < BASE_CONTEST_MARGIN * med[0] ? fastest : 0;
}

void base_append_pin(base_ctx *b, base_variant v, const char *pin)
{
    char *out = b->pins[v == BASE_BF16 ? 2 : v == BASE_TF32 ? 1 : 0];
    size_t at = strlen(out), n = strlen(pin);
    if (at + (at ? 1 : 0) + n + 1 > (size_t)BASE_PINS_LEN) return;
    if (at) out[at++] = ';';
    memcpy(out + at, pin, n + 1);
}

void base_note_choice(base_ctx *b, base_variant v, const char *fmt, ...)
{
    char *c = b->choice[v == BASE_BF16 ? 2 : v == BASE_TF32 ? 1 : 0];
    size_t at = strlen(c);
    if (at > 0 && at + 2 < (size_t)BASE_CHOICE_LEN) {
        memcpy(c + at, "; ", 3);
        at += 2;
    }
    if (at + 1 >= (size_t)BASE_CHOICE_LEN) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c + at, (size_t)BASE_CHOICE_LEN - at, fmt, ap);
    va_end(ap);
}

extern "C" const char *base_choice(const base_ctx *b, base_variant v)
{
    return b ? b->choice[v == BASE_BF16 ? 2 : v == BASE_TF32 ? 1 : 0] : "";
}
