import DNGContainer
import Foundation
import ImageCore
import LosslessJPEG
import Testing
@testable import RawDecode
import TestSupport

/// RowInterleaveFactor (50975) and ColumnInterleaveFactor (52547): files whose blocks hold
/// the image in field order (rows 0, N, 2N, …, then 1, N + 1, …; columns the same within
/// each row) decode to the image in natural order, for each codec and sample type; bad
/// factors are refused with an error naming the tag.
@Suite struct InterleaveTests {
    /// The image rows (or columns) in the order they are stored with `factor` fields:
    /// field 0 (0, f, 2f, …), then field 1 (1, f + 1, …), and so on.
    static func storedOrder(_ count: Int, factor: Int) -> [Int] {
        (0..<factor).flatMap { k in Array(stride(from: k, to: count, by: factor)) }
    }

    /// `image` with its rows and columns rearranged into fields, as a writer stores it.
    static func interleaved(_ image: TestImage, rows: Int, columns: Int) -> TestImage {
        let rowOrder = storedOrder(image.height, factor: rows), columnOrder = storedOrder(image.width, factor: columns)
        let spp = image.spp, width = image.width
        var out = image
        for (storedRow, row) in rowOrder.enumerated() {
            for (storedColumn, column) in columnOrder.enumerated() {
                for s in 0..<spp {
                    out.patterns[(storedRow * width + storedColumn) * spp + s] = image.patterns[(row * width + column) * spp + s]
                }
            }
        }
        return out
    }

    /// The factor tags; the column factor as a LONG, the row factor as a SHORT (DNG allows both).
    static func factorTags(rows: Int, columns: Int) -> [TIFFBuilder.Entry] {
        let t = TIFFBuilder()
        return [t.short(50975, [UInt16(rows)]), t.long(52547, [UInt32(columns)])]
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var rows: Int
        var columns: Int
        var bits = 16
        var isFloat = false
        var spp = 1
        var compression = 1
        var predictor = TestPredictorCase.none
        var tiled = true
        var planar = 1
        var testDescription: String {
            let kind = isFloat ? "f\(bits)" : "u\(bits)"
            return "rows ×\(rows), columns ×\(columns): \(kind)×\(spp) compression \(compression) \(predictor) \(tiled ? "tiles" : "strips") planar \(planar)"
        }
    }

    enum TestPredictorCase: String, Sendable {
        case none, horizontal, floatingPoint
        var predictor: TestPredictor {
            switch self {
            case .none: return .none
            case .horizontal: return .horizontal(factor: 1)
            case .floatingPoint: return .floatingPoint(factor: 1)
            }
        }
    }

    // 37×23 in 16×16 tiles (or strips of 8 rows): the fields' boundaries (rows 12 and 8,
    // columns 19 and 13) fall inside blocks, and 3 divides neither dimension.
    static let width = 37, height = 23

    static let cases: [Case] = {
        var out: [Case] = []
        for (r, c) in [(2, 1), (1, 2), (2, 2), (3, 3), (3, 1), (1, 3), (4, 2), (1, 1), (height, width)] {
            out.append(Case(rows: r, columns: c))
            out.append(Case(rows: r, columns: c, spp: 3, tiled: false))
        }
        // Each sample type and codec, with both factors 2 and both 3.
        for (r, c) in [(2, 2), (3, 3)] {
            out += [
                Case(rows: r, columns: c, bits: 8, spp: 3),
                Case(rows: r, columns: c, bits: 12),
                Case(rows: r, columns: c, bits: 32, spp: 3),
                Case(rows: r, columns: c, bits: 16, isFloat: true),
                Case(rows: r, columns: c, bits: 24, isFloat: true, spp: 3),
                Case(rows: r, columns: c, bits: 32, isFloat: true),
                Case(rows: r, columns: c, spp: 3, planar: 2),
                Case(rows: r, columns: c, spp: 3, compression: 8, predictor: .horizontal),
                Case(rows: r, columns: c, compression: 8, predictor: .horizontal, tiled: false),
                Case(rows: r, columns: c, bits: 32, isFloat: true, spp: 3, compression: 8, predictor: .floatingPoint, planar: 2),
                Case(rows: r, columns: c, bits: 16, isFloat: true, compression: 8, predictor: .floatingPoint),
                Case(rows: r, columns: c, bits: 14, compression: 7),
                Case(rows: r, columns: c, bits: 12, spp: 3, compression: 7, tiled: false),
            ]
        }
        return out
    }()

    @Test(arguments: cases)
    func decodesToTheImageInNaturalOrder(_ c: Case) throws {
        let image = TestImage.random(width: Self.width, height: Self.height, spp: c.spp, bits: c.bits, isFloat: c.isFloat,
                                     seed: UInt64(c.rows * 100 + c.columns * 10 + c.bits))
        var spec = IFDSpec(image: Self.interleaved(image, rows: c.rows, columns: c.columns))
        spec.compression = c.compression
        spec.predictor = c.predictor.predictor
        spec.tile = c.tiled ? (16, 16) : nil
        spec.planar = c.planar
        spec.extra = Self.factorTags(rows: c.rows, columns: c.columns)
        if c.compression == 7 {
            let bits = c.bits
            spec.encode = { patterns, width, rows, spp, _ in
                try! LJ92Encoder.encode(patterns.map { UInt16($0) }, width: width, height: rows, components: spp, precision: bits)
            }
        }
        let dng = try TestDNG.open(TestDNG.build([spec]))
        let stored = try RawDecoder.decode(dng, ifd: dng.mainRawImage())
        #expect(image.matches(stored))
        // The same file through decodeAnyImage.
        #expect(image.matches(try RawDecoder.decodeAnyImage(dng, ifd: dng.images[0])))
    }

    /// A CFA image whose four 2×2 colours are stored as four sub-images, the layout DNG
    /// 1.7.1 describes: each field is one colour, top-left colour first.
    @Test func bayerColoursAsFourSubImages() throws {
        var image = TestImage.random(width: 12, height: 8, spp: 1, bits: 16, seed: 3)
        // Sample value = 1000 × colour index (R 0, G 1, G 2, B 3) + position.
        for r in 0..<8 {
            for c in 0..<12 { image.patterns[r * 12 + c] = UInt32(1000 * (2 * (r % 2) + c % 2) + r * 12 + c) }
        }
        var spec = IFDSpec(image: Self.interleaved(image, rows: 2, columns: 2))
        // Stored: the top-left 6×4 quarter is colour 0, top-right colour 1, and so on.
        for r in 0..<8 {
            for c in 0..<12 { #expect(spec.image.patterns[r * 12 + c] / 1000 == UInt32(2 * (r / 4) + c / 6)) }
        }
        spec.photometric = 32803
        spec.tile = (8, 8)
        let t = TIFFBuilder()
        spec.extra = Self.factorTags(rows: 2, columns: 2) + [t.short(33421, [2, 2]), t.byte(33422, [0, 1, 1, 2])]
        let dng = try TestDNG.open(TestDNG.build([spec]))
        #expect(image.matches(try RawDecoder.decode(dng, ifd: dng.mainRawImage())))
    }

    /// JPEG XL tiles (imagecodecs' libjxl, lossless) of an interleaved CFA image, the way
    /// the Adobe DNG SDK writes Bayer data for JPEG XL, and of interleaved three-sample
    /// images, chunky and planar (the JPEG XL decoder places each tile's fields itself).
    @Test(.enabled(if: TestData.python != nil || TestRequirement.toolsRequired, "needs the Python test environment (imagecodecs)"))
    func jpegXLTiles() throws {
        let dir = TestData.temporaryDirectory("interleave-jxl")
        defer { try? FileManager.default.removeItem(at: dir) }
        for (rows, columns, spp, planar) in [(2, 2, 1, 1), (3, 3, 1, 1), (2, 1, 3, 1), (1, 3, 3, 1), (3, 2, 3, 2)] {
            let image = TestImage.random(width: 45, height: 29, spp: spp, bits: 16, seed: UInt64(rows * 10 + columns))
            var spec = IFDSpec(image: Self.interleaved(image, rows: rows, columns: columns))
            spec.compression = 52546
            spec.tile = (32, 16)
            spec.planar = planar
            let t = TIFFBuilder()
            spec.extra = Self.factorTags(rows: rows, columns: columns)
            if spp == 1 {
                spec.photometric = 32803
                spec.extra += [t.short(33421, [2, 2]), t.byte(33422, [0, 1, 1, 2])]
            }
            let (streams, _) = try PythonCodecs.jpegXL(spec.blockPatterns(), dtype: "u2", bitsPerSample: 16, dir: dir)
            spec.encode = { _, _, _, _, index in streams[index] }
            let dng = try TestDNG.open(TestDNG.build([spec]))
            #expect(image.matches(try RawDecoder.decode(dng, ifd: dng.mainRawImage())),
                    "×\(rows), ×\(columns), \(spp) samples, PlanarConfiguration \(planar)")
        }
    }

    /// The block-by-block path does not cover interleaved images (no block holds a
    /// rectangle of the image): it says so before decoding anything.
    @Test func forEachBlockLeavesInterleavedImagesToDecode() throws {
        let image = TestImage.random(width: Self.width, height: Self.height, spp: 3, bits: 16, seed: 9)
        for (rows, columns, covered) in [(2, 1, false), (1, 2, false), (2, 2, false), (1, 1, true)] {
            var spec = IFDSpec(image: Self.interleaved(image, rows: rows, columns: columns))
            spec.extra = Self.factorTags(rows: rows, columns: columns)
            let dng = try TestDNG.open(TestDNG.build([spec]))
            let blocks = SharedCount()
            let result = try RawDecoder.forEachBlock(dng, ifd: dng.mainRawImage()) { _, _, _, _ in blocks.add(1) }
            #expect(result == covered, "×\(rows), ×\(columns)")
            #expect(blocks.value == (covered ? 6 : 0))
        }
    }

    /// The field arithmetic against the stored order built by enumeration, for every
    /// dimension up to 40 and every factor up to it.
    @Test func fieldPositions() {
        for count in 1...40 {
            for factor in 1...count {
                let order = Self.storedOrder(count, factor: factor)
                for (stored, index) in order.enumerated() {
                    #expect(FieldInterleave.storedIndex(index, count: count, factor: factor) == stored)
                    let (k, j) = FieldInterleave.field(ofStored: stored, count: count, factor: factor)
                    #expect(k + j * factor == index)
                }
            }
        }
    }

    struct BadFactor: CustomTestStringConvertible, Sendable {
        var name: String
        var entries: @Sendable (TIFFBuilder) -> [TIFFBuilder.Entry]
        var reason: String
        var testDescription: String { name }
    }

    static let badFactors: [BadFactor] = [
        BadFactor(name: "row factor 0", entries: { [$0.short(50975, [0])] },
                  reason: "RowInterleaveFactor 0 (the number of interleaved fields is at least 1)"),
        BadFactor(name: "column factor 0", entries: { [$0.long(52547, [0])] },
                  reason: "ColumnInterleaveFactor 0 (the number of interleaved fields is at least 1)"),
        BadFactor(name: "row factor above the height", entries: { [$0.short(50975, [24])] },
                  reason: "RowInterleaveFactor 24 is larger than the image height (23)"),
        BadFactor(name: "column factor above the width", entries: { [$0.short(52547, [38])] },
                  reason: "ColumnInterleaveFactor 38 is larger than the image width (37)"),
        BadFactor(name: "two row factors", entries: { [$0.short(50975, [2, 2])] },
                  reason: "RowInterleaveFactor has 2 values (1 expected)"),
    ]

    @Test(arguments: badFactors)
    func badFactorsAreRefused(_ bad: BadFactor) throws {
        var spec = IFDSpec(image: TestImage.random(width: Self.width, height: Self.height, spp: 1, bits: 16, seed: 1))
        spec.extra = bad.entries(TIFFBuilder())
        let dng = try TestDNG.open(TestDNG.build([spec]))
        let error = try #require(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: dng.images[0]) }
        #expect(error == .inconsistentLayout(path: "t.dng", ifd: "IFD0", reason: bad.reason))
        #expect(error.category == .corruptData)
        let streamed = try #require(throws: RawDecodeError.self) {
            try RawDecoder.forEachBlock(dng, ifd: dng.images[0]) { _, _, _, _ in }
        }
        #expect(streamed == error)
    }
}
