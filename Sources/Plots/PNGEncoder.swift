import CZlib

/// Encodes 8-bit truecolour images as PNG files.
///
/// The encoder writes the signature, an `IHDR` chunk (bit depth 8, colour type 2 for RGB or
/// 6 for RGBA, no interlacing), the image data as one zlib stream split over `IDAT` chunks of
/// at most 256 KiB, and `IEND`. Each scanline gets the filter type (None, Sub, Up, Average or
/// Paeth) whose filtered bytes, read as signed values, have the smallest sum of magnitudes —
/// the adaptive heuristic the PNG specification recommends for truecolour images. The output
/// depends only on the input: the same pixels always give the same bytes.
public enum PNGEncoder {
    /// The eight bytes every PNG file starts with.
    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Encodes an RGB image.
    /// - Parameters:
    ///   - rgb: `width × height × 3` bytes, row by row from the top, R G B per pixel.
    ///   - compressionLevel: zlib level 0…9; 6 balances size and speed.
    /// - Returns: the bytes of a complete PNG file.
    /// - Throws: `PNGEncoderError` when the size is impossible or does not match `rgb`, or
    ///   zlib fails.
    public static func encode(rgb: [UInt8], width: Int, height: Int, compressionLevel: Int = 6) throws(PNGEncoderError) -> [UInt8] {
        try encode(samples: rgb, width: width, height: height, channels: 3, level: compressionLevel)
    }

    /// Encodes an RGBA image (straight, not premultiplied, alpha).
    /// - Parameters:
    ///   - rgba: `width × height × 4` bytes, row by row from the top, R G B A per pixel.
    ///   - compressionLevel: zlib level 0…9.
    /// - Returns: the bytes of a complete PNG file.
    /// - Throws: `PNGEncoderError` when the size is impossible or does not match `rgba`, or
    ///   zlib fails.
    public static func encode(rgba: [UInt8], width: Int, height: Int, compressionLevel: Int = 6) throws(PNGEncoderError) -> [UInt8] {
        try encode(samples: rgba, width: width, height: height, channels: 4, level: compressionLevel)
    }

    /// The PNG filter types (PNG specification, section 9.2).
    enum Filter: UInt8, CaseIterable {
        case none = 0, sub = 1, up = 2, average = 3, paeth = 4
    }

    private static func encode(samples: [UInt8], width: Int, height: Int, channels: Int, level: Int) throws(PNGEncoderError) -> [UInt8] {
        guard width >= 1 && height >= 1 && width <= 0x7FFF_FFFF && height <= 0x7FFF_FFFF else {
            throw .invalidSize("\(width)×\(height): PNG dimensions must be 1…2³¹−1")
        }
        guard samples.count == width * height * channels else {
            throw .invalidSize("\(width)×\(height)×\(channels) needs \(width * height * channels) bytes, got \(samples.count)")
        }
        let filtered = filterScanlines(samples, width: width, height: height, channels: channels)
        let compressed = try deflate(filtered, level: level)

        var ihdr = [UInt8]()
        ihdr.reserveCapacity(13)
        appendBigEndian(UInt32(width), to: &ihdr)
        appendBigEndian(UInt32(height), to: &ihdr)
        ihdr += [8, channels == 4 ? 6 : 2, 0, 0, 0]

        var out = signature
        out.reserveCapacity(compressed.count + 128)
        appendChunk("IHDR", ihdr, to: &out)
        let maximumChunk = 256 * 1024
        var start = 0
        repeat {
            let end = min(compressed.count, start + maximumChunk)
            appendChunk("IDAT", compressed[start..<end], to: &out)
            start = end
        } while start < compressed.count
        appendChunk("IEND", [], to: &out)
        return out
    }

    /// Prefixes every scanline with its filter type and replaces its bytes by the filtered ones.
    static func filterScanlines(_ samples: [UInt8], width: Int, height: Int, channels: Int) -> [UInt8] {
        let rowBytes = width * channels
        var out = [UInt8](repeating: 0, count: (rowBytes + 1) * height)
        var candidate = [UInt8](repeating: 0, count: rowBytes)
        let zeroRow = [UInt8](repeating: 0, count: rowBytes)
        samples.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                candidate.withUnsafeMutableBufferPointer { trial in
                    zeroRow.withUnsafeBufferPointer { zero in
                        for y in 0..<height {
                            let row = src.baseAddress! + y * rowBytes
                            // The row above the first one is all zeros (PNG specification 9.2).
                            let previous = y > 0 ? row - rowBytes : zero.baseAddress!
                            let target = dst.baseAddress! + y * (rowBytes + 1)
                            var bestCost = Int.max
                            var bestFilter = Filter.none
                            for filter in Filter.allCases {
                                let cost = apply(filter, row: row, previous: previous, count: rowBytes, bpp: channels,
                                                 into: trial.baseAddress!)
                                if cost < bestCost {
                                    bestCost = cost
                                    bestFilter = filter
                                    (target + 1).update(from: trial.baseAddress!, count: rowBytes)
                                }
                            }
                            target.pointee = bestFilter.rawValue
                        }
                    }
                }
            }
        }
        return out
    }

    /// Filters one scanline into `out` and returns the sum of the filtered bytes read as
    /// signed values (their magnitudes), the cost the filter choice minimises.
    static func apply(_ filter: Filter, row: UnsafePointer<UInt8>, previous: UnsafePointer<UInt8>, count: Int, bpp: Int,
                      into out: UnsafeMutablePointer<UInt8>) -> Int {
        var cost = 0
        @inline(__always) func put(_ i: Int, _ value: UInt8) {
            out[i] = value
            cost += value < 128 ? Int(value) : 256 - Int(value)
        }
        let head = min(bpp, count)
        switch filter {
        case .none:
            for i in 0..<count { put(i, row[i]) }
        case .sub:
            for i in 0..<head { put(i, row[i]) }
            for i in head..<count { put(i, row[i] &- row[i - bpp]) }
        case .up:
            for i in 0..<count { put(i, row[i] &- previous[i]) }
        case .average:
            for i in 0..<head { put(i, row[i] &- previous[i] >> 1) }
            for i in head..<count { put(i, row[i] &- UInt8((Int(row[i - bpp]) + Int(previous[i])) >> 1)) }
        case .paeth:
            // With no pixel to the left, a = c = 0 and the predictor is the byte above.
            for i in 0..<head { put(i, row[i] &- previous[i]) }
            for i in head..<count {
                put(i, row[i] &- UInt8(paethPredictor(Int(row[i - bpp]), Int(previous[i]), Int(previous[i - bpp]))))
            }
        }
        return cost
    }

    /// The Paeth predictor: whichever of left, up and upper-left is closest to left + up − upper-left.
    @inline(__always)
    static func paethPredictor(_ a: Int, _ b: Int, _ c: Int) -> Int {
        let p = a + b - c
        let pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
        if pa <= pb && pa <= pc { return a }
        return pb <= pc ? b : c
    }

    /// One zlib stream (RFC 1950) of `data`.
    static func deflate(_ data: [UInt8], level: Int) throws(PNGEncoderError) -> [UInt8] {
        var capacity = compressBound(uLong(data.count))
        var out = [UInt8](repeating: 0, count: Int(capacity))
        let status = data.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                compress2(dst.baseAddress, &capacity, src.baseAddress, uLong(src.count), Int32(min(9, max(0, level))))
            }
        }
        guard status == Z_OK else { throw .zlib(status: Int(status)) }
        out.removeSubrange(Int(capacity)...)
        return out
    }

    /// Appends length, type, data and the CRC-32 of type and data.
    private static func appendChunk<C: Collection>(_ type: String, _ data: C, to out: inout [UInt8]) where C.Element == UInt8 {
        appendBigEndian(UInt32(data.count), to: &out)
        let typeStart = out.count
        out += Array(type.utf8)
        out += data
        let crc = out[typeStart...].withContiguousStorageIfAvailable { buffer in
            crc32(0, buffer.baseAddress, uInt(buffer.count))
        } ?? 0
        appendBigEndian(UInt32(truncatingIfNeeded: crc), to: &out)
    }

    private static func appendBigEndian(_ value: UInt32, to out: inout [UInt8]) {
        out += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}

/// Why a PNG could not be encoded.
public enum PNGEncoderError: Error, Equatable, CustomStringConvertible {
    /// The size is impossible, or does not match the pixels given.
    case invalidSize(String)
    /// zlib's compress2 failed (out of memory) with this status.
    case zlib(status: Int)

    public var description: String {
        switch self {
        case .invalidSize(let reason): return "cannot encode a PNG: \(reason)"
        case .zlib(let status): return "cannot encode a PNG: zlib compress2 failed with status \(status)"
        }
    }
}
