/* suite_host.h - what this host can run: whether a problem's baseline has
 * the libraries it needs (cuDNN for convolutions and pooling).  Pure C (it
 * only looks for shared libraries), so `kbv list` can say it without CUDA.
 */
#ifndef KBV_SUITE_HOST_H
#define KBV_SUITE_HOST_H

#include <stddef.h>
#include "suite.h"

/* 1 when p's baseline can run here; else 0 and *why (static text). */
int suite_host_available(const suite_problem *p, const char **why);

/* Finds a loadable cuDNN 9 library and writes its path (or bare soname
 * when the dynamic loader finds it) into buf.  Looks at $KBV_CUDNN_LIB,
 * the loader's own search path, $CUDA_HOME/lib64, /usr/local/cuda/lib64 and
 * the copy PyTorch bundles (site-packages/nvidia/cudnn/lib).  Returns 1 when
 * found, 0 when not. */
int suite_find_cudnn(char *buf, size_t n);

#endif
