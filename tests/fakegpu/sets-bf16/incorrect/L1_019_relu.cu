/* ReLU times 1.05: beyond the BF16 tolerance (a fake candidate of the BF16 setting, tests/cli/collect_fake_bf16.sh). */
#include "fakecuda.h"
#include "kbv.h"
#include "fake_bf16.h"

int kbv_forward(const kbv_call *c)
{
    if (c->inputs[0].dtype != KBV_BF16 || c->outputs[0].dtype != KBV_BF16) return 1;
    relu_bf16(c->inputs[0].data, c->outputs[0].data, fake_elems(kbv_numel(&c->inputs[0])), 1.05f);
    return 0;
}
