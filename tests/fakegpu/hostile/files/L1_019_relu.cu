/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/files: writes ./kbv-
 * pwned (its scratch folder) and /tmp/kbv-pwned-$KBV_HOSTILE_MARKER, and
 * tries to open kbv-collect's journal through /proc/<parent>/fd; the ReLU is
 * correct. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include <sys/prctl.h>
#include "fakecuda.h"
#include "kbv.h"
static int relu(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data; for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f; return 0; }

#include <dirent.h>
#include <limits.h>
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

int kbv_forward(const kbv_call *c)
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
