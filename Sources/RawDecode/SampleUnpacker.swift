import DNGContainer

/// Unpacks one row of stored integer samples.
///
/// 8-bit samples are bytes; 16-bit samples are in the file's byte order; other depths are
/// packed most-significant bit first regardless of the file's byte order (DNG 1.7.1 p.20).
enum SampleUnpacker {
    static func unpack(_ src: UnsafeRawBufferPointer, bits: Int, byteOrder: ByteOrder, into dst: UnsafeMutableBufferPointer<UInt16>) {
        let n = dst.count
        switch bits {
        case 8:
            for i in 0..<n { dst[i] = UInt16(src[i]) }
        case 16:
            if byteOrder == .littleEndian {
                for i in 0..<n { dst[i] = UInt16(src[2 * i]) | UInt16(src[2 * i + 1]) << 8 }
            } else {
                for i in 0..<n { dst[i] = UInt16(src[2 * i]) << 8 | UInt16(src[2 * i + 1]) }
            }
        case 12:
            var i = 0, b = 0
            while i + 1 < n {
                let b0 = UInt16(src[b]), b1 = UInt16(src[b + 1]), b2 = UInt16(src[b + 2])
                dst[i] = b0 << 4 | b1 >> 4
                dst[i + 1] = (b1 & 0x0F) << 8 | b2
                i += 2
                b += 3
            }
            if i < n { dst[i] = UInt16(src[b]) << 4 | UInt16(src[b + 1]) >> 4 }
        default:
            // Generic MSB-first bit reader with a 64-bit accumulator.
            var acc: UInt64 = 0
            var available = 0
            var byte = 0
            let mask = UInt64((1 << bits) - 1)
            for i in 0..<n {
                while available < bits {
                    acc = acc << 8 | UInt64(src[byte])
                    byte += 1
                    available += 8
                }
                available -= bits
                dst[i] = UInt16(truncatingIfNeeded: (acc >> UInt64(available)) & mask)
            }
        }
    }
}
