/* fuzz_analysis.c - render's model loader: rmodel_load over a run folder
 * whose analysis.json is the input.  When the input holds a line
 * "--manifest--", what follows it is manifest.json (read for the run
 * summary); otherwise there is no manifest, which the loader accepts with
 * a warning.  An input that does not start with '{' edits the fixture
 * tests/fixtures/render_run/analysis.json instead (fuzz_edit.h). */
#include <stdint.h>
#include <stddef.h>

#include "fuzz_edit.h"
#include "fuzz_util.h"
#include "model.h"

static const char *const names[] = {"analysis.json", "manifest.json", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cleanup_names = names;
    static char *base;
    if (!base) base = fuzz_read_file("tests/fixtures/render_run/analysis.json", NULL);
    if (size > 0 && data[0] != '{' && base) {
        fuzz_bytes fb = {data + 1, size - 1};
        char *a = fuzz_edit_doc(base, &fb);
        if (!a) abort();
        fuzz_write("analysis.json", a, strlen(a));
        free(a);
        fuzz_remove("manifest.json");
    } else {
        fuzz_write_analysis(data, size);
    }

    kbv_err e = {0};
    rmodel *model = NULL;
    if (rmodel_load(&model, fuzz_dir(), &e) == 0) rmodel_free(model);
    return 0;
}
