import CZlib
import DNGContainer
import Foundation
import ImageCore
@testable import RawDecode
import TestSupport

/// An image of stored samples for tests, each kept as its bit pattern (`bits` wide):
/// unsigned integers, or the bits of a half, DNG 24-bit or single float.
struct TestImage {
    var width: Int
    var height: Int
    var spp: Int
    var bits: Int
    var isFloat: Bool
    /// Row-major, `spp` interleaved samples per pixel.
    var patterns: [UInt32]

    /// Random integers of `bits` bits, or random finite floats spread over many binades
    /// (with zeros, negative values and, for 16 and 24 bits, subnormals).
    static func random(width: Int, height: Int, spp: Int, bits: Int, isFloat: Bool = false, subnormals: Bool = true,
                       seed: UInt64) -> TestImage {
        var rng = SeededGenerator(seed: seed)
        let n = width * height * spp
        var patterns = [UInt32](repeating: 0, count: n)
        for i in 0..<n {
            if !isFloat {
                patterns[i] = bits == 32 ? UInt32.random(in: 0...UInt32.max, using: &rng)
                                         : UInt32.random(in: 0...UInt32((1 << bits) - 1), using: &rng)
                continue
            }
            switch bits {
            case 16:
                // Any finite half: exponent field 0 (zero, subnormal) … 30.
                let sign = UInt32.random(in: 0...1, using: &rng) << 15
                patterns[i] = sign | UInt32.random(in: (subnormals ? 0 : 1)...30, using: &rng) << 10 | UInt32.random(in: 0...1023, using: &rng)
            case 24:
                let sign = UInt32.random(in: 0...1, using: &rng) << 23
                patterns[i] = sign | UInt32.random(in: (subnormals ? 0 : 1)...126, using: &rng) << 16 | UInt32.random(in: 0...0xFFFF, using: &rng)
            default:
                let sign = UInt32.random(in: 0...1, using: &rng) << 31
                patterns[i] = sign | UInt32.random(in: 90...160, using: &rng) << 23 | UInt32.random(in: 0...0x7F_FFFF, using: &rng)
            }
        }
        return TestImage(width: width, height: height, spp: spp, bits: bits, isFloat: isFloat, patterns: patterns)
    }

    /// The stored type Stage 1 must produce.
    var storedType: StoredSampleType { isFloat ? .float32 : bits <= 16 ? .uint16 : .uint32 }

    /// The value of a float pattern, computed from the format's definition (not from the
    /// decoder's bit manipulation).
    static func floatValue(_ p: UInt32, bits: Int) -> Float {
        switch bits {
        case 16: return Float(Float16(bitPattern: UInt16(p)))
        case 24:
            let sign: Double = p & 0x80_0000 != 0 ? -1 : 1
            let e = Int((p >> 16) & 0x7F), m = Double(p & 0xFFFF)
            if e == 0x7F { return m == 0 ? Float(sign * .infinity) : .nan }
            let magnitude = e == 0 ? m / 65536 * pow(2, -62) : (1 + m / 65536) * pow(2, Double(e - 63))
            return Float(sign * magnitude)
        default: return Float(bitPattern: p)
        }
    }

    /// True when `stored` holds exactly these samples (floats compared bit for bit).
    func matches(_ stored: StoredImage) -> Bool {
        guard stored.width == width, stored.height == height, stored.channels == spp, stored.sampleType == storedType else {
            return false
        }
        switch stored.samples {
        case .uint16(let b): return b.samples.elementsEqual(patterns) { UInt32($0) == $1 }
        case .uint32(let b): return b.samples == patterns
        case .float32(let b):
            return b.samples.elementsEqual(patterns) { $0.bitPattern == Self.floatValue($1, bits: bits).bitPattern }
        }
    }
}

/// The DNG-side predictors, forward direction (encoding), written here independently of
/// the decoder.
enum TestPredictor: Equatable {
    case none
    case horizontal(factor: Int)
    case floatingPoint(factor: Int)

    var tag: Int {
        switch self {
        case .none: return 1
        case .horizontal(let f): return f == 1 ? 2 : f == 2 ? 34892 : 34893
        case .floatingPoint(let f): return f == 1 ? 3 : f == 2 ? 34894 : 34895
        }
    }
}

/// Encodes blocks the way a DNG writer does.
enum TestEncoder {
    /// The stored bytes of `rows` rows of `width × spp` patterns: 8/16/32-bit samples and
    /// 24-bit floats in the file's byte order, other depths packed MSB-first, each row
    /// starting on a byte.
    static func pack(_ patterns: [UInt32], width: Int, rows: Int, spp: Int, bits: Int, isFloat: Bool, bigEndian: Bool) -> [UInt8] {
        let perRow = width * spp
        var out: [UInt8] = []
        out.reserveCapacity(rows * (perRow * bits + 7) / 8)
        for r in 0..<rows {
            let row = patterns[(r * perRow)..<((r + 1) * perRow)]
            if [8, 16, 32].contains(bits) || (bits == 24 && isFloat) {
                let size = bits / 8
                for v in row {
                    let be = (0..<size).map { UInt8(truncatingIfNeeded: v >> UInt32(8 * (size - 1 - $0))) }
                    out += bigEndian ? be : be.reversed()
                }
            } else {
                var acc: UInt64 = 0, filled = 0
                for v in row {
                    acc = acc << UInt64(bits) | UInt64(v)
                    filled += bits
                    while filled >= 8 {
                        filled -= 8
                        out.append(UInt8(truncatingIfNeeded: acc >> UInt64(filled)))
                    }
                }
                if filled > 0 { out.append(UInt8(truncatingIfNeeded: acc << UInt64(8 - filled))) }
            }
        }
        return out
    }

    /// Applies `predictor` to the patterns (integer differencing), or builds the byte
    /// planes of the floating-point predictor, and returns the bytes to compress.
    static func predictAndPack(_ patterns: [UInt32], width: Int, rows: Int, spp: Int, bits: Int, isFloat: Bool,
                               bigEndian: Bool, predictor: TestPredictor) -> [UInt8] {
        let perRow = width * spp
        switch predictor {
        case .none:
            return pack(patterns, width: width, rows: rows, spp: spp, bits: bits, isFloat: isFloat, bigEndian: bigEndian)
        case .horizontal(let factor):
            let stride = factor * spp
            let mask: UInt64 = bits == 32 ? 0xFFFF_FFFF : (1 << UInt64(bits)) - 1
            var diffs = patterns
            for r in 0..<rows {
                for i in 0..<perRow where i >= stride {
                    let a = UInt64(patterns[r * perRow + i]), b = UInt64(patterns[r * perRow + i - stride])
                    diffs[r * perRow + i] = UInt32((a &+ (mask + 1) &- b) & mask)
                }
            }
            return pack(diffs, width: width, rows: rows, spp: spp, bits: bits, isFloat: isFloat, bigEndian: bigEndian)
        case .floatingPoint(let factor):
            let size = bits / 8
            var out: [UInt8] = []
            for r in 0..<rows {
                // Planes by significance, most significant byte first, then byte differences.
                var planes = [UInt8](repeating: 0, count: perRow * size)
                for i in 0..<perRow {
                    let v = patterns[r * perRow + i]
                    for k in 0..<size { planes[k * perRow + i] = UInt8(truncatingIfNeeded: v >> UInt32(8 * (size - 1 - k))) }
                }
                let stride = factor * spp
                var diffs = planes
                for i in stride..<planes.count { diffs[i] = planes[i] &- planes[i - stride] }
                out += diffs
            }
            return out
        }
    }

    /// A zlib stream (what DNG calls Deflate) made by zlib's own compressor.
    static func zlib(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8] {
        var size = compressBound(uLong(bytes.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        let status = out.withUnsafeMutableBufferPointer { o in
            bytes.withUnsafeBufferPointer { i in compress2(o.baseAddress, &size, i.baseAddress, uLong(bytes.count), level) }
        }
        precondition(status == Z_OK)
        return Array(out.prefix(Int(size)))
    }
}

/// One image IFD to build: its samples, their encoding and layout, and extra tags.
struct IFDSpec {
    var image: TestImage
    var compression = 1
    var predictor = TestPredictor.none
    var photometric = 34892
    var newSubFileType = 0
    /// Tile size; nil for strips of `rowsPerStrip` rows.
    var tile: (width: Int, height: Int)? = (16, 16)
    var rowsPerStrip = 8
    var planar = 1
    /// SampleFormat to write instead of 1 or 3 (from `image.isFloat`).
    var sampleFormat: Int?
    var extra: [TIFFBuilder.Entry] = []
    /// Encodes one block (patterns of `width × rows × spp`); default: pack, predict, deflate
    /// as `compression` and `predictor` say.
    var encode: ((_ patterns: [UInt32], _ width: Int, _ rows: Int, _ spp: Int, _ block: Int) -> [UInt8])?

    init(image: TestImage) { self.image = image }

    /// The blocks' patterns: tiles padded by repeating the edge pixels, strips trimmed.
    func blockPatterns() -> [(patterns: [UInt32], width: Int, rows: Int, spp: Int)] {
        let (bw, bh) = tile ?? (image.width, rowsPerStrip)
        let across = (image.width + bw - 1) / bw, down = (image.height + bh - 1) / bh
        let planes = planar == 2 ? image.spp : 1
        let blockSPP = planar == 2 ? 1 : image.spp
        var out: [([UInt32], Int, Int, Int)] = []
        for plane in 0..<planes {
            for j in 0..<(across * down) {
                let x0 = (j % across) * bw, y0 = (j / across) * bh
                let rows = tile == nil ? min(bh, image.height - y0) : bh
                var p = [UInt32](repeating: 0, count: bw * rows * blockSPP)
                for r in 0..<rows {
                    let y = min(y0 + r, image.height - 1)
                    for c in 0..<bw {
                        let x = min(x0 + c, image.width - 1)
                        for s in 0..<blockSPP {
                            p[(r * bw + c) * blockSPP + s] = image.patterns[(y * image.width + x) * image.spp + s + plane]
                        }
                    }
                }
                out.append((p, bw, rows, blockSPP))
            }
        }
        return out
    }

    /// The image made of the visible parts of per-block sample arrays (the inverse of
    /// `blockPatterns`).
    func assemble(_ blocks: [[UInt32]]) -> [UInt32] {
        let (bw, bh) = tile ?? (image.width, rowsPerStrip)
        let across = (image.width + bw - 1) / bw, down = (image.height + bh - 1) / bh
        let blockSPP = planar == 2 ? 1 : image.spp
        var out = [UInt32](repeating: 0, count: image.width * image.height * image.spp)
        for (index, block) in blocks.enumerated() {
            let plane = index / (across * down), j = index % (across * down)
            let x0 = (j % across) * bw, y0 = (j / across) * bh
            for r in 0..<min(bh, image.height - y0) {
                for c in 0..<min(bw, image.width - x0) {
                    for s in 0..<blockSPP {
                        out[((y0 + r) * image.width + x0 + c) * image.spp + s + plane] = block[(r * bw + c) * blockSPP + s]
                    }
                }
            }
        }
        return out
    }

    func encodedBlocks(bigEndian: Bool) -> [[UInt8]] {
        blockPatterns().enumerated().map { index, b in
            if let encode { return encode(b.patterns, b.width, b.rows, b.spp, index) }
            let bytes = TestEncoder.predictAndPack(b.patterns, width: b.width, rows: b.rows, spp: b.spp, bits: image.bits,
                                                   isFloat: image.isFloat, bigEndian: bigEndian, predictor: predictor)
            return compression == 8 ? TestEncoder.zlib(bytes) : bytes
        }
    }
}

/// Builds DNG files from `IFDSpec`s: IFD 0 is the first spec, the others its SubIFDs.
enum TestDNG {
    static func build(_ specs: [IFDSpec], bigEndian: Bool = false, blocks override: [[[UInt8]]]? = nil) -> Data {
        var t = TIFFBuilder(bigEndian: bigEndian)
        var subOffsets: [UInt32] = []
        var ifd0Entries: [TIFFBuilder.Entry] = []
        for (k, spec) in specs.enumerated().reversed() {
            let blocks = override?[k] ?? spec.encodedBlocks(bigEndian: bigEndian)
            var offsets: [UInt32] = [], counts: [UInt32] = []
            for b in blocks {
                if t.data.count % 2 == 1 { t.data.append(0) }
                offsets.append(UInt32(t.data.count))
                counts.append(UInt32(b.count))
                t.data += b
            }
            let img = spec.image
            var e: [TIFFBuilder.Entry] = [
                t.long(254, [UInt32(spec.newSubFileType)]), t.long(256, [UInt32(img.width)]), t.long(257, [UInt32(img.height)]),
                t.short(258, Array(repeating: UInt16(img.bits), count: img.spp)), t.short(259, [UInt16(spec.compression)]),
                t.short(262, [UInt16(spec.photometric)]), t.short(277, [UInt16(img.spp)]), t.short(284, [UInt16(spec.planar)]),
                t.short(339, Array(repeating: UInt16(spec.sampleFormat ?? (img.isFloat ? 3 : 1)), count: img.spp)),
            ]
            if spec.predictor != .none { e.append(t.short(317, [UInt16(spec.predictor.tag)])) }
            if let tile = spec.tile {
                e += [t.long(322, [UInt32(tile.width)]), t.long(323, [UInt32(tile.height)]), t.long(324, offsets), t.long(325, counts)]
            } else {
                e += [t.long(273, offsets), t.long(278, [UInt32(spec.rowsPerStrip)]), t.long(279, counts)]
            }
            e += spec.extra
            if k == 0 {
                ifd0Entries = e + [t.byte(50706, [1, 7, 1, 0]), t.byte(50707, [1, 7, 0, 0]),
                                   t.srational(50721, [(1, 1), (0, 1), (0, 1), (0, 1), (1, 1), (0, 1), (0, 1), (0, 1), (1, 1)])]
                if !subOffsets.isEmpty { ifd0Entries.append(t.long(330, subOffsets.reversed())) }
            } else {
                subOffsets.append(UInt32(t.appendIFD(e)))
            }
        }
        let ifd0 = t.appendIFD(ifd0Entries)
        t.setFirstIFD(ifd0)
        return Data(t.data)
    }

    /// Parses `data` as a DNG named `name`.
    static func open(_ data: Data, name: String = "t.dng") throws -> DNGFile {
        try DNGFile(file: FileBytes(data: data, path: name))
    }

    /// Builds a one-IFD DNG and decodes it (any image kind).
    static func roundTrip(_ spec: IFDSpec, bigEndian: Bool = false) throws -> StoredImage {
        let dng = try open(build([spec], bigEndian: bigEndian))
        return try RawDecoder.decodeAnyImage(dng, ifd: dng.images[0])
    }
}
