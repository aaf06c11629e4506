#ifndef SCENELINEAR_EXR_DWA_H
#define SCENELINEAR_EXR_DWA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Rewrites the scanline EXR `input` (one part, any compression) as `output` with
/// `compression` (the file format's code: 0 none … 8 DWAA, 9 DWAB) and, for DWA, `level`
/// (OpenEXR's default is 45): the header and every channel are kept. For DWA, OpenEXR
/// compresses R, G, B (and Y, RY, BY) lossily and the other channels losslessly.
/// OpenEXRCore 3.1 can neither encode nor decode DWA, so DWA files are written (from an
/// uncompressed one) and read (into an uncompressed one) through the OpenEXR C++ library.
/// Returns 0 on success; otherwise 1, with the library's message in `message`.
int scenelinear_exr_rewrite(const char *input, const char *output, int compression, float level,
                            char *message, size_t message_size);

#ifdef __cplusplus
}
#endif

#endif
