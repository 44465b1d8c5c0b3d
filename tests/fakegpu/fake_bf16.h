/* fake_bf16.h - bfloat16 bits on the host for the fake bf16 candidates: the
 * same rounding (to nearest, ties to even) as kbv's own. */
#include <stdint.h>
#include <string.h>

static inline float bf16_to_f(uint16_t h)
{
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static inline uint16_t f_to_bf16(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu)) return (uint16_t)((b >> 16) | 0x0040u);
    b += 0x7fffu + ((b >> 16) & 1u);
    return (uint16_t)(b >> 16);
}

/* y = bf16(relu(x) * scale) over the fake's elements. */
static inline void relu_bf16(const uint16_t *x, uint16_t *y, int64_t n, float scale)
{
    for (int64_t i = 0; i < n; i++) {
        float v = bf16_to_f(x[i]);
        y[i] = f_to_bf16((v > 0 ? v : 0.0f) * scale);
    }
}
