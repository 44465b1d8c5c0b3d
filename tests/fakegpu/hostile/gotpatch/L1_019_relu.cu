/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/gotpatch: imports
 * mprotect and dl_iterate_phdr (here it only makes a page of its own
 * writable); the static scan flags it tamper-capable. */
#include <cuda_runtime_api.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>
#include "fakecuda.h"
#include "kbv.h"
static int relu(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data; for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f; return 0; }
static int count(struct dl_phdr_info *info, size_t n, void *ctx) { (void)info; (void)n; ++*(int *)ctx; return 0; }
static char page[8192] __attribute__((aligned(4096)));
int kbv_setup(const kbv_call *c)
{
    (void)c;
    int objects = 0;
    dl_iterate_phdr(count, &objects);
    return mprotect(page, 4096, PROT_READ | PROT_WRITE) != 0 || objects == 0;
}
int kbv_forward(const kbv_call *c) { return relu(c); }
