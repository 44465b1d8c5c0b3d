// deferred-work: once, in the timed phase (its 401st call), it starts a
// host thread that outlives the call, as one that loads the GPU around the
// baselines' calls would.  Timed calls are not counted inside their
// windows; the worker counts threads around each whole timed sample.
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include "fakecuda.h"
#include "kbv.h"

static void *idle(void *a) { struct timespec ts = {3600, 0}; nanosleep(&ts, NULL); return a; }
static long calls;
int kbv_forward(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data;
  if (++calls == 401) { pthread_t t; if (pthread_create(&t, NULL, idle, NULL) == 0) pthread_detach(t); }
  for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f; return 0; }
