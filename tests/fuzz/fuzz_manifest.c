/* fuzz_manifest.c - the manifest reader: analyze's run_load with
 * manifest.json = the input and a fixed journal that names two sets and two
 * problems of the seeds, then analysis_build with few resamples.  An input
 * that does not start with '{' edits the seed run_small.json instead
 * (fuzz_edit.h). */
#include <stdint.h>
#include <stddef.h>

#include "analysis.h"
#include "fuzz_edit.h"
#include "fuzz_util.h"
#include "run.h"

static const char journal[] =
    "{\"type\":\"build\",\"set\":\"tuned\",\"problem\":\"L1_019_relu\",\"ok\":true,\"seconds\":1}\n"
    "{\"type\":\"check\",\"set\":\"tuned\",\"problem\":\"L1_019_relu\",\"dist\":\"D1\",\"trial\":0,\"pass\":true,"
    "\"max_abs_err\":0,\"max_rel_err\":0,\"mismatches\":0,\"nonfinite\":0,\"unwritten\":0,\"tier\":\"fp32\"}\n"
    "{\"type\":\"time\",\"set\":\"tuned\",\"problem\":\"L1_019_relu\",\"variant\":\"candidate\",\"round\":0,\"gpu_ms\":1.0}\n"
    "{\"type\":\"time\",\"set\":\"tuned\",\"problem\":\"L1_019_relu\",\"variant\":\"fp32\",\"round\":0,\"gpu_ms\":2.0}\n"
    "{\"type\":\"time\",\"set\":\"tuned\",\"problem\":\"L1_019_relu\",\"variant\":\"tf32\",\"round\":0,\"gpu_ms\":1.5}\n"
    "{\"type\":\"memory\",\"set\":\"tuned\",\"problem\":\"L1_019_relu\",\"variant\":\"candidate\",\"peak_bytes\":10}\n"
    "{\"type\":\"status\",\"set\":\"tuned\",\"problem\":\"L1_019_relu\",\"status\":\"ok\",\"detail\":\"\"}\n"
    "{\"type\":\"status\",\"set\":\"hacky\",\"problem\":\"L1_023_softmax\",\"status\":\"crash\",\"detail\":\"x\"}\n";

static const char *const names[] = {"manifest.json", "samples.jsonl", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cleanup_names = names;
    static int wrote_journal;
    if (!wrote_journal) {
        fuzz_write("samples.jsonl", journal, sizeof journal - 1);
        wrote_journal = 1;
    }
    static char *base;
    if (!base) base = fuzz_read_file("tests/fuzz/corpus/fuzz_manifest/run_small.json", NULL);
    if (size > 0 && data[0] != '{' && base) {
        fuzz_bytes fb = {data + 1, size - 1};
        char *m = fuzz_edit_doc(base, &fb);
        if (!m) abort();
        fuzz_write("manifest.json", m, strlen(m));
        free(m);
    } else {
        fuzz_write("manifest.json", data, size);
    }

    kbv_err e = {0};
    run_data *r = NULL;
    if (run_load(fuzz_dir(), &r, &e) == 0) {
        analysis_opts o;
        analysis_default_opts(r, &o);
        o.resamples = 50;
        o.threads = 1;
        cJSON *out = NULL;
        analysis_build(r, &o, &out, &e);
        cJSON_Delete(out);
        run_free(r);
    }
    return 0;
}
