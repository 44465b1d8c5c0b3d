/* spec.h - macros for writing problem tables (collect/suite/problems/ .c files) as
 * rows of data.  Private to the suite: nothing outside collect/ includes it.
 *
 * Shapes are int64_t; write large extents with an LL suffix or through the
 * named constants of each table so that no product overflows int.
 */
#ifndef KBV_SPEC_H
#define KBV_SPEC_H

#include "suite.h"
#include "ops.h"

#define SPEC_NARG(...) SPEC_NARG_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define SPEC_NARG_(a1, a2, a3, a4, a5, a6, a7, a8, n, ...) n
#define SHAPE(...) .ndim = SPEC_NARG(__VA_ARGS__), .shape = { __VA_ARGS__ }

/* Generators: torch.rand, torch.randn, U(-k, k) (Linear and Conv init),
 * a constant (norm weight and bias), integers in [lo, hi). */
#define G_RAND   { SUITE_GEN_UNIFORM, 0.0, 1.0 }
#define G_RANDN  { SUITE_GEN_NORMAL, 0.0, 1.0 }
#define G_U(k)   { SUITE_GEN_UNIFORM, -(k), (k) }
#define G_CONST(v) { SUITE_GEN_CONST, (v), 0.0 }
#define G_INT(lo, hi) { SUITE_GEN_RANDINT, (lo), (hi) }
#define G_SIGN   { SUITE_GEN_SIGN, 0.0, 0.0 }
#define G_RSCALE { SUITE_GEN_UNIFORM_RSCALE, 0.0, 1.0 }
#define G_SYM    { SUITE_GEN_UNIFORM_SYM, 0.0, 1.0 }
#define G_TRIU   { SUITE_GEN_UNIFORM_TRIU, 0.0, 1.0 }
#define G_TRIL   { SUITE_GEN_UNIFORM_TRIL, 0.0, 1.0 }
#define G_SOFTMAX_RSCALE { SUITE_GEN_SOFTMAX_RSCALE, 0.0, 1.0 }
#define G_SOFTMAX { SUITE_GEN_SOFTMAX, 0.0, 1.0 }
#define G_ALT(a, b) { SUITE_GEN_ALTERNATING, (a), (b) }
#define G_ROWSIGN { SUITE_GEN_ROW_SIGNED, 0.0, 1.0 }

#define IN(nm, g, ...) { .name = (nm), .dtype = KBV_F32, SHAPE(__VA_ARGS__), \
                         .role = SUITE_ROLE_INPUT, .gen = g, .fixed_scale = 0 }
/* An input whose values must keep their scale (labels, signs, indices). */
#define IN_FIXED(nm, dt, g, ...) { .name = (nm), .dtype = (dt), SHAPE(__VA_ARGS__), \
                         .role = SUITE_ROLE_INPUT, .gen = g, .fixed_scale = 1 }
#define PARAM(nm, g, ...) { .name = (nm), .dtype = KBV_F32, SHAPE(__VA_ARGS__), \
                         .role = SUITE_ROLE_PARAM, .gen = g, .fixed_scale = 0 }
/* A 0-dimensional parameter (nn.Parameter(torch.tensor(c))). */
#define PARAM0(nm, g) { .name = (nm), .dtype = KBV_F32, .ndim = 0, .shape = { 0 }, \
                        .role = SUITE_ROLE_PARAM, .gen = g, .fixed_scale = 0 }
#define OUT(...) { .name = "out", .dtype = KBV_F32, SHAPE(__VA_ARGS__), \
                   .role = SUITE_ROLE_INPUT, .gen = G_RAND, .fixed_scale = 0 }
#define OUT_SCALAR { .name = "out", .dtype = KBV_F32, .ndim = 0, .shape = { 0 }, \
                   .role = SUITE_ROLE_INPUT, .gen = G_RAND, .fixed_scale = 0 }
#define OUT_I64(...) { .name = "out", .dtype = KBV_I64, SHAPE(__VA_ARGS__), \
                   .role = SUITE_ROLE_INPUT, .gen = G_RAND, .fixed_scale = 0 }

#define INPUTS(...)  .inputs = (const suite_tensor[]){ __VA_ARGS__ }, \
    .n_inputs = (int)(sizeof((const suite_tensor[]){ __VA_ARGS__ }) / sizeof(suite_tensor))
#define OUTPUTS(...) .outputs = (const suite_tensor[]){ __VA_ARGS__ }, \
    .n_outputs = (int)(sizeof((const suite_tensor[]){ __VA_ARGS__ }) / sizeof(suite_tensor))
#define ATTRS(...)   .attrs = (const suite_attr[]){ __VA_ARGS__ }, \
    .n_attrs = (int)(sizeof((const suite_attr[]){ __VA_ARGS__ }) / sizeof(suite_attr))
#define D5(...)      .d5 = (const suite_gen[]){ __VA_ARGS__ }

/* Output extent of a convolution or pooling window along one axis
 * (PyTorch's formula, floor mode), and of a transposed convolution. */
#define CONV_OUT(len, k, s, p, d) (((len) + 2 * (p) - (d) * ((k) - 1) - 1) / (s) + 1)
#define CONVT_OUT(len, k, s, p, d, op) (((len) - 1) * (s) - 2 * (p) + (d) * ((k) - 1) + (op) + 1)

/* PyTorch's default init of Linear and Conv weights and biases,
 * kaiming_uniform(a = sqrt(5)) and its bias rule: U(-1/sqrt(fan_in),
 * 1/sqrt(fan_in)).  GCC and Clang fold __builtin_sqrt of a constant, so
 * the bound stays a constant expression. */
#define G_KAIMING(fan_in) G_U(1.0 / __builtin_sqrt((double)(fan_in)))

/* Each table file exports its rows and their count; suite.c lists the
 * tables. */
#define SUITE_TABLE(name) \
    extern const suite_problem name[]; extern const int name##_count

#define SUITE_COUNT(name) \
    const int name##_count = (int)(sizeof(name) / sizeof(name[0]))

#endif
