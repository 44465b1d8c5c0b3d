// hostile: tries to start a process from kbv_setup, as a candidate would
// that runs a program of its own to open a second CUDA context and keep
// the GPU busy while the baselines are timed: fork, posix_spawn, system,
// a Unix and a TCP socket (the way to a daemon that could start it), then
// execv.  Once CUDA has started, the worker's seccomp filter refuses every
// one (sandbox.h).  kbv_setup fails the pair if any process ran or any
// socket opened, and an exec that worked would replace the worker, which
// then ends without a status; so the class is correct only when all were
// refused.  The ReLU itself is honest.
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kbv.h"

extern char **environ;

__global__ void relu_kernel(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

extern "C" int kbv_setup(const kbv_call *)
{
    int ran = 0;
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    if (pid > 0 && waitpid(pid, nullptr, 0) == pid) ran = 1;
    char arg0[] = "true";
    char *argv[] = {arg0, nullptr};
    if (posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ) == 0 && waitpid(pid, nullptr, 0) == pid)
        ran = 1;
    if (system("exit 0") == 0) ran = 1;
    /* A socket would reach a daemon that could start the program instead
     * (systemd over D-Bus, a container engine's API). */
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s >= 0) { ran = 1; close(s); }
    s = socket(AF_INET, SOCK_STREAM, 0);
    if (s >= 0) { ran = 1; close(s); }
    execv("/bin/true", argv);
    return ran;
}

extern "C" int kbv_forward(const kbv_call *c)
{
    int64_t n = kbv_numel(&c->inputs[0]);
    relu_kernel<<<1024, 256, 0, c->stream>>>((const float *)c->inputs[0].data, (float *)c->outputs[0].data, n);
    return cudaGetLastError() != cudaSuccess;
}
