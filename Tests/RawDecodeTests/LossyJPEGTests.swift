import DNGContainer
import Foundation
import Testing
@testable import RawDecode
import TestSupport

/// DCT JPEG: lossy JPEG (34892) tiles and strips, baseline streams under compression 7,
/// semantic masks, JPEGTables, and the errors. The streams come from imagecodecs'
/// libjpeg-turbo; the reference decode is imagecodecs' own.
@Suite struct LossyJPEGTests {
    /// Smooth 8-bit content (so that the JPEG stays close to it) with a little noise.
    static func content(width: Int, height: Int, spp: Int, seed: UInt64) -> TestImage {
        var rng = SeededGenerator(seed: seed)
        var patterns: [UInt32] = []
        for y in 0..<height {
            for x in 0..<width {
                for p in 0..<spp {
                    let v = 30 + x + y + p * 20 + Int.random(in: 0...6, using: &rng)
                    patterns.append(UInt32(v))
                }
            }
        }
        return TestImage(width: width, height: height, spp: spp, bits: 8, isFloat: false, patterns: patterns)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var spp: Int
        var tiled: Bool
        var compression = 34892
        var photometric = 34892
        var planar = 1
        var testDescription: String {
            "\(spp) channel(s) \(tiled ? "tiles" : "strips") compression \(compression) photometric \(photometric) planar \(planar)"
        }
    }

    @Test(arguments: [Case(spp: 3, tiled: true), Case(spp: 1, tiled: false), Case(spp: 3, tiled: false, compression: 7),
                      Case(spp: 1, tiled: true, compression: 7), Case(spp: 3, tiled: true, compression: 7, photometric: 6),
                      Case(spp: 3, tiled: true, planar: 2)])
    func decodesAsLibjpegDoes(_ c: Case) throws {
        let dir = TestData.temporaryDirectory("jpeg")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Self.content(width: 70, height: 45, spp: c.spp, seed: UInt64(c.spp))
        var spec = IFDSpec(image: image)
        spec.compression = c.compression
        spec.photometric = c.photometric
        spec.tile = c.tiled ? (32, 16) : nil
        spec.rowsPerStrip = 16
        spec.planar = c.planar
        let (streams, decoded) = try PythonCodecs.jpeg(spec.blockPatterns(), dir: dir)
        spec.encode = { _, _, _, _, index in streams[index] }
        let dng = try TestDNG.open(TestDNG.build([spec]))
        let stored = c.photometric == 6 ? try RawDecoder.decodeAnyImage(dng, ifd: dng.images[0])
                                        : try RawDecoder.decode(dng, ifd: dng.mainRawImage())
        var expected = image
        expected.patterns = spec.assemble(decoded.map { $0.map(UInt32.init) })
        #expect(expected.matches(stored), "equal to imagecodecs' libjpeg-turbo decode")
        // Lossy, but close to the content encoded.
        let maxError = zip(expected.patterns, image.patterns).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(maxError < 24, "max error \(maxError)")
    }

    /// Progressive (SOF2, made by Pillow) and extended sequential (SOF1: a baseline stream
    /// with its frame marker changed, a valid superset) streams decode as libjpeg-turbo
    /// decodes them; arithmetic-coded ones (SOF9) are refused.
    @Test func progressiveExtendedAndArithmeticFrames() throws {
        let dir = TestData.temporaryDirectory("jpeg-sof")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Self.content(width: 64, height: 32, spp: 3, seed: 12)
        var spec = IFDSpec(image: image)
        spec.compression = 34892
        spec.tile = (32, 32)
        let (progressive, decoded) = try PythonCodecs.jpeg(spec.blockPatterns(), progressive: true, dir: dir)
        #expect(progressive.allSatisfy { stream in stream.withUnsafeBytes { JPEGFrameInfo.find(in: $0)?.marker == 0xC2 } })
        var expected = image
        expected.patterns = spec.assemble(decoded.map { $0.map(UInt32.init) })
        for compression in [34892, 7] {
            var s = spec
            s.compression = compression
            s.encode = { _, _, _, _, i in progressive[i] }
            #expect(expected.matches(try TestDNG.roundTrip(s)), "progressive, compression \(compression)")
        }
        let (baseline, baselineDecoded) = try PythonCodecs.jpeg(spec.blockPatterns(), dir: dir)
        func withMarker(_ stream: [UInt8], _ marker: UInt8) -> [UInt8] {
            var out = stream
            let at = (0..<(out.count - 1)).first { out[$0] == 0xFF && out[$0 + 1] == 0xC0 }!
            out[at + 1] = marker
            return out
        }
        var extended = spec
        extended.encode = { _, _, _, _, i in withMarker(baseline[i], 0xC1) }
        expected.patterns = spec.assemble(baselineDecoded.map { $0.map(UInt32.init) })
        #expect(expected.matches(try TestDNG.roundTrip(extended)), "SOF1")
        var arithmetic = spec
        arithmetic.encode = { _, _, _, _, i in withMarker(baseline[i], 0xC9) }
        let dng = try TestDNG.open(TestDNG.build([arithmetic]))
        let error = try #require(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: dng.mainRawImage()) }
        #expect(error == .unsupportedBlock(path: "t.dng", ifd: "IFD0", block: "tile 0",
                                           reason: "JPEG process SOF9 under compression 34892 (baseline, extended or progressive Huffman DCT expected)"))
    }

    /// Splits a JPEG stream into JPEGTables (SOI, DQT and DHT segments, EOI) and the
    /// abbreviated stream without them, as TIFF writers with JPEGTables do.
    static func abbreviate(_ stream: [UInt8]) -> (tables: [UInt8], image: [UInt8]) {
        var tables: [UInt8] = [0xFF, 0xD8], image: [UInt8] = [0xFF, 0xD8]
        var at = 2
        while at + 4 <= stream.count {
            let marker = stream[at + 1]
            if marker == 0xDA { image += stream[at...]; break }
            let length = Int(stream[at + 2]) << 8 | Int(stream[at + 3])
            let segment = stream[at..<(at + 2 + length)]
            if marker == 0xDB || marker == 0xC4 { tables += segment } else { image += segment }
            at += 2 + length
        }
        return (tables + [0xFF, 0xD9], image)
    }

    @Test func abbreviatedStreamsWithJPEGTables() throws {
        let dir = TestData.temporaryDirectory("jpeg-tables")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Self.content(width: 64, height: 32, spp: 3, seed: 9)
        var spec = IFDSpec(image: image)
        spec.compression = 34892
        spec.tile = (32, 32)
        let (streams, decoded) = try PythonCodecs.jpeg(spec.blockPatterns(), dir: dir)
        // imagecodecs writes the same tables for every tile of the same quality.
        let parts = streams.map(Self.abbreviate)
        #expect(parts[0].tables == parts[1].tables)
        spec.encode = { _, _, _, _, index in parts[index].image }
        let t = TIFFBuilder()
        spec.extra = [t.undefined(347, parts[0].tables)]
        let stored = try TestDNG.roundTrip(spec)
        var expected = image
        expected.patterns = spec.assemble(decoded.map { $0.map(UInt32.init) })
        #expect(expected.matches(stored))
        // Without the tables the abbreviated stream cannot be decoded.
        spec.extra = []
        let dng = try TestDNG.open(TestDNG.build([spec]))
        let error = try #require(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: dng.mainRawImage()) }
        #expect(error.category == .corruptData)
        #expect(error.description.hasPrefix("t.dng: corrupt lossy JPEG tile 0 in IFD0: libjpeg: "), "\(error)")
    }

    /// A semantic mask as Apple ProRAW stores it: NewSubFileType 65540, PhotometricMask,
    /// 8-bit lossy JPEG in one strip, in a SubIFD beside the raw image. `decodeAnyImage`
    /// reads it; `decode` (raw images only) refuses it.
    @Test func semanticMaskInOneLossyStrip() throws {
        let dir = TestData.temporaryDirectory("jpeg-mask")
        defer { try? FileManager.default.removeItem(at: dir) }
        var raw = IFDSpec(image: TestImage.random(width: 64, height: 48, spp: 3, bits: 16, seed: 4))
        raw.tile = (32, 32)
        let maskImage = Self.content(width: 32, height: 24, spp: 1, seed: 5)
        var mask = IFDSpec(image: maskImage)
        mask.compression = 34892
        mask.photometric = 52527
        mask.newSubFileType = 65540
        mask.tile = nil
        mask.rowsPerStrip = 24
        let t = TIFFBuilder()
        mask.extra = [t.ascii(52526, "urn:com:apple:photo:2020:aux:semanticskymatte")]
        let (streams, decoded) = try PythonCodecs.jpeg(mask.blockPatterns(), dir: dir)
        mask.encode = { _, _, _, _, _ in streams[0] }
        let dng = try TestDNG.open(TestDNG.build([raw, mask]))
        let maskIFD = try #require(dng.semanticMasks.first)
        #expect(maskIFD.path == "IFD0/SubIFD0" && maskIFD.semanticName == "urn:com:apple:photo:2020:aux:semanticskymatte")
        let stored = try RawDecoder.decodeAnyImage(dng, ifd: maskIFD)
        #expect(stored.uint16?.samples == decoded[0].map(UInt16.init))
        let error = try #require(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: maskIFD) }
        #expect(error == .unsupported(path: "t.dng", ifd: "IFD0/SubIFD0",
                                      reason: "PhotometricInterpretation 52527 (PhotometricMask) is not a raw image"))
        // The raw image beside it still decodes.
        #expect(raw.image.matches(try RawDecoder.decode(dng, ifd: dng.mainRawImage())))
    }

    @Test func errors() throws {
        let dir = TestData.temporaryDirectory("jpeg-errors")
        defer { try? FileManager.default.removeItem(at: dir) }
        let tile = Self.content(width: 16, height: 16, spp: 1, seed: 1)
        let small = Self.content(width: 8, height: 16, spp: 1, seed: 2)
        let good = try PythonCodecs.jpeg([(tile.patterns, 16, 16, 1)], dir: dir).streams[0]
        let narrow = try PythonCodecs.jpeg([(small.patterns, 8, 16, 1)], dir: dir).streams[0]
        func decode(_ streams: [[UInt8]], bits: Int = 8, compression: Int = 34892, spp: Int = 1) throws -> RawDecodeError {
            var image = TestImage.random(width: 32, height: 16, spp: spp, bits: 8, seed: 3)
            image.bits = bits
            var spec = IFDSpec(image: image)
            spec.compression = compression
            spec.encode = { _, _, _, _, index in streams[index] }
            let dng = try TestDNG.open(TestDNG.build([spec]))
            return try #require(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: dng.mainRawImage()) }
        }
        // Truncated: libjpeg's "premature end" warning is a failure, not grey fill.
        let cut = try decode([good, Array(good.prefix(good.count - 40))])
        #expect(cut.category == .corruptData)
        #expect(cut.description.hasPrefix("t.dng: corrupt lossy JPEG tile 1 in IFD0: libjpeg: "), "\(cut)")

        let size = try decode([good, narrow])
        #expect(size == .shortBlock(path: "t.dng", ifd: "IFD0", block: "tile 1", reason: "JPEG frame 8×16×1, the tile needs 16×16×1"))

        // A 12-bit DCT frame (the precision byte of an 8-bit stream changed): refused.
        var twelve = good
        let sof = try #require((0..<(twelve.count - 1)).first { twelve[$0] == 0xFF && twelve[$0 + 1] == 0xC0 })
        twelve[sof + 4] = 12
        let precision = try decode([twelve, good])
        #expect(precision == .unsupportedBlock(path: "t.dng", ifd: "IFD0", block: "tile 0", reason: "12-bit DCT JPEG (only 8-bit lossy JPEG is decoded)"))
        #expect(precision.category == .unsupportedFeature)

        // Compression 7 with 12-bit samples holding a DCT stream: never read as lossless.
        let lossyIn12 = try decode([good, good], bits: 12, compression: 7)
        #expect(lossyIn12 == .unsupportedBlock(path: "t.dng", ifd: "IFD0", block: "tile 0",
                                               reason: "a DCT-based (lossy) JPEG stream (SOF0) in compression 7 with 12-bit samples; lossy JPEG is decoded only for 8-bit data"))
        #expect(lossyIn12.category == .unsupportedFeature)

        // Compression 34892 declared for 16-bit data: refused from the tags.
        let wide = try decode([good, good], bits: 16)
        #expect(wide == .unsupported(path: "t.dng", ifd: "IFD0",
                                     reason: "lossy JPEG (34892) of 16-bit unsigned integer samples (DNG defines it for 8-bit integers)"))

        // An 8-bit DCT stream under compression 7 for 2 samples per pixel.
        let twoSamples = try decode([good, good], compression: 7, spp: 2)
        #expect(twoSamples == .unsupportedBlock(path: "t.dng", ifd: "IFD0", block: "tile 0",
                                                reason: "a DCT JPEG stream for 2 samples per pixel (1 or 3 are decoded)"))

        let garbage = try decode([good, [0x00, 0x01, 0x02, 0x03]])
        #expect(garbage.description == "t.dng: corrupt lossy JPEG tile 1 in IFD0: no JPEG frame header (SOI … SOFn) found")
    }
}
