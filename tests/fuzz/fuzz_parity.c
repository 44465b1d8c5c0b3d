/* fuzz_parity.c - analyze's reader of RUN_DIR/parity.json (analyze/parity.c,
 * kbv-parity/1): the input is written as parity.json beside a fixed run of
 * three problems (built from a manifest, as analyze builds it) and judged
 * into a fresh analysis tree, as `kbv analyze` and `--parity-only` do. */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "parity.h"
#include "run.h"

static const char manifest[] =
    "{\"schema\":\"kbv-run/1\",\"run_id\":\"a\",\"created_utc\":\"2026-11-29T23:00:00Z\","
    "\"config\":{\"seed\":7},\"problems\":[\"L1_001_square_matrix_multiplication\",\"L1_002_relu\","
    "\"L1_003_softmax\"],\"sets\":[{\"name\":\"tuned\",\"dir\":\"t\",\"files\":{}}]}";

static const char *const names[] = {"parity.json", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The run is the same for every input: built once, kept to the end. */
    static run_data *r;
    fuzz_cleanup_names = names;
    if (!r) {
        kbv_err e = {0};
        if (run_from_manifest(cJSON_Parse(manifest), &r, &e)) abort();
    }
    fuzz_write("parity.json", data, size);
    cJSON *root = cJSON_CreateObject();
    kbv_err e = {0};
    if (root) parity_add(fuzz_dir(), r, root, &e);
    cJSON_Delete(root);
    return 0;
}
