/* chain_post_rows_bf16_f32.cu - the row kernels of a first post stage that
 * reads a bfloat16 tensor (a bf16 chain's producer output,
 * chain_post_run16) through the chain's last elementwise pass, into a
 * float tensor (the next stage's input, or the call's float output): one
 * of rows_through's four files, which the build compiles side by side
 * (chain_post_impl.h says why).
 */
#include "chain_post_impl.h"

namespace chain_post_k {

void rows_through(const __nv_bfloat16 *src, const ew_args &P, int kind, float *y, const chain_dims &d, int whole,
                  const ew_args &A, long long So, long long Co, cudaStream_t s)
{
    rows_through_kind(src, P, kind, y, d, whole, A, So, Co, s);
}

} /* namespace chain_post_k */
