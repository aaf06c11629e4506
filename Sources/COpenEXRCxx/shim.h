// Intentionally empty: this module exists for the OpenEXR C++ library's pkg-config flags.
