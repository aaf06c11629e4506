#ifndef SCENELINEAR_CCRYPTO_SHIM_H
#define SCENELINEAR_CCRYPTO_SHIM_H
// OpenSSL's libcrypto (Debian libssl-dev), used only for SHA-256 of input files.
#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>

/// One-shot SHA-256 of a buffer. Returns 1 on success; out must hold 32 bytes.
static inline int ccrypto_sha256(const void *data, size_t count, uint8_t *out) {
    unsigned int len = 0;
    return EVP_Digest(data, count, out, &len, EVP_sha256(), NULL) == 1 && len == 32;
}
#endif
