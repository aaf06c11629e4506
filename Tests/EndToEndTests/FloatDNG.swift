import DNGWriter
import Foundation
import SceneLinearKit
import TestSupport

/// A DNG of floating-point samples (SampleFormat 3) for the engine's tests, built tag by tag
/// (the project's DNG writer writes integers): the metadata of a simulated capture (colour
/// matrices, neutral, CFA pattern, OpcodeList2) with its samples as floats of 16, 24 or 32
/// bits, in tiles or strips, chunky or planar, uncompressed or Deflate (stored zlib blocks)
/// with a floating-point predictor, and optionally the NewRawImageDigest of the samples.
struct FloatDNG {
    var source: LinearRawDNG
    /// The samples, `source`'s layout (three interleaved planes, or one CFA plane).
    var samples: [Float]
    var bits = 16
    /// Tile size; nil for strips of `rowsPerStrip` rows.
    var tile: (width: Int, height: Int)? = (48, 32)
    var rowsPerStrip = 13
    /// 1 (uncompressed) or 8 (Deflate).
    var compression = 1
    /// With Deflate: 1, 3, 34894 or 34895.
    var predictor = 1
    var planar = 1
    var bigEndian = false
    var blackLevel: [Double] = [0]
    var blackLevelRepeatDim: (rows: Int, cols: Int) = (1, 1)
    var blackLevelDeltaH: [Double]?
    var blackLevelDeltaV: [Double]?
    var whiteLevel = 1
    var activeArea: PixelRect?
    var digest = true

    /// `source`'s samples as floats: 0 at its black level, 1 at its white level (so the
    /// clipped ones stay at or above 1), times `scale`.
    init(_ source: LinearRawDNG, scale: Float = 1) {
        self.source = source
        let black = Float(source.blackLevel.first ?? 0), white = Float(source.whiteLevel.first ?? 65535)
        samples = source.samples.map { (Float($0) - black) / (white - black) * scale }
    }

    var spp: Int { source.cfaPattern == nil ? 3 : 1 }

    /// The stored bit pattern of `value` (`bits` wide): a half, DNG's 24-bit float (1 sign,
    /// 7 exponent, 16 mantissa bits; truncated), or a single.
    func pattern(_ value: Float) -> UInt32 {
        switch bits {
        case 16: return UInt32(Float16(value).bitPattern)
        case 24:
            let b = value.bitPattern, sign = (b >> 31) << 23, exponent = Int((b >> 23) & 0xFF), mantissa = (b & 0x7F_FFFF) >> 7
            if exponent == 0xFF { return sign | 0x7F << 16 | (mantissa == 0 && b & 0x7F_FFFF == 0 ? 0 : 0x8000) }
            if exponent == 0 { return sign }
            let e = exponent - 127 + 63
            if e >= 0x7F { return sign | 0x7F << 16 }
            if e <= 0 { return sign }
            return sign | UInt32(e) << 16 | mantissa
        default: return value.bitPattern
        }
    }

    /// The bytes of one block's row of patterns: in the file's byte order, or as the
    /// floating-point predictor's byte planes (most significant first) differenced `factor`
    /// pixels apart.
    func rowBytes(_ row: [UInt32], blockSPP: Int) -> [UInt8] {
        let size = bits / 8
        let factor = [3: 1, 34894: 2, 34895: 4][predictor]
        guard compression == 8, let factor else {
            return row.flatMap { v in
                let be = (0..<size).map { UInt8(truncatingIfNeeded: v >> UInt32(8 * (size - 1 - $0))) }
                return bigEndian ? be : Array(be.reversed())
            }
        }
        var planes = [UInt8](repeating: 0, count: row.count * size)
        for (i, v) in row.enumerated() {
            for k in 0..<size { planes[k * row.count + i] = UInt8(truncatingIfNeeded: v >> UInt32(8 * (size - 1 - k))) }
        }
        let stride = factor * blockSPP
        var diffs = planes
        for i in stride..<planes.count { diffs[i] = planes[i] &- planes[i - stride] }
        return diffs
    }

    /// The stored bytes of every block (tiles padded with their edge pixels, strips cut at
    /// the image's bottom), plane by plane when planar.
    func blocks() -> [[UInt8]] {
        let (width, height) = (source.width, source.height)
        let (bw, bh) = tile ?? (width, rowsPerStrip)
        let across = (width + bw - 1) / bw, down = (height + bh - 1) / bh
        let planes = planar == 2 ? spp : 1, blockSPP = planar == 2 ? 1 : spp
        var out: [[UInt8]] = []
        for plane in 0..<planes {
            for j in 0..<(across * down) {
                let x0 = (j % across) * bw, y0 = (j / across) * bh
                let rows = tile == nil ? min(bh, height - y0) : bh
                var bytes: [UInt8] = []
                for r in 0..<rows {
                    let y = min(y0 + r, height - 1)
                    var row: [UInt32] = []
                    for c in 0..<bw {
                        let x = min(x0 + c, width - 1)
                        for s in 0..<blockSPP { row.append(pattern(samples[(y * width + x) * spp + s + plane])) }
                    }
                    bytes += rowBytes(row, blockSPP: blockSPP)
                }
                out.append(compression == 8 ? HDF5Bytes.storedZlib(bytes) : bytes)
            }
        }
        return out
    }

    /// The file, with `digest` as its NewRawImageDigest when given.
    func data(digest recorded: [UInt8]? = nil) -> Data {
        var t = TIFFBuilder(bigEndian: bigEndian)
        var offsets: [UInt32] = [], counts: [UInt32] = []
        for block in blocks() {
            if t.data.count % 2 == 1 { t.data.append(0) }
            offsets.append(UInt32(t.data.count))
            counts.append(UInt32(block.count))
            t.data += block
        }
        func rationals(_ tag: UInt16, _ values: [Double], signed: Bool) -> TIFFBuilder.Entry {
            let bytes = values.flatMap { v -> [UInt8] in
                signed ? t.u32(UInt32(bitPattern: Int32((v * 1_000_000).rounded()))) + t.u32(1_000_000)
                       : t.u32(UInt32((v * 1_000_000).rounded())) + t.u32(1_000_000)
            }
            return TIFFBuilder.Entry(tag: tag, type: signed ? 10 : 5, count: UInt64(values.count), bytes: bytes)
        }
        let (width, height) = (source.width, source.height)
        var e: [TIFFBuilder.Entry] = [
            t.long(254, [0]), t.long(256, [UInt32(width)]), t.long(257, [UInt32(height)]),
            t.short(258, Array(repeating: UInt16(bits), count: spp)), t.short(259, [UInt16(compression)]),
            t.short(262, [source.cfaPattern == nil ? 34892 : 32803]), t.short(274, [1]), t.short(277, [UInt16(spp)]),
            t.short(284, [UInt16(planar)]), t.short(339, Array(repeating: 3, count: spp)),
            t.byte(50706, [1, 6, 0, 0]), t.byte(50707, [1, 4, 0, 0]), t.ascii(50708, "SceneLinear float test"),
            rationals(50721, source.colorMatrices[0], signed: true), t.short(50778, [UInt16(source.calibrationIlluminants[0])]),
            rationals(50728, source.asShotNeutral ?? [1, 1, 1], signed: false),
            t.short(50713, [UInt16(blackLevelRepeatDim.rows), UInt16(blackLevelRepeatDim.cols)]),
            rationals(50714, blackLevel, signed: false), t.long(50717, Array(repeating: UInt32(whiteLevel), count: spp)),
        ]
        if compression == 8 && predictor != 1 { e.append(t.short(317, [UInt16(predictor)])) }
        if let tile {
            e += [t.long(322, [UInt32(tile.width)]), t.long(323, [UInt32(tile.height)]), t.long(324, offsets), t.long(325, counts)]
        } else {
            e += [t.long(273, offsets), t.long(278, [UInt32(rowsPerStrip)]), t.long(279, counts)]
        }
        if let pattern = source.cfaPattern {
            e += [t.short(33421, [2, 2]), t.byte(33422, pattern), t.byte(50710, [0, 1, 2]), t.short(50711, [1])]
        }
        if let v = blackLevelDeltaH { e.append(rationals(50715, v, signed: true)) }
        if let v = blackLevelDeltaV { e.append(rationals(50716, v, signed: true)) }
        if let a = activeArea { e.append(t.long(50829, [a.top, a.left, a.bottom, a.right].map(UInt32.init))) }
        if let list = source.opcodeLists[2] { e.append(t.undefined(51009, list)) }
        if let recorded { e.append(t.byte(51111, recorded)) }
        t.setFirstIFD(t.appendIFD(e))
        return Data(t.data)
    }

    /// Writes the file to `path`, with the NewRawImageDigest of its samples as decoded
    /// (`RawDecoder.decode`) when `digest`.
    func write(to path: String) throws {
        try data().write(to: URL(fileURLWithPath: path))
        guard digest else { return }
        let dng = try DNGFile.open(path: path)
        let raw = try dng.mainRawImage()
        let digester = ImageDigester(width: raw.width, height: raw.height, samplesPerPixel: raw.samplesPerPixel, sampleBytes: 4,
                                     sequential: false)
        digester.add(try RawDecoder.decode(dng, ifd: raw))
        try data(digest: digester.finish()).write(to: URL(fileURLWithPath: path))
    }
}
