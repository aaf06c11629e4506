import DNGContainer
import ImageCore

/// Stage 1: decodes the stored samples of an image IFD.
///
/// Decoded here (see `docs/formats-support.md` for the full table):
///
/// - unsigned integer samples of 1–32 bits and floating-point samples of 16, 24 and 32
///   bits, uncompressed (depths other than 8/16/24/32 packed MSB-first, each row starting
///   on a byte boundary);
/// - Deflate (compression 8) with Predictor 1, 2, 3 and the DNG predictors 34892–34895;
/// - lossless JPEG (compression 7), and a baseline DCT stream in a compression-7 tile when
///   the samples are 8-bit;
/// - lossy JPEG (compression 34892, 8-bit, 1 or 3 components);
/// - JPEG XL (compression 52546, 8–16-bit integers or floats, 1 or 3 planes, bare
///   codestream or ISOBMFF container);
/// - tiles or strips, PlanarConfiguration 1 (chunky) or 2 (one plane per block);
/// - RowInterleaveFactor and ColumnInterleaveFactor (rows and columns stored as
///   interleaved fields of the whole image), put in image order as each block is placed.
///
/// Every offset, count and size is validated once, before any block is decoded; blocks
/// then decode in parallel on all cores.
public enum RawDecoder {
    /// Told, from any thread, of pixels a long block decode has rendered (`decodeProgressPixels`).
    public typealias DecodeProgress = @Sendable (_ pixels: Int) -> Void

    /// Decodes the raw image `ifd` of `dng` (PhotometricInterpretation CFA or LinearRaw).
    /// - Throws: `RawDecodeError` naming the file, the IFD and the tile or strip.
    /// - Parameter digester: given the decoded image (or, for a digest of compressed
    ///   data, each block's stored bytes as it is decoded).
    /// - Parameter decodeProgress: see `decodeProgressPixels`.
    public static func decode(_ dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits = DecodeLimits(),
                              digester: ImageDigester? = nil, decodeProgress: DecodeProgress? = nil) throws -> StoredImage {
        var plan = try BlockPlan(dng: dng, ifd: ifd, limits: limits, rawOnly: true)
        plan.decodeProgress = decodeProgress
        let image = try decode(plan, digester: digester)
        if let digester, !digester.isCompressed { digester.add(image) }
        return image
    }

    /// Decodes any image IFD of `dng`: raw images, and also semantic masks
    /// (PhotometricMask 52527), depth maps (Depth 51177), transparency masks and previews
    /// (BlackIsZero, RGB, and YCbCr when JPEG-compressed). The samples are returned as
    /// stored; a JPEG-compressed YCbCr preview comes back as RGB, converted by libjpeg.
    /// - Throws: `RawDecodeError` naming the file, the IFD and the tile or strip.
    public static func decodeAnyImage(_ dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits = DecodeLimits()) throws -> StoredImage {
        try decode(BlockPlan(dng: dng, ifd: ifd, limits: limits, rawOnly: false))
    }

    /// Decodes the raw image `ifd` of `dng` block by block (tiles or strips), in parallel on
    /// all cores, without ever holding the whole image: each block is decoded into a buffer
    /// of its own and handed to `body` on the decoding thread, with the image rectangle it
    /// covers (its part inside the image) and its samples in the type `decode` would hold
    /// them in (`UInt16` for integers of up to 16 bits, `Float` for floating-point samples
    /// of 16, 24 or 32 bits), pixels interleaved, rows `rowStride` samples apart, and
    /// whether the image has so few blocks (fewer than two per core) that `body` should
    /// spread its own work over the cores. Once `body` returns, the block's bytes leave this
    /// process's resident memory (`FileBytes.releaseResidentPages(offset:length:)`).
    ///
    /// Every block is decoded even when one fails; the error of the lowest-numbered failing
    /// block is thrown, so the error does not depend on thread timing.
    /// - Returns: false, before decoding anything, when the image is not made of chunky
    ///   (PlanarConfiguration 1) integer samples of at most 16 bits or floating-point
    ///   samples, or when its rows or columns are stored as interleaved fields
    ///   (RowInterleaveFactor, ColumnInterleaveFactor): the fields span the whole image, so
    ///   no block holds a rectangle of it; `decode` reads such images.
    /// - Throws: `RawDecodeError` as `decode` does, or what `body` throws.
    /// - Parameter digester: given every block's samples as it is decoded, before `body`
    ///   (the raw-image digest computed within the decoding pass).
    /// - Parameter cache: where a first pass records the decoded blocks and a later pass
    ///   (once the cache `isComplete`) takes them from, without decoding or digesting again.
    /// - Parameter decodeProgress: see `decodeProgressPixels`.
    /// - Parameter anyImage: also decode the images `decodeAnyImage` decodes (semantic and
    ///   transparency masks, depth maps, previews), not only raw images.
    public static func forEachBlock(_ dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits = DecodeLimits(),
                                    digester: ImageDigester? = nil, cache: DecodedBlockCache? = nil,
                                    decodeProgress: DecodeProgress? = nil, anyImage: Bool = false,
                                    _ body: @Sendable (_ region: PixelRect, _ samples: BlockSamples,
                                                       _ rowStride: Int, _ fewBlocks: Bool) throws -> Void) throws -> Bool {
        try forEachBlock(dng, ifd: ifd, limits: limits, digester: digester, cache: cache, decodeProgress: decodeProgress,
                         anyImage: anyImage, body, rowsDone: nil)
    }

    /// The pixels a decode of `ifd` reports to its `decodeProgress` while it decodes, before
    /// its blocks are handed on: those of JPEG XL images of fewer blocks than threads (at
    /// least two), each decoded by libjxl's own threads for long enough that a progress bar
    /// would otherwise stand still (a 60 MP single-tile stream takes 20–30 s). 0 for every
    /// other image, whose blocks are handed on as they finish.
    public static func decodeProgressPixels(_ dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits = DecodeLimits()) -> Int {
        guard let plan = try? BlockPlan(dng: dng, ifd: ifd, limits: limits, rawOnly: true), plan.reportsDecodeProgress else { return 0 }
        return plan.blocks.reduce(0) { $0 + $1.width * $1.rows }
    }

    /// Image rows that `forEachBlockRow` groups short rows of blocks into, at least: a group
    /// spans fewer than `rowGroupRows` + one block's height rows.
    public static let rowGroupRows = 64

    /// `forEachBlock`, top to bottom: the blocks a row of blocks at a time (rows of blocks
    /// taken together until they span at least `rowGroupRows` image rows), each group in parallel, and
    /// after each group `rowsDone` on the calling thread with the image rows it completed —
    /// for a consumer that needs whole rows (demosaicing) and keeps only a window of them.
    /// A failing group stops the decoding; its lowest-numbered failing block's error is
    /// thrown (the lowest-numbered of the image, as the groups go in block order).
    public static func forEachBlockRow(_ dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits = DecodeLimits(),
                                       digester: ImageDigester? = nil, cache: DecodedBlockCache? = nil,
                                       decodeProgress: DecodeProgress? = nil,
                                       _ body: @Sendable (_ region: PixelRect, _ samples: BlockSamples,
                                                          _ rowStride: Int, _ fewBlocks: Bool) throws -> Void,
                                       rowsDone: (Range<Int>) throws -> Void) throws -> Bool {
        try withoutActuallyEscaping(rowsDone) {
            try forEachBlock(dng, ifd: ifd, limits: limits, digester: digester, cache: cache, decodeProgress: decodeProgress,
                             anyImage: false, body, rowsDone: $0)
        }
    }

    /// How `ifd` is stored, from one reading of its layout: whether `forEachBlock` decodes it
    /// (chunky integer samples of at most 16 bits or floating-point samples, not in
    /// interleaved fields; else `decode` reads it whole), and the type `decode` holds its
    /// samples in (16-bit integers, wider integers or `Float`).
    public static func storage(_ dng: DNGFile, ifd: ImageIFD,
                               limits: DecodeLimits = DecodeLimits()) throws -> (blockByBlock: Bool, storedType: StoredSampleType) {
        let plan = try BlockPlan(dng: dng, ifd: ifd, limits: limits, rawOnly: true)
        return (plan.decodesBlockByBlock, plan.encoding.storedType)
    }

    private static func forEachBlock(_ dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits, digester: ImageDigester?,
                                     cache: DecodedBlockCache?, decodeProgress: DecodeProgress?, anyImage: Bool,
                                     _ body: @Sendable (_ region: PixelRect, _ samples: BlockSamples,
                                                        _ rowStride: Int, _ fewBlocks: Bool) throws -> Void,
                                     rowsDone: ((Range<Int>) throws -> Void)?) throws -> Bool {
        var plan = try BlockPlan(dng: dng, ifd: ifd, limits: limits, rawOnly: !anyImage)
        guard plan.decodesBlockByBlock else { return false }
        plan.outputIsBlock = true
        plan.decodeProgress = decodeProgress
        let blockPlan = plan
        // Groups of consecutive blocks: all of them at once, or rows of blocks.
        var groups: [Range<Int>] = []
        if rowsDone == nil || plan.blocks.isEmpty {
            groups = [0..<plan.blocks.count]
        } else {
            var start = 0
            for i in 1...plan.blocks.count where i == plan.blocks.count || plan.blocks[i].y0 != plan.blocks[i - 1].y0 {
                if i == plan.blocks.count || plan.blocks[i].y0 - plan.blocks[start].y0 >= rowGroupRows {
                    groups.append(start..<i)
                    start = i
                }
            }
        }
        let replay = cache?.isComplete == true
        let type = blockPlan.encoding.storedType, sampleBytes = BlockSamples.bytes(type)
        // Where each block is recorded, when this pass records.
        // Safe because each block records into its own slot.
        nonisolated(unsafe) let recording = replay ? nil
            : cache?.beginRecording(byteCounts: blockPlan.blocks.map { $0.width * blockPlan.spp * $0.rows * sampleBytes })
        let record = recording != nil
        do {
            for group in groups where !group.isEmpty {
                let fewBlocks = group.count < 2 * Parallel.threadCount
                _ = try Parallel.map(group.count) { k in
                    let block = blockPlan.blocks[group.lowerBound + k]
                    let rowStride = block.width * blockPlan.spp, count = rowStride * block.rows
                    let region = PixelRect(top: block.y0, left: block.x0, bottom: block.y0 + block.visibleRows,
                                           right: block.x0 + block.visibleWidth)
                    if replay, let kept = cache?.samples(ofBlock: group.lowerBound + k) {
                        try body(region, BlockSamples(kept, as: type), rowStride, fewBlocks)
                        return
                    }
                    /// Decodes the block into `buffer`, digests it and hands it on.
                    func decode(into buffer: UnsafeMutableRawPointer) throws {
                        if let digester, digester.isCompressed {
                            blockPlan.withBytes(of: block) { digester.addCompressed(block.index, bytes: $0) }
                        }
                        let samples = BlockSamples(binding: buffer, count: count, as: type)
                        try blockPlan.decode(block, into: buffer)
                        if let digester, !digester.isCompressed {
                            digester.add(region, samples: samples, rowStride: rowStride)
                        }
                        try body(region, samples, rowStride, fewBlocks)
                    }
                    if let recording {
                        try decode(into: recording[group.lowerBound + k])
                    } else {
                        try withUnsafeTemporaryAllocation(byteCount: count * sampleBytes, alignment: 64) { buffer in
                            try decode(into: buffer.baseAddress!)
                        }
                    }
                    blockPlan.file.releaseResidentPages(offset: block.offset, length: block.length)
                }
                if let rowsDone {
                    let blocks = group.map { blockPlan.blocks[$0] }
                    try rowsDone(blocks.map(\.y0).min()!..<blocks.map { $0.y0 + $0.visibleRows }.max()!)
                }
            }
        } catch {
            if record { cache?.discard() }
            throw error
        }
        if record { cache?.markComplete() }
        if plan.codec == .jpegXL { MallocThresholds.releaseFreeHeap() }
        return true
    }

    static func decode(_ plan: BlockPlan, digester: ImageDigester? = nil) throws -> StoredImage {
        let ifd = plan.ifd
        let count = ifd.width * ifd.height * ifd.samplesPerPixel
        let compressed = digester.flatMap { $0.isCompressed ? $0 : nil }
        switch plan.encoding.storedType {
        case .uint16:
            return StoredImage(ifd: ifd, samples: .uint16(try decodeBlocks(plan, count: count, as: UInt16.self, digester: compressed)))
        case .uint32:
            return StoredImage(ifd: ifd, samples: .uint32(try decodeBlocks(plan, count: count, as: UInt32.self, digester: compressed)))
        case .float32:
            return StoredImage(ifd: ifd, samples: .float32(try decodeBlocks(plan, count: count, as: Float.self, digester: compressed)))
        }
    }

    /// Decodes every block of the plan in parallel into one buffer of the whole image, each
    /// row of interleaved fields straight into its image row and columns
    /// (`BlockPlan.placesFields`). The JPEG XL decoder writes every visible
    /// sample of its block or fails, and the blocks cover the image, so for JPEG XL the
    /// buffer is not cleared first: its pages are first touched by the decoding threads, in
    /// parallel, instead of by one thread before them.
    private static func decodeBlocks<T: AdditiveArithmetic & BitwiseCopyable & Sendable>(_ plan: BlockPlan, count: Int, as: T.Type,
                                                                                         digester: ImageDigester?) throws -> ImageBuffer<T> {
        var samples = plan.codec == .jpegXL ? LargeBuffer.uninitialized(T.self, count: count) : LargeBuffer.zeroed(T.self, count: count)
        try samples.withUnsafeMutableBufferPointer { output in
            // Safe because each block is decoded into its own rectangle of the output.
            nonisolated(unsafe) let out = UnsafeMutableRawPointer(output.baseAddress!)
            _ = try Parallel.map(plan.blocks.count) { i in
                if let digester { plan.withBytes(of: plan.blocks[i]) { digester.addCompressed(i, bytes: $0) } }
                try plan.decode(plan.blocks[i], into: out)
            }
        }
        if plan.codec == .jpegXL { MallocThresholds.releaseFreeHeap() }
        return ImageBuffer(width: plan.ifd.width, height: plan.ifd.height, channels: plan.ifd.samplesPerPixel, samples: samples)
    }
}
