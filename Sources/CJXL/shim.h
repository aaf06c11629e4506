#ifndef SCENELINEAR_CJXL_SHIM_H
#define SCENELINEAR_CJXL_SHIM_H
// libjxl 0.7 (Debian libjxl-dev): the decoder API, for JPEG XL (compression 52546) tiles,
// and libjxl_threads' thread-pool runner. Tiles are decoded in parallel, one per thread and
// without a runner; the runner is only used when an image has fewer tiles than threads
// (a single strip, e.g. a semantic mask), where it is the only source of parallelism.
#include <jxl/decode.h>
#include <jxl/thread_parallel_runner.h>

// libjxl 0.7 allocates its frame buffers with malloc, once per decoder (see
// MallocThresholds.swift): glibc's thresholds fixed at the ceilings of its own adaptive
// policy on 64-bit systems (mmap above 32 MiB, trim beyond 64 MiB of free heap top).
#if defined(__GLIBC__)
#include <malloc.h>
static inline void cjxl_fix_malloc_thresholds(void) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
}
// Returns the free heap memory kept for the next block to the kernel, once an image is done.
static inline void cjxl_release_free_heap(void) { malloc_trim(0); }
#else
static inline void cjxl_fix_malloc_thresholds(void) {}
static inline void cjxl_release_free_heap(void) {}
#endif
#endif
