// The tables scripts/generate-lazy-stubs.py writes (symbols.c), read by lazy.c.
#ifndef SL_LAZY_TABLES_H
#define SL_LAZY_TABLES_H

#define SL_LAZY_MAX_SONAMES 8

/// A library loaded on first use: its name in messages and the shared objects it is made of,
/// loaded in this order (a 0 ends the list).
struct sl_lazy_library {
    const char *name;
    const char *sonames[SL_LAZY_MAX_SONAMES];
};

/// A function reached through a stub, and the library that defines it.
struct sl_lazy_symbol {
    const char *name;
    int library;
};

#define SL_LAZY_HIDDEN __attribute__((visibility("hidden")))
extern const struct sl_lazy_library sl_lazy_libraries[] SL_LAZY_HIDDEN;
extern const int sl_lazy_library_count SL_LAZY_HIDDEN;
extern const struct sl_lazy_symbol sl_lazy_symbols[] SL_LAZY_HIDDEN;
extern const int sl_lazy_symbol_count SL_LAZY_HIDDEN;

#endif
