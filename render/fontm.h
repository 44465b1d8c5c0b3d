/* fontm.h - font metrics: the one place where text is measured.
 *
 * Both canvas backends draw DejaVu Sans from the same files (Cairo through
 * cairo-ft, libharu by embedding the TrueType file), and every layout
 * decision (anchors, column widths, wrapping) uses the advance widths read
 * here with FreeType in font units, so that the SVG, the PNG and the PDF
 * place text identically.  No kerning is applied, as neither backend's plain
 * text call applies it.
 */
#ifndef KBV_FONTM_H
#define KBV_FONTM_H

#include <stddef.h>
#include "err.h"

typedef struct fontm fontm;

enum { FONTM_REGULAR = 0, FONTM_BOLD = 1 };

/* Opens the two TrueType files; *out owned by the caller (fontm_free).
 * Paths are copied. */
int fontm_open(fontm **out, const char *regular_path, const char *bold_path, kbv_err *e);
void fontm_free(fontm *f);   /* NULL ok */

/* The file of a weight (borrowed from f). */
const char *fontm_path(const fontm *f, int weight);

/* Width in points of UTF-8 text s at size pt; characters the font lacks
 * count as the width of '?', the glyph the backends draw for them. */
double fontm_width(const fontm *f, int weight, double size, const char *s);
double fontm_width_n(const fontm *f, int weight, double size, const char *s, size_t n);

/* Ascent of capital letters (cap height) and descent, in points at size. */
double fontm_cap_height(const fontm *f, double size);
double fontm_descent(const fontm *f, double size);

/* Decodes one UTF-8 character from *s, advancing *s; malformed bytes
 * decode as U+FFFD.  Returns 0 at the end of the string. */
unsigned fontm_utf8_next(const char **s);

/* Maps a code point to the Windows-1252 byte the PDF backend writes, or
 * '?' when it has none; the measuring above applies the same mapping, so
 * that a character the PDF cannot show is measured as '?' everywhere. */
unsigned char fontm_cp1252(unsigned cp);

#endif
