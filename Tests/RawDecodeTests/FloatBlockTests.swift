import DNGContainer
import Foundation
import ImageCore
import Testing
@testable import RawDecode
import TestSupport

/// Floating-point samples decoded block by block (`RawDecoder.forEachBlock`): each block's
/// `Float` samples are, bit for bit, those of the whole image `RawDecoder.decode` makes, for
/// half, 24-bit and single floats, uncompressed or Deflate with the floating-point predictors,
/// JPEG XL, tiles and strips, one and three samples per pixel, either byte order; the
/// raw-image digest fed block by block is the whole image's. Planar floats are left to `decode`.
@Suite struct FloatBlockTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var bits: Int
        var spp: Int
        var compression = 1
        var predictor = 1
        var tiled = true
        var bigEndian = false
        var testDescription: String {
            "float\(bits)×\(spp) compression \(compression) predictor \(predictor) \(tiled ? "tiles" : "strips")\(bigEndian ? " big-endian" : "")"
        }
    }

    static let cases: [Case] = [
        Case(bits: 16, spp: 3),
        Case(bits: 16, spp: 1, tiled: false, bigEndian: true),
        Case(bits: 24, spp: 3, tiled: false),
        Case(bits: 32, spp: 3, bigEndian: true),
        Case(bits: 32, spp: 1, tiled: false),
        Case(bits: 16, spp: 3, compression: 8, predictor: 3),
        Case(bits: 16, spp: 1, compression: 8, predictor: 34894, tiled: false),
        Case(bits: 24, spp: 3, compression: 8, predictor: 34895),
        Case(bits: 32, spp: 3, compression: 8, predictor: 3, tiled: false, bigEndian: true),
        Case(bits: 32, spp: 1, compression: 8, predictor: 1),
    ]

    /// The image a pass of `forEachBlock` (or `forEachBlockRow`) hands over, as `Float` bit
    /// patterns, and whether every block came as `Float`.
    static func blockwise(_ dng: DNGFile, rows: Bool, digester: ImageDigester? = nil) throws -> (patterns: [UInt32], allFloat: Bool) {
        let raw = try dng.mainRawImage()
        let image = SharedStore<Int, [UInt32]>(), types = SharedStore<Int, StoredSampleType>()
        let width = raw.width, spp = raw.samplesPerPixel
        let body: @Sendable (PixelRect, BlockSamples, Int, Bool) throws -> Void = { region, samples, rowStride, _ in
            types[region.top * 100_000 + region.left] = samples.type
            guard let p = samples.float32 else { return }
            for r in 0..<region.height {
                image[(region.top + r) * width + region.left] = UnsafeBufferPointer(start: p + r * rowStride, count: region.width * spp)
                    .map(\.bitPattern)
            }
        }
        let handled = rows ? try RawDecoder.forEachBlockRow(dng, ifd: raw, digester: digester, body, rowsDone: { _ in })
                           : try RawDecoder.forEachBlock(dng, ifd: raw, digester: digester, body)
        #expect(handled)
        var out = [UInt32](repeating: 0, count: raw.width * raw.height * spp)
        for key in image.keys {
            let row = image[key]!
            out.replaceSubrange((key * spp)..<(key * spp + row.count), with: row)
        }
        return (out, types.keys.allSatisfy { types[$0] == .float32 })
    }

    static func spec(_ c: Case, seed: UInt64) -> IFDSpec {
        var spec = IFDSpec(image: TestImage.random(width: 45, height: 29, spp: c.spp, bits: c.bits, isFloat: true, seed: seed))
        spec.photometric = c.spp == 3 ? 34892 : 32803
        spec.compression = c.compression
        spec.predictor = switch c.predictor {
        case 3: .floatingPoint(factor: 1)
        case 34894: .floatingPoint(factor: 2)
        case 34895: .floatingPoint(factor: 4)
        default: .none
        }
        spec.tile = c.tiled ? (16, 16) : nil
        spec.rowsPerStrip = 7
        if c.spp == 1 {
            spec.extra = [TIFFBuilder().short(33421, [2, 2]), TIFFBuilder().byte(33422, [0, 1, 1, 2])]
        }
        return spec
    }

    @Test(arguments: cases)
    func blocksEqualTheWholeImage(_ c: Case) throws {
        let spec = Self.spec(c, seed: UInt64(c.bits * 10 + c.spp + c.predictor))
        let dng = try TestDNG.open(TestDNG.build([spec], bigEndian: c.bigEndian))
        let raw = try dng.mainRawImage()
        #expect(try RawDecoder.storage(dng, ifd: raw).blockByBlock)
        let whole = try RawDecoder.decode(dng, ifd: raw)
        let samples = try #require(whole.float32?.samples)
        #expect(spec.image.matches(whole))
        for rows in [false, true] {
            let digester = ImageDigester(width: raw.width, height: raw.height, samplesPerPixel: raw.samplesPerPixel, sampleBytes: 4,
                                         sequential: false)
            let (patterns, allFloat) = try Self.blockwise(dng, rows: rows, digester: digester)
            #expect(allFloat)
            #expect(patterns == samples.map(\.bitPattern), "rows \(rows)")
            let reference = ImageDigester(width: raw.width, height: raw.height, samplesPerPixel: raw.samplesPerPixel, sampleBytes: 4,
                                          sequential: false)
            reference.add(whole)
            #expect(digester.finish() == reference.finish(), "rows \(rows): the digest fed block by block")
        }
    }

    /// JPEG XL float tiles and strips (imagecodecs' encoder): decoded straight into each
    /// block's buffer, the same bits as the whole image.
    @Test(arguments: [("f2", 16, true), ("f2", 16, false), ("f4", 32, true)])
    func jpegXLFloatBlocks(dtype: String, bits: Int, tiled: Bool) throws {
        let dir = TestData.temporaryDirectory("jxl-float-blocks")
        defer { try? FileManager.default.removeItem(at: dir) }
        var spec = IFDSpec(image: TestImage.random(width: 45, height: 29, spp: 3, bits: bits, isFloat: true, subnormals: false, seed: 31))
        spec.compression = 52546
        spec.tile = tiled ? (32, 16) : nil
        spec.rowsPerStrip = 11
        let (streams, _) = try PythonCodecs.jpegXL(spec.blockPatterns(), dtype: dtype, dir: dir)
        spec.encode = { _, _, _, _, index in streams[index] }
        let dng = try TestDNG.open(TestDNG.build([spec]))
        let whole = try RawDecoder.decode(dng, ifd: try dng.mainRawImage())
        #expect(spec.image.matches(whole))
        for rows in [false, true] {
            let (patterns, allFloat) = try Self.blockwise(dng, rows: rows)
            #expect(allFloat && patterns == whole.float32?.samples.map(\.bitPattern), "rows \(rows)")
        }
    }

    /// Planar floats (one plane per block) are not decoded block by block.
    @Test func planarFloatsAreDecodedWhole() throws {
        var spec = IFDSpec(image: TestImage.random(width: 20, height: 18, spp: 3, bits: 16, isFloat: true, seed: 4))
        spec.planar = 2
        let dng = try TestDNG.open(TestDNG.build([spec]))
        let raw = try dng.mainRawImage()
        #expect(try !RawDecoder.storage(dng, ifd: raw).blockByBlock)
        #expect(try RawDecoder.forEachBlock(dng, ifd: raw) { _, _, _, _ in } == false)
        #expect(spec.image.matches(try RawDecoder.decode(dng, ifd: raw)))
    }

    /// How an IFD is stored, read once: whether it is decoded block by block and the type a
    /// whole decode holds its samples in (what a development plan cuts strips from).
    @Test func storageOfEachSampleType() throws {
        let cases: [(String, TestImage, Int, Bool, StoredSampleType)] = [
            ("12-bit integers", TestImage.random(width: 20, height: 18, spp: 3, bits: 12, seed: 5), 1, true, .uint16),
            ("32-bit integers", TestImage.random(width: 20, height: 18, spp: 3, bits: 32, seed: 6), 1, false, .uint32),
            ("half floats", TestImage.random(width: 20, height: 18, spp: 3, bits: 16, isFloat: true, seed: 7), 1, true, .float32),
            ("planar half floats", TestImage.random(width: 20, height: 18, spp: 3, bits: 16, isFloat: true, seed: 8), 2, false, .float32),
        ]
        for (what, image, planar, blockByBlock, type) in cases {
            var spec = IFDSpec(image: image)
            spec.planar = planar
            let dng = try TestDNG.open(TestDNG.build([spec]))
            let raw = try dng.mainRawImage()
            let storage = try RawDecoder.storage(dng, ifd: raw)
            #expect(storage.blockByBlock == blockByBlock && storage.storedType == type, "\(what): \(storage)")
            #expect(try RawDecoder.decode(dng, ifd: raw).samples.type == type, "\(what)")
        }
    }
}
