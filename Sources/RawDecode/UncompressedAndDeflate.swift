internal import CDeflate
import DNGContainer

extension BlockPlan {
    // MARK: uncompressed

    func decodeUncompressed(_ block: Block, into output: UnsafeMutableRawPointer) {
        let rowBytes = Self.rowBytes(width: block.width, spp: blockSPP, bits: encoding.bits)
        let count = block.visibleWidth * blockSPP
        file.withBytes(offset: block.offset, length: block.length) { raw in
            let base = raw.baseAddress!
            for r in 0..<block.visibleRows {
                convertRow(base + r * rowBytes, count: count, row: r, of: block, into: output, predictor: .none)
            }
        }
    }

    /// Converts `count` stored samples at `src` into row `r` of `block`, then undoes a
    /// horizontal-differencing predictor in the sample's own integer width.
    @inline(__always)
    func convertRow(_ src: UnsafeRawPointer, count: Int, row r: Int, of block: Block,
                    into output: UnsafeMutableRawPointer, predictor: Predictor) {
        let bits = encoding.bits
        var stride = 0
        if case .horizontal(let factor) = predictor { stride = factor * blockSPP }
        switch encoding.storedType {
        case .uint16:
            withDestinationRow(r, of: block, in: output, as: UInt16.self) { dst in
                SampleUnpacker.unpack(src, count: count, bits: bits, byteOrder: byteOrder, into: dst)
                guard stride > 0, count > stride else { return }
                if bits == 8 {
                    for i in stride..<count { dst[i] = (dst[i] &+ dst[i - stride]) & 0xFF }
                } else {
                    for i in stride..<count { dst[i] = dst[i] &+ dst[i - stride] }
                }
            }
        case .uint32:
            withDestinationRow(r, of: block, in: output, as: UInt32.self) { dst in
                SampleUnpacker.unpack(src, count: count, bits: bits, byteOrder: byteOrder, into: dst)
                guard stride > 0, count > stride else { return }
                for i in stride..<count { dst[i] = dst[i] &+ dst[i - stride] }
            }
        case .float32:
            withDestinationRow(r, of: block, in: output, as: Float.self) { dst in
                SampleUnpacker.unpack(src, count: count, bits: bits, byteOrder: byteOrder, into: dst)
            }
        }
    }

    // MARK: Deflate (compression 8)

    /// Inflates the block (a zlib stream), undoes the predictor and stores the samples.
    ///
    /// The stream must inflate to exactly the block's stored size: full tiles, or strips
    /// of their rows. A tile at the right or bottom edge that inflates to exactly its
    /// visible part is accepted too (some writers clip edge tiles; the Adobe DNG SDK reads
    /// both).
    func decodeDeflate(_ block: Block, predictor: Predictor, into output: UnsafeMutableRawPointer) throws(RawDecodeError) {
        let bits = encoding.bits
        let fullRowBytes = Self.rowBytes(width: block.width, spp: blockSPP, bits: bits)
        let fullBytes = block.rows * fullRowBytes
        let clippedRowBytes = Self.rowBytes(width: block.visibleWidth, spp: blockSPP, bits: bits)
        let clippedBytes = block.visibleRows * clippedRowBytes
        var inflated = [UInt8](repeating: 0, count: fullBytes)
        let (result, produced) = inflated.withUnsafeMutableBytes { out in
            file.withBytes(offset: block.offset, length: block.length) { raw in
                Self.inflate(raw, into: out)
            }
        }
        func corrupt(_ reason: String) -> RawDecodeError {
            .corruptStream(path: path, ifd: ifd.path, block: name(block), codec: "Deflate", reason: reason)
        }
        switch result {
        case LIBDEFLATE_SUCCESS: break
        case LIBDEFLATE_INSUFFICIENT_SPACE:
            throw corrupt("the data inflates to more than the \(fullBytes) bytes of the \(block.width)×\(block.rows) \(blockKind)")
        case LIBDEFLATE_BAD_DATA:
            throw corrupt("invalid zlib/Deflate data (bad header, block, code or Adler-32 checksum, or the stream ends early)")
        default:
            throw corrupt("libdeflate result \(result.rawValue)")
        }
        let width: Int
        if produced == fullBytes {
            width = block.width
        } else if produced == clippedBytes, clippedBytes != fullBytes {
            width = block.visibleWidth
        } else {
            throw .shortBlock(path: path, ifd: ifd.path, block: name(block),
                              reason: "Deflate data inflates to \(produced) bytes; \(block.rows) rows of \(block.width)×\(blockSPP) \(encoding.description) samples need \(fullBytes)")
        }
        let rowBytes = Self.rowBytes(width: width, spp: blockSPP, bits: bits)
        let count = block.visibleWidth * blockSPP
        inflated.withUnsafeMutableBytes { buffer in
            let base = buffer.baseAddress!
            for r in 0..<block.visibleRows {
                let row = base + r * rowBytes
                if case .floatingPoint(let factor) = predictor {
                    undoFloatingPointPredictor(row.assumingMemoryBound(to: UInt8.self), width: width,
                                               factor: factor, count: count, r: r, block: block, into: output)
                } else {
                    convertRow(row, count: count, row: r, of: block, into: output, predictor: predictor)
                }
            }
        }
    }

    /// Inflates one zlib stream with libdeflate; returns the result and the bytes produced.
    /// Bytes after the end of the stream (padding) are ignored.
    static func inflate(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer)
        -> (libdeflate_result, Int) {
        guard let decompressor = libdeflate_alloc_decompressor() else { return (LIBDEFLATE_BAD_DATA, 0) }
        defer { libdeflate_free_decompressor(decompressor) }
        var consumed = 0, produced = 0
        let result = libdeflate_zlib_decompress_ex(decompressor, source.baseAddress, source.count,
                                                   destination.baseAddress, destination.count, &consumed, &produced)
        return (result, produced)
    }

    /// Undoes the floating-point predictor of one row (Adobe TIFF Technical Note 3, and
    /// DNG's ×2/×4 variants): the row's `width × blockSPP × bytes` bytes are a running
    /// byte-wise difference with a stride of `factor × blockSPP` bytes; once summed, byte
    /// `k` (most significant first) of sample `j` is at `k × width × blockSPP + j`. The
    /// result does not depend on the file's byte order.
    func undoFloatingPointPredictor(_ bytes: UnsafeMutablePointer<UInt8>, width: Int, factor: Int, count: Int,
                                    r: Int, block: Block, into output: UnsafeMutableRawPointer) {
        let samples = width * blockSPP
        let size = encoding.bytesPerSample
        let total = samples * size
        let stride = factor * blockSPP
        if total > stride {
            for i in stride..<total { bytes[i] = bytes[i] &+ bytes[i - stride] }
        }
        withDestinationRow(r, of: block, in: output, as: Float.self) { dst in
            switch size {
            case 2:
                let p0 = bytes, p1 = bytes + samples
                for j in 0..<count { dst[j] = FloatBits.half(UInt16(p0[j]) << 8 | UInt16(p1[j])) }
            case 3:
                let p0 = bytes, p1 = bytes + samples, p2 = bytes + 2 * samples
                for j in 0..<count { dst[j] = FloatBits.fp24(p0[j], p1[j], p2[j]) }
            default:
                let p0 = bytes, p1 = bytes + samples, p2 = bytes + 2 * samples, p3 = bytes + 3 * samples
                for j in 0..<count {
                    dst[j] = Float(bitPattern: UInt32(p0[j]) << 24 | UInt32(p1[j]) << 16 | UInt32(p2[j]) << 8 | UInt32(p3[j]))
                }
            }
        }
    }
}
