#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fakecuda.h"
#include "kbv.h"

int kbv_forward(const kbv_call *c) { return cudaMemcpyAsync(c->outputs[0].data, c->inputs[0].data, (size_t)kbv_numel(&c->inputs[0]) * 4, cudaMemcpyDeviceToDevice, c->stream) != 0; }
