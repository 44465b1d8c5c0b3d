/* fuzz_prompt.c - kbv prompt's template reader: prompt_render with the
 * input (after its first byte) as the template, for the problem the first
 * byte picks; and prompt_suggest with the input as an unknown id. */
#include <stdint.h>
#include <stddef.h>

#include "fuzz_util.h"
#include "prompt.h"
#include "suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int n = suite_count();
    if (n <= 0) abort();
    const suite_problem *p = suite_get(data[0] % n);
    /* The template is a NUL-terminated string, as prompt_main reads it. */
    char *t = malloc(size);
    if (!t) abort();
    memcpy(t, data + 1, size - 1);
    t[size - 1] = '\0';
    kbv_err e = {0};
    char *out = NULL;
    if (prompt_render(t, "fuzz.txt", p, 0, &out, &e) == 0 && !out) abort();
    free(out);
    const char *ids[5];
    if (strlen(t) < 100) {   /* ids are shorter; longer inputs only cost time */
        int k = prompt_suggest(t, ids, 5);
        if (k < 0 || k > 5) abort();
    }
    free(t);
    return 0;
}
