internal import CCairo
internal import CDeflate

/// PNG files of Cairo's RGB24 image surfaces, compressed by libdeflate.
///
/// Cairo's own writer goes through libpng and zlib, whose compression took a fifth of a
/// report's time; libdeflate gives files of about the same size several times faster. The
/// file is the plainest PNG (ISO/IEC 15948): signature, IHDR (8-bit truecolour, no
/// interlace), a tEXt chunk naming the software, one IDAT holding a zlib stream of the filtered rows, IEND. Each row takes the
/// filter (None, Sub, Up, Average or Paeth) whose output has the smallest sum of absolute
/// values as signed bytes — the usual choice, libpng's too.
enum PNGEncoder {
    /// libdeflate's compression level (1 fastest … 12 smallest).
    static let level: Int32 = 6

    /// The PNG file of an RGB24 `surface` (flushed), or nil when memory runs out.
    static func encode(_ surface: OpaquePointer) -> [UInt8]? {
        let width = Int(cairo_image_surface_get_width(surface)), height = Int(cairo_image_surface_get_height(surface))
        let stride = Int(cairo_image_surface_get_stride(surface))
        guard width > 0, height > 0, let data = cairo_image_surface_get_data(surface) else { return nil }
        let rowBytes = 3 * width
        // Rows as R, G, B bytes, each after its filter-type byte.
        var filtered = [UInt8](repeating: 0, count: (rowBytes + 1) * height)
        var previous = [UInt8](repeating: 0, count: rowBytes), current = previous
        var candidate = [[UInt8]](repeating: [UInt8](repeating: 0, count: rowBytes), count: 5)
        for y in 0..<height {
            let pixels = UnsafeRawPointer(data + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<width {
                let v = pixels[x]  // native-endian 0xXXRRGGBB
                current[3 * x] = UInt8(truncatingIfNeeded: v >> 16)
                current[3 * x + 1] = UInt8(truncatingIfNeeded: v >> 8)
                current[3 * x + 2] = UInt8(truncatingIfNeeded: v)
            }
            let best = filterRow(current, previous: previous, into: &candidate)
            filtered[y * (rowBytes + 1)] = UInt8(best)
            filtered.withUnsafeMutableBufferPointer { out in
                candidate[best].withUnsafeBufferPointer { (out.baseAddress! + y * (rowBytes + 1) + 1).update(from: $0.baseAddress!, count: rowBytes) }
            }
            swap(&previous, &current)
        }
        guard let compressor = libdeflate_alloc_compressor(level) else { return nil }
        defer { libdeflate_free_compressor(compressor) }
        var zlib = [UInt8](repeating: 0, count: libdeflate_zlib_compress_bound(compressor, filtered.count))
        let size = filtered.withUnsafeBytes { f in
            zlib.withUnsafeMutableBytes { libdeflate_zlib_compress(compressor, f.baseAddress, f.count, $0.baseAddress, $0.count) }
        }
        guard size > 0 else { return nil }
        var header = [UInt8]()
        append32(UInt32(width), to: &header)
        append32(UInt32(height), to: &header)
        header += [8, 2, 0, 0, 0]  // bit depth 8, truecolour, deflate, adaptive filtering, no interlace
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        file.reserveCapacity(size + 64)
        appendChunk("IHDR", header[...], to: &file)
        // Who wrote it (a tEXt chunk, keyword "Software"): also what lets a later run replace the file.
        appendChunk("tEXt", Array("Software\u{0}scenelinear".utf8)[...], to: &file)
        appendChunk("IDAT", zlib[..<size], to: &file)
        appendChunk("IEND", [][...], to: &file)
        return file
    }

    /// Fills `candidate[f]` with `row` under filter f = 0 … 4 and returns the one with the
    /// smallest sum of absolute signed bytes (the first on ties).
    static func filterRow(_ row: [UInt8], previous: [UInt8], into candidate: inout [[UInt8]]) -> Int {
        var sums = [Int](repeating: 0, count: 5)
        let n = row.count
        row.withUnsafeBufferPointer { r in
            previous.withUnsafeBufferPointer { p in
                for f in 0..<5 {
                    sums[f] = candidate[f].withUnsafeMutableBufferPointer { out in
                        // The left neighbour (a), the one above (b) and above-left (c), 0 off the image.
                        func a(_ i: Int) -> Int { i >= 3 ? Int(r[i - 3]) : 0 }
                        func c(_ i: Int) -> Int { i >= 3 ? Int(p[i - 3]) : 0 }
                        func put(_ i: Int, _ predictor: Int) -> Int {
                            let v = UInt8(truncatingIfNeeded: Int(r[i]) &- predictor)
                            out[i] = v
                            return abs(Int(Int8(bitPattern: v)))
                        }
                        var sum = 0
                        switch f {
                        case 0: for i in 0..<n { sum &+= put(i, 0) }
                        case 1: for i in 0..<n { sum &+= put(i, a(i)) }
                        case 2: for i in 0..<n { sum &+= put(i, Int(p[i])) }
                        case 3: for i in 0..<n { sum &+= put(i, (a(i) + Int(p[i])) >> 1) }
                        default:
                            for i in 0..<n {
                                let left = a(i), up = Int(p[i]), corner = c(i)
                                let estimate = left + up - corner
                                let pa = abs(estimate - left), pb = abs(estimate - up), pc = abs(estimate - corner)
                                sum &+= put(i, pa <= pb && pa <= pc ? left : pb <= pc ? up : corner)
                            }
                        }
                        return sum
                    }
                }
            }
        }
        return sums.indices.min { sums[$0] < sums[$1] }!
    }

    private static func append32(_ v: UInt32, to out: inout [UInt8]) {
        out += [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
    }

    /// A chunk: length, type, data, and the CRC-32 of type and data.
    private static func appendChunk(_ type: String, _ data: ArraySlice<UInt8>, to out: inout [UInt8]) {
        append32(UInt32(data.count), to: &out)
        let start = out.count
        out += Array(type.utf8)
        out += data
        let crc = out[start...].withUnsafeBytes { libdeflate_crc32(0, $0.baseAddress, $0.count) }
        append32(crc, to: &out)
    }
}
