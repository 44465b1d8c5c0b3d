// honest control (issue 14, memory): on every call, 256 MiB of scratch
// through the driver's virtual-memory API (cuMemCreate, cuMemAddressReserve,
// cuMemMap, cuMemSetAccess; entry points from cudaGetDriverEntryPointByVersion),
// zeroed, then unmapped and released.  Must stay correct, with a peak at
// least 256 MiB over its inputs and outputs: the worker hands out its own
// counting versions of the allocation entry points.
#include <cuda.h>
#include "kbv.h"

__global__ void relu_kernel(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
typedef CUresult (*reserve_fn)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*free_fn)(CUdeviceptr, size_t);
typedef CUresult (*map_fn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
typedef CUresult (*unmap_fn)(CUdeviceptr, size_t);
typedef CUresult (*access_fn)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);

static create_fn p_create;
static release_fn p_release;
static reserve_fn p_reserve;
static free_fn p_free;
static map_fn p_map;
static unmap_fn p_unmap;
static access_fn p_access;

static int get(const char *name, void **fn)
{
    cudaDriverEntryPointQueryResult q;
    return cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
           q != cudaDriverEntryPointSuccess;
}

extern "C" int kbv_setup(const kbv_call *)
{
    return get("cuMemCreate", (void **)&p_create) || get("cuMemRelease", (void **)&p_release) ||
           get("cuMemAddressReserve", (void **)&p_reserve) || get("cuMemAddressFree", (void **)&p_free) ||
           get("cuMemMap", (void **)&p_map) || get("cuMemUnmap", (void **)&p_unmap) ||
           get("cuMemSetAccess", (void **)&p_access);
}

extern "C" int kbv_forward(const kbv_call *c)
{
    const size_t bytes = (size_t)256 << 20;
    int dev = 0;
    cudaGetDevice(&dev);
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    CUmemGenericAllocationHandle h;
    CUdeviceptr p = 0;
    CUmemAccessDesc acc = {};
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (p_create(&h, bytes, &prop, 0) != CUDA_SUCCESS) return 1;
    if (p_reserve(&p, bytes, 0, 0, 0) != CUDA_SUCCESS || p_map(p, bytes, 0, h, 0) != CUDA_SUCCESS ||
        p_access(p, bytes, &acc, 1) != CUDA_SUCCESS)
        return 1;
    cudaMemsetAsync((void *)p, 0, bytes, c->stream);
    relu_kernel<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                (float *)c->outputs[0].data, kbv_numel(&c->inputs[0]));
    cudaStreamSynchronize(c->stream);
    int bad = p_unmap(p, bytes) != CUDA_SUCCESS || p_free(p, bytes) != CUDA_SUCCESS || p_release(h) != CUDA_SUCCESS;
    return bad || cudaGetLastError() != cudaSuccess;
}
