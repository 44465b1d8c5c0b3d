/* fuzz_journal.c - the journal reader: analyze's run_load over a fixed
 * manifest and samples.jsonl = the input (plain, or gzip when the input
 * starts with gzip's magic: zlib reads both through one path), then
 * analysis_build with few resamples, so that whatever the reader accepts
 * also goes through the statistics.  The same input is read with common's
 * jnl reader directly, line by line.  An input that starts with neither '{'
 * nor gzip's magic edits the records of the seed all_pairs.jsonl instead
 * (fuzz_edit.h). */
#include <stdint.h>
#include <stddef.h>

#include "analysis.h"
#include "fuzz_edit.h"
#include "fuzz_util.h"
#include "jnl.h"
#include "run.h"

static const char manifest[] =
    "{\"schema\":\"kbv-run/1\",\"run_id\":\"fuzz\",\"created_utc\":\"2026-11-29T23:00:00Z\","
    "\"harness\":{\"version\":\"0\",\"git_commit\":\"x\"},\"device\":{\"name\":\"d\"},"
    "\"config\":{\"seed\":7,\"atol\":0.001,\"rtol\":0.001},"
    "\"problems\":[\"L1_001_square_matrix_multiplication\",\"L1_019_relu\",\"L1_023_softmax\"],"
    "\"sets\":[{\"name\":\"tuned\",\"dir\":\"t\",\"files\":{}},{\"name\":\"hacky\",\"dir\":\"h\",\"files\":{}}]}\n";

static const char *const names[] = {"manifest.json", "samples.jsonl", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cleanup_names = names;
    static int wrote_manifest;
    if (!wrote_manifest) {
        fuzz_write("manifest.json", manifest, sizeof manifest - 1);
        wrote_manifest = 1;
    }
    static char *base;
    if (!base) base = fuzz_read_file("tests/fuzz/corpus/fuzz_journal/all_pairs.jsonl", NULL);
    if (size > 0 && data[0] != '{' && data[0] != 0x1f && base) {
        fuzz_bytes fb = {data + 1, size - 1};
        size_t len;
        char *j = fuzz_edit_lines(base, &fb, &len);
        fuzz_write("samples.jsonl", j, len);
        free(j);
    } else {
        fuzz_write("samples.jsonl", data, size);
    }

    kbv_err e = {0};
    run_data *r = NULL;
    if (run_load(fuzz_dir(), &r, &e) == 0) {
        analysis_opts o;
        analysis_default_opts(r, &o);
        o.resamples = 50;
        o.threads = 1;
        cJSON *out = NULL;
        if (analysis_build(r, &o, &out, &e) == 0) {
            char *s = cJSON_PrintUnformatted(out);
            free(s);
        }
        cJSON_Delete(out);
        run_free(r);
    }

    char p[4200];
    fuzz_path(p, sizeof p, "samples.jsonl");
    jnl_reader *jr = NULL;
    if (jnl_open_file(p, &jr, &e) == 0) {
        const char *line;
        size_t len;
        long lineno;
        int torn;
        while (jnl_next(jr, &line, &len, &lineno, &torn, &e) == 1)
            if (strlen(line) > len) abort();   /* the line is NUL-terminated at len or before */
        jnl_close(jr);
    }
    return 0;
}
