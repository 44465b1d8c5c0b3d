/* bf16path.h - how each problem's bf16 baseline runs (DESIGN 5b), decided
 * in pure C from the problem's op and, for a level-2 chain, its spec, so
 * that `kbv list --json` and the CPU tests can enumerate it without CUDA.
 * The baseline dispatcher (collect/baselines/baseline.cu) and the chain
 * family (chain.cu) follow this decision, so the list cannot drift from
 * what runs.
 */
#ifndef KBV_BF16PATH_H
#define KBV_BF16PATH_H

#include "suite.h"

typedef enum {
    /* inputs widened to float, the family's tf32 (or fp32) computation,
     * outputs rounded: parity with PyTorch not claimed */
    BF16_FALLBACK = 0,
    /* the whole computation on bfloat16 tensors as PyTorch runs it */
    BF16_NATIVE,
    /* a level-2 chain whose producer (a linear layer's product, a
     * convolution) runs on the bfloat16 tensors, its later steps in float
     * on a widened intermediate, the output rounded once */
    BF16_NATIVE_PRODUCER
} bf16_path;

/* The path of p's bf16 baseline. */
bf16_path suite_bf16_path(const suite_problem *p);
/* "fallback", "native", "native-producer". */
const char *suite_bf16_path_name(bf16_path k);

#endif
