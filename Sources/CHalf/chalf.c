// Half-float conversion with run-time CPU dispatch, so the package builds with default
// flags (no -mf16c) and still uses VCVTPS2PH/VCVTPH2PS where the CPU has them.
#include "chalf.h"
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CHALF_X86 1
#endif

static uint16_t soft_f32_to_f16(float value) {
    uint32_t x;
    memcpy(&x, &value, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) {                      // inf or NaN
        if (absx > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
        return (uint16_t)(sign | 0x7c00u);
    }
    if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); // rounds to >= 65520 → inf
    if (absx < 0x38800000u) {                       // result is subnormal or zero
        if (absx < 0x33000000u) return (uint16_t)sign; // below half of the smallest subnormal
        uint32_t mant = (absx & 0x007fffffu) | 0x00800000u;
        int s = 126 - (int)(absx >> 23);            // shift onto the half subnormal lsb, 2^-24
        uint32_t q = mant >> s;
        uint32_t rem = mant & ((1u << s) - 1u);
        uint32_t halfway = 1u << (s - 1);
        if (rem > halfway || (rem == halfway && (q & 1u))) q += 1u;
        return (uint16_t)(sign | q);
    }
    uint32_t e = (absx >> 23) - 112u;               // rebias 127 → 15
    uint32_t m = absx & 0x007fffffu;
    uint32_t h = (e << 10) | (m >> 13);
    uint32_t rem = m & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h += 1u; // may carry into exponent: fine
    return (uint16_t)(sign | h);
}

static float soft_f16_to_f32(uint16_t h) {
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu;
    uint32_t m = h & 0x3ffu;
    uint32_t x;
    if (e == 0) {
        if (m == 0) {
            x = sign;
        } else {                                    // subnormal: normalise
            int shift = 0;
            while (!(m & 0x400u)) { m <<= 1; shift++; }
            m &= 0x3ffu;
            x = sign | ((uint32_t)(113 - shift) << 23) | (m << 13);
        }
    } else if (e == 31) {
        x = sign | 0x7f800000u | (m << 13);
    } else {
        x = sign | ((e + 112u) << 23) | (m << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

#ifdef CHALF_X86
// Returns nonzero when some result is infinite or NaN (all exponent bits set).
__attribute__((target("avx,f16c")))
static int hw_f32_to_f16(const float *src, uint16_t *dst, size_t count) {
    size_t i = 0;
    const __m128i exponent = _mm_set1_epi16(0x7c00);
    __m128i nonfinite = _mm_setzero_si128();
    for (; i + 8 <= count; i += 8) {
        __m256 v = _mm256_loadu_ps(src + i);
        __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
        nonfinite = _mm_or_si128(nonfinite, _mm_cmpeq_epi16(_mm_and_si128(h, exponent), exponent));
        _mm_storeu_si128((__m128i *)(dst + i), h);
    }
    int any = !_mm_testz_si128(nonfinite, nonfinite);
    for (; i < count; i++) {
        dst[i] = soft_f32_to_f16(src[i]);
        any |= (dst[i] & 0x7c00u) == 0x7c00u;
    }
    return any;
}

__attribute__((target("avx,f16c")))
static void hw_f16_to_f32(const uint16_t *src, float *dst, size_t count) {
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(src + i));
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    for (; i < count; i++) dst[i] = soft_f16_to_f32(src[i]);
}

static int detect_f16c(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
}
#endif

int chalf_has_f16c(void) {
#ifdef CHALF_X86
    static int cached = -1;
    if (cached < 0) cached = detect_f16c();
    return cached;
#else
    return 0;
#endif
}

size_t chalf_f32_to_f16(const float *src, uint16_t *dst, size_t count) {
    int any = 1;
#ifdef CHALF_X86
    if (chalf_has_f16c()) any = hw_f32_to_f16(src, dst, count);
    else
#endif
    for (size_t i = 0; i < count; i++) dst[i] = soft_f32_to_f16(src[i]);
    if (!any) return 0;
    size_t n = 0;  // rare: count them exactly
    for (size_t i = 0; i < count; i++) n += (dst[i] & 0x7c00u) == 0x7c00u;
    return n;
}

void chalf_f16_to_f32(const uint16_t *src, float *dst, size_t count) {
#ifdef CHALF_X86
    if (chalf_has_f16c()) { hw_f16_to_f32(src, dst, count); return; }
#endif
    for (size_t i = 0; i < count; i++) dst[i] = soft_f16_to_f32(src[i]);
}
