// hostile: writes files where it should not, on its first call:
//   ./kbv-pwned                   its working folder: kbv-collect's scratch
//                                 folder for the pair, removed afterwards
//   /tmp/kbv-pwned-<marker>       outside (marker: $KBV_HOSTILE_MARKER)
// and notes in the second file its working folder and whether it could open
// kbv-collect's journal for writing through /proc/<parent>/fd (it opens,
// writes nothing and closes).  kbv has no file-system isolation: the second
// file is expected to exist; tests/gpu/hostile.sh reports what it says and
// removes it.  The ReLU is correct.
#include "kbv.h"
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__global__ void relu_kernel(const float *x, float *y, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.f);
}

static int relu(const kbv_call *c)
{
    relu_kernel<<<132 * 8, 512, 0, c->stream>>>((const float *)c->inputs[0].data,
                                                (float *)c->outputs[0].data, kbv_numel(&c->inputs[0]));
    return cudaGetLastError() != cudaSuccess;
}

static void probe_parent_fds(FILE *note)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)getppid());
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(note, "parent-fds: cannot list %s\n", dir);
        return;
    }
    struct dirent *de;
    int journal = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char link[128], target[PATH_MAX];
        snprintf(link, sizeof link, "%s/%s", dir, de->d_name);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k <= 0) continue;
        target[k] = 0;
        size_t l = strlen(target);
        if (l < 13 || strcmp(target + l - 13, "samples.jsonl") != 0) continue;
        journal = 1;
        int fd = open(link, O_WRONLY | O_APPEND);
        fprintf(note, "journal-writable: %s %s\n", fd >= 0 ? "yes" : "no", target);
        if (fd >= 0) close(fd);
    }
    closedir(d);
    if (!journal) fprintf(note, "journal-writable: not found among the parent's open files\n");
}

static int done;

extern "C" int kbv_forward(const kbv_call *c)
{
    if (!done) {
        done = 1;
        FILE *f = fopen("kbv-pwned", "w");
        if (f) {
            fputs("written by the hostile files candidate\n", f);
            fclose(f);
        }
        const char *m = getenv("KBV_HOSTILE_MARKER");
        char path[256];
        snprintf(path, sizeof path, "/tmp/kbv-pwned-%s", m && *m ? m : "nomarker");
        FILE *note = fopen(path, "w");
        if (note) {
            char cwd[PATH_MAX];
            fprintf(note, "cwd: %s\n", getcwd(cwd, sizeof cwd) ? cwd : "?");
            fprintf(note, "cwd-file: %s\n", access("kbv-pwned", F_OK) == 0 ? "written" : "not written");
            probe_parent_fds(note);
            fclose(note);
        }
    }
    return relu(c);
}
