/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/spawn: kbv_setup tries
 * to start a process by fork, posix_spawn, system and execv, or to open a
 * socket to a daemon that could, and fails the pair if any succeeded; the
 * ReLU is correct. */
#include <cuda_runtime_api.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fakecuda.h"
#include "kbv.h"

extern char **environ;

int kbv_setup(const kbv_call *c)
{
    (void)c;
    int ran = 0;
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    if (pid > 0 && waitpid(pid, NULL, 0) == pid) ran = 1;
    char *argv[] = {"true", NULL};
    if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) == 0 && waitpid(pid, NULL, 0) == pid) ran = 1;
    if (system("exit 0") == 0) ran = 1;
    /* A socket would reach a daemon that could start the program instead
     * (systemd over D-Bus, a container engine's API). */
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s >= 0) { ran = 1; close(s); }
    s = socket(AF_INET, SOCK_STREAM, 0);
    if (s >= 0) { ran = 1; close(s); }
    /* An exec that worked would end the worker without a status. */
    execv("/bin/true", argv);
    return ran;
}
int kbv_forward(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data;
  for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f; return 0; }
