#ifndef SCENELINEAR_CJXL_SHIM_H
#define SCENELINEAR_CJXL_SHIM_H
// libjxl 0.7 (Debian libjxl-dev): the decoder API, for JPEG XL (compression 52546) tiles,
// and libjxl_threads' thread-pool runner. Tiles are decoded in parallel, one per thread and
// without a runner; the runner is only used when an image has fewer tiles than threads
// (a single strip, e.g. a semantic mask), where it is the only source of parallelism.
#include <jxl/decode.h>
#include <jxl/thread_parallel_runner.h>

#endif
