/* png.c - PNG encoding through libpng (see png.h).  Cairo's writer uses
 * libpng too, but with adaptive filtering and zlib's default level; here the
 * same library is told to use the Up filter and level 3, which suits flat
 * chart colours. */
#include "png.h"

#include <png.h>
#include <stdlib.h>
#include <string.h>
#include "sbuf.h"

/* libpng's write callback: appends to the caller's sbuf, which records a
 * failed allocation for the check after png_write_end. */
static void write_mem(png_structp png, png_bytep data, png_size_t n)
{
    sbuf *m = png_get_io_ptr(png);
    /* The first chunk reserves 64 KiB: a small chart's whole PNG. */
    if (!m->cap)
        sb_reserve(m, 1 << 16);
    sb_add(m, (const char *)data, n);
}

static void flush_mem(png_structp png) { (void)png; }

int png_encode_rgb24(const unsigned char *data, int w, int h, int stride, double dpi, unsigned char **out,
                     size_t *len, kbv_err *e)
{
    *out = NULL;
    *len = 0;
    /* volatile: these are read after a longjmp out of libpng. */
    sbuf *volatile m = calloc(1, sizeof *m);
    png_bytep *volatile rows = malloc(sizeof(png_bytep) * (size_t)(h > 0 ? h : 1));
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    int rc = 0;
    if (!m || !rows || !png || !info) {
        rc = err_set(e, KBV_ENOMEM, "out of memory encoding a %dx%d PNG", w, h);
        goto done;
    }
    if (setjmp(png_jmpbuf(png))) {
        rc = err_set(e, KBV_ERUNTIME, "libpng failed encoding a %dx%d PNG", w, h);
        goto done;
    }
    png_set_write_fn(png, m, write_mem, flush_mem);
    png_set_compression_level(png, 3);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    png_uint_32 ppm = (png_uint_32)(dpi / 0.0254 + 0.5);
    png_set_pHYs(png, info, ppm, ppm, PNG_RESOLUTION_METER);
    png_write_info(png, info);
    /* Cairo's RGB24 is a native-endian 0x00RRGGBB word: bytes B, G, R, X on
     * this little-endian host; libpng drops the filler and swaps to RGB. */
    png_set_filler(png, 0, PNG_FILLER_AFTER);
    png_set_bgr(png);
    for (int y = 0; y < h; y++) rows[y] = (png_bytep)(uintptr_t)(data + (size_t)y * (size_t)stride);
    png_write_image(png, rows);
    png_write_end(png, NULL);
    if (m->failed) {
        rc = err_set(e, KBV_ENOMEM, "out of memory encoding a %dx%d PNG", w, h);
        goto done;
    }
    *out = (unsigned char *)sb_take(m, len);
done:
    if (png) png_destroy_write_struct(&png, info ? &info : NULL);
    if (m) sb_free(m);
    free(m);
    free(rows);
    return rc;
}
