/* png.c - PNG encoding with zlib (see png.h). */
#include "png.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Appends a chunk (length, type, data, CRC of type and data) at *pos. */
static void chunk(unsigned char *buf, size_t *pos, const char *type, const unsigned char *data, uint32_t n)
{
    unsigned char *p = buf + *pos;
    put32(p, n);
    memcpy(p + 4, type, 4);
    if (n)
        memcpy(p + 8, data, n);
    uint32_t crc = (uint32_t)crc32(0, p + 4, n + 4);
    put32(p + 8 + n, crc);
    *pos += 12 + n;
}

int png_encode_rgb24(const unsigned char *data, int w, int h, int stride, double dpi, unsigned char **out,
                     size_t *len, kbv_err *e)
{
    *out = NULL;
    *len = 0;
    size_t row = (size_t)w * 3 + 1, raw_len = row * (size_t)h;
    unsigned char *raw = malloc(raw_len);
    uLongf zcap = compressBound((uLong)raw_len);
    unsigned char *buf = malloc(zcap + 128);
    if (!raw || !buf) {
        free(raw);
        free(buf);
        return err_set(e, KBV_ENOMEM, "out of memory encoding a %dx%d PNG", w, h);
    }
    /* Rows as RGB with the Up filter (each byte minus the one above), which
     * turns the charts' flat areas into runs of zeros. */
    for (int y = 0; y < h; y++) {
        const uint32_t *px = (const uint32_t *)(const void *)(data + (size_t)y * (size_t)stride);
        unsigned char *r = raw + (size_t)y * row;
        r[0] = 2;
        for (int x = 0; x < w; x++) {
            uint32_t v = px[x];
            r[1 + 3 * x] = (unsigned char)(v >> 16);
            r[2 + 3 * x] = (unsigned char)(v >> 8);
            r[3 + 3 * x] = (unsigned char)v;
        }
    }
    /* Apply Up from the bottom row upwards so the unfiltered row above is
     * still there when a row is filtered. */
    for (int y = h - 1; y > 0; y--) {
        unsigned char *r = raw + (size_t)y * row, *a = r - row;
        for (size_t i = 1; i < row; i++)
            r[i] = (unsigned char)(r[i] - a[i]);
    }
    size_t pos = 0;
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    memcpy(buf, sig, 8);
    pos = 8;
    unsigned char ihdr[13];
    put32(ihdr, (uint32_t)w);
    put32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8;   /* bit depth */
    ihdr[9] = 2;   /* RGB */
    ihdr[10] = ihdr[11] = ihdr[12] = 0;
    chunk(buf, &pos, "IHDR", ihdr, 13);
    unsigned char phys[9];
    uint32_t ppm = (uint32_t)(dpi / 0.0254 + 0.5);
    put32(phys, ppm);
    put32(phys + 4, ppm);
    phys[8] = 1;   /* metres */
    chunk(buf, &pos, "pHYs", phys, 9);
    /* IDAT: compress straight into place after the chunk header. */
    uLongf zlen = zcap;
    int zr = compress2(buf + pos + 8, &zlen, raw, (uLong)raw_len, 3);
    free(raw);
    if (zr != Z_OK) {
        free(buf);
        return err_set(e, KBV_ERUNTIME, "zlib failed compressing a PNG (%d)", zr);
    }
    put32(buf + pos, (uint32_t)zlen);
    memcpy(buf + pos + 4, "IDAT", 4);
    put32(buf + pos + 8 + zlen, (uint32_t)crc32(0, buf + pos + 4, (uInt)zlen + 4));
    pos += 12 + zlen;
    chunk(buf, &pos, "IEND", NULL, 0);
    *out = buf;
    *len = pos;
    return 0;
}
