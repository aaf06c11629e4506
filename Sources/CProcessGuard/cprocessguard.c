#define _GNU_SOURCE
#include "cprocessguard.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { TEMP_SLOTS = 512, TEMP_PATH = 4096, MAP_SLOTS = 256 };

/* A slot's state: 0 free, 1 being written, 2 holds a path. */
static atomic_int temp_state[TEMP_SLOTS];
static char temp_path[TEMP_SLOTS][TEMP_PATH];

static atomic_int map_state[MAP_SLOTS];
static _Atomic(uintptr_t) map_base[MAP_SLOTS];
static _Atomic(size_t) map_length[MAP_SLOTS];
static atomic_long map_fault_count[MAP_SLOTS];

static atomic_int installed;

static void remove_temporaries(void) {
    for (int i = 0; i < TEMP_SLOTS; i++) {
        if (atomic_load(&temp_state[i]) == 2) unlink(temp_path[i]);
    }
}

void cpg_remove_temporaries(void) { remove_temporaries(); }

static void on_termination(int signal_number) {
    remove_temporaries();
    _exit(128 + signal_number);
}

static void on_bus_error(int signal_number, siginfo_t *info, void *context) {
    (void)context;
    uintptr_t address = (uintptr_t)info->si_addr;
    for (int i = 0; i < MAP_SLOTS; i++) {
        if (atomic_load(&map_state[i]) != 2) continue;
        uintptr_t base = atomic_load(&map_base[i]);
        size_t length = atomic_load(&map_length[i]);
        if (address < base || address - base >= length) continue;
        long page = sysconf(_SC_PAGESIZE);
        uintptr_t start = address & ~((uintptr_t)page - 1);
        void *zero = mmap((void *)start, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (zero == MAP_FAILED) break;
        atomic_fetch_add(&map_fault_count[i], 1);
        return;
    }
    /* Not one of ours: the default action (a core dump), as if no handler were installed. */
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

int cpg_install(void) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&installed, &expected, 1)) return 0;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    sigemptyset(&action.sa_mask);
    /* While one termination handler runs, the others wait. */
    sigaddset(&action.sa_mask, SIGTERM);
    sigaddset(&action.sa_mask, SIGINT);
    sigaddset(&action.sa_mask, SIGHUP);
    sigaddset(&action.sa_mask, SIGPIPE);
    action.sa_handler = on_termination;
    int signals[] = {SIGTERM, SIGINT, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction previous;
        if (sigaction(signals[i], NULL, &previous) != 0) return -1;
        /* SIGINT or SIGHUP set to be ignored by the parent (a shell's background job, nohup)
           stays ignored; SIGTERM and SIGPIPE are always handled. */
        if (previous.sa_handler == SIG_IGN && (signals[i] == SIGINT || signals[i] == SIGHUP)) continue;
        if (sigaction(signals[i], &action, NULL) != 0) return -1;
    }
    /* A mask inherited from the parent must not keep them from arriving. */
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, SIGTERM);
    sigaddset(&unblock, SIGPIPE);
    sigaddset(&unblock, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
    struct sigaction bus;
    memset(&bus, 0, sizeof bus);
    sigemptyset(&bus.sa_mask);
    bus.sa_sigaction = on_bus_error;
    bus.sa_flags = SA_SIGINFO | SA_NODEFER;
    if (sigaction(SIGBUS, &bus, NULL) != 0) return -1;
    return 0;
}

int cpg_temp_register(const char *path) {
    size_t length = strlen(path);
    if (length >= TEMP_PATH) return -1;
    for (int i = 0; i < TEMP_SLOTS; i++) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&temp_state[i], &expected, 1)) {
            memcpy(temp_path[i], path, length + 1);
            atomic_store(&temp_state[i], 2);
            return i;
        }
    }
    return -1;
}

void cpg_temp_release(int slot) {
    if (slot >= 0 && slot < TEMP_SLOTS) atomic_store(&temp_state[slot], 0);
}

int cpg_map_register(const void *base, size_t length) {
    for (int i = 0; i < MAP_SLOTS; i++) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&map_state[i], &expected, 1)) {
            atomic_store(&map_base[i], (uintptr_t)base);
            atomic_store(&map_length[i], length);
            atomic_store(&map_fault_count[i], 0);
            atomic_store(&map_state[i], 2);
            return i;
        }
    }
    return -1;
}

long cpg_map_faults(int slot) {
    if (slot < 0 || slot >= MAP_SLOTS) return 0;
    return atomic_load(&map_fault_count[slot]);
}

void cpg_map_release(int slot) {
    if (slot >= 0 && slot < MAP_SLOTS) atomic_store(&map_state[slot], 0);
}

void cpg_cleanup_for_test(void) { remove_temporaries(); }

#include <sched.h>

int cpg_affinity_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return CPU_COUNT(&set);
}

#include <stdio.h>

int cpg_flush_stdout(void) {
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) return errno != 0 ? errno : EIO;
    return 0;
}

#if defined(__GLIBC__)
#include <malloc.h>
void cpg_fix_malloc_thresholds(void) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
}
void cpg_release_free_heap(void) { malloc_trim(0); }
#else
void cpg_fix_malloc_thresholds(void) {}
void cpg_release_free_heap(void) {}
#endif
