import DNGContainer
import Foundation
import ImageCore
import Testing
@testable import RawDecode
import TestSupport

/// JPEG XL tiles (compression 52546) made by an independent encoder (imagecodecs' libjxl
/// 0.11) and decoded by Debian's libjxl 0.7 through Stage 1.
@Suite struct JPEGXLTests {
    struct Case: CustomTestStringConvertible, Sendable {
        /// "u1", "u2" or "f2": the samples given to the encoder.
        var dtype: String
        /// BitsPerSample of the IFD (T) and of the codestream (B).
        var tiffBits: Int
        var streamBits: Int
        var spp: Int
        var container = false
        var tiled = true
        var planar = 1
        var testDescription: String {
            "\(dtype) T\(tiffBits)/B\(streamBits)×\(spp) \(container ? "container" : "codestream") \(tiled ? "tiles" : "strips") planar \(planar)"
        }
    }

    static let cases: [Case] = [
        Case(dtype: "u2", tiffBits: 16, streamBits: 16, spp: 3),
        Case(dtype: "u2", tiffBits: 16, streamBits: 16, spp: 1, container: true, tiled: false),
        Case(dtype: "u1", tiffBits: 8, streamBits: 8, spp: 3),
        Case(dtype: "u1", tiffBits: 8, streamBits: 8, spp: 1, container: true),
        Case(dtype: "f2", tiffBits: 16, streamBits: 16, spp: 3),
        Case(dtype: "f2", tiffBits: 16, streamBits: 16, spp: 1, container: true, tiled: false),
        Case(dtype: "u2", tiffBits: 12, streamBits: 12, spp: 3),
        Case(dtype: "u2", tiffBits: 14, streamBits: 14, spp: 3, planar: 2),
        Case(dtype: "u2", tiffBits: 16, streamBits: 12, spp: 1),
        Case(dtype: "u1", tiffBits: 10, streamBits: 8, spp: 1),
        Case(dtype: "f4", tiffBits: 32, streamBits: 32, spp: 3),
    ]

    @Test(arguments: cases)
    func losslessTilesDecodeExactly(_ c: Case) throws {
        let dir = TestData.temporaryDirectory("jxl")
        defer { try? FileManager.default.removeItem(at: dir) }
        let isFloat = c.dtype.hasPrefix("f")
        // Float16 subnormals are left out here: libjxl's encoder does not keep them (see
        // `float16SubnormalsAsTheEncoderStoredThem`).
        let source = TestImage.random(width: 45, height: 29, spp: c.spp, bits: c.streamBits, isFloat: isFloat,
                                      subnormals: false, seed: UInt64(c.streamBits * 10 + c.spp))
        var spec = IFDSpec(image: source)
        spec.image.bits = c.tiffBits
        spec.compression = 52546
        spec.tile = c.tiled ? (32, 16) : nil
        spec.rowsPerStrip = 11
        spec.planar = c.planar
        let (streams, reference) = try PythonCodecs.jpegXL(spec.blockPatterns(), dtype: c.dtype,
                                                                 bitsPerSample: isFloat ? nil : c.streamBits,
                                                                 container: c.container, dir: dir)
        let signature: [UInt8] = c.container ? [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20] : [0xFF, 0x0A]
        #expect(streams.allSatisfy { $0.starts(with: signature) })
        spec.encode = { _, _, _, _, index in streams[index] }
        let stored = try TestDNG.roundTrip(spec)

        // 1. Equal to an independent decoder's reading of the same streams (imagecodecs gives
        //    the codestream's own integers; the stored value is on the BitsPerSample scale).
        var expected = source
        expected.bits = c.tiffBits
        expected.patterns = spec.assemble(reference)
        if !isFloat, c.tiffBits != c.streamBits {
            let t = UInt32((1 << c.tiffBits) - 1), b = UInt32((1 << c.streamBits) - 1)
            expected.patterns = expected.patterns.map { (2 * $0 * t + b) / (2 * b) }
        }
        #expect(expected.matches(stored), "equal to imagecodecs' decode")
        // 2. Lossless: equal to the samples encoded (rescaled when T ≠ B).
        if !isFloat, c.tiffBits != c.streamBits {
            let t = UInt32((1 << c.tiffBits) - 1), b = UInt32((1 << c.streamBits) - 1)
            #expect(expected.patterns == source.patterns.map { (2 * $0 * t + b) / (2 * b) })
        } else {
            #expect(expected.patterns == source.patterns)
        }
    }

    /// libjxl's lossless encoder (0.11, in imagecodecs) does not keep float16 subnormals
    /// 0x0200–0x03FF (and their negatives): they come back changed from its own decoder too.
    /// Stage 1 (libjxl 0.7) reads such streams exactly as imagecodecs does.
    @Test func float16SubnormalsAsTheEncoderStoredThem() throws {
        let dir = TestData.temporaryDirectory("jxl-sub")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = TestImage(width: 32, height: 32, spp: 1, bits: 16, isFloat: true, patterns: (0..<1024).map(UInt32.init))
        var spec = IFDSpec(image: image)
        spec.compression = 52546
        spec.tile = (32, 32)
        let (streams, reference) = try PythonCodecs.jpegXL(spec.blockPatterns(), dtype: "f2", dir: dir)
        spec.encode = { _, _, _, _, _ in streams[0] }
        let stored = try #require(try TestDNG.roundTrip(spec).float32?.samples)
        #expect(stored.map(\.bitPattern) == reference[0].map { TestImage.floatValue($0, bits: 16).bitPattern })
        let changed = zip(reference[0], image.patterns).filter { $0 != $1 }.map(\.1)
        #expect(changed.min() == 0x200 && changed.count == 512, "the encoder changed \(changed.count) subnormals")
    }

    /// A lossy (VarDCT) 16-bit stream decodes, close to the original and to imagecodecs'
    /// own decode of the same stream.
    @Test func lossyStreamDecodes() throws {
        let dir = TestData.temporaryDirectory("jxl-lossy")
        defer { try? FileManager.default.removeItem(at: dir) }
        // A smooth ramp: lossy coding keeps it within a small error.
        let (w, h) = (64, 64)
        let patterns = (0..<(w * h * 3)).map { i -> UInt32 in UInt32(8000 + (i / 3 % w) * 300 + (i / 3 / w) * 200 + (i % 3) * 1000) }
        var spec = IFDSpec(image: TestImage(width: w, height: h, spp: 3, bits: 16, isFloat: false, patterns: patterns))
        spec.compression = 52546
        spec.tile = (64, 64)
        let (streams, reference) = try PythonCodecs.jpegXL(spec.blockPatterns(), dtype: "u2", distance: 1.0,
                                                                 dir: dir)
        spec.encode = { _, _, _, _, _ in streams[0] }
        let stored = try #require(try TestDNG.roundTrip(spec).uint16)
        let maxError = zip(stored.samples, patterns).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(maxError < 1000, "max error \(maxError) of 65535")
        // Two libjxl versions (0.7 here, 0.11 in imagecodecs) agree to within a code or two.
        let versionDifference = zip(stored.samples, reference[0]).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(versionDifference <= 2, "libjxl 0.7 vs 0.11: \(versionDifference)")
    }

    static func twoTileSpec(streams: [[UInt8]], spp: Int = 1, isFloat: Bool = false, bits: Int = 16) -> IFDSpec {
        var spec = IFDSpec(image: TestImage.random(width: 32, height: 16, spp: spp, bits: bits, isFloat: isFloat, seed: 1))
        spec.compression = 52546
        spec.encode = { _, _, _, _, index in streams[index % streams.count] }
        return spec
    }

    static func decodeError(_ spec: IFDSpec) throws -> RawDecodeError {
        let dng = try TestDNG.open(TestDNG.build([spec]))
        return try #require(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: dng.mainRawImage()) }
    }

    @Test func truncatedAndWrongStreamsAreSpecificErrors() throws {
        let dir = TestData.temporaryDirectory("jxl-bad")
        defer { try? FileManager.default.removeItem(at: dir) }
        let tile = TestImage.random(width: 16, height: 16, spp: 1, bits: 16, seed: 2)
        let rgb = TestImage.random(width: 16, height: 16, spp: 3, bits: 16, seed: 3)
        let small = TestImage.random(width: 8, height: 16, spp: 1, bits: 16, seed: 4)
        let half = TestImage.random(width: 16, height: 16, spp: 1, bits: 16, isFloat: true, seed: 5)
        func stream(_ image: TestImage, _ dtype: String) throws -> [UInt8] {
            try #require(try PythonCodecs.jpegXL([(image.patterns, image.width, image.height, image.spp)], dtype: dtype, dir: dir).streams.first)
        }
        let good = try stream(tile, "u2"), color = try stream(rgb, "u2"), narrow = try stream(small, "u2")
        let float = try stream(half, "f2")

        // Cut in half: libjxl cannot finish the image.
        let cut = try Self.decodeError(Self.twoTileSpec(streams: [good, Array(good.prefix(good.count / 2))]))
        #expect(cut.category == .corruptData)
        #expect(cut.description.hasPrefix("t.dng: corrupt JPEG XL tile 1 in IFD0: "), "\(cut)")

        let garbage = try Self.decodeError(Self.twoTileSpec(streams: [good, [0x12, 0x34, 0x56, 0x78, 0x9A]]))
        #expect(garbage.description == "t.dng: corrupt JPEG XL tile 1 in IFD0: not a JPEG XL codestream or container (no JPEG XL signature)")

        let size = try Self.decodeError(Self.twoTileSpec(streams: [good, narrow]))
        #expect(size == .shortBlock(path: "t.dng", ifd: "IFD0", block: "tile 1", reason: "JPEG XL image 8×16, the tile is 16×16"))
        #expect(size.category == .corruptData)

        let channels = try Self.decodeError(Self.twoTileSpec(streams: [color]))
        #expect(channels.description == "t.dng: corrupt tile 0 in IFD0: JPEG XL image with 3 colour channels, the tile has 1 samples per pixel")

        let kind = try Self.decodeError(Self.twoTileSpec(streams: [float]))
        #expect(kind.description.contains("the stream holds floating-point samples (16 bits), SampleFormat 1 says integer"), "\(kind)")
    }

    /// Tiles decode in parallel and each on one thread: the result does not depend on the
    /// number of threads.
    @Test func manyTilesDecodeTheSameOnEveryThreadCount() throws {
        let dir = TestData.temporaryDirectory("jxl-many")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = TestImage.random(width: 200, height: 120, spp: 3, bits: 16, seed: 8)
        var spec = IFDSpec(image: image)
        spec.compression = 52546
        spec.tile = (32, 32)
        let streams = try PythonCodecs.jpegXL(spec.blockPatterns(), dtype: "u2", dir: dir).streams
        spec.encode = { _, _, _, _, index in streams[index] }
        #expect(image.matches(try TestDNG.roundTrip(spec)))
    }
}
