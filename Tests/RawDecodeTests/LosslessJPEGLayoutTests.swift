import DNGContainer
import Foundation
import LosslessJPEG
import Testing
@testable import RawDecode
import TestSupport

/// Lossless-JPEG tiles laid out as real writers do: DNG 1.7.1 (p.21) requires only that the
/// frame hold as many samples as the tile, its samples in order being the tile's samples
/// in order. CFA writers commonly code a W×H tile as a W/2 × H frame of 2 components (the
/// Adobe DNG Converter) and some as W/2 × H/2 × 4 (two tile rows per frame row).
@Suite struct LosslessJPEGLayoutTests {
    struct Layout: CustomTestStringConvertible, Sendable {
        /// Frame width and height as fractions of the tile's, and components.
        var widthDivisor: Int
        var heightDivisor: Int
        var components: Int
        var testDescription: String { "W/\(widthDivisor) × H/\(heightDivisor) × \(components)" }
    }

    static func cfaSpec(_ image: TestImage, layout: Layout, predictor: Int = 1) -> IFDSpec {
        var spec = IFDSpec(image: image)
        spec.compression = 7
        spec.photometric = 32803
        spec.tile = (32, 16)
        let t = TIFFBuilder()
        spec.extra = [t.short(33421, [2, 2]), t.byte(33422, [0, 1, 1, 2])]
        spec.encode = { patterns, width, rows, spp, _ in
            let w = width / layout.widthDivisor, h = rows / layout.heightDivisor
            return try! LJ92Encoder.encode(patterns.map { UInt16($0) }, width: w, height: h, components: layout.components,
                                           precision: image.bits, predictor: predictor)
        }
        return spec
    }

    @Test(arguments: [Layout(widthDivisor: 1, heightDivisor: 1, components: 1), Layout(widthDivisor: 2, heightDivisor: 1, components: 2),
                      Layout(widthDivisor: 2, heightDivisor: 2, components: 4), Layout(widthDivisor: 1, heightDivisor: 2, components: 2),
                      Layout(widthDivisor: 4, heightDivisor: 1, components: 4), Layout(widthDivisor: 1, heightDivisor: 4, components: 4)])
    func cfaTileLayouts(_ layout: Layout) throws {
        // 70×45 in 32×16 tiles: partial tiles on the right and at the bottom.
        let image = TestImage.random(width: 70, height: 45, spp: 1, bits: 14, seed: UInt64(layout.components * 10 + layout.widthDivisor))
        for predictor in [1, 6] {
            let dng = try TestDNG.open(TestDNG.build([Self.cfaSpec(image, layout: layout, predictor: predictor)]))
            let raw = try dng.mainRawImage()
            #expect(raw.cfa?.patternName == "RGGB")
            #expect(image.matches(try RawDecoder.decode(dng, ifd: raw)), "predictor \(predictor)")
        }
    }

    /// Narrow lossless-JPEG precisions (T.81 allows 2–16 bits).
    @Test(arguments: [2, 6, 8, 10])
    func narrowPrecisions(bits: Int) throws {
        let image = TestImage.random(width: 40, height: 20, spp: 1, bits: bits, seed: UInt64(bits))
        var spec = IFDSpec(image: image)
        spec.compression = 7
        spec.encode = { patterns, width, rows, spp, _ in
            try! LJ92Encoder.encode(patterns.map { UInt16($0) }, width: width, height: rows, components: spp, precision: bits)
        }
        let dng = try TestDNG.open(TestDNG.build([spec]))
        #expect(image.matches(try RawDecoder.decode(dng, ifd: dng.mainRawImage())))
    }

    @Test func aFrameWithTooFewSamplesIsNamed() throws {
        let image = TestImage.random(width: 32, height: 16, spp: 1, bits: 12, seed: 3)
        var spec = Self.cfaSpec(image, layout: Layout(widthDivisor: 1, heightDivisor: 1, components: 1))
        spec.encode = { patterns, _, _, _, _ in
            try! LJ92Encoder.encode(Array(patterns.prefix(16 * 16)).map { UInt16($0) }, width: 16, height: 16, components: 1, precision: 12)
        }
        let dng = try TestDNG.open(TestDNG.build([spec]))
        let error = try #require(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: dng.mainRawImage()) }
        #expect(error == .shortBlock(path: "t.dng", ifd: "IFD0", block: "tile 0",
                                     reason: "lossless-JPEG frame 16×16×1 holds 256 samples, the tile needs 32×16×1 = 512"))
        #expect(error.category == .corruptData)
    }

    /// A hierarchical (SOF5) frame is a valid JPEG process this decoder does not implement:
    /// unsupported, not corrupt.
    @Test func hierarchicalFramesAreUnsupported() throws {
        let image = TestImage.random(width: 16, height: 16, spp: 1, bits: 12, seed: 3)
        var spec = IFDSpec(image: image)
        spec.compression = 7
        spec.encode = { patterns, width, rows, spp, _ in
            var stream = try! LJ92Encoder.encode(patterns.map { UInt16($0) }, width: width, height: rows, components: spp, precision: 12)
            let sof = stream.indices.first { stream[$0] == 0xFF && stream[$0 + 1] == 0xC3 }!
            stream[sof + 1] = 0xC5
            return stream
        }
        let dng = try TestDNG.open(TestDNG.build([spec]))
        let error = try #require(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: dng.mainRawImage()) }
        #expect(error.category == .unsupportedFeature)
        #expect(error.description == "t.dng: unsupported tile 0 in IFD0: unsupported lossless-JPEG stream: SOF5 (FFC5) at byte 2 is differential sequential DCT (lossy, hierarchical), not lossless Huffman coding (SOF3)")
    }

    /// YCbCr (a preview kind) is decoded only from DCT JPEG, which libjpeg converts to RGB.
    @Test func yCbCrInALosslessStreamIsRefused() throws {
        var spec = IFDSpec(image: TestImage.random(width: 16, height: 16, spp: 3, bits: 8, seed: 4))
        spec.compression = 7
        spec.photometric = 6
        spec.encode = { patterns, width, rows, spp, _ in
            try! LJ92Encoder.encode(patterns.map { UInt16($0) }, width: width, height: rows, components: spp, precision: 8)
        }
        let dng = try TestDNG.open(TestDNG.build([spec]))
        let error = try #require(throws: RawDecodeError.self) { try RawDecoder.decodeAnyImage(dng, ifd: dng.images[0]) }
        #expect(error == .unsupportedBlock(path: "t.dng", ifd: "IFD0", block: "tile 0", reason: "YCbCr data in a lossless JPEG stream"))
    }

    /// PlanarConfiguration 2: one single-component frame per plane and tile, planes one
    /// after the other in the tile order.
    @Test func separatePlanes() throws {
        let image = TestImage.random(width: 40, height: 20, spp: 3, bits: 16, seed: 5)
        var spec = IFDSpec(image: image)
        spec.compression = 7
        spec.planar = 2
        spec.tile = (16, 16)
        spec.encode = { patterns, width, rows, spp, _ in
            try! LJ92Encoder.encode(patterns.map { UInt16($0) }, width: width, height: rows, components: spp, precision: 16)
        }
        let dng = try TestDNG.open(TestDNG.build([spec]))
        #expect(try dng.mainRawImage().layout?.offsets.count == 3 * 3 * 2)
        #expect(image.matches(try RawDecoder.decode(dng, ifd: dng.mainRawImage())))
    }
}
