/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/late: a destructor
 * writes a record through a copy of fd 3 after the worker's status. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <unistd.h>
#include "fakecuda.h"
#include "kbv.h"
static int relu(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data; for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f; return 0; }
static int kept = -1;
int kbv_setup(const kbv_call *c)
{
    (void)c;
    kept = dup(3);
    return 0;
}
__attribute__((destructor)) static void late(void)
{
    static const char line[] = "{\"type\":\"memory\",\"variant\":\"candidate\",\"peak_bytes\":1,\"io_bytes\":1,"
                               "\"leaked_bytes\":0}\n";
    if (kept >= 0 && write(kept, line, sizeof line - 1) < 0) kept = -1;
}
int kbv_forward(const kbv_call *c) { return relu(c); }
