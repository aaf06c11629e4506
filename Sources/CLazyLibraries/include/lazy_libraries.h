// C libraries that are loaded on first use rather than at start (docs/architecture.md).
#ifndef SL_LAZY_LIBRARIES_H
#define SL_LAZY_LIBRARIES_H

#include <stddef.h>
#include "lazy_library_ids.h"

/// Loads `library` (an SL_LAZY_* number of lazy_library_ids.h) if it is not loaded yet; safe from any thread.
/// Returns 0, or -1 with what went wrong (the shared object and dlerror's reason) in `error`.
__attribute__((visibility("hidden"))) int sl_lazy_load(int library, char *error, size_t length);

/// The address of data symbol `symbol` of the library named `library` in symbols.txt, loaded
/// if it is not yet; ends the process with exit code 69 when that fails (load it first with
/// sl_lazy_load to report the failure instead).
__attribute__((visibility("hidden"))) const void *sl_lazy_data(const char *library, const char *symbol);

#endif
