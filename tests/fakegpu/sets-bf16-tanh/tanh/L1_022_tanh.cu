/* tanh on bfloat16, correctly rounded from float: on D3 (values below 0.01)
 * every output is a bitwise copy of its input, as it must be, since tanh(x)
 * and x round to the same bfloat16 there (tests/cli/collect_fake_bf16.sh). */
#include <math.h>
#include "fakecuda.h"
#include "kbv.h"
#include "fake_bf16.h"

int kbv_forward(const kbv_call *c)
{
    if (c->inputs[0].dtype != KBV_BF16 || c->outputs[0].dtype != KBV_BF16) return 1;
    const uint16_t *x = c->inputs[0].data;
    uint16_t *y = c->outputs[0].data;
    int64_t n = fake_elems(kbv_numel(&c->inputs[0]));
    for (int64_t i = 0; i < n; i++) y[i] = f_to_bf16(tanhf(bf16_to_f(x[i])));
    return 0;
}
