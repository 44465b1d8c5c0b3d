/* bench_api.c - see bench_api.h.  Builds a kbv_call from the problem's
 * specification and the caller's pointers and forwards to gpu.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "bench_api.h"
#include "err.h"
#include "gpu.h"
#include "suite.h"
#include "suite_host.h"

typedef struct {
    const suite_problem *p;
    base_ctx *ctx;
    kbv_tensor in[32], out[4];
    double attrs[64];
} bench_handle;

static int put_err(const kbv_err *e, char *err, int errlen)
{
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s", e->msg);
    return e->code ? e->code : KBV_ERUNTIME;
}

/* bf16: the float tensors are bfloat16 (the bf16 variant's call). */
static void fill_call(bench_handle *h, void *const *inputs, void *const *outputs, void *stream, int bf16,
                      kbv_call *call)
{
    const suite_problem *p = h->p;
    for (int i = 0; i < p->n_inputs; i++) {
        kbv_tensor *t = &h->in[i];
        t->data = inputs[i];
        t->dtype = bf16 && p->inputs[i].dtype == KBV_F32 ? KBV_BF16 : p->inputs[i].dtype;
        t->ndim = p->inputs[i].ndim;
        memcpy(t->shape, p->inputs[i].shape, sizeof t->shape);
    }
    for (int i = 0; i < p->n_outputs; i++) {
        kbv_tensor *t = &h->out[i];
        t->data = outputs[i];
        t->dtype = bf16 && p->outputs[i].dtype == KBV_F32 ? KBV_BF16 : p->outputs[i].dtype;
        t->ndim = p->outputs[i].ndim;
        memcpy(t->shape, p->outputs[i].shape, sizeof t->shape);
    }
    for (int i = 0; i < p->n_attrs; i++) h->attrs[i] = p->attrs[i].value;
    call->inputs = h->in;
    call->n_inputs = p->n_inputs;
    call->outputs = h->out;
    call->n_outputs = p->n_outputs;
    call->attrs = h->attrs;
    call->n_attrs = p->n_attrs;
    call->stream = (cudaStream_t)stream;
}

int kbvb_gen(const char *id, int index, int dist, unsigned long long seed, int trial, void *dev,
             void *stream, char *err, int errlen)
{
    kbv_err e = { 0, "" };
    const suite_problem *p = suite_find(id);
    if (!p) {
        err_set(&e, KBV_EINPUT, "unknown problem %s", id ? id : "(null)");
        return put_err(&e, err, errlen);
    }
    if (gen_fill(p, index, (suite_dist)dist, seed, trial, dev, (cudaStream_t)stream, &e))
        return put_err(&e, err, errlen);
    return 0;
}

int kbvb_available(const char *id, char *why, int n)
{
    const suite_problem *p = suite_find(id);
    const char *reason = "unknown problem";
    int ok = p ? base_available(p, &reason) : 0;
    if (ok && p) ok = suite_host_available(p, &reason);
    if (!ok && why && n > 0) snprintf(why, (size_t)n, "%s", reason ? reason : "unavailable");
    return ok;
}

int kbvb_create(const char *id, void *const *inputs, void *const *outputs, void *stream,
                void **handle, char *err, int errlen)
{
    kbv_err e = { 0, "" };
    *handle = NULL;
    const suite_problem *p = suite_find(id);
    if (!p) {
        err_set(&e, KBV_EINPUT, "unknown problem %s", id ? id : "(null)");
        return put_err(&e, err, errlen);
    }
    if (p->n_inputs > 32 || p->n_outputs > 4 || p->n_attrs > 64) {
        err_set(&e, KBV_EINPUT, "%s: too many tensors for bench_api", id);
        return put_err(&e, err, errlen);
    }
    bench_handle *h = calloc(1, sizeof *h);
    if (!h) {
        err_set(&e, KBV_ENOMEM, "out of memory");
        return put_err(&e, err, errlen);
    }
    h->p = p;
    kbv_call call;
    fill_call(h, inputs, outputs, stream, 0, &call);
    if (base_create(p, &call, NULL, &h->ctx, &e)) {
        free(h);
        return put_err(&e, err, errlen);
    }
    *handle = h;
    return 0;
}

int kbvb_run(void *handle, int variant, void *const *inputs, void *const *outputs, void *stream,
             char *err, int errlen)
{
    kbv_err e = { 0, "" };
    bench_handle *h = handle;
    if (!h) {
        err_set(&e, KBV_EINPUT, "NULL handle");
        return put_err(&e, err, errlen);
    }
    kbv_call call;
    fill_call(h, inputs, outputs, stream, variant == 2, &call);
    base_variant v = variant == 2 ? BASE_BF16 : variant == 1 ? BASE_TF32 : BASE_FP32;
    if ((variant == 3 ? base_run_reference(h->ctx, &call, &e) : base_run(h->ctx, v, &call, &e)))
        return put_err(&e, err, errlen);
    return 0;
}

unsigned long long kbvb_workspace_bytes(void *handle)
{
    bench_handle *h = handle;
    return h ? (unsigned long long)base_workspace_bytes(h->ctx) : 0;
}

const char *kbvb_choice(void *handle, int variant)
{
    bench_handle *h = handle;
    return h ? base_choice(h->ctx, variant == 2 ? BASE_BF16 : variant ? BASE_TF32 : BASE_FP32) : "";
}

void kbvb_destroy(void *handle)
{
    bench_handle *h = handle;
    if (!h) return;
    base_destroy(h->ctx);
    free(h);
}
