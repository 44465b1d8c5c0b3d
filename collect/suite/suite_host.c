/* suite_host.c - library availability for baselines (see suite_host.h). */
#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite_host.h"
#include "ops.h"

/* Whether path can be loaded; the handle is closed again at once, since a
 * pure-C caller only wants the answer. */
static int loadable(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return 0;
    dlclose(h);
    return 1;
}

static int try_path(const char *path, char *buf, size_t n)
{
    if (!path || !*path || !loadable(path)) return 0;
    snprintf(buf, n, "%s", path);
    return 1;
}

static int try_dir(const char *dir, char *buf, size_t n)
{
    char p[4096];
    if (!dir || !*dir) return 0;
    snprintf(p, sizeof p, "%s/libcudnn.so.9", dir);
    return try_path(p, buf, n);
}

static int try_glob(const char *pattern, char *buf, size_t n)
{
    glob_t g;
    int found = 0;
    if (glob(pattern, 0, NULL, &g) != 0) return 0;
    for (size_t i = 0; i < g.gl_pathc && !found; i++) found = try_path(g.gl_pathv[i], buf, n);
    globfree(&g);
    return found;
}

int suite_find_cudnn(char *buf, size_t n)
{
    if (try_path(getenv("KBV_CUDNN_LIB"), buf, n)) return 1;
    if (try_path("libcudnn.so.9", buf, n)) return 1;
    if (try_dir(getenv("CUDA_HOME"), buf, n)) return 1;
    if (try_dir("/usr/local/cuda/lib64", buf, n)) return 1;
    static const char *const patterns[] = {
        "/usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib/libcudnn.so.9",
        "/usr/lib/python3*/dist-packages/nvidia/cudnn/lib/libcudnn.so.9",
        "/usr/local/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
        "/opt/conda/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
        "/root/.local/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
    };
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++)
        if (try_glob(patterns[i], buf, n)) return 1;
    const char *venv = getenv("VIRTUAL_ENV");
    if (venv && *venv) {
        char p[4096];
        snprintf(p, sizeof p, "%s/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9", venv);
        if (try_glob(p, buf, n)) return 1;
    }
    return 0;
}

int suite_host_available(const suite_problem *p, const char **why)
{
    if (why) *why = NULL;
    if (!p || p->op == OP_NONE) {
        if (why) *why = "no baseline implementation";
        return 0;
    }
    if (OP_NEEDS_CUDNN(p->op)) {
        char path[4096];
        if (!suite_find_cudnn(path, sizeof path)) {
            if (why) *why = "cuDNN 9 not found (set KBV_CUDNN_LIB)";
            return 0;
        }
    }
    return 1;
}
