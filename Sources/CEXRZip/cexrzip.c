// ZIP chunk byte kernels: 16 bytes at a time with SSE2 (part of every x86-64 CPU), one at a
// time elsewhere and for the tail.
#include "cexrzip.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

void cexrzip_unpredict(uint8_t *bytes, size_t count) {
    if (count < 2) return;
    uint8_t previous = bytes[0];
    size_t i = 1;
#if defined(__SSE2__)
    const __m128i bias = _mm_set1_epi8((char)0x80);
    for (; i + 16 <= count; i += 16) {
        __m128i x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(bytes + i)), bias);
        // Prefix sum of the 16 differences in four steps (byte-wise, modulo 256).
        x = _mm_add_epi8(x, _mm_slli_si128(x, 1));
        x = _mm_add_epi8(x, _mm_slli_si128(x, 2));
        x = _mm_add_epi8(x, _mm_slli_si128(x, 4));
        x = _mm_add_epi8(x, _mm_slli_si128(x, 8));
        const uint8_t carried = previous;
        previous = (uint8_t)(previous + (uint8_t)((unsigned)_mm_extract_epi16(x, 7) >> 8));
        _mm_storeu_si128((__m128i *)(bytes + i), _mm_add_epi8(x, _mm_set1_epi8((char)carried)));
    }
#endif
    for (; i < count; i++) {
        previous = (uint8_t)(previous + bytes[i] - 128);
        bytes[i] = previous;
    }
}

void cexrzip_interleave(const uint8_t *low, const uint8_t *high, size_t pairs, uint8_t *out) {
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 16 <= pairs; i += 16) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(low + i));
        const __m128i b = _mm_loadu_si128((const __m128i *)(high + i));
        _mm_storeu_si128((__m128i *)(out + 2 * i), _mm_unpacklo_epi8(a, b));
        _mm_storeu_si128((__m128i *)(out + 2 * i + 16), _mm_unpackhi_epi8(a, b));
    }
#endif
    for (; i < pairs; i++) {
        out[2 * i] = low[i];
        out[2 * i + 1] = high[i];
    }
}
