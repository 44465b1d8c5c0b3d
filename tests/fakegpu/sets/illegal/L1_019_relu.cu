#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fakecuda.h"
#include "kbv.h"

int kbv_forward(const kbv_call *c) { (void)c; fakecuda_set_sticky(700); return 0; }
