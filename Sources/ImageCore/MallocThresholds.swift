import CProcessGuard

/// glibc's malloc thresholds, fixed before the first JPEG XL block is decoded, and before
/// the first block of rows of an EXR is decoded for a measurement's pass.
///
/// libjxl 0.7 allocates a decoder's frame buffers with plain `malloc` (its memory manager
/// does not reach them) and frees them when the decoder is destroyed, once per block. Under
/// glibc's default, adaptive thresholds those megabyte-sized buffers are mapped and unmapped,
/// or the heap top is trimmed, over and over: every block then starts on fresh pages the
/// kernel must fault in and clear. For the 126 tiles of a 60 MP image that was 40 % of the
/// decoding time, spent in the kernel. Fixing the thresholds at the ceilings glibc's adaptive
/// policy reaches by itself on 64-bit systems (32 MiB for `mmap`, twice that for trimming)
/// keeps the freed buffers in the process for the next block; memory is still returned to
/// the kernel beyond 64 MiB of free heap top, and allocations above 32 MiB are still mapped
/// on their own. Process-wide, set once; once all the blocks of an image are decoded,
/// `releaseFreeHeap` hands what libjxl's buffers left free back to the kernel, so that later
/// stages do not run on top of it. The same holds for the buffers of an EXR's chunks decoded
/// again a block of rows at a time in each pass of a measurement (OpenEXRCore's pipeline, the
/// inflated bytes, the block's planes): 150 000 page faults for a 12 MP `stats` under the
/// default thresholds, 8 000 with them fixed.
public enum MallocThresholds {
    public static let fixed: Void = cpg_fix_malloc_thresholds()

    public static func releaseFreeHeap() { cpg_release_free_heap() }
}
