import DNGContainer
import ImageCore
import LosslessJPEG

/// Stage 1: decodes the stored samples of an image IFD.
///
/// Supported here: unsigned integer samples of 1–16 bits, uncompressed (8- and 16-bit, and
/// packed MSB-first depths such as 10, 12 and 14 bits, each row starting on a byte
/// boundary) or lossless JPEG (compression 7), in tiles or strips, chunky planar
/// configuration. Every offset, count and size is validated once, before any block is
/// decoded; blocks then decode in parallel on all cores.
public enum RawDecoder {
    /// Decodes `ifd` of `dng`.
    /// - Throws: `RawDecodeError` naming the file, the IFD and the tile or strip.
    public static func decode(_ dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits = DecodeLimits()) throws -> StoredImage {
        let plan = try BlockPlan(dng: dng, ifd: ifd, limits: limits)
        var samples = [UInt16](repeating: 0, count: ifd.width * ifd.height * ifd.samplesPerPixel)
        try samples.withUnsafeMutableBufferPointer { output in
            nonisolated(unsafe) let out = output
            _ = try Parallel.map(plan.blocks.count) { i in
                try plan.decode(plan.blocks[i], into: out)
            }
        }
        return StoredImage(ifd: ifd, samples: ImageBuffer(width: ifd.width, height: ifd.height,
                                                           channels: ifd.samplesPerPixel, samples: samples))
    }
}

/// One tile or strip: where its bytes are and which pixels it covers.
struct Block: Sendable {
    let index: Int
    let offset: Int
    let length: Int
    /// Left column and top row of the block in the image.
    let x0: Int
    let y0: Int
    /// Stored size of the block (tiles are always full size, even at the image edge).
    let width: Int
    let rows: Int
    /// The part of the block inside the image.
    let visibleWidth: Int
    let visibleRows: Int
}

/// The validated decoding plan of an image IFD.
struct BlockPlan: Sendable {
    let file: FileBytes
    let ifd: ImageIFD
    let blocks: [Block]
    let bits: Int
    let spp: Int
    let compression: Int
    let byteOrder: ByteOrder
    let blockKind: String

    init(dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits) throws(RawDecodeError) {
        let path = dng.path
        let name = ifd.path
        file = dng.file
        self.ifd = ifd
        byteOrder = dng.byteOrder
        spp = ifd.samplesPerPixel
        compression = ifd.compression

        guard ifd.pixelCount <= limits.maxPixels else {
            throw .tooLarge(path: path, ifd: name, pixels: ifd.pixelCount, limit: limits.maxPixels)
        }
        guard ifd.isRaw else {
            throw .unsupported(path: path, ifd: name, reason: "PhotometricInterpretation \(ifd.photometric) (\(Photometric.name(ifd.photometric))) is not a raw image")
        }
        switch compression {
        case Compression.none, Compression.jpeg: break
        default: throw .unsupportedCompression(path: path, ifd: name, compression: compression)
        }
        guard ifd.sampleFormat == 1 else {
            let kind = ifd.sampleFormat == 3 ? "floating-point" : "signed-integer"
            throw .unsupported(path: path, ifd: name, reason: "\(kind) samples (SampleFormat \(ifd.sampleFormat))")
        }
        guard let first = ifd.bitsPerSample.first, ifd.bitsPerSample.allSatisfy({ $0 == first }),
              ifd.bitsPerSample.count == spp else {
            throw .inconsistentLayout(path: path, ifd: name, reason: "BitsPerSample \(ifd.bitsPerSample) does not give one depth for \(spp) samples")
        }
        guard (1...16).contains(first) else {
            throw .unsupported(path: path, ifd: name, reason: "\(first)-bit samples")
        }
        bits = first
        guard ifd.planarConfiguration == 1 || spp == 1 else {
            throw .unsupported(path: path, ifd: name, reason: "planar configuration \(ifd.planarConfiguration) with \(spp) samples per pixel")
        }
        guard let layout = ifd.layout else {
            throw .inconsistentLayout(path: path, ifd: name, reason: "no TileOffsets or StripOffsets")
        }
        blockKind = layout.kind == .tiles ? "tile" : "strip"
        guard layout.offsets.count == layout.byteCounts.count else {
            throw .inconsistentLayout(path: path, ifd: name, reason: "\(layout.offsets.count) \(blockKind) offsets but \(layout.byteCounts.count) byte counts")
        }
        let bw = layout.blockWidth, bh = layout.blockHeight
        guard bw > 0, bh > 0, bw <= 1 << 16, bh <= 1 << 20 else {
            throw .inconsistentLayout(path: path, ifd: name, reason: "\(blockKind) size \(bw)×\(bh) is impossible")
        }
        let across = (ifd.width + bw - 1) / bw
        let down = (ifd.height + bh - 1) / bh
        guard layout.offsets.count == across * down else {
            throw .inconsistentLayout(path: path, ifd: name, reason: "\(layout.offsets.count) \(blockKind) offset(s), but a \(ifd.width)×\(ifd.height) image in \(bw)×\(bh) \(blockKind)s needs \(across * down)")
        }
        var blocks: [Block] = []
        blocks.reserveCapacity(across * down)
        for i in 0..<(across * down) {
            let x0 = (i % across) * bw, y0 = (i / across) * bh
            let visibleWidth = min(bw, ifd.width - x0), visibleRows = min(bh, ifd.height - y0)
            // Strips hold only the rows inside the image; tiles are always stored full size.
            let rows = layout.kind == .tiles ? bh : visibleRows
            let block = Block(index: i, offset: layout.offsets[i], length: layout.byteCounts[i], x0: x0, y0: y0,
                              width: bw, rows: rows, visibleWidth: visibleWidth, visibleRows: visibleRows)
            guard dng.file.contains(offset: block.offset, length: block.length) else {
                throw .truncated(path: path, ifd: name, block: "\(blockKind) \(i)", offset: block.offset,
                                 length: block.length, fileSize: dng.file.count)
            }
            if compression == Compression.none {
                let needed = block.rows * Self.rowBytes(width: bw, spp: spp, bits: first)
                guard block.length >= needed else {
                    throw .shortBlock(path: path, ifd: name, block: "\(blockKind) \(i)",
                                      reason: "\(block.length) bytes, but \(block.rows) rows of \(bw)×\(spp) \(first)-bit samples need \(needed)")
                }
            }
            blocks.append(block)
        }
        self.blocks = blocks
    }

    /// Bytes per stored row: rows start on byte boundaries (TIFF 6.0).
    static func rowBytes(width: Int, spp: Int, bits: Int) -> Int { (width * spp * bits + 7) / 8 }

    /// Decodes one block into its place in `output` (the full image, interleaved).
    func decode(_ block: Block, into output: UnsafeMutableBufferPointer<UInt16>) throws(RawDecodeError) {
        let rowSamples = ifd.width * spp
        let visibleSamples = block.visibleWidth * spp
        let destination = output.baseAddress! + block.y0 * rowSamples + block.x0 * spp
        if compression == Compression.none {
            let rowBytes = Self.rowBytes(width: block.width, spp: spp, bits: bits)
            file.withBytes(offset: block.offset, length: block.length) { raw in
                for r in 0..<block.visibleRows {
                    let src = UnsafeRawBufferPointer(rebasing: raw[(r * rowBytes)..<((r + 1) * rowBytes)])
                    let dst = UnsafeMutableBufferPointer(start: destination + r * rowSamples, count: visibleSamples)
                    SampleUnpacker.unpack(src, bits: bits, byteOrder: byteOrder, into: dst)
                }
            }
            return
        }
        // Lossless JPEG: only the total sample count has to match the block (DNG 1.7.1 p.21),
        // so the frame may be e.g. half as wide with two components.
        let expected = block.width * block.rows * spp
        var scratch = [UInt16](repeating: 0, count: expected)
        let frame: LJ92Frame
        do {
            frame = try scratch.withUnsafeMutableBufferPointer { out in
                try file.withBytes(offset: block.offset, length: block.length) { raw in
                    let f = try LJ92Decoder.readFrame(raw)
                    guard f.sampleCount == expected else { return f }
                    return try LJ92Decoder.decode(raw, into: out)
                }
            }
        } catch let error as LJ92Error {
            throw .corruptBlock(path: file.path, ifd: ifd.path, block: "\(blockKind) \(block.index)", error: error)
        } catch {
            preconditionFailure("the lossless-JPEG decoder throws only LJ92Error")
        }
        guard frame.sampleCount == expected else {
            throw .shortBlock(path: file.path, ifd: ifd.path, block: "\(blockKind) \(block.index)",
                              reason: "lossless-JPEG frame \(frame.width)×\(frame.height)×\(frame.components) holds \(frame.sampleCount) samples, the \(blockKind) needs \(block.width)×\(block.rows)×\(spp) = \(expected)")
        }
        scratch.withUnsafeBufferPointer { src in
            for r in 0..<block.visibleRows {
                (destination + r * rowSamples).update(from: src.baseAddress! + r * block.width * spp, count: visibleSamples)
            }
        }
    }
}
