import DNGContainer
import Foundation
import LosslessJPEG
import Testing
@testable import RawDecode
import TestSupport

/// Semantic masks (DNG 1.6: NewSubFileType 65540, PhotometricInterpretation 52527, one
/// sample per pixel) in every storage DNG 1.7.1 allows for them, decoded with
/// `RawDecoder.decodeAnyImage` from a SubIFD beside the raw image.
@Suite struct SemanticMaskTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var bits: Int
        var isFloat = false
        var compression: Int
        var predictor = TestPredictor.none
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "u8 uncompressed", bits: 8, compression: 1),
        Case(name: "u16 uncompressed", bits: 16, compression: 1),
        Case(name: "u8 lossless JPEG", bits: 8, compression: 7),
        Case(name: "u16 lossless JPEG", bits: 16, compression: 7),
        Case(name: "u8 Deflate", bits: 8, compression: 8, predictor: .horizontal(factor: 1)),
        Case(name: "u16 Deflate", bits: 16, compression: 8, predictor: .horizontal(factor: 2)),
        Case(name: "f16 Deflate", bits: 16, isFloat: true, compression: 8, predictor: .floatingPoint(factor: 1)),
        Case(name: "f32 Deflate", bits: 32, isFloat: true, compression: 8, predictor: .floatingPoint(factor: 1)),
        Case(name: "u8 JPEG XL", bits: 8, compression: 52546),
        Case(name: "u16 JPEG XL", bits: 16, compression: 52546),
        Case(name: "f16 JPEG XL", bits: 16, isFloat: true, compression: 52546),
    ]

    @Test(arguments: cases)
    func masksDecode(_ c: Case) throws {
        let dir = TestData.temporaryDirectory("mask")
        defer { try? FileManager.default.removeItem(at: dir) }
        var raw = IFDSpec(image: TestImage.random(width: 96, height: 64, spp: 3, bits: 16, seed: 1))
        raw.compression = 7
        raw.tile = (32, 32)
        raw.encode = { patterns, width, rows, spp, _ in
            try! LJ92Encoder.encode(patterns.map { UInt16($0) }, width: width, height: rows, components: spp, precision: 16)
        }
        let maskImage = TestImage.random(width: 48, height: 32, spp: 1, bits: c.bits, isFloat: c.isFloat, subnormals: false, seed: 2)
        var mask = IFDSpec(image: maskImage)
        mask.compression = c.compression
        mask.predictor = c.predictor
        mask.photometric = 52527
        mask.newSubFileType = 65540
        mask.tile = nil
        mask.rowsPerStrip = 32
        let t = TIFFBuilder()
        mask.extra = [t.ascii(52526, "urn:com:apple:photo:2020:aux:hairsegmentationmatte"), t.ascii(52528, "person_a")]
        switch c.compression {
        case 7:
            mask.encode = { patterns, width, rows, _, _ in
                try! LJ92Encoder.encode(patterns.map { UInt16($0) }, width: width, height: rows, components: 1, precision: c.bits)
            }
        case 52546:
            let streams = try PythonCodecs.jpegXL(mask.blockPatterns(), dtype: c.isFloat ? "f2" : c.bits == 8 ? "u1" : "u2",
                                                        dir: dir).streams
            mask.encode = { _, _, _, _, index in streams[index] }
        default: break
        }
        let dng = try TestDNG.open(TestDNG.build([raw, mask]))
        let ifd = try #require(dng.semanticMasks.first)
        #expect(ifd.role == .semanticMask && ifd.semanticName == "urn:com:apple:photo:2020:aux:hairsegmentationmatte")
        #expect(maskImage.matches(try RawDecoder.decodeAnyImage(dng, ifd: ifd)))
        #expect(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: ifd) }
        #expect(raw.image.matches(try RawDecoder.decode(dng, ifd: dng.mainRawImage())))
    }

    /// The other image kinds `decodeAnyImage` reads besides raw data and masks: a depth map
    /// (Depth 51177, 16-bit Deflate), an 8-bit BlackIsZero and a WhiteIsZero preview
    /// (uncompressed), as stored.
    @Test func depthMapsAndGreyPreviews() throws {
        var raw = IFDSpec(image: TestImage.random(width: 32, height: 32, spp: 3, bits: 16, seed: 1))
        raw.tile = nil
        var depth = IFDSpec(image: TestImage.random(width: 16, height: 12, spp: 1, bits: 16, seed: 2))
        depth.compression = 8
        depth.predictor = .horizontal(factor: 1)
        depth.photometric = 51177
        depth.newSubFileType = 8
        var grey = IFDSpec(image: TestImage.random(width: 8, height: 8, spp: 1, bits: 8, seed: 3))
        grey.photometric = 1
        grey.newSubFileType = 1
        grey.tile = nil
        var inverted = grey
        inverted.photometric = 0
        let dng = try TestDNG.open(TestDNG.build([raw, depth, grey, inverted]))
        #expect(dng.images.map(\.role) == [.mainImage, .depthMap, .preview, .preview])
        for (ifd, spec) in zip(dng.images.dropFirst(), [depth, grey, inverted]) {
            #expect(spec.image.matches(try RawDecoder.decodeAnyImage(dng, ifd: ifd)), "\(ifd.path)")
        }
    }

    /// The iPhone 12 Pro ProRAW header (pixel data cut off): its sky matte is 8-bit lossy
    /// JPEG in one strip; decoding it names the truncation, as for the raw tiles.
    @Test func realProRAWSkyMatteIsTruncated() throws {
        let url = try TestData.shared("real/iphone12pro_proraw_header_only.dng")
        let dng = try DNGFile.open(path: url.path)
        let mask = try #require(dng.semanticMasks.first)
        #expect(mask.compression == 34892 && mask.photometric == 52527 && mask.width == 2016 && mask.height == 1512)
        let error = try #require(throws: RawDecodeError.self) { try RawDecoder.decodeAnyImage(dng, ifd: mask) }
        #expect(error.category == .truncated)
        #expect(error.description.contains("truncated file: strip 0 of IFD0/SubIFD1"), "\(error)")
    }
}
