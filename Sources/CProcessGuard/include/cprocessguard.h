#ifndef SCENELINEAR_CPROCESSGUARD_H
#define SCENELINEAR_CPROCESSGUARD_H
#include <stddef.h>

/// What the process does when it is told to stop, and when a file it has mapped shrinks.
///
/// Temporaries: a fixed table of paths (written before the file is created, cleared after
/// it is renamed or removed). On SIGTERM, SIGINT, SIGHUP or SIGPIPE the handler unlinks
/// every registered path (unlink is async-signal-safe) and ends the process with
/// _exit(128 + signal): 143, 130, 129, 141.
///
/// Mapped inputs: a fixed table of (base, length) ranges. A SIGBUS whose fault address lies
/// in one (the file was truncated under the mapping) maps a zero page over the faulting
/// page, counts the fault against the range and returns, so the reader sees zeros and the
/// caller asks `cpg_map_faults` before trusting what it read. Any other SIGBUS ends the
/// process as the default action would.

/// Installs the handlers once (later calls do nothing). Returns 0, or -1 when sigaction failed.
int cpg_install(void);

/// Registers a temporary file's path; returns a slot (>= 0) for `cpg_temp_release`, or -1
/// when the table is full or the path too long (the file is then not removed on a signal).
int cpg_temp_register(const char *path);
/// Forgets a slot (the file was renamed into place or removed).
void cpg_temp_release(int slot);

/// Registers a mapped range; returns a slot (>= 0) or -1 when the table is full.
int cpg_map_register(const void *base, size_t length);
/// How many pages of the slot's range were found missing (the file shrank) so far.
long cpg_map_faults(int slot);
void cpg_map_release(int slot);

/// Test hook: runs the termination cleanup (unlinks the registered temporaries) without exiting.
void cpg_cleanup_for_test(void);
/// Unlinks every registered temporary (async-signal-safe), for a process about to _exit.
void cpg_remove_temporaries(void);


/// The number of CPUs in this process's affinity mask (sched_getaffinity), or 0 when it
/// cannot be read.
int cpg_affinity_count(void);

/// Flushes the C library's standard output; returns 0, or the errno of a write that failed
/// (now or earlier: a full disk, a closed pipe).
int cpg_flush_stdout(void);
/// glibc's malloc thresholds fixed at the ceilings of its own adaptive policy on 64-bit
/// systems (mmap above 32 MiB, trim beyond 64 MiB of free heap top), so that buffers freed
/// and allocated again block after block stay in the process (see MallocThresholds.swift).
/// Does nothing without glibc.
void cpg_fix_malloc_thresholds(void);
/// Returns the free heap memory kept for the next block to the kernel (malloc_trim).
void cpg_release_free_heap(void);

#endif
