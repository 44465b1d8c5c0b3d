/* convpin.h - a convolution's kernel choice as pin text (DESIGN 5,
 * "Pins"), in pure C so that the CPU tests check what the GPU baselines
 * write and read back.
 *
 * A baseline's convolutions choose their cuDNN algorithm (or graph plan,
 * or kbv's direct depthwise kernel) by timing; the choice is journalled as
 * one pin per convolution shape and role, in the same ';'-joined text as
 * the GEMM pins (base_pins), and a later run handed that text
 * (collect --pins) makes the same choice without searching or timing:
 *
 *     conv.<role>:<geometry>=<choice>
 *
 * role `f` (the timed fp32 baseline), `t` (tf32), `r` (the fp32
 * correctness reference, always an exact algorithm) or `b` (the bf16
 * baseline, on bfloat16 descriptors); geometry the
 * comma-separated numbers of conv_geom (transposed, nd, n, cin, cout,
 * groups, then in, out, k, s, p, d for each spatial axis); choice `a<algo>m<math>`
 * (a legacy algorithm and its cudnnMathType_t), `g<plan>e<engine>/a<algo>m<math>`
 * (graph plan <plan> of the shape's heuristic list, whose engine must
 * still be <engine>, with its legacy fallback), or `d` (kbv's direct
 * depthwise kernel).
 */
#ifndef KBV_CONVPIN_H
#define KBV_CONVPIN_H

#include <stddef.h>

/* One convolution's shape, as the baselines' runners key it. */
typedef struct conv_geom {
    int nd;                   /* spatial dimensions, 1 to 3 */
    int transposed;
    long long n, cin, cout, groups;
    long long in[3], out[3];  /* spatial extents, nd of them */
    int k[3], s[3], p[3], d[3];
} conv_geom;

typedef enum { CONVPIN_LEGACY = 0, CONVPIN_GRAPH, CONVPIN_DIRECT } convpin_kind;

typedef struct {
    convpin_kind kind;
    int algo, math;           /* the legacy algorithm (a graph plan's fallback) */
    int plan;                 /* CONVPIN_GRAPH: the plan's index */
    long long engine;         /* CONVPIN_GRAPH: its engine id */
} convpin_choice;

/* Writes the pin of role ('f', 't', 'r', 'b') for g into buf (len bytes, NUL
 * terminated).  Returns its length, or -1 when it does not fit or the
 * role is unknown (buf then holds ""). */
int convpin_format(char *buf, size_t len, char role, const conv_geom *g, const convpin_choice *c);

/* Looks for role's pin for g among the ';'-joined entries of text (NULL:
 * none); entries of other kinds (GEMM pins) and other shapes are skipped.
 * Returns 1 with *c filled, 0 when there is none, -1 when an entry for
 * this role and shape does not parse. */
int convpin_find(const char *text, char role, const conv_geom *g, convpin_choice *c);

#endif
