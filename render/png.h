/* png.h - PNG output for the figures' raster versions, through libpng.
 *
 * Cairo's own writer (also libpng) uses adaptive filtering and zlib's default
 * level, which took three quarters of a report's rendering time; charts are
 * mostly flat colour, for which the "Up" filter and a fast zlib level give
 * files of about the same size at a fraction of the cost.  The output is
 * deterministic: no time chunk, no text chunks.
 */
#ifndef KBV_PNG_H
#define KBV_PNG_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"

/* Encodes a w x h image of 32-bit pixels 0x00RRGGBB in native byte order
 * (Cairo's RGB24), rows stride bytes apart, as an 8-bit RGB PNG at dpi
 * (a pHYs chunk).  *out is malloc'd and owned by the caller. */
int png_encode_rgb24(const unsigned char *data, int w, int h, int stride, double dpi, unsigned char **out,
                     size_t *len, kbv_err *e);

#endif
