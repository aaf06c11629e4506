#ifndef SCENELINEAR_CZLIB_SHIM_H
#define SCENELINEAR_CZLIB_SHIM_H
// zlib (Debian zlib1g-dev): compresses HDF5 chunks on several cores. HDF5's deflate filter
// stores each chunk as one zlib stream made by compress2(level), so the bytes are the same.
#include <zlib.h>
#endif
