#ifndef SCENELINEAR_MD5_LANES_H
#define SCENELINEAR_MD5_LANES_H
#include <stddef.h>
#include <stdint.h>

/// The MD5 digests of `count` (1 to 8) messages, each `length` bytes long, into out[0..<count].
void md5_lanes(const uint8_t *const messages[], size_t count, size_t length, uint8_t (*out)[16]);
#endif
