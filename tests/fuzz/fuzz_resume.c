/* fuzz_resume.c - collect's journal reader for --resume: resume_prepare
 * over samples.jsonl = the input (it may rewrite the file), then a look-up
 * of a pair in what it found done. */
#include <stdint.h>
#include <stddef.h>

#include "fuzz_util.h"
#include "resume.h"

static const char *const names[] = {"samples.jsonl", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cleanup_names = names;
    fuzz_write("samples.jsonl", data, size);
    char p[4200];
    fuzz_path(p, sizeof p, "samples.jsonl");
    kbv_err e = {0};
    resume_done d;
    resume_stats st;
    if (resume_prepare(p, &d, &st, &e) == 0) {
        resume_is_done(&d, "tuned", "L1_019_relu");
        resume_done_free(&d);
    }
    return 0;
}
