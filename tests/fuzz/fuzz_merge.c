/* fuzz_merge.c - kbv merge's shard reader: merges a fixed shard "a" (sets
 * tuned and hacky, problems L1_019 and L1_023; the tuned pairs) with a shard
 * "b" read from the input: its manifest.json, then a line "--journal--",
 * then its samples.jsonl, through merge_run (dispatch/merge.h), the module
 * behind the command; a merged run it writes is removed after each input. */
#include <stdint.h>
#include <stddef.h>
#include <sys/stat.h>

#include "err.h"
#include "fuzz_util.h"
#include "merge.h"

static const char manifest_a[] =
    "{\"schema\":\"kbv-run/1\",\"run_id\":\"a\",\"created_utc\":\"2026-11-29T23:00:00Z\","
    "\"harness\":{\"version\":\"0\",\"git_commit\":\"x\"},\"device\":{\"name\":\"d\"},"
    "\"config\":{\"seed\":7,\"shard\":\"1/2\"},\"shard\":\"1/2\","
    "\"problems\":[\"L1_019_relu\",\"L1_023_softmax\"],"
    "\"sets\":[{\"name\":\"tuned\",\"dir\":\"t\",\"files\":{}},{\"name\":\"hacky\",\"dir\":\"h\",\"files\":{}}]}\n";

static const char journal_a[] =
    "{\"type\":\"time\",\"set\":\"tuned\",\"problem\":\"L1_019_relu\",\"variant\":\"fp32\",\"gpu_ms\":1}\n"
    "{\"type\":\"status\",\"set\":\"tuned\",\"problem\":\"L1_019_relu\",\"status\":\"ok\"}\n"
    "{\"type\":\"status\",\"set\":\"tuned\",\"problem\":\"L1_023_softmax\",\"status\":\"ok\"}\n";

static const char *const names[] = {"a/manifest.json", "a/samples.jsonl", "b/manifest.json", "b/samples.jsonl",
                                    "out/manifest.json", "out/samples.jsonl", "out/SHA256SUMS",
                                    "a", "b", "out", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cleanup_names = names;
    char a[4200], b[4200], out[4200];
    fuzz_path(a, sizeof a, "a");
    fuzz_path(b, sizeof b, "b");
    fuzz_path(out, sizeof out, "out");
    static int made;
    if (!made) {
        mkdir(a, 0700);
        mkdir(b, 0700);
        fuzz_write("a/manifest.json", manifest_a, sizeof manifest_a - 1);
        fuzz_write("a/samples.jsonl", journal_a, sizeof journal_a - 1);
        made = 1;
    }
    size_t m_len, j_len;
    const uint8_t *j;
    fuzz_split(data, size, "\n--journal--\n", &m_len, &j, &j_len);
    fuzz_write("b/manifest.json", data, m_len);
    fuzz_write("b/samples.jsonl", j, j_len);

    char *in[] = {a, b};
    kbv_err e = {0};
    merge_run(out, 2, in, &e);
    /* A merge that worked wrote out/; it must go before the next input. */
    const char *files[] = {"out/manifest.json", "out/samples.jsonl", "out/SHA256SUMS"};
    for (int i = 0; i < 3; i++) fuzz_remove(files[i]);
    rmdir(out);
    return 0;
}
