/* dnn_lib.h - opening cuDNN at run time, for the families that call it
 * (conv.cu, rnn.cu): kbv builds without linking cuDNN, and `kbv list`
 * marks its problems unavailable where the library is missing.  C++ only,
 * private to collect/baselines/problems/. */
#ifndef KBV_DNN_LIB_H
#define KBV_DNN_LIB_H

#include <dlfcn.h>
#include <string.h>

#include "base_impl.h"

extern "C" {
#include "suite_host.h"
}

/* cuDNN 9 dlopen'ed for baseline `id`: the handle, with its file name in
 * path (len bytes), or NULL with the reason in e (always KBV_ERUNTIME): not
 * found, not loadable, or older than 9.  The caller dlcloses it. */
inline void *dnn_lib_open(const char *id, char *path, size_t len, kbv_err *e)
{
    if (!suite_find_cudnn(path, len)) {
        err_set(e, KBV_ERUNTIME, "baseline %s: cuDNN 9 not found (set KBV_CUDNN_LIB to libcudnn.so.9)", id);
        return NULL;
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        err_set(e, KBV_ERUNTIME, "baseline %s: dlopen %s: %s", id, path, dlerror());
        return NULL;
    }
    decltype(&::cudnnGetVersion) version;
    void *sym = dlsym(lib, "cudnnGetVersion");
    memcpy(&version, &sym, sizeof sym);
    size_t v = sym ? version() : 0;
    if (v < 90000) {
        dlclose(lib);
        err_set(e, KBV_ERUNTIME, "baseline %s: %s is cuDNN %zu, need 9", id, path, v);
        return NULL;
    }
    return lib;
}

/* A table of cuDNN functions is written once, as a list macro LIST(X) that
 * names each function as X(name): `struct api { void *lib; LIST(DNN_FN) };`
 * declares the table and `LIST(DNN_LOAD)` in a loader resolves it. */
#define DNN_FN(name) decltype(&::name) name;

/* The functions every family's table starts with: the library, handles,
 * streams and tensor descriptors. */
#define DNN_CORE_FNS(X) \
    X(cudnnGetVersion) \
    X(cudnnGetErrorString) \
    X(cudnnCreate) \
    X(cudnnDestroy) \
    X(cudnnSetStream) \
    X(cudnnCreateTensorDescriptor) \
    X(cudnnSetTensorNdDescriptor) \
    X(cudnnDestroyTensorDescriptor)

#define DNN_LOAD(name) DNN_SYM(name);

/* Resolves cuDNN function `name` into a->name, inside a loader with `a`
 * (a table whose `lib` is the open library), `id`, `path` and `e` in scope:
 * where the library lacks it, closes the library, clears a->lib and
 * returns the error from the loader. */
#define DNN_SYM(name)                                                                        \
    do {                                                                                     \
        void *sym = dlsym(a->lib, #name);                                                    \
        if (!sym) {                                                                          \
            dlclose(a->lib);                                                                 \
            a->lib = NULL;                                                                   \
            return err_set(e, KBV_ERUNTIME, "baseline %s: %s lacks %s", id, path, #name);    \
        }                                                                                    \
        memcpy(&a->name, &sym, sizeof sym);                                                  \
    } while (0)

#endif
