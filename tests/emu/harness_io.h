/* harness_io.h - what the CPU harnesses of test_l3_net.py and
 * test_vlad_baseline.py share: raw float32 arrays read from and written to the
 * files the Python side exchanges with them (a short or missing file
 * ends the harness with exit status 2 and a message naming it), bfloat16
 * copies, and the baseline call of x and params to one output. */
#pragma once
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

static std::vector<float> read_f(const char *path, long long n)
{
    std::vector<float> v((size_t)n);
    FILE *f = fopen(path, "rb");
    if (!f || fread(v.data(), 4, (size_t)n, f) != (size_t)n) { fprintf(stderr, "cannot read %s\n", path); exit(2); }
    fclose(f);
    return v;
}

static void write_f(const char *path, const float *p, long long n)
{
    FILE *f = fopen(path, "wb");
    fwrite(p, 4, (size_t)n, f);
    fclose(f);
}

/* a as bfloat16 values (to nearest even). */
static std::vector<__nv_bfloat16> to_bf16(const std::vector<float> &a)
{
    std::vector<__nv_bfloat16> h(a.size());
    for (size_t i = 0; i < a.size(); i++) h[i] = __float2bfloat16_rn(a[i]);
    return h;
}

/* The bfloat16 values of h written as float32. */
static void write_bf16(const char *path, const std::vector<__nv_bfloat16> &h)
{
    std::vector<float> w(h.size());
    for (size_t i = 0; i < h.size(); i++) w[i] = __bfloat162float(h[i]);
    write_f(path, w.data(), (long long)w.size());
}

/* A baseline context and a call of x [xs] and a packed params [np] to
 * one output [ys], their data left for the harness to point at (the
 * harness includes base_stub.h before this file). */
struct emu_call {
    suite_problem prob;
    base_ctx b;
    kbv_err e;
    kbv_tensor in[2], out[1];
    kbv_call c;
};

static void emu_call_init(emu_call *h, const char *id, int op, int sm_count, const int64_t *xs, int xdim, long long np,
                          const int64_t *ys, int ydim)
{
    memset(h, 0, sizeof *h);
    h->prob.id = id;
    h->prob.op = op;
    h->b.p = &h->prob;
    h->b.sm_count = sm_count;
    h->in[0].ndim = xdim;
    for (int a = 0; a < xdim; a++) h->in[0].shape[a] = xs[a];
    h->in[1].ndim = 1;
    h->in[1].shape[0] = np;
    h->out[0].ndim = ydim;
    for (int a = 0; a < ydim; a++) h->out[0].shape[a] = ys[a];
    h->c.inputs = h->in;
    h->c.n_inputs = 2;
    h->c.outputs = h->out;
    h->c.n_outputs = 1;
}

/* Points the call at x, params and y. */
static void emu_call_data(emu_call *h, void *x, void *params, void *y)
{
    h->in[0].data = x;
    h->in[1].data = params;
    h->out[0].data = y;
}
