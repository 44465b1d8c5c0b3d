// correct, with the L2 policy left changed: every call sets a
// persisting-L2 limit and an access-policy window on the timed stream, as
// one that kept its inputs' lines in L2 across the flush would.  The worker
// puts both back (and every persisting line to normal) before each timed
// call's flush; the environment probe passes and says what was left.
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <string.h>
#include "fakecuda.h"
#include "kbv.h"

int kbv_forward(const kbv_call *c) { const float *x = c->inputs[0].data; float *y = c->outputs[0].data;
  cudaStreamAttrValue v; memset(&v, 0, sizeof v);
  v.accessPolicyWindow.base_ptr = (void *)x; v.accessPolicyWindow.num_bytes = 1 << 20;
  v.accessPolicyWindow.hitRatio = 1.0f; v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1 << 20) != cudaSuccess ||
      cudaStreamSetAttribute(c->stream, cudaStreamAttributeAccessPolicyWindow, &v) != cudaSuccess) return 1;
  for (int64_t i = 0; i < fake_elems(kbv_numel(&c->inputs[0])); i++) y[i] = x[i] > 0 ? x[i] : 0.0f; return 0; }
