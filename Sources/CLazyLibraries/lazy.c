// Loading the libraries of symbols.txt on first use, for the stubs of stubs.S.
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cprocessguard.h"
#include "lazy_libraries.h"
#include "lazy_tables.h"

#define SL_LAZY_MAX_LIBRARIES 8

static void *handles[SL_LAZY_MAX_LIBRARIES][SL_LAZY_MAX_SONAMES];
// 0: not tried yet, 1: loaded, -1: a shared object could not be loaded (`failures` says why).
static atomic_int states[SL_LAZY_MAX_LIBRARIES];
static char failures[SL_LAZY_MAX_LIBRARIES][512];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int sl_lazy_load(int library, char *error, size_t length) {
    if (library < 0 || library >= sl_lazy_library_count || library >= SL_LAZY_MAX_LIBRARIES) {
        if (error && length) snprintf(error, length, "no lazily loaded library number %d", library);
        return -1;
    }
    if (atomic_load_explicit(&states[library], memory_order_acquire) == 1) return 0;
    pthread_mutex_lock(&lock);
    if (atomic_load_explicit(&states[library], memory_order_relaxed) == 0) {
        int state = 1;
        const struct sl_lazy_library *l = &sl_lazy_libraries[library];
        for (int k = 0; k < SL_LAZY_MAX_SONAMES && l->sonames[k]; k++) {
            void *handle = dlopen(l->sonames[k], RTLD_NOW | RTLD_LOCAL);
            if (!handle) {
                const char *reason = dlerror();
                snprintf(failures[library], sizeof failures[library], "the %s library %s could not be loaded (%s)",
                         l->name, l->sonames[k], reason ? reason : "no reason given");
                state = -1;
                break;
            }
            handles[library][k] = handle;
        }
        atomic_store_explicit(&states[library], state, memory_order_release);
    }
    int state = atomic_load_explicit(&states[library], memory_order_relaxed);
    pthread_mutex_unlock(&lock);
    if (state != 1 && error && length) snprintf(error, length, "%s", failures[library]);
    return state == 1 ? 0 : -1;
}

/// The slots the stubs jump through (stubs.S).
extern void *sl_lazy_slots[] __attribute__((visibility("hidden")));

/// A message on standard error, the process's temporaries removed and exit code 69
/// (EX_UNAVAILABLE): a function was called whose library cannot be loaded. RawDecode loads
/// libjxl first (sl_lazy_load) and reports a failure as an error of the block it decodes;
/// the chart functions, which cannot fail, end the process here, as a library missing at
/// start would have before any work.
static void unavailable(const char *what) {
    dprintf(2, "scenelinear: error: %s\n", what);
    cpg_remove_temporaries();
    _exit(69);
}

/// Called by a stub's first call (stubs.S) with its number: the function's address, stored
/// in its slot so that later calls jump straight to it.
__attribute__((visibility("hidden"))) void *sl_lazy_resolve(long index);
void *sl_lazy_resolve(long index) {
    const struct sl_lazy_symbol *s = &sl_lazy_symbols[index];
    char error[600];
    if (sl_lazy_load(s->library, error, sizeof error) != 0) unavailable(error);
    void *address = 0;
    for (int k = 0; k < SL_LAZY_MAX_SONAMES && !address && handles[s->library][k]; k++) {
        address = dlsym(handles[s->library][k], s->name);
    }
    if (!address) {
        snprintf(error, sizeof error, "%s is not in the %s library", s->name, sl_lazy_libraries[s->library].name);
        unavailable(error);
    }
    __atomic_store_n(&sl_lazy_slots[index], address, __ATOMIC_RELEASE);
    return address;
}

/// The address of data symbol `symbol` of the library named `library` in symbols.txt ("hdf5"),
/// loading the library first; a library that cannot be loaded or lacks the symbol ends the
/// process as a function's would (exit 69). Callers load the library with sl_lazy_load first
/// to report a failure as an error instead.
const void *sl_lazy_data(const char *library, const char *symbol) {
    int number = -1;
    for (int k = 0; k < sl_lazy_library_count; k++) {
        if (strcmp(sl_lazy_libraries[k].name, library) == 0) number = k;
    }
    char error[600];
    if (number < 0) {
        snprintf(error, sizeof error, "no lazily loaded library named %s", library);
        unavailable(error);
    }
    if (sl_lazy_load(number, error, sizeof error) != 0) unavailable(error);
    void *address = 0;
    for (int k = 0; k < SL_LAZY_MAX_SONAMES && !address && handles[number][k]; k++) address = dlsym(handles[number][k], symbol);
    if (!address) {
        snprintf(error, sizeof error, "%s is not in the %s library", symbol, library);
        unavailable(error);
    }
    return address;
}
