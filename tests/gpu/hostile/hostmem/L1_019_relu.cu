// hostile: allocates host memory without end.  On its first call it takes
// 1 GiB blocks with malloc (writing the first page of each, as a real leak
// would use them; the limit counts what is mapped, touched or not, so the
// test stays quick) until malloc fails, then frees
// them all and returns 12: the worker's host-data limit (RLIMIT_DATA, about
// 16 GiB above what CUDA holds) turned an endless leak into a failed
// malloc, a launch-error "kbv_forward returned 12".  Should it get to
// 48 GiB without a failure, there is no limit: it frees everything and
// returns 13, so that the missing limit shows instead of passing silently
// (and before the host's OOM killer picks a victim).
#include "kbv.h"
#include <stdlib.h>
#include <string.h>

#define BLOCK ((size_t)1 << 30)
#define MAX_BLOCKS 48

extern "C" int kbv_forward(const kbv_call *)
{
    void *blocks[MAX_BLOCKS];
    int n = 0, failed = 0;
    while (n < MAX_BLOCKS) {
        void *p = malloc(BLOCK);
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
