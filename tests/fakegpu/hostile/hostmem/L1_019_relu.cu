/* CPU stand-in (tests/fakegpu) of tests/gpu/hostile/hostmem: mallocs 1 GiB
 * blocks (first page written) until malloc fails, frees them and returns
 * 12; returns 13 if 48 GiB came without a failure (no host-data limit). */
#include <stdlib.h>
#include <string.h>
#include "kbv.h"

int kbv_forward(const kbv_call *c)
{
    (void)c;
    enum { MAX_BLOCKS = 48 };
    void *blocks[MAX_BLOCKS];
    int n = 0, failed = 0;
    while (n < MAX_BLOCKS) {
        void *p = malloc((size_t)1 << 30);
        if (!p) {
            failed = 1;
            break;
        }
        memset(p, 0x5a, 4096);
        blocks[n++] = p;
    }
    for (int i = 0; i < n; i++) free(blocks[i]);
    return failed ? 12 : 13;
}
