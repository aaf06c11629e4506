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
/// - tiles or strips, PlanarConfiguration 1 (chunky) or 2 (one plane per block).
///
/// Every offset, count and size is validated once, before any block is decoded; blocks
/// then decode in parallel on all cores.
public enum RawDecoder {
    /// Decodes the raw image `ifd` of `dng` (PhotometricInterpretation CFA or LinearRaw).
    /// - Throws: `RawDecodeError` naming the file, the IFD and the tile or strip.
    public static func decode(_ dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits = DecodeLimits()) throws -> StoredImage {
        try decode(BlockPlan(dng: dng, ifd: ifd, limits: limits, rawOnly: true))
    }

    /// Decodes any image IFD of `dng`: raw images, and also semantic masks
    /// (PhotometricMask 52527), depth maps (Depth 51177), transparency masks and previews
    /// (BlackIsZero, RGB, and YCbCr when JPEG-compressed). The samples are returned as
    /// stored; a JPEG-compressed YCbCr preview comes back as RGB, converted by libjpeg.
    /// - Throws: `RawDecodeError` naming the file, the IFD and the tile or strip.
    public static func decodeAnyImage(_ dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits = DecodeLimits()) throws -> StoredImage {
        try decode(BlockPlan(dng: dng, ifd: ifd, limits: limits, rawOnly: false))
    }

    /// Decodes the raw image `ifd` of `dng` band by band, top to bottom, so that only one
    /// band of stored samples is in memory at a time: a band is one or more rows of blocks
    /// (tiles, or strips) — at least `minimumRows` rows and two blocks per core where the
    /// image allows — decoded in parallel. `body` receives each band's top image row and its
    /// samples, `ifd.width` × the band's rows.
    /// - Throws: `RawDecodeError` as `decode` does, or what `body` throws.
    public static func decodeBands(_ dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits = DecodeLimits(), minimumRows: Int = 64,
                                   _ body: (_ top: Int, _ band: StoredSamples) throws -> Void) throws {
        let plan = try BlockPlan(dng: dng, ifd: ifd, limits: limits, rawOnly: true)
        let byTop = Dictionary(grouping: plan.blocks, by: \.y0)
        let blockTops = byTop.keys.sorted()
        // Group consecutive block rows into bands.
        var bands: [(top: Int, blocks: [Block])] = []
        for top in blockTops {
            if let last = bands.last, top - last.top < minimumRows || last.blocks.count < 2 * Parallel.threadCount {
                bands[bands.count - 1].blocks += byTop[top]!
            } else {
                bands.append((top, byTop[top]!))
            }
        }
        for (i, (top, blocks)) in bands.enumerated() {
            let bottom = i + 1 < bands.count ? bands[i + 1].top : ifd.height
            var bandPlan = plan
            bandPlan.outputTop = top
            let count = ifd.width * (bottom - top) * ifd.samplesPerPixel
            let band: StoredSamples
            switch plan.encoding.storedType {
            case .uint16: band = .uint16(try decodeBlocks(bandPlan, blocks, rows: bottom - top, count: count, as: UInt16.self))
            case .uint32: band = .uint32(try decodeBlocks(bandPlan, blocks, rows: bottom - top, count: count, as: UInt32.self))
            case .float32: band = .float32(try decodeBlocks(bandPlan, blocks, rows: bottom - top, count: count, as: Float.self))
            }
            try body(top, band)
        }
    }

    static func decode(_ plan: BlockPlan) throws -> StoredImage {
        let ifd = plan.ifd
        let count = ifd.width * ifd.height * ifd.samplesPerPixel
        switch plan.encoding.storedType {
        case .uint16:
            return StoredImage(ifd: ifd, samples: .uint16(try decodeBlocks(plan, count: count, as: UInt16.self)))
        case .uint32:
            return StoredImage(ifd: ifd, samples: .uint32(try decodeBlocks(plan, count: count, as: UInt32.self)))
        case .float32:
            return StoredImage(ifd: ifd, samples: .float32(try decodeBlocks(plan, count: count, as: Float.self)))
        }
    }

    private static func decodeBlocks<T: AdditiveArithmetic & Sendable>(_ plan: BlockPlan, count: Int, as: T.Type) throws -> ImageBuffer<T> {
        try decodeBlocks(plan, plan.blocks, rows: plan.ifd.height, count: count, as: T.self)
    }

    /// Decodes `blocks` in parallel into a buffer of `rows` image rows starting at
    /// `plan.outputTop`.
    private static func decodeBlocks<T: AdditiveArithmetic & Sendable>(_ plan: BlockPlan, _ blocks: [Block], rows: Int, count: Int,
                                                                     as: T.Type) throws -> ImageBuffer<T> {
        var samples = [T](repeating: .zero, count: count)
        try samples.withUnsafeMutableBufferPointer { output in
            nonisolated(unsafe) let out = UnsafeMutableRawPointer(output.baseAddress!)
            _ = try Parallel.map(blocks.count) { i in
                try plan.decode(blocks[i], into: out)
            }
        }
        return ImageBuffer(width: plan.ifd.width, height: rows, channels: plan.ifd.samplesPerPixel, samples: samples)
    }
}
