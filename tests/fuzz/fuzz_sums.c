/* fuzz_sums.c - the SHA256SUMS reader: sums_verify over a run folder whose
 * SHA256SUMS is the input and which holds two small files (one listed
 * correctly by the seeds, one not). */
#include <stdint.h>
#include <stddef.h>

#include "fuzz_util.h"
#include "sums.h"

static const char *const names[] = {"SHA256SUMS", "manifest.json", "samples.jsonl", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cleanup_names = names;
    static int made;
    if (!made) {
        fuzz_write("manifest.json", "{}\n", 3);
        fuzz_write("samples.jsonl", "", 0);
        made = 1;
    }
    fuzz_write("SHA256SUMS", data, size);
    kbv_err e = {0};
    int n = -1;
    sums_verify(fuzz_dir(), NULL, &n, &e);
    return 0;
}
