import DNGContainer
import Foundation
import ImageCore
import LosslessJPEG
import Testing
@testable import RawDecode
import TestSupport

/// What Stage 1 does not decode is refused with an error naming it (exit category
/// unsupported-feature), and damaged data never crashes it.
@Suite struct RefusalAndCorruptionTests {
    struct Refusal: CustomTestStringConvertible, Sendable {
        var name: String
        var bits = 16
        var sampleFormat = 1
        var spp = 1
        var compression = 1
        var predictor = 1
        var photometric = 34892
        var planar = 1
        var extra: [(UInt16, [UInt16])] = []
        var any = false
        var error: String
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "signed integers", sampleFormat: 2, error: "unsupported in IFD0: signed-integer samples (SampleFormat 2)"),
        Refusal(name: "undefined sample format", sampleFormat: 4, error: "unsupported in IFD0: SampleFormat 4"),
        Refusal(name: "8-bit floats", bits: 8, sampleFormat: 3, error: "unsupported in IFD0: 8-bit floating-point samples (DNG defines 16, 24 and 32)"),
        Refusal(name: "64-bit floats", bits: 64, sampleFormat: 3, error: "unsupported in IFD0: 64-bit floating-point samples (DNG defines 16, 24 and 32)"),
        Refusal(name: "40-bit integers", bits: 40, error: "unsupported in IFD0: 40-bit integer samples"),
        Refusal(name: "LZW", compression: 5, error: "unsupported compression 5 (compression 5) in IFD0"),
        Refusal(name: "old-style JPEG", compression: 6, error: "unsupported compression 6 (old-style JPEG) in IFD0"),
        Refusal(name: "PackBits", compression: 32773, error: "unsupported compression 32773 (compression 32773) in IFD0"),
        Refusal(name: "VC-5", compression: 9, error: "unsupported compression 9 (VC-5 (not defined by DNG)) in IFD0"),
        Refusal(name: "predictor on uncompressed data", predictor: 2, error: "unsupported in IFD0: Predictor 2 with uncompressed data"),
        Refusal(name: "unknown predictor", compression: 8, predictor: 4, error: "unsupported in IFD0: Predictor 4"),
        Refusal(name: "horizontal predictor on floats", sampleFormat: 3, compression: 8, predictor: 34892,
                error: "unsupported in IFD0: Predictor 34892 (horizontal differencing) with floating-point samples; DNG uses 3, 34894 or 34895 for them"),
        Refusal(name: "float predictor on integers", compression: 8, predictor: 3,
                error: "unsupported in IFD0: Predictor 3 (floating point) with 16-bit unsigned integer samples"),
        Refusal(name: "horizontal predictor on 12-bit samples", bits: 12, compression: 8, predictor: 2,
                error: "unsupported in IFD0: Predictor 2 (horizontal differencing) with 12-bit samples (8, 16 or 32 bits)"),
        Refusal(name: "lossless JPEG of floats", sampleFormat: 3, compression: 7,
                error: "unsupported in IFD0: lossless JPEG of 16-bit floating-point samples (integers of 2 to 16 bits)"),
        Refusal(name: "lossless JPEG of 20-bit integers", bits: 20, compression: 7,
                error: "unsupported in IFD0: lossless JPEG of 20-bit unsigned integer samples (integers of 2 to 16 bits)"),
        Refusal(name: "lossless JPEG of 1-bit integers", bits: 1, compression: 7,
                error: "unsupported in IFD0: lossless JPEG of 1-bit unsigned integer samples (integers of 2 to 16 bits)"),
        Refusal(name: "lossy JPEG of 2 samples per pixel", bits: 8, spp: 2, compression: 34892,
                error: "unsupported in IFD0: lossy JPEG of 2 samples per pixel (1 or 3)"),
        Refusal(name: "lossy JPEG of a CFA image", bits: 8, compression: 34892, photometric: 32803,
                error: "unsupported in IFD0: lossy JPEG (34892) of a CFA image (DNG defines it for LinearRaw, masks and depth maps)"),
        Refusal(name: "JPEG XL of 4 planes", spp: 4, compression: 52546, error: "unsupported in IFD0: JPEG XL of 4 planes (DNG allows 1 or 3)"),
        Refusal(name: "JPEG XL of 20-bit integers", bits: 20, compression: 52546,
                error: "unsupported in IFD0: JPEG XL of 20-bit integers (DNG allows 8 to 16 bits)"),
        Refusal(name: "JPEG XL of 6-bit integers", bits: 6, compression: 52546,
                error: "unsupported in IFD0: JPEG XL of 6-bit integers (DNG allows 8 to 16 bits)"),
        Refusal(name: "JPEG XL of 24-bit floats", bits: 24, sampleFormat: 3, compression: 52546,
                error: "unsupported in IFD0: JPEG XL of 24-bit floating-point samples (DNG allows float16)"),
        Refusal(name: "FillOrder 2", extra: [(266, [2])], error: "unsupported in IFD0: FillOrder 2 (bit-reversed bytes)"),
        Refusal(name: "SubTileBlockSize", extra: [(50974, [2, 2])], error: "unsupported in IFD0: SubTileBlockSize 2×2 (rearranged pixels)"),
        Refusal(name: "palette image", bits: 8, photometric: 3, any: true,
                error: "unsupported in IFD0: PhotometricInterpretation 3 (Photometric 3) images are not decoded"),
        Refusal(name: "uncompressed YCbCr", bits: 8, spp: 3, photometric: 6, any: true,
                error: "unsupported in IFD0: YCbCr data with compression 1 (uncompressed); only JPEG-compressed YCbCr is decoded"),
        Refusal(name: "preview through the raw entry", bits: 8, spp: 3, photometric: 2,
                error: "unsupported in IFD0: PhotometricInterpretation 2 (RGB) is not a raw image"),
    ]

    @Test(arguments: refusals)
    func refusedWithASpecificError(_ r: Refusal) throws {
        var image = TestImage.random(width: 16, height: 16, spp: r.spp, bits: min(r.bits, 32), seed: 1)
        image.bits = r.bits
        image.isFloat = r.sampleFormat == 3
        var spec = IFDSpec(image: image)
        spec.compression = r.compression
        spec.photometric = r.photometric
        spec.planar = r.planar
        let t = TIFFBuilder()
        spec.extra = r.extra.map { t.short($0.0, $0.1) }
        spec.sampleFormat = r.sampleFormat
        if r.predictor != 1 { spec.extra.append(t.short(317, [UInt16(r.predictor)])) }
        spec.encode = { _, _, _, _, _ in [UInt8](repeating: 0, count: 16 * 16 * 8 * 4) }
        let dng = try TestDNG.open(TestDNG.build([spec]))
        let ifd = dng.images[0]
        let error = try #require(throws: RawDecodeError.self) {
            if r.any { _ = try RawDecoder.decodeAnyImage(dng, ifd: ifd) } else { _ = try RawDecoder.decode(dng, ifd: ifd) }
        }
        #expect(error.description == "t.dng: \(r.error)")
        #expect(error.category == .unsupportedFeature)
    }

    @Test func mixedSampleFormatsAreCorrupt() throws {
        let spec = IFDSpec(image: TestImage.random(width: 16, height: 16, spp: 3, bits: 16, seed: 1))
        let dng = try TestDNG.open(TestDNG.build([spec]))
        // Rewrite the second SampleFormat value (1 → 3) in place.
        var bytes = [UInt8](dng.file.data)
        let entry = try #require(dng.structure.ifds[0].entry(339))
        bytes[entry.valueOffset + 2] = 3
        let mixed = try TestDNG.open(Data(bytes))
        let error = try #require(throws: RawDecodeError.self) { try RawDecoder.decode(mixed, ifd: mixed.images[0]) }
        #expect(error == .inconsistentLayout(path: "t.dng", ifd: "IFD0", reason: "SampleFormat [1, 3, 1] does not give one format for 3 samples"))
    }

    @Test func planarConfiguration3IsCorrupt() throws {
        var spec = IFDSpec(image: TestImage.random(width: 16, height: 16, spp: 3, bits: 16, seed: 1))
        spec.planar = 3
        let dng = try TestDNG.open(TestDNG.build([spec]))
        let error = try #require(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: dng.images[0]) }
        #expect(error == .inconsistentLayout(path: "t.dng", ifd: "IFD0", reason: "PlanarConfiguration 3"))
    }

    @Test func hugeTilesAreRefusedBeforeAnyAllocation() throws {
        var spec = IFDSpec(image: TestImage.random(width: 8, height: 8, spp: 1, bits: 16, seed: 1))
        spec.compression = 8
        spec.tile = (65536, 65536)
        spec.encode = { _, _, _, _, _ in TestEncoder.zlib([0]) }
        var t = TIFFBuilder()
        // Built by hand: blockPatterns would allocate the huge tile.
        let block = t.data.count
        t.data += TestEncoder.zlib([1, 2, 3])
        let ifd = t.appendIFD([t.byte(50706, [1, 7, 1, 0]), t.long(256, [8]), t.long(257, [8]), t.short(258, [16]), t.short(259, [8]),
                               t.short(262, [34892]), t.short(277, [1]), t.long(322, [65536]), t.long(323, [65536]),
                               t.long(324, [UInt32(block)]), t.long(325, [11])])
        t.setFirstIFD(ifd)
        let dng = try TestDNG.open(Data(t.data))
        let error = try #require(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: dng.images[0]) }
        #expect(error == .inconsistentLayout(path: "t.dng", ifd: "IFD0", reason: "tile size 65536×65536 is far larger than the 8×8 image"))
    }

    @Test func corruptDeflateStreamsAreNamed() throws {
        let image = TestImage.random(width: 32, height: 16, spp: 1, bits: 16, seed: 4)
        var spec = IFDSpec(image: image)
        spec.compression = 8
        let good = spec.encodedBlocks(bigEndian: false)[0]
        func decode(_ second: [UInt8]) throws -> RawDecodeError {
            var s = spec
            s.encode = { _, _, _, _, index in index == 0 ? good : second }
            let dng = try TestDNG.open(TestDNG.build([s]))
            return try #require(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: dng.mainRawImage()) }
        }
        // A wrong Adler-32 checksum.
        var checksum = good
        checksum[checksum.count - 1] ^= 0xFF
        let badSum = try decode(checksum)
        #expect(badSum.description == "t.dng: corrupt Deflate tile 1 in IFD0: invalid zlib/Deflate data (bad header, block, code or Adler-32 checksum, or the stream ends early)")
        #expect(badSum.category == .corruptData)
        // Cut short.
        #expect(try decode(Array(good.prefix(good.count / 2))).category == .corruptData)
        // Too much data: a stream of a bigger tile.
        let bigger = TestEncoder.zlib([UInt8](repeating: 7, count: 16 * 16 * 2 + 10))
        #expect(try decode(bigger) == .corruptStream(path: "t.dng", ifd: "IFD0", block: "tile 1", codec: "Deflate",
                                                     reason: "the data inflates to more than the 512 bytes of the 16×16 tile"))
        // Too little data, and not the visible size of an edge tile either.
        let smaller = TestEncoder.zlib([UInt8](repeating: 7, count: 100))
        #expect(try decode(smaller) == .shortBlock(path: "t.dng", ifd: "IFD0", block: "tile 1",
                                                   reason: "Deflate data inflates to 100 bytes; 16 rows of 16×1 16-bit unsigned integer samples need 512"))
        // Not zlib at all.
        #expect(try decode([0x00, 0x01, 0x02, 0x03]).category == .corruptData)
    }

    /// Seeded random damage — bytes changed anywhere in the file, or the file cut short —
    /// gives a decoded image or a `SceneLinearFailure`, never a crash or an internal error.
    @Test func seededRandomCorruptionNeverCrashes() throws {
        let dir = TestData.temporaryDirectory("fuzz")
        defer { try? FileManager.default.removeItem(at: dir) }
        var files: [(String, Data)] = []
        func add(_ name: String, _ spec: IFDSpec, bigEndian: Bool = false) { files.append((name, TestDNG.build([spec], bigEndian: bigEndian))) }
        var lj = IFDSpec(image: TestImage.random(width: 48, height: 40, spp: 3, bits: 12, seed: 1))
        lj.compression = 7
        lj.encode = { p, w, r, s, _ in try! LJ92Encoder.encode(p.map { UInt16($0) }, width: w, height: r, components: s, precision: 12) }
        add("lj92", lj)
        var deflate = IFDSpec(image: TestImage.random(width: 48, height: 40, spp: 3, bits: 16, seed: 2))
        deflate.compression = 8
        deflate.predictor = .horizontal(factor: 2)
        add("deflate", deflate, bigEndian: true)
        var float = IFDSpec(image: TestImage.random(width: 48, height: 40, spp: 1, bits: 24, isFloat: true, seed: 3))
        float.compression = 8
        float.predictor = .floatingPoint(factor: 1)
        float.tile = nil
        add("float", float)
        var plain = IFDSpec(image: TestImage.random(width: 48, height: 40, spp: 3, bits: 14, seed: 4))
        plain.planar = 2
        add("uncompressed", plain)
        var jxl = IFDSpec(image: TestImage.random(width: 48, height: 40, spp: 3, bits: 16, seed: 5))
        jxl.compression = 52546
        jxl.tile = (32, 32)
        do { let streams = try PythonCodecs.jpegXL(jxl.blockPatterns(), dtype: "u2", dir: dir).streams
            jxl.encode = { _, _, _, _, i in streams[i] }
            add("jxl", jxl)
        }
        var jpeg = IFDSpec(image: LossyJPEGTests.content(width: 48, height: 40, spp: 3, seed: 6))
        jpeg.compression = 34892
        jpeg.tile = (32, 32)
        do { let streams = try PythonCodecs.jpeg(jpeg.blockPatterns(), dir: dir).streams
            jpeg.encode = { _, _, _, _, i in streams[i] }
            add("jpeg", jpeg)
        }

        var rng = SeededGenerator(seed: 2026)
        var outcomes: [String: (decoded: Int, failed: Int)] = [:]
        for (name, original) in files {
            for trial in 0..<150 {
                var bytes = [UInt8](original)
                if trial % 5 == 4 {
                    bytes = Array(bytes.prefix(Int.random(in: 8..<bytes.count, using: &rng)))
                } else {
                    // Mostly inside the block data (the first part of the file), sometimes anywhere.
                    let span = trial % 3 == 0 ? bytes.count : bytes.count * 2 / 3
                    for _ in 0..<Int.random(in: 1...8, using: &rng) {
                        bytes[Int.random(in: 8..<span, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                    }
                }
                do {
                    let dng = try DNGFile(file: FileBytes(data: Data(bytes), path: "\(name)-\(trial).dng"))
                    for ifd in dng.images { _ = try RawDecoder.decodeAnyImage(dng, ifd: ifd, limits: DecodeLimits(maxPixels: 1 << 20)) }
                    outcomes[name, default: (0, 0)].decoded += 1
                } catch let failure as any SceneLinearFailure {
                    #expect(failure.category != .internalError, "\(failure)")
                    outcomes[name, default: (0, 0)].failed += 1
                }
            }
        }
        for (name, o) in outcomes.sorted(by: { $0.key < $1.key }) {
            #expect(o.decoded + o.failed == 150, "\(name)")
            print("corruption \(name): \(o.decoded) decoded, \(o.failed) refused with an error")
        }
    }
}
