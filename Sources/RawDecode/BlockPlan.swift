import DNGContainer
import ImageCore

/// How each stored sample is encoded (BitsPerSample 258, SampleFormat 339).
struct SampleEncoding: Sendable, Equatable {
    let isFloat: Bool
    let bits: Int

    /// The type Stage 1 holds such samples in.
    var storedType: StoredSampleType { isFloat ? .float32 : (bits <= 16 ? .uint16 : .uint32) }
    var bytesPerSample: Int { (bits + 7) / 8 }
    var description: String { isFloat ? "\(bits)-bit floating-point" : "\(bits)-bit unsigned integer" }
}

/// The TIFF Predictor (317) of Deflate data, as DNG 1.7.1 defines it.
enum Predictor: Sendable, Equatable {
    /// 1: none.
    case none
    /// 2, 34892, 34893: each sample is stored as its difference from the same sample of
    /// the pixel `factor` (1, 2, 4) to the left, modulo 2^bits.
    case horizontal(factor: Int)
    /// 3, 34894, 34895: Adobe TIFF Technical Note 3 — each row's bytes are split into
    /// planes by significance (most significant first) and stored as byte differences
    /// from the byte `factor` (1, 2, 4) pixels to the left.
    case floatingPoint(factor: Int)
}

/// The compression of an IFD's blocks, checked against its samples.
enum BlockCodec: Sendable, Equatable {
    case uncompressed
    case deflate(Predictor)
    case losslessJPEG
    case lossyJPEG
    case jpegXL

    /// The name used in error messages.
    var name: String {
        switch self {
        case .uncompressed: return "uncompressed"
        case .deflate: return "Deflate"
        case .losslessJPEG: return "lossless-JPEG"
        case .lossyJPEG: return "lossy JPEG"
        case .jpegXL: return "JPEG XL"
        }
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
    /// The sample plane the block holds (PlanarConfiguration 2), else 0.
    let plane: Int
}

/// The validated decoding plan of an image IFD: everything the per-block decoders rely
/// on has been checked here, once, with overflow-safe sizes.
struct BlockPlan: Sendable {
    /// Whether the blocks can be decoded one at a time into pixel-interleaved samples of the
    /// stored type, 16-bit integers or `Float` (`RawDecoder.forEachBlock`, `BlockSamples`).
    var decodesBlockByBlock: Bool {
        [StoredSampleType.uint16, .float32].contains(encoding.storedType) && !planar && interleave.isNone
    }

    let file: FileBytes
    let ifd: ImageIFD
    let blocks: [Block]
    let encoding: SampleEncoding
    /// Samples per pixel of the image.
    let spp: Int
    /// Samples per pixel inside one block: `spp`, or 1 with PlanarConfiguration 2.
    let blockSPP: Int
    let codec: BlockCodec
    let byteOrder: ByteOrder
    let blockKind: String
    /// JPEGTables (347): DQT/DHT segments shared by abbreviated JPEG blocks.
    let jpegTables: [UInt8]?
    /// YCbCr data (only decodable from DCT JPEG, which converts it to RGB).
    let isYCbCr: Bool
    /// RowInterleaveFactor and ColumnInterleaveFactor: the blocks hold the image in field
    /// order, rearranged once the whole image is decoded.
    let interleave: FieldInterleave

    /// False: the output is the whole image (`ifd.width` pixels per row). True: each block
    /// is decoded into a buffer of its own (`RawDecoder.forEachBlock`), which holds the whole
    /// stored block, `block.width` pixels per row, and decoders may write all of it, the
    /// part outside the image included.
    var outputIsBlock = false
    /// Told of the pixels libjxl renders, as it renders them, when `reportsDecodeProgress`.
    var decodeProgress: RawDecoder.DecodeProgress?

    /// Whether a decode reports its progress inside blocks: JPEG XL images of fewer blocks
    /// than threads (at least two), which libjxl decodes with its own threads, a block at a time.
    var reportsDecodeProgress: Bool { codec == .jpegXL && blocks.count < max(2, Parallel.threadCount) }

    var planar: Bool { blockSPP != spp }

    /// Whether the decoders put interleaved fields in image order as they place each block's
    /// rows (`withDestinationRow`): always, for the whole image (every codec writes its rows
    /// through it), so the image needs no rearranging afterwards.
    var placesFields: Bool { !interleave.isNone && !outputIsBlock }
    var path: String { file.path }

    func name(_ block: Block) -> String { "\(blockKind) \(block.index)" }

    init(dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits, rawOnly: Bool) throws(RawDecodeError) {
        let tags = TagReader(dng: dng, ifd: ifd)
        file = dng.file
        self.ifd = ifd
        byteOrder = dng.byteOrder
        spp = ifd.samplesPerPixel

        guard ifd.pixelCount <= limits.maxPixels else {
            throw .tooLarge(path: tags.path, ifd: tags.name, pixels: ifd.pixelCount, limit: limits.maxPixels)
        }
        try Self.checkPhotometric(ifd, rawOnly: rawOnly, tags: tags)
        isYCbCr = ifd.photometric == Photometric.yCbCr
        let known = [Compression.none, Compression.jpeg, Compression.deflate, Compression.lossyJPEG, Compression.jpegXL]
        guard known.contains(ifd.compression) else {
            throw .unsupportedCompression(path: tags.path, ifd: tags.name, compression: ifd.compression)
        }
        encoding = try Self.sampleEncoding(ifd, tags: tags)
        guard ifd.fillOrder == 1 else { throw tags.unsupported("FillOrder \(ifd.fillOrder) (bit-reversed bytes)") }
        switch ifd.planarConfiguration {
        case 1: blockSPP = spp
        case 2: blockSPP = 1
        default: throw tags.inconsistent("PlanarConfiguration \(ifd.planarConfiguration)")
        }
        codec = try Self.codec(ifd: ifd, encoding: encoding, blockSPP: blockSPP, fail: tags.unsupported)
        interleave = try Self.fieldInterleave(ifd, tags: tags)
        if [BlockCodec.losslessJPEG, .lossyJPEG].contains(codec) {
            jpegTables = try tags.bytes(347, "JPEGTables")
        } else {
            jpegTables = nil
        }
        guard let layout = ifd.layout else { throw tags.inconsistent("no TileOffsets or StripOffsets") }
        blockKind = layout.kind == .tiles ? "tile" : "strip"
        blocks = try Self.blocks(of: layout, ifd: ifd, file: dng.file, codec: codec, encoding: encoding,
                                 blockSPP: blockSPP, tags: tags)
    }

    /// The raw entries of one IFD and the errors that name its file and IFD.
    private struct TagReader {
        let path: String
        let name: String
        let raw: IFD?
        let values: EntryValues

        init(dng: DNGFile, ifd: ImageIFD) {
            path = dng.path
            name = ifd.path
            raw = dng.structure.allIFDs.first { $0.path == ifd.path }
            values = EntryValues(file: dng.file, order: dng.byteOrder)
        }

        func unsupported(_ reason: String) -> RawDecodeError { .unsupported(path: path, ifd: name, reason: reason) }
        func inconsistent(_ reason: String) -> RawDecodeError { .inconsistentLayout(path: path, ifd: name, reason: reason) }

        /// The integers of `tag`, or nil when the IFD does not have it.
        func integers(_ tag: UInt16, _ tagName: String) throws(RawDecodeError) -> [Int]? {
            guard let entry = raw?.entry(tag) else { return nil }
            do { return try values.integers(entry, in: name) } catch { throw inconsistent("\(tagName): \(error)") }
        }

        /// The bytes of `tag`, or nil when the IFD does not have it.
        func bytes(_ tag: UInt16, _ tagName: String) throws(RawDecodeError) -> [UInt8]? {
            guard let entry = raw?.entry(tag) else { return nil }
            do { return try values.bytes(entry, in: name) } catch { throw inconsistent("\(tagName): \(error)") }
        }
    }

    /// Refuses images this decoder does not decode: anything but raw data when `rawOnly`,
    /// else photometric kinds it has no route for and YCbCr that is not JPEG-compressed.
    private static func checkPhotometric(_ ifd: ImageIFD, rawOnly: Bool, tags: TagReader) throws(RawDecodeError) {
        let photometric = ifd.photometric
        let photometricName = "PhotometricInterpretation \(photometric) (\(Photometric.name(photometric)))"
        if rawOnly {
            guard ifd.isRaw else { throw tags.unsupported("\(photometricName) is not a raw image") }
            return
        }
        let decodable = [0, Photometric.blackIsZero, Photometric.rgb, Photometric.transparencyMask, Photometric.yCbCr,
                         Photometric.cfa, Photometric.linearRaw, Photometric.depth, Photometric.photometricMask]
        guard decodable.contains(photometric) else { throw tags.unsupported("\(photometricName) images are not decoded") }
        if photometric == Photometric.yCbCr, ![Compression.jpeg, Compression.lossyJPEG].contains(ifd.compression) {
            throw tags.unsupported("YCbCr data with compression \(ifd.compression) (\(Compression.name(ifd.compression, raw: false))); only JPEG-compressed YCbCr is decoded")
        }
    }

    /// BitsPerSample and SampleFormat: one depth and one format for every sample, of a kind DNG defines.
    private static func sampleEncoding(_ ifd: ImageIFD, tags: TagReader) throws(RawDecodeError) -> SampleEncoding {
        let spp = ifd.samplesPerPixel
        guard let bits = ifd.bitsPerSample.first, ifd.bitsPerSample.allSatisfy({ $0 == bits }),
              ifd.bitsPerSample.count == spp else {
            throw tags.inconsistent("BitsPerSample \(ifd.bitsPerSample) does not give one depth for \(spp) samples")
        }
        // The model keeps one SampleFormat; a per-sample list must agree with it.
        if let formats = try tags.integers(339, "SampleFormat"), !formats.allSatisfy({ $0 == ifd.sampleFormat }) {
            throw tags.inconsistent("SampleFormat \(formats) does not give one format for \(spp) samples")
        }
        switch ifd.sampleFormat {
        case 1:
            guard (1...32).contains(bits) else { throw tags.unsupported("\(bits)-bit integer samples") }
            return SampleEncoding(isFloat: false, bits: bits)
        case 3:
            guard [16, 24, 32].contains(bits) else {
                throw tags.unsupported("\(bits)-bit floating-point samples (DNG defines 16, 24 and 32)")
            }
            return SampleEncoding(isFloat: true, bits: bits)
        case 2: throw tags.unsupported("signed-integer samples (SampleFormat 2)")
        default: throw tags.unsupported("SampleFormat \(ifd.sampleFormat)")
        }
    }

    /// Tags that rearrange the stored pixels: SubTileBlockSize is not decoded; the
    /// interleave factors (one value each, 1 ≤ factor ≤ the dimension, as the Adobe DNG
    /// SDK's validation requires) are undone on the whole image (`FieldInterleave`).
    private static func fieldInterleave(_ ifd: ImageIFD, tags: TagReader) throws(RawDecodeError) -> FieldInterleave {
        if let v = try tags.integers(50974, "SubTileBlockSize"), v.contains(where: { $0 != 1 }) {
            throw tags.unsupported("SubTileBlockSize \(v.map(String.init).joined(separator: "×")) (rearranged pixels)")
        }
        var factors: [Int] = []
        for (tag, tagName, dimension, size) in [(UInt16(50975), "RowInterleaveFactor", "height", ifd.height),
                                                (52547, "ColumnInterleaveFactor", "width", ifd.width)] {
            guard let v = try tags.integers(tag, tagName) else { factors.append(1); continue }
            guard v.count == 1 else { throw tags.inconsistent("\(tagName) has \(v.count) values (1 expected)") }
            guard v[0] >= 1 else { throw tags.inconsistent("\(tagName) \(v[0]) (the number of interleaved fields is at least 1)") }
            guard v[0] <= size else {
                throw tags.inconsistent("\(tagName) \(v[0]) is larger than the image \(dimension) (\(size))")
            }
            factors.append(v[0])
        }
        return FieldInterleave(rowFactor: factors[0], columnFactor: factors[1])
    }

    /// The tiles or strips of `layout`, validated against the image size and the file.
    private static func blocks(of layout: DataLayout, ifd: ImageIFD, file: FileBytes, codec: BlockCodec,
                               encoding: SampleEncoding, blockSPP: Int, tags: TagReader) throws(RawDecodeError) -> [Block] {
        let kind = layout.kind == .tiles ? "tile" : "strip"
        guard layout.offsets.count == layout.byteCounts.count else {
            throw tags.inconsistent("\(layout.offsets.count) \(kind) offsets but \(layout.byteCounts.count) byte counts")
        }
        let bw = layout.blockWidth, bh = layout.blockHeight
        guard bw > 0, bh > 0, bw <= 1 << 16, bh <= 1 << 20 else {
            throw tags.inconsistent("\(kind) size \(bw)×\(bh) is impossible")
        }
        // A tile far larger than the image would only make the decoders allocate memory.
        if layout.kind == .tiles, bw * bh > max(4 * ifd.pixelCount, 1 << 20) {
            throw tags.inconsistent("tile size \(bw)×\(bh) is far larger than the \(ifd.width)×\(ifd.height) image")
        }
        let across = (ifd.width + bw - 1) / bw
        let down = (ifd.height + bh - 1) / bh
        let planes = ifd.samplesPerPixel / blockSPP
        guard layout.offsets.count == across * down * planes else {
            let perPlane = planes > 1 ? " × \(planes) planes" : ""
            throw tags.inconsistent("\(layout.offsets.count) \(kind) offset(s), but a \(ifd.width)×\(ifd.height) image in \(bw)×\(bh) \(kind)s needs \(across * down)\(perPlane)")
        }
        var blocks: [Block] = []
        blocks.reserveCapacity(across * down * planes)
        for i in 0..<(across * down * planes) {
            let plane = i / (across * down), j = i % (across * down)
            let x0 = (j % across) * bw, y0 = (j / across) * bh
            let visibleWidth = min(bw, ifd.width - x0), visibleRows = min(bh, ifd.height - y0)
            // Strips hold only the rows inside the image; tiles are always stored full size.
            let rows = layout.kind == .tiles ? bh : visibleRows
            let block = Block(index: i, offset: layout.offsets[i], length: layout.byteCounts[i], x0: x0, y0: y0,
                              width: bw, rows: rows, visibleWidth: visibleWidth, visibleRows: visibleRows, plane: plane)
            guard file.contains(offset: block.offset, length: block.length) else {
                throw .truncated(path: tags.path, ifd: tags.name, block: "\(kind) \(i)", offset: block.offset,
                                 length: block.length, fileSize: file.count)
            }
            if codec == .uncompressed {
                let needed = block.rows * Self.rowBytes(width: bw, spp: blockSPP, bits: encoding.bits)
                guard block.length >= needed else {
                    throw .shortBlock(path: tags.path, ifd: tags.name, block: "\(kind) \(i)",
                                      reason: "\(block.length) bytes, but \(block.rows) rows of \(bw)×\(blockSPP) \(encoding.bits)-bit samples need \(needed)")
                }
            } else if block.length == 0 {
                throw .shortBlock(path: tags.path, ifd: tags.name, block: "\(kind) \(i)", reason: "0 bytes of \(codec.name) data")
            }
            blocks.append(block)
        }
        return blocks
    }

    /// The codec of `ifd`, after checking that DNG 1.7.1 allows it for these samples.
    private static func codec(ifd: ImageIFD, encoding: SampleEncoding, blockSPP: Int,
                              fail: (String) -> RawDecodeError) throws(RawDecodeError) -> BlockCodec {
        let bits = encoding.bits
        let predictor = ifd.predictor
        switch ifd.compression {
        case Compression.none:
            guard predictor == 1 else { throw fail("Predictor \(predictor) with uncompressed data") }
            return .uncompressed
        case Compression.deflate:
            switch predictor {
            case 1:
                return .deflate(.none)
            case 2, 34892, 34893:
                guard !encoding.isFloat else {
                    throw fail("Predictor \(predictor) (horizontal differencing) with floating-point samples; DNG uses 3, 34894 or 34895 for them")
                }
                guard [8, 16, 32].contains(bits) else {
                    throw fail("Predictor \(predictor) (horizontal differencing) with \(bits)-bit samples (8, 16 or 32 bits)")
                }
                return .deflate(.horizontal(factor: predictor == 2 ? 1 : predictor == 34892 ? 2 : 4))
            case 3, 34894, 34895:
                guard encoding.isFloat else {
                    throw fail("Predictor \(predictor) (floating point) with \(encoding.description) samples")
                }
                return .deflate(.floatingPoint(factor: predictor == 3 ? 1 : predictor == 34894 ? 2 : 4))
            default:
                throw fail("Predictor \(predictor)")
            }
        case Compression.jpeg:
            guard !encoding.isFloat, (2...16).contains(bits) else {
                throw fail("lossless JPEG of \(encoding.description) samples (integers of 2 to 16 bits)")
            }
            return .losslessJPEG
        case Compression.lossyJPEG:
            guard !encoding.isFloat, bits == 8 else {
                throw fail("lossy JPEG (34892) of \(encoding.description) samples (DNG defines it for 8-bit integers)")
            }
            guard blockSPP == 1 || blockSPP == 3 else { throw fail("lossy JPEG of \(blockSPP) samples per pixel (1 or 3)") }
            guard ifd.photometric != Photometric.cfa else {
                throw fail("lossy JPEG (34892) of a CFA image (DNG defines it for LinearRaw, masks and depth maps)")
            }
            return .lossyJPEG
        case Compression.jpegXL:
            if encoding.isFloat {
                // DNG 1.7 allows float16; float32 (which the Adobe DNG SDK also reads) is decoded too.
                guard bits != 24 else { throw fail("JPEG XL of 24-bit floating-point samples (DNG allows float16)") }
            } else {
                guard (8...16).contains(bits) else { throw fail("JPEG XL of \(bits)-bit integers (DNG allows 8 to 16 bits)") }
            }
            guard blockSPP == 1 || blockSPP == 3 else { throw fail("JPEG XL of \(blockSPP) planes (DNG allows 1 or 3)") }
            return .jpegXL
        default:
            preconditionFailure("compression checked by the caller")
        }
    }

    /// Bytes per stored row: rows start on byte boundaries (TIFF 6.0).
    static func rowBytes(width: Int, spp: Int, bits: Int) -> Int { (width * spp * bits + 7) / 8 }

    /// Decodes one block into its place in `output` (the full image, interleaved, of the
    /// plan's stored sample type; or, with `outputIsBlock`, the block's own buffer).
    func decode(_ block: Block, into output: UnsafeMutableRawPointer) throws(RawDecodeError) {
        switch codec {
        case .uncompressed: decodeUncompressed(block, into: output)
        case .deflate(let predictor): try decodeDeflate(block, predictor: predictor, into: output)
        case .losslessJPEG: try decodeLosslessJPEG(block, into: output)
        case .lossyJPEG: try decodeDCTJPEG(block, codecName: "lossy JPEG", into: output)
        case .jpegXL: try decodeJPEGXL(block, into: output)
        }
    }

    /// Calls `body` with the stored bytes of `block` (checked by the plan), keeping the
    /// error type of `body`.
    func withBytes<R, E: Error>(of block: Block, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = file.withBytes(offset: block.offset, length: block.length) { raw in
            do throws(E) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    // MARK: placing decoded samples

    /// Copies the visible part of a decoded block (`rowStride` samples per row, `blockSPP`
    /// samples per pixel) into the image.
    func place<T>(_ source: UnsafePointer<T>, rowStride: Int, _ block: Block, into output: UnsafeMutableRawPointer) {
        let count = block.visibleWidth * blockSPP  // (a closure reading the plan would copy it for every row)
        for r in 0..<block.visibleRows {
            withDestinationRow(r, of: block, in: output, as: T.self) { dst in
                dst.update(from: source + r * rowStride, count: count)
            }
        }
    }

    /// Calls `body` with room for the visible samples of row `r` of `block` (pixel by
    /// pixel, `blockSPP` samples each): the image row itself when the layout is chunky,
    /// else a scratch row that is then spread into the block's plane. With `placesFields`,
    /// the row goes to its image row, and its pixels to their image columns.
    @inline(__always)
    func withDestinationRow<T>(_ r: Int, of block: Block, in output: UnsafeMutableRawPointer, as: T.Type,
                               _ body: (UnsafeMutablePointer<T>) -> Void) {
        let image = output.assumingMemoryBound(to: T.self)
        if placesFields {
            let (k, j) = FieldInterleave.field(ofStored: block.y0 + r, count: ifd.height, factor: interleave.rowFactor)
            let row = image + (k + j * interleave.rowFactor) * ifd.width * spp
            if interleave.columnFactor == 1, !planar {
                body(row + block.x0 * spp)
                return
            }
            // Only plain values in the closure: capturing the plan would copy it for every row.
            let fields = interleave, width = ifd.width, spp = spp, blockSPP = blockSPP
            let first = block.x0, pixels = block.visibleWidth, plane = block.plane
            withUnsafeTemporaryAllocation(of: T.self, capacity: pixels * blockSPP) { scratch in
                body(scratch.baseAddress!)
                fields.scatterColumns(scratch.baseAddress!, first: first, pixels: pixels, spp: blockSPP,
                                      width: width, into: row, rowSpp: spp, plane: plane)
            }
            return
        }
        let start = outputIsBlock ? r * block.width * spp : ((block.y0 + r) * ifd.width + block.x0) * spp
        if !planar {
            body(image + start)
            return
        }
        withUnsafeTemporaryAllocation(of: T.self, capacity: block.visibleWidth) { row in
            let scratch = row.baseAddress!
            body(scratch)
            let dst = image + start + block.plane
            for c in 0..<block.visibleWidth { dst[c * spp] = scratch[c] }
        }
    }
}
