#ifndef SCENELINEAR_CDEFLATE_SHIM_H
#define SCENELINEAR_CDEFLATE_SHIM_H
// libdeflate (Debian libdeflate-dev): whole-buffer zlib-format decompression of Deflate
// (compression 8) tiles and strips, whose decoded size is known in advance.
#include <libdeflate.h>
#endif
