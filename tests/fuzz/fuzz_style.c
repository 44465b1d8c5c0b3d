/* fuzz_style.c - render's style reader: style_load with style.json = the
 * input; an accepted style's set colours and markers are then looked up
 * for more sets than it names, as the charts do.  An input that does not
 * start with '{' edits templates/style.json instead. */
#include <stdint.h>
#include <stddef.h>

#include "fuzz_edit.h"
#include "fuzz_util.h"
#include "style.h"

static const char *const names[] = {"style.json", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cleanup_names = names;
    static char *base;
    if (!base) base = fuzz_read_file("templates/style.json", NULL);
    if (size > 0 && data[0] != '{' && base) {
        /* Edits of the default file (fuzz_edit.h). */
        fuzz_bytes fb = {data + 1, size - 1};
        char *t = fuzz_edit_doc(base, &fb);
        if (!t) abort();
        fuzz_write("style.json", t, strlen(t));
        free(t);
    } else {
        fuzz_write("style.json", data, size);
    }
    char p[4200];
    fuzz_path(p, sizeof p, "style.json");

    kbv_err e = {0};
    rstyle s;
    if (style_load(&s, p, &e) != 0) return 0;
    for (int i = 0; i < 3 * STYLE_MAX_SETS; i++) {
        canvas_rgba c = style_set_color(&s, i);
        int m = style_set_mark(&s, i);
        if (m < 0 || m >= MARK_N || c.a < 0) abort();
    }
    return 0;
}
