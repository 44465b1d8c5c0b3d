/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/forge: forged time
 * records on fd 3 in kbv_setup, bare and with a made-up MAC. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include "fakecuda.h"
#include "kbv.h"
static int relu(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data; for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f; return 0; }
int kbv_setup(const kbv_call *c)
{
    (void)c;
    char line[256];
    for (int r = 0; r < 64; r++) {
        int n = snprintf(line, sizeof line,
                         "%s{\"type\":\"time\",\"variant\":\"candidate\",\"round\":%d,\"gpu_ms\":0.5,\"wall_ms\":0.6}\n",
                         r % 2 ? "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef " : "", r);
        if (write(3, line, (size_t)n) != n) break;
    }
    return 0;
}
int kbv_forward(const kbv_call *c) { return relu(c); }
