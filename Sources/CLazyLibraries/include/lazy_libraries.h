// C libraries that are loaded on first use rather than at start (docs/architecture.md).
#ifndef SL_LAZY_LIBRARIES_H
#define SL_LAZY_LIBRARIES_H

#include <stddef.h>
#include "lazy_library_ids.h"

/// Loads `library` (SL_LAZY_JXL, SL_LAZY_CHARTS) if it is not loaded yet; safe from any thread.
/// Returns 0, or -1 with what went wrong (the shared object and dlerror's reason) in `error`.
__attribute__((visibility("hidden"))) int sl_lazy_load(int library, char *error, size_t length);

/// Whether `library` has been loaded (1) or not (0).
__attribute__((visibility("hidden"))) int sl_lazy_is_loaded(int library);

#endif
