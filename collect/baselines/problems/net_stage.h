/* net_stage.h - a network's parameters as the level-3 interpreter
 * (net.cu) reads them: in place in the packed `params` input, except the
 * parts that the packing leaves less aligned than the library call reading
 * them wants, which are copied each call into a buffer where each starts
 * on 256 bytes (net_stage.cu says why).  C++, private to
 * collect/baselines/problems/.
 *
 * The interpreter's state owns one net_stage: net_stage_create fills it,
 * net_stage_run makes `at` for each call, net_stage_destroy frees its
 * device buffers.
 */
#ifndef KBV_NET_STAGE_H
#define KBV_NET_STAGE_H

#include "base_impl.h"

extern "C" {
#include "net.h"
}

struct net_stage {
    int need[2 * NET_MAX_LAYERS];         /* the byte alignment part i's library call wants, or 0 */
    const void *at[2 * NET_MAX_LAYERS];   /* where part i is read this call: in params or in copy */
    const void *params;                   /* the params and element size `at` was made for */
    int elem;
    int seg_class;                        /* element size and params % 256 the device table is for, or 0 */
    long long *seg;                       /* device: source offset, copy offset, bytes per staged part */
    int n_seg;
    long long seg_most;                   /* the largest staged part, bytes */
    void *copy;                           /* the staged parts, each on 256 bytes */
    size_t copy_bytes;
};

/* The alignment each part of program sp (walked into pl) needs, and the
 * device table for the parts to stage; st is zeroed first.  0 or a
 * negative KBV_E* code (what was allocated stays for net_stage_destroy). */
int net_stage_create(base_ctx *b, const net_spec *sp, const net_plan *pl, net_stage *st, kbv_err *e);

/* Makes st->at for this call's params (elements of elem bytes: 4 float,
 * 2 bfloat16) and enqueues on s the copy of the parts to stage.  0 or a
 * negative KBV_E* code. */
int net_stage_run(base_ctx *b, const net_plan *pl, net_stage *st, const void *params, int elem, cudaStream_t s,
                  kbv_err *e);

/* Frees st's device buffers (st itself is the caller's). */
void net_stage_destroy(net_stage *st);

#endif
