/* fontm.c - advance widths of DejaVu Sans through FreeType (see fontm.h). */
#include "fontm.h"

#include <stdlib.h>
#include <string.h>
#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_TRUETYPE_TABLES_H
#include FT_ADVANCES_H

struct fontm {
    char *path[2];
    /* Advance of each Windows-1252 byte in em units (1/units_per_EM);
     * measuring works on that byte string, as the PDF does. */
    double adv[2][256];
    double cap_height;   /* em units */
    double descent;      /* em units, positive */
};

/* Windows-1252 bytes 0x80..0x9F and the code points they stand for. */
static const unsigned short cp1252_hi[32] = {
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
    0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
};

unsigned char fontm_cp1252(unsigned cp)
{
    if ((cp >= 0x20 && cp < 0x7F) || (cp >= 0xA0 && cp <= 0xFF))
        return (unsigned char)cp;
    for (int i = 0; i < 32; i++)
        if (cp1252_hi[i] && cp1252_hi[i] == cp)
            return (unsigned char)(0x80 + i);
    return '?';
}

static unsigned cp1252_to_unicode(unsigned b)
{
    if (b >= 0x80 && b < 0xA0)
        return cp1252_hi[b - 0x80];
    return b;
}

unsigned fontm_utf8_next(const char **sp)
{
    const unsigned char *s = (const unsigned char *)*sp;
    unsigned c = s[0];
    if (c == 0)
        return 0;
    int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
    if (n < 0) {
        *sp += 1;
        return 0xFFFD;
    }
    unsigned cp = n == 0 ? c : c & (0x3F >> n);
    for (int i = 1; i <= n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *sp += i;
            return 0xFFFD;
        }
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    *sp += n + 1;
    return cp;
}

static int load_face(fontm *f, FT_Library lib, int w, kbv_err *e)
{
    FT_Face face = NULL;
    if (FT_New_Face(lib, f->path[w], 0, &face))
        return err_set(e, KBV_EINPUT, "%s: cannot open the font (FreeType could not read it)", f->path[w]);
    double upem = face->units_per_EM ? face->units_per_EM : 1000;
    FT_Fixed qadv = 0;
    FT_UInt qg = FT_Get_Char_Index(face, '?');
    FT_Get_Advance(face, qg, FT_LOAD_NO_SCALE, &qadv);
    for (unsigned b = 0; b < 256; b++) {
        unsigned cp = cp1252_to_unicode(b);
        FT_UInt g = cp >= 0x20 && cp != 0x7F ? FT_Get_Char_Index(face, cp) : 0;
        FT_Fixed a = 0;
        if (!g || FT_Get_Advance(face, g, FT_LOAD_NO_SCALE, &a))
            a = qadv;
        f->adv[w][b] = (double)a / upem;
    }
    if (w == FONTM_REGULAR) {
        TT_OS2 *os2 = FT_Get_Sfnt_Table(face, FT_SFNT_OS2);
        f->cap_height = (os2 && os2->version >= 2 && os2->sCapHeight) ? os2->sCapHeight / upem : 0.73;
        f->descent = face->descender < 0 ? -face->descender / upem : 0.24;
    }
    FT_Done_Face(face);
    return 0;
}

int fontm_open(fontm **out, const char *regular_path, const char *bold_path, kbv_err *e)
{
    *out = NULL;
    fontm *f = calloc(1, sizeof *f);
    FT_Library lib = NULL;
    int rc = 0;
    if (!f)
        return err_set(e, KBV_ENOMEM, "out of memory loading fonts");
    f->path[0] = strdup(regular_path);
    f->path[1] = strdup(bold_path);
    if (!f->path[0] || !f->path[1]) {
        rc = err_set(e, KBV_ENOMEM, "out of memory loading fonts");
        goto cleanup;
    }
    if (FT_Init_FreeType(&lib)) {
        rc = err_set(e, KBV_ERUNTIME, "FreeType failed to start");
        goto cleanup;
    }
    for (int w = 0; w < 2 && rc == 0; w++)
        rc = load_face(f, lib, w, e);
cleanup:
    if (lib)
        FT_Done_FreeType(lib);
    if (rc) {
        fontm_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

void fontm_free(fontm *f)
{
    if (!f)
        return;
    free(f->path[0]);
    free(f->path[1]);
    free(f);
}

const char *fontm_path(const fontm *f, int weight)
{
    return f->path[weight ? 1 : 0];
}

double fontm_width_n(const fontm *f, int weight, double size, const char *s, size_t n)
{
    const char *end = s + n;
    double w = 0;
    const double *adv = f->adv[weight ? 1 : 0];
    while (s < end && *s) {
        unsigned cp = fontm_utf8_next(&s);
        w += adv[fontm_cp1252(cp)];
    }
    return w * size;
}

double fontm_width(const fontm *f, int weight, double size, const char *s)
{
    return fontm_width_n(f, weight, size, s, strlen(s));
}

double fontm_cap_height(const fontm *f, double size)
{
    return f->cap_height * size;
}

double fontm_descent(const fontm *f, double size)
{
    return f->descent * size;
}
