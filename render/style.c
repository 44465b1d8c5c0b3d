/* style.c - reading templates/style.json (see style.h). */
#include "style.h"

#include <stdio.h>
#include <string.h>
#include "jio.h"

/* Fails on a key that is not in allowed (a NULL-terminated list). */
static int only_keys(const cJSON *o, const char *const *allowed, const char *path, const char *where, kbv_err *e)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        int ok = 0;
        for (int i = 0; allowed[i]; i++)
            if (strcmp(it->string, allowed[i]) == 0)
                ok = 1;
        if (!ok)
            return err_set(e, KBV_EINPUT, "%s: unknown key '%s%s%s'", path, where, *where ? "." : "", it->string);
    }
    return 0;
}

static int get_section(const cJSON *root, const char *key, const char *const *allowed, const char *path,
                       const cJSON **out, kbv_err *e)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsObject(o))
        return err_set(e, KBV_EINPUT, "%s: '%s' must be an object", path, key);
    *out = o;
    return only_keys(o, allowed, path, key, e);
}

static int num(const cJSON *o, const char *sec, const char *key, double lo, double hi, const char *path,
               double *out, kbv_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi)
        return err_set(e, KBV_EINPUT, "%s: '%s.%s' must be a number in [%g, %g]", path, sec, key, lo, hi);
    *out = v->valuedouble;
    return 0;
}

static int color(const cJSON *o, const char *sec, const char *key, const char *path, canvas_rgba *out, kbv_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v) || canvas_parse_color(v->valuestring, out))
        return err_set(e, KBV_EINPUT, "%s: '%s.%s' must be a colour \"#rrggbb\"", path, sec, key);
    return 0;
}

static int str(const cJSON *o, const char *sec, const char *key, const char *path, char *out, size_t n, kbv_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= n || !*v->valuestring)
        return err_set(e, KBV_EINPUT, "%s: '%s.%s' must be a non-empty string", path, sec, key);
    memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
    return 0;
}

int style_load(rstyle *s, const char *path, kbv_err *e)
{
    static const char *const top[] = {"page", "font", "sizes", "lines", "figure", "colors", "sets", NULL};
    static const char *const page[] = {"width", "height", "margin", NULL};
    static const char *const font[] = {"regular", "bold", NULL};
    static const char *const sizes[] = {"small", "normal", "large", NULL};
    static const char *const lines[] = {"normal", "thin", NULL};
    static const char *const fig[] = {"width", "png_scale", "band_alpha", NULL};
    static const char *const cols[] = {"text", "axis", "grid", "muted", "rule", "shade", NULL};
    static const char *const setk[] = {"color", "marker", NULL};
    cJSON *root = NULL;
    const cJSON *o;
    int rc;
    memset(s, 0, sizeof *s);
    if ((rc = jio_load(path, &root, e)))
        return rc;
    if (!cJSON_IsObject(root)) {
        rc = err_set(e, KBV_EINPUT, "%s: expected a JSON object", path);
        goto done;
    }
    if ((rc = only_keys(root, top, path, "", e)))
        goto done;
    if ((rc = get_section(root, "page", page, path, &o, e)) ||
        (rc = num(o, "page", "width", 144, 2000, path, &s->page_w, e)) ||
        (rc = num(o, "page", "height", 144, 3000, path, &s->page_h, e)) ||
        (rc = num(o, "page", "margin", 0, 200, path, &s->margin, e)))
        goto done;
    if ((rc = get_section(root, "font", font, path, &o, e)) ||
        (rc = str(o, "font", "regular", path, s->font_regular, sizeof s->font_regular, e)) ||
        (rc = str(o, "font", "bold", path, s->font_bold, sizeof s->font_bold, e)))
        goto done;
    if ((rc = get_section(root, "sizes", sizes, path, &o, e)) ||
        (rc = num(o, "sizes", "small", 4, 30, path, &s->fs_small, e)) ||
        (rc = num(o, "sizes", "normal", 4, 30, path, &s->fs_normal, e)) ||
        (rc = num(o, "sizes", "large", 4, 40, path, &s->fs_large, e)))
        goto done;
    if ((rc = get_section(root, "lines", lines, path, &o, e)) ||
        (rc = num(o, "lines", "normal", 0.05, 5, path, &s->line, e)) ||
        (rc = num(o, "lines", "thin", 0.05, 5, path, &s->line_thin, e)))
        goto done;
    if ((rc = get_section(root, "figure", fig, path, &o, e)) ||
        (rc = num(o, "figure", "width", 200, 2000, path, &s->fig_w, e)) ||
        (rc = num(o, "figure", "png_scale", 0.5, 8, path, &s->png_scale, e)) ||
        (rc = num(o, "figure", "band_alpha", 0.02, 1, path, &s->band_alpha, e)))
        goto done;
    if ((rc = get_section(root, "colors", cols, path, &o, e)) ||
        (rc = color(o, "colors", "text", path, &s->text, e)) ||
        (rc = color(o, "colors", "axis", path, &s->axis, e)) ||
        (rc = color(o, "colors", "grid", path, &s->grid, e)) ||
        (rc = color(o, "colors", "muted", path, &s->muted, e)) ||
        (rc = color(o, "colors", "rule", path, &s->rule, e)) ||
        (rc = color(o, "colors", "shade", path, &s->shade, e)))
        goto done;
    const cJSON *sets = cJSON_GetObjectItemCaseSensitive(root, "sets");
    if (!cJSON_IsArray(sets) || cJSON_GetArraySize(sets) < 1 || cJSON_GetArraySize(sets) > STYLE_MAX_SETS) {
        rc = err_set(e, KBV_EINPUT, "%s: 'sets' must be an array of 1 to %d {color, marker}", path, STYLE_MAX_SETS);
        goto done;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, sets) {
        char where[32];
        snprintf(where, sizeof where, "sets[%d]", s->n_set_styles);
        if (!cJSON_IsObject(it)) {
            rc = err_set(e, KBV_EINPUT, "%s: '%s' must be an object", path, where);
            goto done;
        }
        if ((rc = only_keys(it, setk, path, where, e)) ||
            (rc = color(it, where, "color", path, &s->set_color[s->n_set_styles], e)))
            goto done;
        const cJSON *mk = cJSON_GetObjectItemCaseSensitive(it, "marker");
        int m = cJSON_IsString(mk) ? canvas_mark_parse(mk->valuestring) : -1;
        if (m < 0) {
            rc = err_set(e, KBV_EINPUT, "%s: '%s.marker' must be one of circle, square, triangle, diamond, "
                         "triangle-down, cross, plus, star", path, where);
            goto done;
        }
        s->set_mark[s->n_set_styles++] = m;
    }
done:
    cJSON_Delete(root);
    return rc;
}

canvas_rgba style_set_color(const rstyle *s, int i)
{
    return s->set_color[i % s->n_set_styles];
}

int style_set_mark(const rstyle *s, int i)
{
    /* Shapes advance one step further on every round through the colours,
     * so that set 9 does not look like set 1. */
    return (s->set_mark[i % s->n_set_styles] + i / s->n_set_styles) % MARK_N;
}
