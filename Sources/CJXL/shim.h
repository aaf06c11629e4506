#ifndef SCENELINEAR_CJXL_SHIM_H
#define SCENELINEAR_CJXL_SHIM_H
// libjxl 0.7 (Debian libjxl-dev): the decoder API only, for JPEG XL (compression 52546)
// tiles. Each tile decodes on one thread without a parallel runner, because the tiles
// themselves are decoded in parallel.
#include <jxl/decode.h>
#endif
