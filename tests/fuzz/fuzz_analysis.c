/* fuzz_analysis.c - render's model loader: rmodel_load over a run folder
 * whose analysis.json is the input.  When the input holds a line
 * "--manifest--", what follows it is manifest.json (read for the run
 * summary); otherwise there is no manifest, which the loader accepts with
 * a warning. */
#include <stdint.h>
#include <stddef.h>

#include "fuzz_util.h"
#include "model.h"

static const char *const names[] = {"analysis.json", "manifest.json", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cleanup_names = names;
    size_t a_len, m_len;
    const uint8_t *m;
    fuzz_split(data, size, "\n--manifest--\n", &a_len, &m, &m_len);
    fuzz_write("analysis.json", data, a_len);
    if (m_len || m != data + size)
        fuzz_write("manifest.json", m, m_len);
    else
        fuzz_remove("manifest.json");

    kbv_err e = {0};
    rmodel *model = NULL;
    if (rmodel_load(&model, fuzz_dir(), &e) == 0) rmodel_free(model);
    return 0;
}
