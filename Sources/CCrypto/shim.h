#ifndef SCENELINEAR_CCRYPTO_SHIM_H
#define SCENELINEAR_CCRYPTO_SHIM_H
// OpenSSL's libcrypto (Debian libssl-dev): SHA-256 of input files, and MD5 for the DNG
// raw-data digests (RawImageDigest, NewRawImageDigest, OriginalRawFileDigest).
#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>

/// One-shot SHA-256 of a buffer. Returns 1 on success; out must hold 32 bytes.
static inline int ccrypto_sha256(const void *data, size_t count, uint8_t *out) {
    unsigned int len = 0;
    return EVP_Digest(data, count, out, &len, EVP_sha256(), NULL) == 1 && len == 32;
}

/// One-shot MD5 of a buffer. Returns 1 on success; out must hold 16 bytes.
static inline int ccrypto_md5(const void *data, size_t count, uint8_t *out) {
    unsigned int len = 0;
    return EVP_Digest(data, count, out, &len, EVP_md5(), NULL) == 1 && len == 16;
}

/// A new MD5 context, ready for updates; NULL on failure. Free with ccrypto_md5_free.
static inline EVP_MD_CTX *ccrypto_md5_new(void) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx != NULL && EVP_DigestInit_ex(ctx, EVP_md5(), NULL) != 1) {
        EVP_MD_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static inline int ccrypto_md5_update(EVP_MD_CTX *ctx, const void *data, size_t count) {
    return EVP_DigestUpdate(ctx, data, count) == 1;
}

/// Finishes the digest into out (16 bytes). Returns 1 on success.
static inline int ccrypto_md5_final(EVP_MD_CTX *ctx, uint8_t *out) {
    unsigned int len = 0;
    return EVP_DigestFinal_ex(ctx, out, &len) == 1 && len == 16;
}

static inline void ccrypto_md5_free(EVP_MD_CTX *ctx) { EVP_MD_CTX_free(ctx); }

/// A new SHA-256 context, ready for updates (ccrypto_md5_update adds bytes to any
/// context); NULL on failure. Free with ccrypto_md5_free.
static inline EVP_MD_CTX *ccrypto_sha256_new(void) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/// Finishes a SHA-256 digest into out (32 bytes). Returns 1 on success.
static inline int ccrypto_sha256_final(EVP_MD_CTX *ctx, uint8_t *out) {
    unsigned int len = 0;
    return EVP_DigestFinal_ex(ctx, out, &len) == 1 && len == 32;
}
#endif
