#ifndef SCENELINEAR_COPENEXR_SHIM_H
#define SCENELINEAR_COPENEXR_SHIM_H
// OpenEXRCore 3.1, the C API of OpenEXR (Debian libopenexr-dev). Only libOpenEXRCore is linked.
#include <OpenEXR/openexr.h>

// EXR_DEFAULT_CONTEXT_INITIALIZER is a brace-initialiser macro Swift cannot import; a
// zero-initialised struct is not equivalent (zip_level 0 instead of the library default).
static inline exr_context_initializer_t cexr_default_initializer(void) {
    exr_context_initializer_t i = EXR_DEFAULT_CONTEXT_INITIALIZER;
    return i;
}
#endif
