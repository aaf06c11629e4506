import Foundation
import Testing
import ImageCore
@testable import DNGContainer
@testable import ImageGeometry
import TestSupport

@Suite struct GeometryTests {
    /// A 5×3 single-channel image whose values encode their position (10·row + column).
    static let image = ImageBuffer<Float>(width: 5, height: 3, channels: 1,
                                          samples: (0..<15).map { Float(($0 / 5) * 10 + $0 % 5) })

    /// The displayed image for each EXIF orientation, written out by hand.
    @Test(arguments: [
        (1, 5, 3, [0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24]),
        (2, 5, 3, [4, 3, 2, 1, 0, 14, 13, 12, 11, 10, 24, 23, 22, 21, 20]),
        (3, 5, 3, [24, 23, 22, 21, 20, 14, 13, 12, 11, 10, 4, 3, 2, 1, 0]),
        (4, 5, 3, [20, 21, 22, 23, 24, 10, 11, 12, 13, 14, 0, 1, 2, 3, 4]),
        (5, 3, 5, [0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23, 4, 14, 24]),
        (6, 3, 5, [20, 10, 0, 21, 11, 1, 22, 12, 2, 23, 13, 3, 24, 14, 4]),
        (7, 3, 5, [24, 14, 4, 23, 13, 3, 22, 12, 2, 21, 11, 1, 20, 10, 0]),
        (8, 3, 5, [4, 14, 24, 3, 13, 23, 2, 12, 22, 1, 11, 21, 0, 10, 20]),
    ])
    func orientation(_ o: Int, width: Int, height: Int, expected: [Int]) {
        let out = ImageGeometry.orient(Self.image, o)
        #expect(out.width == width && out.height == height)
        #expect(out.samples == expected.map(Float.init))
    }

    @Test func orientationsComposeAsRotations() {
        let r90 = ImageGeometry.orient(Self.image, 6)
        let back = ImageGeometry.orient(r90, 8)
        #expect(back.samples == Self.image.samples && back.width == 5)
        let r180 = ImageGeometry.orient(ImageGeometry.orient(Self.image, 6), 6)
        #expect(r180.samples == ImageGeometry.orient(Self.image, 3).samples)
    }

    static func ifd(width: Int, height: Int, area: PixelRect? = nil, cropOrigin: [Double]? = nil, cropSize: [Double]? = nil,
                    userCrop: [Double]? = nil, scale: [Double]? = nil) -> ImageIFD {
        ImageIFD(path: "IFD0", newSubFileType: 0, role: .mainImage, width: width, height: height, samplesPerPixel: 3,
                 bitsPerSample: [16, 16, 16], sampleFormat: 1, compression: 1, photometric: 34892, planarConfiguration: 1,
                 predictor: 1, fillOrder: 1, layout: nil, linearizationTable: nil, blackLevelRepeatDim: [1, 1],
                 blackLevel: [0, 0, 0], blackLevelDeltaH: nil, blackLevelDeltaV: nil, whiteLevel: [65535, 65535, 65535],
                 activeArea: area ?? PixelRect(width: width, height: height), maskedAreas: [], linearResponseLimit: nil,
                 defaultCropOrigin: cropOrigin, defaultCropSize: cropSize, defaultScale: scale, defaultUserCrop: userCrop,
                 cfa: nil, noiseProfile: nil, opcodeListSizes: [:], semanticName: nil, semanticInstanceID: nil,
                 maskSubArea: nil, profileGainTableMap: nil)
    }

    @Test func defaultAndUserCrop() throws {
        let ifd = Self.ifd(width: 120, height: 90, cropOrigin: [10, 6], cropSize: [100, 80], userCrop: [0.25, 0.1, 0.75, 0.9])
        let none = try ImageGeometry.plan(ifd: ifd, orientation: 1, width: 120, height: 90, crop: .none, path: "t")
        #expect(none.crop == PixelRect(width: 120, height: 90))
        let def = try ImageGeometry.plan(ifd: ifd, orientation: 1, width: 120, height: 90, crop: .default, path: "t")
        #expect(def.crop == PixelRect(top: 6, left: 10, bottom: 86, right: 110))
        let user = try ImageGeometry.plan(ifd: ifd, orientation: 6, width: 120, height: 90, crop: .user, path: "t")
        #expect(user.crop == PixelRect(top: 26, left: 20, bottom: 66, right: 100))
        #expect(user.outputWidth == 40 && user.outputHeight == 80)
        let binned = try ImageGeometry.plan(ifd: ifd, orientation: 1, width: 60, height: 45, binning: 2, crop: .default, path: "t")
        #expect(binned.crop == PixelRect(top: 3, left: 5, bottom: 43, right: 55))
        let keep = try ImageGeometry.plan(ifd: ifd, orientation: 6, width: 120, height: 90, crop: .user, applyOrientation: false, path: "t")
        #expect(keep.orientation == 1)
    }

    /// A crop reaching past the image edge is clamped to it; one starting outside is an error.
    @Test func cropsAtAndBeyondTheEdge() throws {
        let over = Self.ifd(width: 50, height: 40, cropOrigin: [10, 10], cropSize: [45, 10])
        let plan = try ImageGeometry.plan(ifd: over, orientation: 1, width: 50, height: 40, crop: .default, path: "t")
        #expect(plan.crop == PixelRect(top: 10, left: 10, bottom: 20, right: 50))
        let outside = Self.ifd(width: 50, height: 40, cropOrigin: [60, 10], cropSize: [5, 10])
        #expect(throws: GeometryError.self) {
            try ImageGeometry.plan(ifd: outside, orientation: 1, width: 50, height: 40, crop: .default, path: "t")
        }
    }

    /// DefaultScale 2×1 doubles the width; a linear ramp stays a linear ramp.
    @Test func defaultScaleResamples() throws {
        let ifd = Self.ifd(width: 8, height: 2, scale: [2, 1])
        let plan = try ImageGeometry.plan(ifd: ifd, orientation: 1, width: 8, height: 2, crop: .default, path: "t")
        #expect(plan.scaledWidth == 16 && plan.scaledHeight == 2)
        let ramp = ImageBuffer<Float>(width: 8, height: 2, channels: 1, samples: (0..<16).map { Float($0 % 8) })
        let out = ImageGeometry.apply(plan, to: ramp)
        #expect(out.width == 16)
        // Interior output pixel x maps to input (x + 0.5)/2 − 0.5.
        for x in 1..<15 {
            let expected = Float(max(0, min(7, (Double(x) + 0.5) / 2 - 0.5)))
            #expect(abs(out[0, x, 0] - expected) < 1e-6)
        }
    }

    @Test func sceneLinearImageAndMaskMoveTogether() {
        let w = 6, h = 4
        let pixels = ImageBuffer<Float>(width: w, height: h, channels: 3, samples: (0..<(w * h * 3)).map(Float.init))
        let mask = (0..<(w * h)).map { UInt8($0 % 3) }
        let image = SceneLinearImage(pixels: pixels, clipMask: mask, encoding: .linearRec2020, exposure: .none,
                                     provenance: .synthetic("t"))
        let plan = GeometryPlan(crop: PixelRect(top: 1, left: 2, bottom: 4, right: 6), scaledWidth: 4, scaledHeight: 3,
                                orientation: 8, cropMode: .default)
        let out = ImageGeometry.apply(plan, to: image)
        #expect(out.width == 3 && out.height == 4)
        // Output (x, y) under orientation 8 comes from cropped (W−1−y, x) → original (row 1 + x, col 2 + 3 − y).
        for y in 0..<4 {
            for x in 0..<3 {
                let (r, c) = (1 + x, 2 + 3 - y)
                #expect(out.pixels[y, x, 0] == pixels[r, c, 0])
                #expect(out.clipMask![y * 3 + x] == mask[r * w + c])
            }
        }
        #expect(out.provenance.processingValue("orientation") == .integer(8))
        #expect(out.provenance.processingValue("crop") == .integers([1, 2, 4, 6]))
    }
}
