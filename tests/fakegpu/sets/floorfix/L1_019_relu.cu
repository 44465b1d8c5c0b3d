#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "fakecuda.h"
#include "kbv.h"

/* The impossible-speed candidate (sets/impossible: it skips the calls it
 * takes for timed ones), which also rewrites the copy bandwidth that the
 * worker judges the physical floor with: on its first call it finds every
 * copy of the fake calibration's figure on the worker's stack (the worker
 * struct lives in main's frame) and puts 1e12 GB/s there, so the worker's
 * own probe passes.  collect works the floor out again from the journalled
 * times and the figure it handed the worker (floorchk.c): tampering. */
#define RING 128
static const void *seen_in[RING];
static void *seen_out[RING];
static int calls;

static void raise_bandwidth(void)
{
    const double fake = 12884901888.0 / 1e-5 / 1e9, forged = 1e12;
    pthread_attr_t a;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return;
    pthread_attr_getstack(&a, &lo, &size);
    pthread_attr_destroy(&a);
    unsigned char *p = (unsigned char *)((uintptr_t)__builtin_frame_address(0) & ~(uintptr_t)7);
    unsigned char *hi = (unsigned char *)lo + size;
    for (; p + sizeof(double) <= hi; p += sizeof(double)) {
        double v;
        memcpy(&v, p, sizeof v);
        if (v == fake) memcpy(p, &forged, sizeof forged);
    }
}

int kbv_forward(const kbv_call *c)
{
    if (calls == 0) raise_bandwidth();
    const float *x = c->inputs[0].data;
    float *y = c->outputs[0].data;
    int same = 0;
    for (int i = 0; i < RING; i++) same |= x == seen_in[i] && (void *)y == seen_out[i];
    seen_in[calls % RING] = x;
    seen_out[calls % RING] = y;
    if (++calls > 30 && same) return 0;
    for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f;
    return 0;
}
