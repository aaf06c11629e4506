// MD5 of up to eight equal-length messages at once, one per lane of a 256-bit vector
// (RFC 1321; the DNG raw-image digests hash many independent tiles of the same size).
// Built twice, for AVX2 and for the baseline instruction set, chosen at run time.
#include "md5_lanes.h"
#include <string.h>

typedef uint32_t v8u __attribute__((vector_size(32)));

#define SHUF(x, y, ...) __builtin_shufflevector((x), (y), __VA_ARGS__)

/* Words w..w+7 of 64-byte block `off` of the 8 lanes, transposed: out[j] holds word w+j of
   every lane. */
#define LOAD8(out, p, off, w)                                                                       \
    do {                                                                                            \
        v8u r0, r1, r2, r3, r4, r5, r6, r7;                                                         \
        memcpy(&r0, p[0] + (off) + 4 * (w), 32); memcpy(&r1, p[1] + (off) + 4 * (w), 32);           \
        memcpy(&r2, p[2] + (off) + 4 * (w), 32); memcpy(&r3, p[3] + (off) + 4 * (w), 32);           \
        memcpy(&r4, p[4] + (off) + 4 * (w), 32); memcpy(&r5, p[5] + (off) + 4 * (w), 32);           \
        memcpy(&r6, p[6] + (off) + 4 * (w), 32); memcpy(&r7, p[7] + (off) + 4 * (w), 32);           \
        v8u t0 = SHUF(r0, r1, 0, 8, 1, 9, 4, 12, 5, 13), t1 = SHUF(r0, r1, 2, 10, 3, 11, 6, 14, 7, 15); \
        v8u t2 = SHUF(r2, r3, 0, 8, 1, 9, 4, 12, 5, 13), t3 = SHUF(r2, r3, 2, 10, 3, 11, 6, 14, 7, 15); \
        v8u t4 = SHUF(r4, r5, 0, 8, 1, 9, 4, 12, 5, 13), t5 = SHUF(r4, r5, 2, 10, 3, 11, 6, 14, 7, 15); \
        v8u t6 = SHUF(r6, r7, 0, 8, 1, 9, 4, 12, 5, 13), t7 = SHUF(r6, r7, 2, 10, 3, 11, 6, 14, 7, 15); \
        v8u s0 = SHUF(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13), s1 = SHUF(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15); \
        v8u s2 = SHUF(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13), s3 = SHUF(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15); \
        v8u s4 = SHUF(t4, t6, 0, 1, 8, 9, 4, 5, 12, 13), s5 = SHUF(t4, t6, 2, 3, 10, 11, 6, 7, 14, 15); \
        v8u s6 = SHUF(t5, t7, 0, 1, 8, 9, 4, 5, 12, 13), s7 = SHUF(t5, t7, 2, 3, 10, 11, 6, 7, 14, 15); \
        out[0] = SHUF(s0, s4, 0, 1, 2, 3, 8, 9, 10, 11); out[1] = SHUF(s1, s5, 0, 1, 2, 3, 8, 9, 10, 11); \
        out[2] = SHUF(s2, s6, 0, 1, 2, 3, 8, 9, 10, 11); out[3] = SHUF(s3, s7, 0, 1, 2, 3, 8, 9, 10, 11); \
        out[4] = SHUF(s0, s4, 4, 5, 6, 7, 12, 13, 14, 15); out[5] = SHUF(s1, s5, 4, 5, 6, 7, 12, 13, 14, 15); \
        out[6] = SHUF(s2, s6, 4, 5, 6, 7, 12, 13, 14, 15); out[7] = SHUF(s3, s7, 4, 5, 6, 7, 12, 13, 14, 15); \
    } while (0)

#define F(x, y, z) ((((y) ^ (z)) & (x)) ^ (z))
#define G(x, y, z) ((((x) ^ (y)) & (z)) ^ (y))
#define H(x, y, z) ((x) ^ (y) ^ (z))
#define I(x, y, z) ((y) ^ ((x) | ~(z)))
#define STEP(f, a, b, c, d, x, t, s)                                                                \
    a += f(b, c, d) + (x) + (t);                                                                    \
    a = (a << (s)) | (a >> (32 - (s)));                                                             \
    a += b;

#define BLOCKS_BODY                                                                                 \
    v8u a0 = st[0], b0 = st[1], c0 = st[2], d0 = st[3];                                             \
    for (size_t k = 0; k < nblocks; k++) {                                                          \
        v8u m[16];                                                                                  \
        LOAD8(m, p, 64 * k, 0);                                                                     \
        LOAD8((m + 8), p, 64 * k, 8);                                                               \
        v8u a = a0, b = b0, c = c0, d = d0;                                                         \
        STEP(F, a, b, c, d, m[0], 0xd76aa478, 7) STEP(F, d, a, b, c, m[1], 0xe8c7b756, 12)          \
        STEP(F, c, d, a, b, m[2], 0x242070db, 17) STEP(F, b, c, d, a, m[3], 0xc1bdceee, 22)         \
        STEP(F, a, b, c, d, m[4], 0xf57c0faf, 7) STEP(F, d, a, b, c, m[5], 0x4787c62a, 12)          \
        STEP(F, c, d, a, b, m[6], 0xa8304613, 17) STEP(F, b, c, d, a, m[7], 0xfd469501, 22)         \
        STEP(F, a, b, c, d, m[8], 0x698098d8, 7) STEP(F, d, a, b, c, m[9], 0x8b44f7af, 12)          \
        STEP(F, c, d, a, b, m[10], 0xffff5bb1, 17) STEP(F, b, c, d, a, m[11], 0x895cd7be, 22)       \
        STEP(F, a, b, c, d, m[12], 0x6b901122, 7) STEP(F, d, a, b, c, m[13], 0xfd987193, 12)        \
        STEP(F, c, d, a, b, m[14], 0xa679438e, 17) STEP(F, b, c, d, a, m[15], 0x49b40821, 22)       \
        STEP(G, a, b, c, d, m[1], 0xf61e2562, 5) STEP(G, d, a, b, c, m[6], 0xc040b340, 9)           \
        STEP(G, c, d, a, b, m[11], 0x265e5a51, 14) STEP(G, b, c, d, a, m[0], 0xe9b6c7aa, 20)        \
        STEP(G, a, b, c, d, m[5], 0xd62f105d, 5) STEP(G, d, a, b, c, m[10], 0x02441453, 9)          \
        STEP(G, c, d, a, b, m[15], 0xd8a1e681, 14) STEP(G, b, c, d, a, m[4], 0xe7d3fbc8, 20)        \
        STEP(G, a, b, c, d, m[9], 0x21e1cde6, 5) STEP(G, d, a, b, c, m[14], 0xc33707d6, 9)          \
        STEP(G, c, d, a, b, m[3], 0xf4d50d87, 14) STEP(G, b, c, d, a, m[8], 0x455a14ed, 20)         \
        STEP(G, a, b, c, d, m[13], 0xa9e3e905, 5) STEP(G, d, a, b, c, m[2], 0xfcefa3f8, 9)          \
        STEP(G, c, d, a, b, m[7], 0x676f02d9, 14) STEP(G, b, c, d, a, m[12], 0x8d2a4c8a, 20)        \
        STEP(H, a, b, c, d, m[5], 0xfffa3942, 4) STEP(H, d, a, b, c, m[8], 0x8771f681, 11)          \
        STEP(H, c, d, a, b, m[11], 0x6d9d6122, 16) STEP(H, b, c, d, a, m[14], 0xfde5380c, 23)       \
        STEP(H, a, b, c, d, m[1], 0xa4beea44, 4) STEP(H, d, a, b, c, m[4], 0x4bdecfa9, 11)          \
        STEP(H, c, d, a, b, m[7], 0xf6bb4b60, 16) STEP(H, b, c, d, a, m[10], 0xbebfbc70, 23)        \
        STEP(H, a, b, c, d, m[13], 0x289b7ec6, 4) STEP(H, d, a, b, c, m[0], 0xeaa127fa, 11)         \
        STEP(H, c, d, a, b, m[3], 0xd4ef3085, 16) STEP(H, b, c, d, a, m[6], 0x04881d05, 23)         \
        STEP(H, a, b, c, d, m[9], 0xd9d4d039, 4) STEP(H, d, a, b, c, m[12], 0xe6db99e5, 11)         \
        STEP(H, c, d, a, b, m[15], 0x1fa27cf8, 16) STEP(H, b, c, d, a, m[2], 0xc4ac5665, 23)        \
        STEP(I, a, b, c, d, m[0], 0xf4292244, 6) STEP(I, d, a, b, c, m[7], 0x432aff97, 10)          \
        STEP(I, c, d, a, b, m[14], 0xab9423a7, 15) STEP(I, b, c, d, a, m[5], 0xfc93a039, 21)        \
        STEP(I, a, b, c, d, m[12], 0x655b59c3, 6) STEP(I, d, a, b, c, m[3], 0x8f0ccc92, 10)         \
        STEP(I, c, d, a, b, m[10], 0xffeff47d, 15) STEP(I, b, c, d, a, m[1], 0x85845dd1, 21)        \
        STEP(I, a, b, c, d, m[8], 0x6fa87e4f, 6) STEP(I, d, a, b, c, m[15], 0xfe2ce6e0, 10)         \
        STEP(I, c, d, a, b, m[6], 0xa3014314, 15) STEP(I, b, c, d, a, m[13], 0x4e0811a1, 21)        \
        STEP(I, a, b, c, d, m[4], 0xf7537e82, 6) STEP(I, d, a, b, c, m[11], 0xbd3af235, 10)         \
        STEP(I, c, d, a, b, m[2], 0x2ad7d2bb, 15) STEP(I, b, c, d, a, m[9], 0xeb86d391, 21)         \
        a0 += a; b0 += b; c0 += c; d0 += d;                                                         \
    }                                                                                               \
    st[0] = a0; st[1] = b0; st[2] = c0; st[3] = d0;

__attribute__((target("avx2"))) static void blocks_avx2(v8u st[4], const uint8_t *const p[8], size_t nblocks) {
    BLOCKS_BODY
}

static void blocks_generic(v8u st[4], const uint8_t *const p[8], size_t nblocks) {
    BLOCKS_BODY
}

void md5_lanes(const uint8_t *const messages[], size_t count, size_t length, uint8_t (*out)[16]) {
    static int avx2 = -1;
    if (avx2 < 0) avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    void (*blocks)(v8u *, const uint8_t *const *, size_t) = avx2 ? blocks_avx2 : blocks_generic;
    if (count == 0) return;
    if (count > 8) count = 8;
    v8u st[4];
    st[0] = (v8u){0} + 0x67452301u; st[1] = (v8u){0} + 0xefcdab89u;
    st[2] = (v8u){0} + 0x98badcfeu; st[3] = (v8u){0} + 0x10325476u;
    /* Lanes beyond `count` repeat the first message (their results are not used). */
    const uint8_t *p[8];
    for (size_t l = 0; l < 8; l++) p[l] = messages[l < count ? l : 0];
    size_t full = length / 64;
    blocks(st, p, full);
    size_t rest = length - 64 * full;
    size_t tailBlocks = rest + 9 <= 64 ? 1 : 2;
    uint8_t tail[8][128];
    const uint8_t *tp[8];
    uint64_t bits = (uint64_t)length * 8;
    for (size_t l = 0; l < 8; l++) {
        memset(tail[l], 0, sizeof tail[l]);
        memcpy(tail[l], p[l] + 64 * full, rest);
        tail[l][rest] = 0x80;
        for (int i = 0; i < 8; i++) tail[l][64 * tailBlocks - 8 + i] = (uint8_t)(bits >> (8 * i));
        tp[l] = tail[l];
    }
    blocks(st, tp, tailBlocks);
    for (size_t l = 0; l < count; l++)
        for (int w = 0; w < 4; w++) {
            uint32_t x = st[w][l];
            memcpy(out[l] + 4 * w, &x, 4);
        }
}
