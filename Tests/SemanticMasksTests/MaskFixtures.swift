import DNGWriter
import Foundation
import TestSupport
import ImageCore

/// DNGs with semantic masks of known content, written by the project's DNG writer, and the
/// values their masks must take in the output, worked out from the mapping's definition.
enum MaskFixtures {
    static let skyURN = "urn:com:apple:photo:2020:aux:semanticskymatte"
    static let glassesURN = "urn:com:apple:photo:2020:aux:semanticglassesmatte"
    static let skinURN = "urn:com:apple:photo:2020:aux:semanticskinmatte"
    static let discURN = "urn:example:test:semanticdiscmatte"

    /// A mask of `width` × `height` 8-bit codes.
    static func codes(_ width: Int, _ height: Int, _ code: (Int, Int) -> Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: width * height)
        for j in 0..<height { for i in 0..<width { out[j * width + i] = UInt8(code(i, j)) } }
        return out
    }

    /// The code of the sky gradient of the LinearRaw fixture at mask pixel (i, j): linear, so
    /// bilinear interpolation reproduces it exactly.
    static func skyCode(_ i: Double, _ j: Double) -> Double { 3 * i + 2 * j + 10 }

    /// The LinearRaw fixture, laid out like Apple ProRAW (preview in IFD 0, raw image in
    /// SubIFD 0, masks in SubIFD 1…4): 100 × 70 raw pixels, ActiveArea (3, 6)–(63, 94), so
    /// the masks cover 88 × 60; DefaultCrop origin (8, 6) size 64 × 40; Orientation 6, so the
    /// output is 40 × 64.
    ///
    /// - `sky`: 44 × 30 (half resolution), code 3i + 2j + 10.
    /// - `glasses`: 12 × 8 of 255 at top 5, left 9 of a 44 × 30 mask space (MaskSubArea), Deflate.
    /// - `skin_1`, `skin_2`: the same URN with instance IDs 1 and 2, 22 × 15, codes 255 and 51.
    static func linearRaw() -> RawDNG {
        let w = 100, h = 70
        var samples = [UInt16](repeating: 0, count: w * h * 3)
        var rng = SeededGenerator(seed: 7)
        for y in 0..<h {
            for x in 0..<w {
                let base = 2000 + 400 * x + 300 * y
                for c in 0..<3 {
                    samples[(y * w + x) * 3 + c] = UInt16(min(65000, base * (c + 1) / 2 + Int(rng.next() % 500)))
                }
            }
        }
        var dng = RawDNG(width: w, height: h, samples: samples)
        dng.structure = .previewWithRawSubIFD
        dng.tileSize = (64, 48)
        dng.activeArea = PixelRect(top: 3, left: 6, bottom: 63, right: 94)
        dng.defaultCrop = (origin: [8, 6], size: [64, 40])
        dng.orientation = 6
        dng.semanticMasks = [
            SemanticMaskDNG(width: 44, height: 30, samples: codes(44, 30) { Int(skyCode(Double($0), Double($1))) },
                            semanticName: skyURN),
            SemanticMaskDNG(width: 12, height: 8, samples: [UInt8](repeating: 255, count: 96), semanticName: glassesURN,
                            maskSubArea: [5, 9, 44, 30], deflate: true),
            SemanticMaskDNG(width: 22, height: 15, samples: [UInt8](repeating: 255, count: 330), semanticName: skinURN,
                            instanceID: "1"),
            SemanticMaskDNG(width: 22, height: 15, samples: [UInt8](repeating: 51, count: 330), semanticName: skinURN,
                            instanceID: "2"),
        ]
        return dng
    }

    /// The Stage 3 pixel (x, y) that output pixel (ox, oy) of the LinearRaw fixture shows:
    /// Orientation 6 puts stored row 0 on the right and stored column 0 at the top, so
    /// output (ox, oy) is cropped pixel (oy, 39 − ox); the crop starts at (8, 6).
    static func linearRawStage3(_ ox: Int, _ oy: Int) -> (x: Int, y: Int) { (8 + oy, 6 + (40 - 1 - ox)) }

    /// Mask-space coordinate of a Stage 3 pixel centre: the mask space (`full` pixels) is
    /// stretched over the ActiveArea (`span` Stage 3 pixels of `step` raw pixels each),
    /// pixel centres at integers, clamped to the mask space.
    static func maskCoordinate(_ x: Int, span: Int, full: Int, step: Double = 1) -> Double {
        min(max((Double(x) + 0.5) * step * Double(full) / Double(span) - 0.5, 0), Double(full - 1))
    }

    /// Bilinear interpolation of an indicator of mask-space pixels first...last: 1 inside,
    /// falling linearly to 0 over the one pixel beyond each end.
    static func hat(_ t: Double, first: Int, last: Int) -> Double {
        min(max(min(t - Double(first - 1), Double(last + 1) - t), 0), 1)
    }

    /// The expected output values of the LinearRaw fixture's masks, by layer name.
    static func linearRawExpected() -> [String: [Double]] {
        let ow = 40, oh = 64
        var out: [String: [Double]] = ["sky": [], "glasses": [], "skin_1": [], "skin_2": []]
        for oy in 0..<oh {
            for ox in 0..<ow {
                let (x, y) = linearRawStage3(ox, oy)
                let X = maskCoordinate(x, span: 88, full: 44), Y = maskCoordinate(y, span: 60, full: 30)
                out["sky"]!.append(skyCode(X, Y) / 255)
                out["glasses"]!.append(hat(X, first: 9, last: 20) * hat(Y, first: 5, last: 12))
                out["skin_1"]!.append(1)
                out["skin_2"]!.append(0.2)
            }
        }
        return out
    }

    /// The CFA fixture: RGGB 128 × 96, 14-bit, masks in SubIFDs of the raw IFD 0;
    /// DefaultCrop origin (8, 4) size 112 × 88 raw pixels; Orientation 8. With superpixel
    /// demosaicing the Stage 3 image is 64 × 48, the crop (top 2, left 4, bottom 46,
    /// right 60) and the output 44 × 56.
    ///
    /// - `sky`: 64 × 48, the size of the superpixel grid, code i + 2j + 5.
    /// - `disc`: 32 × 24, 255 where (i − 15.5)² + (j − 11.5)² ≤ 8², else 0: a disc of radius
    ///   8 mask pixels = 16 superpixels around the grid's centre.
    static func cfa() -> RawDNG {
        let w = 128, h = 96
        var samples = [UInt16](repeating: 0, count: w * h)
        var rng = SeededGenerator(seed: 11)
        for y in 0..<h {
            for x in 0..<w {
                let colour = (y % 2) * 2 + x % 2 // 0 R, 1 and 2 G, 3 B
                let level = 600 + 60 * x + 40 * y + [0, 500, 500, 1500][colour]
                samples[y * w + x] = UInt16(min(16000, level + Int(rng.next() % 200)))
            }
        }
        var dng = RawDNG(width: w, height: h, samples: samples)
        dng.cfaPattern = [0, 1, 1, 2]
        dng.bitsPerSample = 14
        dng.blackLevel = [512]
        dng.whiteLevel = [16383]
        dng.tileSize = nil
        dng.rowsPerStrip = 32
        dng.defaultCrop = (origin: [8, 4], size: [112, 88])
        dng.orientation = 8
        dng.semanticMasks = [
            SemanticMaskDNG(width: 64, height: 48, samples: codes(64, 48) { $0 + 2 * $1 + 5 }, semanticName: skyURN),
            SemanticMaskDNG(width: 32, height: 24, samples: codes(32, 24) { discInside($0, $1) ? 255 : 0 },
                            semanticName: discURN, deflate: true),
        ]
        return dng
    }

    static func discInside(_ i: Int, _ j: Int) -> Bool {
        let dx = Double(i) - 15.5, dy = Double(j) - 11.5
        return dx * dx + dy * dy <= 64
    }

    /// Stage 3 (superpixel) pixel of output (ox, oy) of the CFA fixture: Orientation 8 puts
    /// stored row 0 on the left and stored column 0 at the bottom, so output (ox, oy) is
    /// cropped pixel (55 − oy, ox); the crop starts at (4, 2).
    static func cfaStage3(_ ox: Int, _ oy: Int) -> (x: Int, y: Int) { (4 + (56 - 1 - oy), 2 + ox) }

    /// The expected output values of the CFA fixture's masks.
    static func cfaExpected() -> [String: [Double]] {
        let ow = 44, oh = 56
        var out: [String: [Double]] = ["sky": [], "disc": []]
        func disc(_ i: Int, _ j: Int) -> Double { discInside(i, j) ? 1 : 0 }
        for oy in 0..<oh {
            for ox in 0..<ow {
                let (x, y) = cfaStage3(ox, oy)
                // Superpixel (x, y) is centred on raw pixel corner (2x + 1, 2y + 1): the sky
                // mask, as large as the grid, lands exactly on its pixels.
                out["sky"]!.append(Double(x + 2 * y + 5) / 255)
                let X = maskCoordinate(x, span: 128, full: 32, step: 2), Y = maskCoordinate(y, span: 96, full: 24, step: 2)
                let i0 = Int(X), j0 = Int(Y), i1 = min(i0 + 1, 31), j1 = min(j0 + 1, 23)
                let tx = X - Double(i0), ty = Y - Double(j0)
                let top = disc(i0, j0) * (1 - tx) + disc(i1, j0) * tx
                let bottom = disc(i0, j1) * (1 - tx) + disc(i1, j1) * tx
                out["disc"]!.append(top * (1 - ty) + bottom * ty)
            }
        }
        return out
    }
}
