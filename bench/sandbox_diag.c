/* bench/sandbox_diag.c - which part of the worker sandbox (sandbox.c) the
 * CUDA driver's initialisation needs: applies none, Landlock, seccomp or
 * both, then cuInit, a context and an allocation, and prints the result.
 * Build on a GPU host: bench/sandbox_diag.sh. */
#include "../collect/supervise/sandbox.c"

#include <cuda.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "both";
    kbv_err e = {0};
    int abi = landlock_abi();
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if ((!strcmp(mode, "landlock") || !strcmp(mode, "both")) && apply_landlock(abi, ".", &e))
        printf("%s: landlock: %s\n", mode, e.msg);
    if ((!strcmp(mode, "seccomp") || !strcmp(mode, "both")) && apply_seccomp(&e))
        printf("%s: seccomp: %s\n", mode, e.msg);
    CUresult r = cuInit(0);
    CUdevice d = 0;
    CUcontext c = NULL;
    CUdeviceptr p = 0;
    if (r == CUDA_SUCCESS) r = cuDeviceGet(&d, 0);
    if (r == CUDA_SUCCESS) r = cuCtxCreate(&c, NULL, 0, d);
    if (r == CUDA_SUCCESS) r = cuMemAlloc(&p, 1 << 20);
    const char *s = NULL;
    cuGetErrorName(r, &s);
    printf("%s (landlock abi %d): %s\n", mode, abi, s ? s : "?");
    return r == CUDA_SUCCESS ? 0 : 1;
}
