// The byte kernels of reading an OpenEXR ZIP or ZIPS chunk once it is inflated.
#ifndef CEXRZIP_H
#define CEXRZIP_H
#include <stddef.h>
#include <stdint.h>

// Undoes the ZIP predictor in place: from the second byte on, each byte becomes the one
// before it (as undone) plus the stored byte less 128, modulo 256.
void cexrzip_unpredict(uint8_t *bytes, size_t count);

// out[2i] = low[i] and out[2i + 1] = high[i] for i < pairs.
void cexrzip_interleave(const uint8_t *low, const uint8_t *high, size_t pairs, uint8_t *out);

#endif
