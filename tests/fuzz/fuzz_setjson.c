/* fuzz_setjson.c - collect's candidate folder reader: plan_make over two
 * set folders whose set.json files are the input (split at a line
 * "--set2--"; without it the second folder has no set.json and is named by
 * its folder), suite "smoke". */
#include <stdint.h>
#include <stddef.h>
#include <sys/stat.h>

#include "fuzz_util.h"
#include "plan.h"

static const char *const names[] = {"a/set.json", "a/L1_019_relu.cu", "b/set.json", "b/L1_019_relu.cu",
                                    "a", "b", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cleanup_names = names;
    char a[4200], b[4200];
    fuzz_path(a, sizeof a, "a");
    fuzz_path(b, sizeof b, "b");
    static int made;
    if (!made) {
        mkdir(a, 0700);
        mkdir(b, 0700);
        fuzz_write("a/L1_019_relu.cu", "//\n", 3);
        fuzz_write("b/L1_019_relu.cu", "//\n", 3);
        made = 1;
    }
    size_t a_len, b_len;
    const uint8_t *bp;
    fuzz_split(data, size, "\n--set2--\n", &a_len, &bp, &b_len);
    fuzz_write("a/set.json", data, a_len);
    if (bp != data + size || b_len)
        fuzz_write("b/set.json", bp, b_len);
    else
        fuzz_remove("b/set.json");

    const char *dirs[2] = {a, b};
    kbv_err e = {0};
    plan pl;
    if (plan_make(&pl, "smoke", dirs, 2, NULL, 0, 1, NULL, &e) == 0) {
        for (int i = 0; i < pl.n_pairs; i++) {
            char *k = plan_pair_key(pl.sets[pl.pairs[i].set].name, pl.pairs[i].p->id);
            if (!k) abort();
            free(k);
        }
        plan_free(&pl);
    }
    return 0;
}
