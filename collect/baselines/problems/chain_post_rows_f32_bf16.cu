/* chain_post_rows_f32_bf16.cu - the row kernels of a first post stage that
 * reads a float tensor (the middle stage's input, chain_post_run_through)
 * through the chain's last elementwise pass, into the bf16 call's output,
 * as the chain's last stage: one of rows_through's four files, which the
 * build compiles side by side (chain_post_impl.h says why).
 */
#include "chain_post_impl.h"

namespace chain_post_k {

void rows_through(const float *src, const ew_args &P, int kind, __nv_bfloat16 *y, const chain_dims &d, int whole,
                  const ew_args &A, long long So, long long Co, cudaStream_t s)
{
    rows_through_kind(src, P, kind, y, d, whole, A, So, Co, s);
}

} /* namespace chain_post_k */
