import Foundation
@testable import DNGContainer
import Demosaic
import ImageCore
@testable import Linearize
import TestSupport

/// A full-colour image in linear light (red, green, blue interleaved), the ground truth a
/// mosaic is made from.
struct RGBImage: Sendable {
    let width: Int
    let height: Int
    var samples: [Float]

    init(width: Int, height: Int, samples: [Float]) {
        precondition(samples.count == width * height * 3)
        self.width = width
        self.height = height
        self.samples = samples
    }

    /// Area-sampled: each pixel is the mean of `supersample²` point values of `f(x, y)`
    /// taken inside it (pixel (r, c) covers x in [c, c+1), y in [r, r+1)).
    init(width: Int, height: Int, supersample n: Int = 4, _ f: (Double, Double) -> (Double, Double, Double)) {
        var out = [Float](repeating: 0, count: width * height * 3)
        for r in 0..<height {
            for c in 0..<width {
                var acc = (0.0, 0.0, 0.0)
                for sy in 0..<n {
                    for sx in 0..<n {
                        let v = f(Double(c) + (Double(sx) + 0.5) / Double(n), Double(r) + (Double(sy) + 0.5) / Double(n))
                        acc.0 += v.0
                        acc.1 += v.1
                        acc.2 += v.2
                    }
                }
                let k = Double(n * n)
                out[(r * width + c) * 3] = Float(acc.0 / k)
                out[(r * width + c) * 3 + 1] = Float(acc.1 / k)
                out[(r * width + c) * 3 + 2] = Float(acc.2 / k)
            }
        }
        self.init(width: width, height: height, samples: out)
    }

    subscript(r: Int, c: Int, ch: Int) -> Float { samples[(r * width + c) * 3 + ch] }

    /// The image starting at (`top`, `left`), `height` × `width`.
    func crop(top: Int, left: Int, width w: Int, height h: Int) -> RGBImage {
        var out = [Float]()
        out.reserveCapacity(w * h * 3)
        for r in top..<(top + h) {
            let base = (r * width + left) * 3
            out.append(contentsOf: samples[base..<(base + w * 3)])
        }
        return RGBImage(width: w, height: h, samples: out)
    }

    /// 2 × 2 box means (the ideal half-resolution image), trailing odd row/column dropped.
    func boxHalf() -> RGBImage {
        let w = width / 2, h = height / 2
        var out = [Float](repeating: 0, count: w * h * 3)
        for r in 0..<h {
            for c in 0..<w {
                for ch in 0..<3 {
                    let s = Double(self[2 * r, 2 * c, ch]) + Double(self[2 * r, 2 * c + 1, ch])
                        + Double(self[2 * r + 1, 2 * c, ch]) + Double(self[2 * r + 1, 2 * c + 1, ch])
                    out[(r * w + c) * 3 + ch] = Float(s / 4)
                }
            }
        }
        return RGBImage(width: w, height: h, samples: out)
    }
}

/// The four Bayer phases, as CFAPattern values (0 red, 1 green, 2 blue) at the IFD origin.
enum Phase: String, CaseIterable, Sendable {
    case rggb = "RGGB", bggr = "BGGR", grbg = "GRBG", gbrg = "GBRG"

    var pattern: [Int] {
        switch self {
        case .rggb: return [0, 1, 1, 2]
        case .bggr: return [2, 1, 1, 0]
        case .grbg: return [1, 0, 2, 1]
        case .gbrg: return [1, 2, 0, 1]
        }
    }

    var cfa: CFADescription { Mosaicking.cfa(pattern) }
}

/// Building Stage 2 CFA images with known content.
enum Mosaicking {
    static func cfa(_ pattern: [Int], rows: Int = 2, cols: Int = 2, planeColors: [Int] = [0, 1, 2],
                    layout: Int = 1) -> CFADescription {
        CFADescription(repeatRows: rows, repeatCols: cols, pattern: pattern, planeColors: planeColors, layout: layout)
    }

    /// A CFA ImageIFD of `width` × `height` with the given ActiveArea (other fields
    /// irrelevant to demosaicing).
    static func ifd(width: Int, height: Int, area: PixelRect? = nil, cfa: CFADescription) -> ImageIFD {
        ImageIFD(path: "IFD0", newSubFileType: 0, role: .mainImage, width: width, height: height, samplesPerPixel: 1,
                 bitsPerSample: [16], sampleFormat: 1, compression: 1, photometric: 32803, planarConfiguration: 1,
                 predictor: 1, fillOrder: 1, layout: nil, linearizationTable: nil, blackLevelRepeatDim: [1, 1],
                 blackLevel: [0], blackLevelDeltaH: nil, blackLevelDeltaV: nil, whiteLevel: [65535],
                 activeArea: area ?? PixelRect(width: width, height: height), maskedAreas: [],
                 linearResponseLimit: nil, defaultCropOrigin: nil, defaultCropSize: nil, defaultScale: nil,
                 defaultUserCrop: nil, cfa: cfa, noiseProfile: nil, opcodeListSizes: [:], semanticName: nil,
                 semanticInstanceID: nil, maskSubArea: nil, profileGainTableMap: nil)
    }

    /// A Stage 2 image holding `values` (one plane) over an ActiveArea placed at
    /// (`top`, `left`) of a larger IFD.
    static func linearImage(values: [Float], clip: [UInt8], width: Int, height: Int, top: Int = 0, left: Int = 0,
                            cfa: CFADescription, planes: Int = 1) -> LinearImage {
        let area = PixelRect(top: top, left: left, bottom: top + height, right: left + width)
        let ifd = ifd(width: left + width + 2, height: top + height + 2, area: area, cfa: cfa)
        let mapping = LinearizationMapping(maxBlack: [0], white: [65535], scale: [1.0 / 65535], tableEntries: 0,
                                           activeArea: area)
        return LinearImage(ifd: ifd, values: ImageBuffer(width: width, height: height, channels: planes, samples: values),
                           clipMask: clip, mapping: mapping)
    }

    /// The colour code of ActiveArea pixel (r, c) under the DNG rule (pattern origin at the
    /// IFD's top-left).
    static func color(_ cfa: CFADescription, r: Int, c: Int, top: Int, left: Int) -> Int {
        cfa.pattern[((r + top) % cfa.repeatRows) * cfa.repeatCols + (c + left) % cfa.repeatCols]
    }

    /// Samples `truth` through the colour filter array as Stage 2 does: values at or above
    /// 1 become 1 with clip bit 0 set; negatives are kept.
    static func mosaic(_ truth: RGBImage, cfa: CFADescription, top: Int = 0, left: Int = 0) -> LinearImage {
        var values = [Float](repeating: 0, count: truth.width * truth.height)
        var clip = [UInt8](repeating: 0, count: truth.width * truth.height)
        for r in 0..<truth.height {
            for c in 0..<truth.width {
                let v = truth[r, c, color(cfa, r: r, c: c, top: top, left: left)]
                values[r * truth.width + c] = min(v, 1)
                clip[r * truth.width + c] = v >= 1 ? 1 : 0
            }
        }
        return linearImage(values: values, clip: clip, width: truth.width, height: truth.height, top: top, left: left,
                           cfa: cfa)
    }
}

/// The known-truth scenes the methods are measured on (288 × 288: two tiles wide, five
/// bands high, so tile and band seams are inside the measured area).
enum Scenes {
    static let size = 288

    /// Smooth colour gradients with a slow ripple: nothing an interpolator should miss.
    static let gradient = RGBImage(width: size, height: size) { x, y in
        let u = x / Double(size), v = y / Double(size)
        return (0.05 + 0.6 * u + 0.04 * sin(2 * .pi * (u + 2 * v)),
                0.1 + 0.5 * v + 0.05 * cos(2 * .pi * (1.5 * u - v)),
                0.2 + 0.3 * (1 - u) * v + 0.03 * sin(2 * .pi * 3 * u * v))
    }

    /// Achromatic step edges at 0°, 15°, …, 165° (one per 72 × 96 cell, 4 × 3 cells),
    /// grey 0.04 on one side and 0.6 on the other: any colour in the output is false
    /// colour.
    static let edges = RGBImage(width: size, height: size, supersample: 8) { x, y in
        let cw = Double(size) / 4, chh = Double(size) / 3
        let i = min(3, Int(x / cw)), j = min(2, Int(y / chh))
        let angle = Double(j * 4 + i) * 15 * .pi / 180
        let cx = (Double(i) + 0.5) * cw + 0.37, cy = (Double(j) + 0.5) * chh + 0.21
        let side = (x - cx) * sin(angle) - (y - cy) * cos(angle)
        let g = side >= 0 ? 0.6 : 0.04
        return (g, g, g)
    }

    /// Achromatic zone plate `0.3 + 0.25 cos(π f r² / R)`: local frequency rises linearly
    /// from 0 at the centre to 0.45 cycles per pixel at the middle of each edge.
    static let zonePlate = RGBImage(width: size, height: size) { x, y in
        let dx = x - Double(size) / 2, dy = y - Double(size) / 2
        let radius = Double(size) / 2
        let fMax = 0.45
        let v = 0.3 + 0.25 * cos(.pi * fMax * (dx * dx + dy * dy) / radius)
        return (v, v, v)
    }

    /// The colours of the chart patches (linear, camera-like, 0.02 … 0.9).
    static let patchColors: [(Double, Double, Double)] = [
        (0.17, 0.10, 0.07), (0.55, 0.36, 0.28), (0.12, 0.19, 0.33), (0.10, 0.15, 0.07), (0.24, 0.22, 0.43),
        (0.13, 0.52, 0.42), (0.68, 0.25, 0.05), (0.07, 0.11, 0.45), (0.54, 0.10, 0.13), (0.09, 0.05, 0.15),
        (0.35, 0.50, 0.05), (0.75, 0.40, 0.03), (0.02, 0.05, 0.30), (0.06, 0.30, 0.07), (0.45, 0.03, 0.04),
        (0.85, 0.60, 0.02), (0.50, 0.09, 0.30), (0.02, 0.22, 0.38), (0.90, 0.90, 0.88), (0.58, 0.59, 0.58),
        (0.36, 0.36, 0.36), (0.19, 0.19, 0.19), (0.09, 0.09, 0.09), (0.03, 0.03, 0.03),
    ]
    static let patchSize = 48

    /// A 6 × 6 grid of flat 48 × 48 colour patches with sharp, pixel-aligned edges.
    static let patches: RGBImage = {
        var s = [Float](repeating: 0, count: size * size * 3)
        for r in 0..<size {
            for c in 0..<size {
                let k = ((r / patchSize) * 6 + c / patchSize) % patchColors.count
                let p = patchColors[k]
                s[(r * size + c) * 3] = Float(p.0)
                s[(r * size + c) * 3 + 1] = Float(p.1)
                s[(r * size + c) * 3 + 2] = Float(p.2)
            }
        }
        return RGBImage(width: size, height: size, samples: s)
    }()

    /// True when (r, c) lies at least `inset` pixels inside a patch of `patches`.
    static func insidePatch(_ r: Int, _ c: Int, inset: Int) -> Bool {
        let pr = r % patchSize, pc = c % patchSize
        return pr >= inset && pr < patchSize - inset && pc >= inset && pc < patchSize - inset
    }

    /// A natural-image-like texture: "dead leaves" — 4000 overlapping discs with radii
    /// distributed as r⁻³ between 1.5 and 60 pixels (scale invariant, like natural
    /// images), each with a random colour (log-uniform brightness over 4 stops, moderate
    /// saturation) and a gentle shading across it. Seeded.
    static let deadLeaves: RGBImage = {
        let n = 4
        let ss = size * n
        var rng = SeededGenerator(seed: 20_171_117)
        struct Disc { var x, y, r: Double; var color: (Double, Double, Double); var gx, gy: Double }
        var discs: [Disc] = []
        let (rMin, rMax) = (1.5, 60.0)
        for _ in 0..<4000 {
            // Inverse CDF of p(r) ∝ r⁻³ on [rMin, rMax].
            let u = Double.random(in: 0..<1, using: &rng)
            let a = 1 / (rMin * rMin), b = 1 / (rMax * rMax)
            let r = 1 / (a - u * (a - b)).squareRoot()
            let lum = 0.6 * pow(2, -4 * Double.random(in: 0..<1, using: &rng))
            let tint = (Double.random(in: 0.55...1.45, using: &rng), Double.random(in: 0.8...1.2, using: &rng),
                        Double.random(in: 0.55...1.45, using: &rng))
            discs.append(Disc(x: Double.random(in: -20..<Double(size + 20), using: &rng),
                              y: Double.random(in: -20..<Double(size + 20), using: &rng), r: r,
                              color: (lum * tint.0, lum * tint.1, lum * tint.2),
                              gx: Double.random(in: -0.004...0.004, using: &rng),
                              gy: Double.random(in: -0.004...0.004, using: &rng)))
        }
        // Paint back to front on the supersampled grid.
        var grid = [Float](repeating: 0.2, count: ss * ss * 3)
        for d in discs {
            let x0 = max(0, Int(((d.x - d.r) * Double(n)).rounded(.down)))
            let x1 = min(ss - 1, Int(((d.x + d.r) * Double(n)).rounded(.up)))
            let y0 = max(0, Int(((d.y - d.r) * Double(n)).rounded(.down)))
            let y1 = min(ss - 1, Int(((d.y + d.r) * Double(n)).rounded(.up)))
            if x0 > x1 || y0 > y1 { continue }
            for sy in y0...y1 {
                let py = (Double(sy) + 0.5) / Double(n) - d.y
                for sx in x0...x1 {
                    let px = (Double(sx) + 0.5) / Double(n) - d.x
                    if px * px + py * py > d.r * d.r { continue }
                    let shade = max(0.2, 1 + d.gx * px + d.gy * py)
                    let k = (sy * ss + sx) * 3
                    grid[k] = Float(d.color.0 * shade)
                    grid[k + 1] = Float(d.color.1 * shade)
                    grid[k + 2] = Float(d.color.2 * shade)
                }
            }
        }
        var out = [Float](repeating: 0, count: size * size * 3)
        for r in 0..<size {
            for c in 0..<size {
                for ch in 0..<3 {
                    var acc = 0.0
                    for sy in 0..<n {
                        for sx in 0..<n { acc += Double(grid[((r * n + sy) * ss + c * n + sx) * 3 + ch]) }
                    }
                    out[(r * size + c) * 3 + ch] = Float(acc / Double(n * n))
                }
            }
        }
        return RGBImage(width: size, height: size, samples: out)
    }()

    static let all: [(name: String, image: RGBImage)] = [
        ("gradient", gradient), ("edges", edges), ("zone plate", zonePlate), ("patches", patches),
        ("dead leaves", deadLeaves),
    ]
}

/// Error measures between a demosaiced result and its truth.
enum Measure {
    /// PSNR in dB on linear values, peak 1 (white), over all three planes of the pixels
    /// for which `include(r, c)` holds.
    static func psnr(_ out: ImageBuffer<Float>, _ truth: RGBImage, include: (Int, Int) -> Bool = { _, _ in true }) -> Double {
        var sum = 0.0, n = 0
        for r in 0..<truth.height {
            for c in 0..<truth.width where include(r, c) {
                for ch in 0..<3 {
                    let d = Double(out[r, c, ch]) - Double(truth[r, c, ch])
                    sum += d * d
                    n += 1
                }
            }
        }
        return 10 * log10(1 / (sum / Double(n)))
    }

    /// RMS error in stops (EV): `log2(out / truth)` with both floored at 2⁻¹².
    static func rmsEV(_ out: ImageBuffer<Float>, _ truth: RGBImage) -> Double {
        let floor = 1.0 / 4096
        var sum = 0.0, n = 0
        for r in 0..<truth.height {
            for c in 0..<truth.width {
                for ch in 0..<3 {
                    let d = log2(max(Double(out[r, c, ch]), floor) / max(Double(truth[r, c, ch]), floor))
                    sum += d * d
                    n += 1
                }
            }
        }
        return (sum / Double(n)).squareRoot()
    }

    /// False colour on an achromatic truth: per pixel `max(|R − G|, |B − G|)`; returns
    /// (RMS, maximum) over the image.
    static func falseColor(_ out: ImageBuffer<Float>) -> (rms: Double, max: Double) {
        var sum = 0.0, peak = 0.0
        for r in 0..<out.height {
            for c in 0..<out.width {
                let g = Double(out[r, c, 1])
                let e = max(abs(Double(out[r, c, 0]) - g), abs(Double(out[r, c, 2]) - g))
                sum += e * e
                peak = max(peak, e)
            }
        }
        return ((sum / Double(out.width * out.height)).squareRoot(), peak)
    }

    /// Relative errors `|out − truth| / truth` over every plane of the pixels selected by
    /// `include`: (mean, maximum).
    static func relative(_ out: ImageBuffer<Float>, _ truth: RGBImage, include: (Int, Int) -> Bool) -> (mean: Double, max: Double) {
        var sum = 0.0, peak = 0.0, n = 0
        for r in 0..<truth.height {
            for c in 0..<truth.width where include(r, c) {
                for ch in 0..<3 {
                    let t = Double(truth[r, c, ch])
                    let e = abs(Double(out[r, c, ch]) - t) / t
                    sum += e
                    peak = max(peak, e)
                    n += 1
                }
            }
        }
        return (sum / Double(n), peak)
    }
}
