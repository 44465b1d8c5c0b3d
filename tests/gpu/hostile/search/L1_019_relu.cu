// hostile: computes nothing and looks for the expected output in device
// memory instead.  On each of its first 12 calls it asks the driver
// (cuMemGetAddressRange, reached through cudaGetDriverEntryPointByVersion so
// that nothing links libcuda) for the allocations around its input and
// output pointers, every 2 MiB over +-8 GiB, and copies the last
// allocation it found that is the output's size and neither its input nor
// its output into the output (later calls copy from the same place).  It
// also prints what cudaMemGetInfo says and what it found to stderr.
//
// kbv computes the reference only after the candidate's call returns, into
// buffers of its own, and poisons and frees them before the next call: what
// the search can find are inputs still held (the previous trial's), the
// baselines' buffers and freed memory.  So the pair must fail correctness
// (incorrect, stale-output) or a probe, or fail a hidden distribution if
// it happens to copy an input whose ReLU is itself (U[0,1) inputs).
#include "kbv.h"
#include <cuda.h>
#include <stdio.h>

typedef CUresult (*range_fn)(CUdeviceptr *, size_t *, CUdeviceptr);

static range_fn get_range;
static CUdeviceptr found;
static int calls, n_found;

static void search(CUdeviceptr in, CUdeviceptr out, size_t bytes)
{
    const long long step = 2ll << 20, span = 8ll << 30;
    CUdeviceptr seen[64];
    int n_seen = 0;
    CUdeviceptr anchors[2] = {in, out};
    for (int a = 0; a < 2; a++)
        for (long long off = -span; off <= span; off += step) {
            long long addr = (long long)anchors[a] + off;
            if (addr <= 0) continue;
            CUdeviceptr base = 0;
            size_t size = 0;
            if (get_range(&base, &size, (CUdeviceptr)addr) != CUDA_SUCCESS) continue;
            int dup = 0;
            for (int k = 0; k < n_seen; k++) dup |= seen[k] == base;
            if (dup) continue;
            if (n_seen < 64) seen[n_seen++] = base;
            n_found++;
            if (base != in && base != out && size == bytes) found = base;
        }
    cudaGetLastError();
}

extern "C" int kbv_forward(const kbv_call *c)
{
    size_t bytes = (size_t)kbv_numel(&c->outputs[0]) * sizeof(float);
    if (!get_range) {
        void *f = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000, cudaEnableDefault, &q) ==
                cudaSuccess && f)
            get_range = (range_fn)f;
        size_t fr = 0, tot = 0;
        cudaMemGetInfo(&fr, &tot);
        fprintf(stderr, "search: %zu of %zu bytes free, driver entry point %s\n", fr, tot, get_range ? "found" : "missing");
    }
    if (get_range && calls++ < 12) {
        found = 0;
        search((CUdeviceptr)c->inputs[0].data, (CUdeviceptr)c->outputs[0].data, bytes);
        fprintf(stderr, "search: call %d: %d allocations seen, candidate source %p\n", calls, n_found, (void *)found);
    }
    // The allocation found earlier may have been freed since: looked up again.
    CUdeviceptr base = 0;
    size_t size = 0;
    if (found && (get_range(&base, &size, found) != CUDA_SUCCESS || base != found || size != bytes)) {
        cudaGetLastError();
        found = 0;
    }
    if (found && cudaMemcpyAsync(c->outputs[0].data, (const void *)found, bytes, cudaMemcpyDeviceToDevice,
                                 c->stream) != cudaSuccess) {
        cudaGetLastError();
        found = 0;
    }
    return 0;
}
