// naive: diag(A) @ B is a row scaling: C[i, j] = A[i] B[i, j].
// L1_012_matmul_with_diagonal_matrices: out = torch.diag(A) @ B
// Written by scripts/gen-naive-candidates.py from the registry; plain and
// correct rather than fast.
#include "kbv.h"
#include <math.h>
#include <stdint.h>

#define CHECK_LAUNCH() return cudaGetLastError() == cudaSuccess ? 0 : 1

__global__ void row_scale(const float *__restrict__ d, const float *__restrict__ B, float *__restrict__ C,
                          long long N, long long M)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N * M) C[i] = d[i / M] * B[i];
}

extern "C" int kbv_forward(const kbv_call *call)
{
    if (call->n_inputs < 2 || call->n_outputs < 1) return 1;
    const kbv_tensor *a = &call->inputs[0], *b = &call->inputs[1];
    if (a->ndim != 1 || b->ndim != 2 || b->shape[0] != a->shape[0]) return 1;
    long long N = b->shape[0], M = b->shape[1];
    if (N * M == 0) return 0;
    row_scale<<<(unsigned)((N * M + 255) / 256), 256, 0, call->stream>>>(
        (const float *)a->data, (const float *)b->data, (float *)call->outputs[0].data, N, M);
    CHECK_LAUNCH();
}
