// hostile: forks in kbv_setup.  One child stays in the worker's process
// group and spins; the other calls setsid() first, leaving the group that
// kbv-collect kills, and spins too.  Both name themselves "kbvhst-fork" so
// that tests/gpu/hostile.sh can look for survivors.  The ReLU itself is
// correct: the pair must be classified by its imports (prctl is
// tamper-capable), and no child may outlive the run.  Where the workers
// hold seccomp, the sandbox's seal refuses both forks (sandbox.h).
#include "kbv.h"
#include <sys/prctl.h>
#include <unistd.h>

__global__ void relu(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

static void spin_child(int escape)
{
    // No CUDA in a forked child: it only burns a CPU.
    if (escape) setsid();
    prctl(PR_SET_NAME, escape ? "kbvhst-fork-esc" : "kbvhst-fork", 0, 0, 0);
    volatile unsigned long k = 0;
    for (;;) k++;
}

extern "C" int kbv_setup(const kbv_call *)
{
    for (int escape = 0; escape < 2; escape++) {
        pid_t p = fork();
        if (p == 0) spin_child(escape);
    }
    return 0;
}

extern "C" int kbv_forward(const kbv_call *c)
{
    relu<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data, (float *)c->outputs[0].data,
                                         kbv_numel(&c->inputs[0]));
    return cudaGetLastError() != cudaSuccess;
}
