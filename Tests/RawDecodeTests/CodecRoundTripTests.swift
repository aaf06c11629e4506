import DNGContainer
import Foundation
import Testing
@testable import RawDecode
import TestSupport

/// Uncompressed and Deflate data of every sample type, predictor, byte order and layout,
/// written by the test encoder (zlib for Deflate) and decoded bit for bit.
@Suite struct CodecRoundTripTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var bits: Int
        var isFloat = false
        var spp = 3
        var compression = 1
        var predictor = 1
        var bigEndian = false
        var tiled = true
        var planar = 1

        var testDescription: String {
            let kind = isFloat ? "f\(bits)" : "u\(bits)"
            let layout = tiled ? "tiles" : "strips"
            return "\(kind)×\(spp) \(compression == 8 ? "Deflate pred \(predictor)" : "uncompressed") \(bigEndian ? "MM" : "II") \(layout) planar \(planar)"
        }

        var testPredictor: TestPredictor {
            switch predictor {
            case 2: return .horizontal(factor: 1)
            case 34892: return .horizontal(factor: 2)
            case 34893: return .horizontal(factor: 4)
            case 3: return .floatingPoint(factor: 1)
            case 34894: return .floatingPoint(factor: 2)
            case 34895: return .floatingPoint(factor: 4)
            default: return .none
            }
        }
    }

    static let cases: [Case] = {
        var out: [Case] = []
        // Uncompressed: every integer depth class and the three float widths, both byte orders.
        for bits in [1, 7, 8, 10, 12, 14, 16, 17, 20, 24, 31, 32] {
            for be in [false, true] { out.append(Case(bits: bits, bigEndian: be)) }
        }
        for bits in [16, 24, 32] {
            for be in [false, true] { out.append(Case(bits: bits, isFloat: true, bigEndian: be)) }
        }
        out += [Case(bits: 12, spp: 1, tiled: false), Case(bits: 16, planar: 2), Case(bits: 32, tiled: false, planar: 2),
                Case(bits: 24, isFloat: true, spp: 1, tiled: false), Case(bits: 16, isFloat: true, planar: 2)]
        // Deflate: integers with every horizontal predictor, floats with every float predictor.
        for bits in [8, 16, 32] {
            for p in [1, 2, 34892, 34893] {
                for be in [false, true] { out.append(Case(bits: bits, compression: 8, predictor: p, bigEndian: be)) }
            }
        }
        for bits in [16, 24, 32] {
            for p in [1, 3, 34894, 34895] {
                for be in [false, true] { out.append(Case(bits: bits, isFloat: true, compression: 8, predictor: p, bigEndian: be)) }
            }
        }
        for p in [2, 34892, 34893] {
            out.append(Case(bits: 16, spp: 1, compression: 8, predictor: p, tiled: false))
            out.append(Case(bits: 16, compression: 8, predictor: p, planar: 2))
        }
        for p in [3, 34894, 34895] {
            out.append(Case(bits: 32, isFloat: true, spp: 1, compression: 8, predictor: p, tiled: false))
            out.append(Case(bits: 16, isFloat: true, compression: 8, predictor: p, planar: 2))
        }
        out += [Case(bits: 12, compression: 8), Case(bits: 20, compression: 8, bigEndian: true), Case(bits: 10, spp: 1, compression: 8, tiled: false)]
        return out
    }()

    @Test(arguments: cases)
    func decodesBitForBit(_ c: Case) throws {
        // 37×23 in 16×16 tiles: partial tiles at the right and bottom; strips of 8 rows.
        let image = TestImage.random(width: 37, height: 23, spp: c.spp, bits: c.bits, isFloat: c.isFloat,
                                     seed: UInt64(c.bits * 1000 + c.predictor))
        var spec = IFDSpec(image: image)
        spec.compression = c.compression
        spec.predictor = c.testPredictor
        spec.tile = c.tiled ? (16, 16) : nil
        spec.planar = c.planar
        let dng = try TestDNG.open(TestDNG.build([spec], bigEndian: c.bigEndian))
        let stored = try RawDecoder.decode(dng, ifd: dng.mainRawImage())
        #expect(stored.sampleType == image.storedType)
        #expect(image.matches(stored))
    }

    /// Horizontal differencing wraps around in the sample's own width: 8-bit differences
    /// modulo 256 (not 65536), 32-bit ones modulo 2^32.
    @Test func differencesWrapInTheSampleWidth() throws {
        for bits in [8, 16, 32] {
            let top = UInt32(bits == 32 ? UInt32.max : (1 << bits) - 1)
            // Alternating extremes: every difference overflows.
            let row: [UInt32] = (0..<32).map { $0 % 2 == 0 ? top : 1 }
            let image = TestImage(width: 32, height: 1, spp: 1, bits: bits, isFloat: false, patterns: row)
            var spec = IFDSpec(image: image)
            spec.compression = 8
            spec.predictor = .horizontal(factor: 1)
            spec.tile = nil
            spec.rowsPerStrip = 1
            let stored = try TestDNG.roundTrip(spec)
            #expect(image.matches(stored), "\(bits)-bit")
            if bits == 8 { #expect(stored.uint16?.samples.prefix(4) == [255, 1, 255, 1]) }
        }
    }

    /// Predictor ×2 differences each sample against the same sample two pixels to the left
    /// (DNG 1.7.1: "the pixel two to the left"), not two samples back: with 3 samples per
    /// pixel the stride is 6 samples. Checked on hand-computed stored bytes.
    @Test func predictorX2IsTwoPixelsBack() throws {
        // One row of 4 RGB pixels, 8-bit: values 10,20,30 | 11,21,31 | 15,25,35 | 17,27,37.
        let values: [UInt8] = [10, 20, 30, 11, 21, 31, 15, 25, 35, 17, 27, 37]
        // ×2: pixels 0 and 1 stored as is, pixel 2 minus pixel 0, pixel 3 minus pixel 1.
        let stored: [UInt8] = [10, 20, 30, 11, 21, 31, 5, 5, 5, 6, 6, 6]
        let image = TestImage(width: 4, height: 1, spp: 3, bits: 8, isFloat: false, patterns: values.map(UInt32.init))
        var spec = IFDSpec(image: image)
        spec.compression = 8
        spec.predictor = .horizontal(factor: 2)
        spec.tile = nil
        spec.rowsPerStrip = 1
        spec.encode = { _, _, _, _, _ in TestEncoder.zlib(stored) }
        #expect(try TestDNG.roundTrip(spec).uint16?.samples == values.map(UInt16.init))
    }

    /// The floating-point predictor on hand-computed bytes: two half floats 1.0 (0x3C00) and
    /// −2.0 (0xC000) in one row: planes [3C C0][00 00], then byte differences [3C 84 40 00].
    @Test func floatingPointPredictorBytes() throws {
        for bigEndian in [false, true] {
            let image = TestImage(width: 2, height: 1, spp: 1, bits: 16, isFloat: true, patterns: [0x3C00, 0xC000])
            var spec = IFDSpec(image: image)
            spec.compression = 8
            spec.predictor = .floatingPoint(factor: 1)
            spec.tile = nil
            spec.rowsPerStrip = 1
            spec.encode = { _, _, _, _, _ in TestEncoder.zlib([0x3C, 0x84, 0x40, 0x00]) }
            #expect(try TestDNG.roundTrip(spec, bigEndian: bigEndian).float32?.samples == [1.0, -2.0],
                    "the predictor's bytes do not depend on the byte order (\(bigEndian ? "MM" : "II"))")
        }
    }

    /// DNG 24-bit floats: 1 sign bit, 7 exponent bits (bias 63), 16 mantissa bits, in the
    /// file's byte order; special values and the extremes of the range.
    @Test func float24Values() throws {
        let cases: [(UInt32, Float)] = [
            (0x00_0000, 0), (0x80_0000, -0.0), (0x3F_0000, 1), (0xBF_8000, -1.5), (0x40_0000, 2),
            (0x3E_0000, 0.5), (0x7E_FFFF, Float((2 - 1.0 / 65536) * 0x1p63)), (0x01_0000, 0x1p-62),
            (0x00_0001, 0x1p-78), (0x00_FFFF, Float(65535 * 0x1p-78)), (0x7F_0000, .infinity),
            (0xFF_0000, -.infinity),
        ]
        for bigEndian in [false, true] {
            let image = TestImage(width: cases.count, height: 1, spp: 1, bits: 24, isFloat: true, patterns: cases.map(\.0))
            var spec = IFDSpec(image: image)
            spec.tile = nil
            spec.rowsPerStrip = 1
            let got = try #require(try TestDNG.roundTrip(spec, bigEndian: bigEndian).float32?.samples)
            for (value, (pattern, expected)) in zip(got, cases) {
                #expect(value.bitPattern == expected.bitPattern, "pattern \(String(pattern, radix: 16)) → \(value), expected \(expected)")
            }
        }
        // NaN stays NaN.
        let nan = TestImage(width: 1, height: 1, spp: 1, bits: 24, isFloat: true, patterns: [0x7F_0001])
        var spec = IFDSpec(image: nan)
        spec.tile = nil
        #expect(try #require(TestDNG.roundTrip(spec).float32?.samples.first).isNaN)
    }

    /// Every one of the 65,536 half-float patterns decodes to its exact value.
    @Test func everyHalfPattern() throws {
        let image = TestImage(width: 256, height: 256, spp: 1, bits: 16, isFloat: true, patterns: (0..<65536).map(UInt32.init))
        var spec = IFDSpec(image: image)
        spec.compression = 8
        spec.predictor = .floatingPoint(factor: 1)
        spec.tile = (64, 64)
        let stored = try TestDNG.roundTrip(spec)
        let got = try #require(stored.float32?.samples)
        var mismatches = 0
        for (v, p) in zip(got, image.patterns) {
            let e = Float(Float16(bitPattern: UInt16(p)))
            if !(v.bitPattern == e.bitPattern || (v.isNaN && e.isNaN)) { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }

    /// Without a WhiteLevel tag, Stage 2 gets the DNG defaults: 1.0 for floating-point
    /// samples, 2^bits − 1 for integers (here 32-bit).
    @Test func whiteLevelDefaultsForTheNewSampleTypes() throws {
        for (bits, isFloat, white) in [(16, true, 1.0), (24, true, 1.0), (32, true, 1.0), (32, false, 4_294_967_295.0), (20, false, 1_048_575)] {
            var spec = IFDSpec(image: TestImage.random(width: 4, height: 4, spp: 3, bits: bits, isFloat: isFloat, seed: 1))
            spec.tile = nil
            let dng = try TestDNG.open(TestDNG.build([spec]))
            #expect(try dng.mainRawImage().whiteLevel == [white, white, white], "\(bits)-bit \(isFloat ? "float" : "integer")")
        }
    }

    /// A Deflate edge tile stored clipped to the image (some writers do this) decodes as
    /// well as a full one.
    @Test func clippedDeflateEdgeTiles() throws {
        let image = TestImage.random(width: 37, height: 23, spp: 3, bits: 16, seed: 77)
        var spec = IFDSpec(image: image)
        spec.compression = 8
        spec.predictor = .horizontal(factor: 1)
        spec.encode = { patterns, width, rows, spp, index in
            // Tiles 2 (right edge), 3–5 (bottom row) are stored with only their visible part.
            let x0 = (index % 3) * 16, y0 = (index / 3) * 16
            let vw = min(16, 37 - x0), vr = min(16, 23 - y0)
            var visible: [UInt32] = []
            for r in 0..<vr { visible += patterns[(r * width * spp)..<((r * width + vw) * spp)] }
            let bytes = TestEncoder.predictAndPack(visible, width: vw, rows: vr, spp: spp, bits: 16, isFloat: false,
                                                   bigEndian: false, predictor: .horizontal(factor: 1))
            return TestEncoder.zlib(bytes)
        }
        #expect(image.matches(try TestDNG.roundTrip(spec)))
    }
}
