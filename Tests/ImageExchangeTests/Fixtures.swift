import Foundation
import ImageCore
import TestSupport

/// Synthetic images for the exchange tests.
enum Fixture {
    /// A seeded image whose values cover what a scene-linear file must carry: negatives,
    /// values above 1, tiny (subnormal-half) values, the half maximum 65504 and values that
    /// round to it, and ordinary noise. (Values beyond half's range are refused by the
    /// writers: `HalfRangeWriterTests`.)
    static func values(count: Int, seed: UInt64) -> [Float] {
        var rng = SeededGenerator(seed: seed)
        let specials: [Float] = [0, -0.0, 1, -1, 65504, -65504, 65519, 3e4, -3e4, 6e-8, 3e-5, -2e-6, 0.5, 2.0 / 3.0,
                                 6e4, -6e4, 6.1e-5, 1e-9]
        return (0..<count).map { i in
            if i < specials.count { return specials[i] }
            switch rng.next() % 8 {
            case 0: return -Float.random(in: 0..<0.05, using: &rng)
            case 1: return Float.random(in: 1..<300, using: &rng)
            case 2: return Float.random(in: 0..<1e-4, using: &rng)
            default: return Float.random(in: 0..<1, using: &rng)
            }
        }
    }

    static let dngItems: [MetadataItem] = [
        MetadataItem("make", .text("Test Camera Co.")),
        MetadataItem("model", .text("Model ✓ 1")),
        MetadataItem("exposureTime", .number(0.004)),
        MetadataItem("fNumber", .number(5.6)),
        MetadataItem("iso", .integer(400)),
        MetadataItem("dateTimeOriginal", .text("2024:05:17 14:03:22")),
        MetadataItem("blackLevel", .numbers([256, 256.5, 257])),
        MetadataItem("whiteLevel", .integers([16383, 16383, 16383])),
        MetadataItem("baselineExposure", .number(-0.25)),
        MetadataItem("noiseProfile", .numbers([2.5e-5, 1.25e-7])),
        MetadataItem("imageNumber", .integer(3_000_000_000)),
    ]

    static func provenance(_ dng: [MetadataItem] = dngItems) -> ImageProvenance {
        ImageProvenance(sourceFile: "IMG_0042.dng",
                        sourceSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                        software: SceneLinearVersion.software, sourceIFD: "IFD0/SubIFD0",
                        whiteBalanceSource: "AsShotNeutral", whiteXY: [0.3457, 0.3585],
                        cameraNeutral: [0.47, 1, 0.61],
                        cameraToOutput: [1.7, -0.5, -0.2, -0.21, 1.42, -0.21, 0.03, -0.4, 1.37], dng: dng,
                        processing: [MetadataItem("crop", .integers([2, 4, 35, 57])), MetadataItem("orientation", .integer(6)),
                                     MetadataItem("demosaic", .text("superpixel"))])
    }

    static func image(width: Int = 61, height: Int = 37, seed: UInt64 = 7, encoding: ColorEncoding = .linearRec2020,
                      exposure: ExposureScaling = ExposureScaling(mode: .baseline, factor: 0.8408964152537145),
                      clipMask: Bool = true, provenance: ImageProvenance = Fixture.provenance()) -> SceneLinearImage {
        let samples = values(count: width * height * 3, seed: seed)
        var mask: [UInt8]?
        if clipMask {
            var rng = SeededGenerator(seed: seed ^ 0xABCD)
            mask = (0..<(width * height)).map { _ in rng.next() % 5 == 0 ? UInt8(rng.next() % 7 + 1) : 0 }
        }
        return SceneLinearImage(pixels: ImageBuffer(width: width, height: height, channels: 3, samples: samples),
                                clipMask: mask, encoding: encoding, exposure: exposure, provenance: provenance)
    }

    /// `value` rounded to half, as the writers must store it.
    static func half(_ value: Float) -> Float16 { Float16(value) }

    /// True when `actual` equals the half rounding of every `expected` bit for bit (NaN
    /// payloads compared as "both NaN").
    static func matchesHalf(_ actual: [Float16], _ expected: [Float]) -> Bool {
        guard actual.count == expected.count else { return false }
        for (a, e) in zip(actual, expected) {
            let h = Float16(e)
            if h.isNaN ? !a.isNaN : a.bitPattern != h.bitPattern { return false }
        }
        return true
    }

    static func bytes(_ path: String) -> Data { (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data() }
}
