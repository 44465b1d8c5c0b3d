#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fakecuda.h"
#include "kbv.h"

#include <unistd.h>
int kbv_forward(const kbv_call *c) { (void)c; for (;;) sleep(1000); }
