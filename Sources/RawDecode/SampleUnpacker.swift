import DNGContainer

/// Converts one row of stored samples into their Stage 1 type.
///
/// 8-bit samples are bytes; 16-, 24- and 32-bit samples are in the file's byte order;
/// other integer depths are packed most-significant bit first regardless of the file's
/// byte order (DNG 1.7.1 p.20). The caller guarantees that `src` holds the
/// `(count × bits + 7) / 8` bytes read.
enum SampleUnpacker {
    /// Integer samples of 1–16 bits.
    static func unpack(_ src: UnsafeRawPointer, count n: Int, bits: Int, byteOrder: ByteOrder,
                       into dst: UnsafeMutablePointer<UInt16>) {
        let s = src.assumingMemoryBound(to: UInt8.self)
        switch bits {
        case 8:
            for i in 0..<n { dst[i] = UInt16(s[i]) }
        case 16:
            if byteOrder == .littleEndian {
                for i in 0..<n { dst[i] = UInt16(s[2 * i]) | UInt16(s[2 * i + 1]) << 8 }
            } else {
                for i in 0..<n { dst[i] = UInt16(s[2 * i]) << 8 | UInt16(s[2 * i + 1]) }
            }
        case 12:
            var i = 0, b = 0
            while i + 1 < n {
                let b0 = UInt16(s[b]), b1 = UInt16(s[b + 1]), b2 = UInt16(s[b + 2])
                dst[i] = b0 << 4 | b1 >> 4
                dst[i + 1] = (b1 & 0x0F) << 8 | b2
                i += 2
                b += 3
            }
            if i < n { dst[i] = UInt16(s[b]) << 4 | UInt16(s[b + 1]) >> 4 }
        default:
            // MSB-first bit reader with a 64-bit accumulator (written out here: this is the
            // hot loop of packed 10- and 14-bit raw data).
            var acc: UInt64 = 0
            var available = 0
            var byte = 0
            let mask = UInt64((1 << bits) - 1)
            for i in 0..<n {
                while available < bits {
                    acc = acc << 8 | UInt64(s[byte])
                    byte += 1
                    available += 8
                }
                available -= bits
                dst[i] = UInt16(truncatingIfNeeded: (acc >> UInt64(available)) & mask)
            }
        }
    }

    /// Integer samples of 17–32 bits.
    static func unpack(_ src: UnsafeRawPointer, count n: Int, bits: Int, byteOrder: ByteOrder,
                       into dst: UnsafeMutablePointer<UInt32>) {
        let s = src.assumingMemoryBound(to: UInt8.self)
        if bits == 32 {
            for i in 0..<n { dst[i] = read32(s + 4 * i, byteOrder) }
            return
        }
        var i = 0
        unpackBits(s, count: n, bits: bits) { v in
            dst[i] = UInt32(truncatingIfNeeded: v)
            i += 1
        }
    }

    /// Floating-point samples of 16, 24 or 32 bits.
    static func unpack(_ src: UnsafeRawPointer, count n: Int, bits: Int, byteOrder: ByteOrder,
                       into dst: UnsafeMutablePointer<Float>) {
        let s = src.assumingMemoryBound(to: UInt8.self)
        let little = byteOrder == .littleEndian
        switch bits {
        case 16:
            for i in 0..<n {
                let a = UInt16(s[2 * i]), b = UInt16(s[2 * i + 1])
                dst[i] = FloatBits.half(little ? a | b << 8 : a << 8 | b)
            }
        case 24:
            for i in 0..<n {
                let p = s + 3 * i
                dst[i] = little ? FloatBits.fp24(p[2], p[1], p[0]) : FloatBits.fp24(p[0], p[1], p[2])
            }
        default:
            for i in 0..<n { dst[i] = Float(bitPattern: read32(s + 4 * i, byteOrder)) }
        }
    }

    @inline(__always)
    static func read32(_ p: UnsafePointer<UInt8>, _ order: ByteOrder) -> UInt32 {
        let a = UInt32(p[0]), b = UInt32(p[1]), c = UInt32(p[2]), d = UInt32(p[3])
        return order == .littleEndian ? a | b << 8 | c << 16 | d << 24 : a << 24 | b << 16 | c << 8 | d
    }

    /// MSB-first bit reader with a 64-bit accumulator, for any depth of 1–32 bits.
    @inline(__always)
    private static func unpackBits(_ s: UnsafePointer<UInt8>, count n: Int, bits: Int, _ emit: (UInt64) -> Void) {
        var acc: UInt64 = 0
        var available = 0
        var byte = 0
        let mask = UInt64((1 << bits) - 1)
        for _ in 0..<n {
            while available < bits {
                acc = acc << 8 | UInt64(s[byte])
                byte += 1
                available += 8
            }
            available -= bits
            emit((acc >> UInt64(available)) & mask)
        }
    }
}

/// Bit-exact conversions of DNG's floating-point sample formats to `Float`.
enum FloatBits {
    /// IEEE binary16 → binary32 (exact, including subnormals, infinities and NaN).
    @inline(__always)
    static func half(_ bits: UInt16) -> Float { Float(Float16(bitPattern: bits)) }

    /// DNG's 24-bit float (1 sign bit, 7 exponent bits with bias 63, 16 mantissa bits;
    /// `b0` the most significant byte) → binary32, exactly: every value of the format,
    /// subnormals included, is a normal `Float`.
    @inline(__always)
    static func fp24(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8) -> Float {
        let negative = b0 & 0x80 != 0
        let exponent = UInt32(b0 & 0x7F)
        let mantissa = UInt32(b1) << 8 | UInt32(b2)
        if exponent == 0 {
            // Zero or subnormal: mantissa × 2^(1 − 63 − 16).
            let magnitude = Float(mantissa) * 0x1p-78
            return negative ? -magnitude : magnitude
        }
        let sign: UInt32 = negative ? 0x8000_0000 : 0
        if exponent == 0x7F {
            return Float(bitPattern: sign | 0x7F80_0000 | mantissa << 7)   // infinity or NaN
        }
        return Float(bitPattern: sign | (exponent + 64) << 23 | mantissa << 7)
    }
}
