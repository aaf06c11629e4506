import Foundation
import Testing
@testable import DNGContainer
import Demosaic
import ImageCore
import Linearize
import TestSupport

/// Mirror an index into `0..<n` (reflect-101), written independently of the module's.
func mirror(_ i: Int, _ n: Int) -> Int {
    var i = i
    while i < 0 || i >= n { i = i < 0 ? -i : 2 * (n - 1) - i }
    return i
}

/// A seeded random mosaic: values uniform in `range`, those ≥ 1 set to 1 and flagged.
func randomMosaic(width: Int, height: Int, seed: UInt64, range: ClosedRange<Float> = -0.05...1.2,
                  cfa: CFADescription, top: Int = 0, left: Int = 0) -> LinearImage {
    var rng = SeededGenerator(seed: seed)
    var values = [Float](), clip = [UInt8]()
    for _ in 0..<(width * height) {
        let v = Float.random(in: range, using: &rng)
        values.append(min(v, 1))
        clip.append(v >= 1 ? 1 : 0)
    }
    return Mosaicking.linearImage(values: values, clip: clip, width: width, height: height, top: top, left: left,
                                  cfa: cfa)
}

@Suite struct DemosaicTests {
    static let fullResolution: [DemosaicMethod] = [.bilinear, .rcd]

    @Test func defaultIsTheEdgeAwareMethod() {
        #expect(Demosaicer.defaultMethod == .rcd)
        #expect(DemosaicMethod.allCases.map(\.rawValue) == ["superpixel", "bilinear", "rcd"])
    }

    // MARK: superpixel

    /// Superpixel equals the 2 × 2 computation done here in Float, bit for bit, in every
    /// phase and with ActiveArea offsets of either parity (odd sizes drop the last row or
    /// column).
    @Test(arguments: Phase.allCases)
    func superpixelIsTheExact2x2Result(phase: Phase) throws {
        for (top, left, w, h) in [(0, 0, 37, 23), (1, 0, 36, 24), (0, 1, 20, 31), (3, 5, 17, 18)] {
            let image = randomMosaic(width: w, height: h, seed: UInt64(w * h + top), cfa: phase.cfa, top: top, left: left)
            let out = try Demosaicer.demosaic(image, cfa: phase.cfa, method: .superpixel)
            #expect(out.width == w / 2 && out.height == h / 2 && out.planes == 3)
            for y in 0..<(h / 2) {
                for x in 0..<(w / 2) {
                    var value: [Float] = [0, 0, 0], greens: [Float] = [], bits: UInt8 = 0
                    for dy in 0..<2 {
                        for dx in 0..<2 {
                            let r = 2 * y + dy, c = 2 * x + dx
                            let color = Mosaicking.color(phase.cfa, r: r, c: c, top: top, left: left)
                            let v = image.values[r, c, 0]
                            if color == 1 { greens.append(v) } else { value[color] = v }
                            if image.clipMask[r * w + c] != 0 { bits |= 1 << UInt8(color) }
                        }
                    }
                    value[1] = (greens[0] + greens[1]) / 2
                    #expect((0..<3).map { out.values[y, x, $0] } == value, "\(phase) cell \(y),\(x)")
                    #expect(out.clipMask[y * (w / 2) + x] == bits)
                }
            }
        }
    }

    // MARK: phase

    /// The CFA pattern's origin is the IFD's top-left, not the ActiveArea's: a mosaic whose
    /// every site holds a value identifying its colour under that rule demosaics to exactly
    /// those three values at every pixel, for every method, phase and offset parity.
    @Test(arguments: [(0, 0), (1, 0), (0, 1), (1, 1), (2, 3)])
    func activeAreaOffsetDecidesThePhase(top: Int, left: Int) throws {
        let colorValue: [Float] = [0.1, 0.5, 0.9]
        for phase in Phase.allCases {
            let (w, h) = (21, 14)
            var values = [Float]()
            for r in 0..<h {
                for c in 0..<w { values.append(colorValue[Mosaicking.color(phase.cfa, r: r, c: c, top: top, left: left)]) }
            }
            let image = Mosaicking.linearImage(values: values, clip: Array(repeating: 0, count: w * h), width: w, height: h,
                                               top: top, left: left, cfa: phase.cfa)
            for method in DemosaicMethod.allCases {
                let out = try Demosaicer.demosaic(image, cfa: phase.cfa, method: method)
                for p in 0..<(out.width * out.height) {
                    #expect(Array(out.values.samples[(3 * p)..<(3 * p + 3)]) == colorValue, "\(phase) \(method) pixel \(p)")
                }
            }
        }
    }

    /// Shifting the scene by one row and/or column changes the phase of the mosaic; away
    /// from the image edges the result is the same picture shifted — bit for bit, which
    /// also shows that band and tile seams do not matter (they fall elsewhere in the
    /// picture). The shifted mosaic is built both with a shifted CFAPattern and with the
    /// original pattern and an ActiveArea offset; both give the same result.
    @Test(arguments: fullResolution)
    func shiftedSceneGivesShiftedResult(method: DemosaicMethod) throws {
        let truth = Scenes.deadLeaves
        let base = try Demosaicer.demosaic(Mosaicking.mosaic(truth, cfa: Phase.rggb.cfa), cfa: Phase.rggb.cfa, method: method)
        let margin = 12
        for (dy, dx) in [(0, 1), (1, 0), (1, 1)] {
            let shifted = truth.crop(top: dy, left: dx, width: truth.width - 2, height: truth.height - 2)
            let rggb = Phase.rggb.pattern
            let pattern = (0..<4).map { rggb[((($0 / 2) + dy) % 2) * 2 + ($0 % 2 + dx) % 2] }
            let cfa = Mosaicking.cfa(pattern)
            let a = try Demosaicer.demosaic(Mosaicking.mosaic(shifted, cfa: cfa), cfa: cfa, method: method)
            let b = try Demosaicer.demosaic(Mosaicking.mosaic(shifted, cfa: Phase.rggb.cfa, top: dy, left: dx),
                                            cfa: Phase.rggb.cfa, method: method)
            #expect(a.values.samples == b.values.samples)
            var mismatches = 0
            for r in margin..<(shifted.height - margin) {
                for c in margin..<(shifted.width - margin) {
                    for ch in 0..<3 where a.values[r, c, ch] != base.values[r + dy, c + dx, ch] { mismatches += 1 }
                }
            }
            #expect(mismatches == 0, "\(method) shift (\(dy), \(dx))")
        }
    }

    /// CFAPlaneColor decides the plane order: blue, green, red planes hold the same values
    /// as red, green, blue in reverse.
    @Test(arguments: DemosaicMethod.allCases)
    func planeColorsDecideThePlaneOrder(method: DemosaicMethod) throws {
        let cfa = Phase.gbrg.cfa
        let reversed = Mosaicking.cfa(cfa.pattern, planeColors: [2, 1, 0])
        let image = randomMosaic(width: 30, height: 26, seed: 3, cfa: cfa)
        let a = try Demosaicer.demosaic(image, cfa: cfa, method: method)
        let b = try Demosaicer.demosaic(image, cfa: reversed, method: method)
        for p in 0..<(a.width * a.height) {
            #expect(a.values.samples[3 * p] == b.values.samples[3 * p + 2])
            #expect(a.values.samples[3 * p + 1] == b.values.samples[3 * p + 1])
            #expect(a.values.samples[3 * p + 2] == b.values.samples[3 * p])
            let m = a.clipMask[p], n = b.clipMask[p]
            #expect((m & 1) << 2 | (m & 2) | (m & 4) >> 2 == n)
        }
    }

    // MARK: values

    /// Every output value lies within the range of the samples of its colour in the 5 × 5
    /// window around the pixel (the cell for superpixel), even on uniform noise with
    /// negatives, the worst case for overshoot; the output carries the IFD and mapping over.
    @Test(arguments: DemosaicMethod.allCases)
    func valuesStayWithinTheirSamples(method: DemosaicMethod) throws {
        for phase in Phase.allCases {
            let (w, h) = (45, 38)
            let image = randomMosaic(width: w, height: h, seed: 11, cfa: phase.cfa)
            let out = try Demosaicer.demosaic(image, cfa: phase.cfa, method: method)
            #expect(out.ifd.path == image.ifd.path && out.mapping == image.mapping)
            let half = method == .superpixel
            for y in 0..<out.height {
                for x in 0..<out.width {
                    var lo: [Float] = [.infinity, .infinity, .infinity], hi: [Float] = [-.infinity, -.infinity, -.infinity]
                    let window = half ? [(2 * y, 2 * x), (2 * y, 2 * x + 1), (2 * y + 1, 2 * x), (2 * y + 1, 2 * x + 1)]
                        : (-2...2).flatMap { dy in (-2...2).map { dx in (mirror(y + dy, h), mirror(x + dx, w)) } }
                    for (r, c) in window {
                        let color = Mosaicking.color(phase.cfa, r: r, c: c, top: 0, left: 0)
                        lo[color] = min(lo[color], image.values[r, c, 0])
                        hi[color] = max(hi[color], image.values[r, c, 0])
                    }
                    for ch in 0..<3 {
                        let v = out.values[y, x, ch]
                        #expect(v >= lo[ch] && v <= hi[ch], "\(method) \(phase) (\(y), \(x)) plane \(ch): \(v)")
                    }
                }
            }
            #expect(out.values.samples.max()! <= 1)
        }
    }

    /// Negative values (noise around black) are kept: a uniformly negative mosaic comes out
    /// exactly, and noise around zero keeps its negative values.
    @Test(arguments: DemosaicMethod.allCases)
    func negativesAreKept(method: DemosaicMethod) throws {
        let level: [Float] = [-0.002, -0.0005, -0.003]
        let cfa = Phase.bggr.cfa
        let (w, h) = (34, 30)
        var values = [Float]()
        for r in 0..<h { for c in 0..<w { values.append(level[Mosaicking.color(cfa, r: r, c: c, top: 0, left: 0)]) } }
        let flat = Mosaicking.linearImage(values: values, clip: Array(repeating: 0, count: w * h), width: w, height: h,
                                          cfa: cfa)
        let out = try Demosaicer.demosaic(flat, cfa: cfa, method: method)
        for p in 0..<(out.width * out.height) { #expect(Array(out.values.samples[(3 * p)..<(3 * p + 3)]) == level) }

        let noise = randomMosaic(width: w, height: h, seed: 8, range: -0.004...0.004, cfa: cfa)
        let n = try Demosaicer.demosaic(noise, cfa: cfa, method: method)
        let negatives = n.values.samples.filter { $0 < 0 }.count
        #expect(Double(negatives) > 0.3 * Double(n.values.samples.count), "\(negatives) negative values")
        #expect(n.values.samples.allSatisfy { $0.isFinite && $0 >= -0.004 && $0 <= 0.004 })
    }

    /// Tiny images (down to one 2 × 2 cell) give finite values of the right size, and flat
    /// colour exactly.
    @Test(arguments: [(2, 2), (3, 2), (2, 3), (3, 3), (5, 7), (2, 9), (11, 2)])
    func tinyImages(width: Int, height: Int) throws {
        let cfa = Phase.grbg.cfa
        let colorValue: [Float] = [0.25, 0.75, 0.125]
        var values = [Float]()
        for r in 0..<height {
            for c in 0..<width { values.append(colorValue[Mosaicking.color(cfa, r: r, c: c, top: 0, left: 0)]) }
        }
        let flat = Mosaicking.linearImage(values: values, clip: Array(repeating: 0, count: width * height), width: width,
                                          height: height, cfa: cfa)
        let noisy = randomMosaic(width: width, height: height, seed: UInt64(width * 31 + height), cfa: cfa)
        for method in DemosaicMethod.allCases {
            let out = try Demosaicer.demosaic(flat, cfa: cfa, method: method)
            let size = method == .superpixel ? (width / 2, height / 2) : (width, height)
            #expect(out.width == size.0 && out.height == size.1 && out.clipMask.count == size.0 * size.1)
            for p in 0..<(out.width * out.height) {
                #expect(Array(out.values.samples[(3 * p)..<(3 * p + 3)]) == colorValue, "\(method) \(width)×\(height)")
            }
            let n = try Demosaicer.demosaic(noisy, cfa: cfa, method: method)
            #expect(n.values.samples.allSatisfy { $0.isFinite && $0 >= -0.05 && $0 <= 1 })
        }
    }

    // MARK: clip mask

    /// The clip mask follows the documented rule of each method, computed here
    /// independently. A site's own colour is its own sample. An interpolated colour is
    /// flagged for superpixel when a sample of that colour in the cell is clipped; for
    /// bilinear when one in the 3 × 3 window is (exactly the samples averaged); for RCD when
    /// any sample, of any colour, within 5 (green at red/blue sites), 7 (red/blue at
    /// blue/red sites) or 10 pixels (red/blue at green sites) is. Borders mirror.
    @Test(arguments: Phase.allCases)
    func clipMaskFollowsTheRule(phase: Phase) throws {
        // Dead leaves brightened so that about a tenth of the samples clip.
        var truth = Scenes.deadLeaves.crop(top: 40, left: 70, width: 97, height: 81)
        truth.samples = truth.samples.map { $0 * 3 }
        let image = Mosaicking.mosaic(truth, cfa: phase.cfa)
        let (w, h) = (truth.width, truth.height)
        let clipped = { (r: Int, c: Int) in image.clipMask[mirror(r, h) * w + mirror(c, w)] != 0 }
        let color = { (r: Int, c: Int) in Mosaicking.color(phase.cfa, r: mirror(r, h), c: mirror(c, w), top: 0, left: 0) }
        let fraction = Double(image.clipMask.filter { $0 != 0 }.count) / Double(w * h)
        #expect(fraction > 0.05 && fraction < 0.3, "clipped fraction \(fraction)")

        for method in DemosaicMethod.allCases {
            let out = try Demosaicer.demosaic(image, cfa: phase.cfa, method: method)
            var expected = [UInt8]()
            for y in 0..<out.height {
                for x in 0..<out.width {
                    var bits: UInt8 = 0
                    for k in 0..<3 {
                        var flag = false
                        switch method {
                        case .superpixel:
                            for dy in 0..<2 { for dx in 0..<2 where color(2 * y + dy, 2 * x + dx) == k {
                                flag = flag || clipped(2 * y + dy, 2 * x + dx)
                            } }
                        case .bilinear:
                            if color(y, x) == k {
                                flag = clipped(y, x)
                            } else {
                                for dy in -1...1 { for dx in -1...1 where color(y + dy, x + dx) == k {
                                    flag = flag || clipped(y + dy, x + dx)
                                } }
                            }
                        case .rcd:
                            let own = color(y, x)
                            if k == own {
                                flag = clipped(y, x)
                            } else {
                                let radius = own == 1 ? 10 : (k == 1 ? 5 : 7)
                                for dy in -radius...radius { for dx in -radius...radius { flag = flag || clipped(y + dy, x + dx) } }
                            }
                        }
                        if flag { bits |= 1 << UInt8(k) }
                    }
                    expected.append(bits)
                }
            }
            let wrong = (0..<expected.count).filter { out.clipMask[$0] != expected[$0] }
            #expect(wrong.isEmpty, "\(method) \(phase): \(wrong.count) pixels differ, first \(wrong.first.map { "\($0 / out.width),\($0 % out.width): \(out.clipMask[$0]) expected \(expected[$0])" } ?? "")")
            #expect(out.values.samples.max()! <= 1)
            let flagged = out.clipMask.filter { $0 != 0 }.count
            #expect(flagged > 0 && flagged < out.clipMask.count)
        }
    }

    /// What the mask means, checked by giving the clipped samples their true values (above
    /// white, as the scene had them): no unflagged value changes at all, for any method —
    /// an unflagged value does not depend on a clipped sample. For superpixel and bilinear,
    /// whose values are means of samples of one colour, a flagged value can only rise: it
    /// is a lower bound. (For RCD it is not — its colour-difference and ratio steps can move
    /// either way — so there a flag means "not to be trusted".)
    @Test(arguments: Phase.allCases)
    func unflaggedValuesDoNotDependOnClippedSamples(phase: Phase) throws {
        var truth = Scenes.deadLeaves.crop(top: 100, left: 20, width: 90, height: 76)
        truth.samples = truth.samples.map { $0 * 3 }
        let image = Mosaicking.mosaic(truth, cfa: phase.cfa)
        var unclipped = image
        for r in 0..<truth.height {
            for c in 0..<truth.width where image.clipMask[r * truth.width + c] != 0 {
                unclipped.values[r, c, 0] = truth[r, c, Mosaicking.color(phase.cfa, r: r, c: c, top: 0, left: 0)]
            }
        }
        for method in DemosaicMethod.allCases {
            let a = try Demosaicer.demosaic(image, cfa: phase.cfa, method: method)
            let b = try Demosaicer.demosaic(unclipped, cfa: phase.cfa, method: method)
            var changedUnflagged = 0, flaggedWentDown = 0, unflagged = 0
            for p in 0..<(a.width * a.height) {
                for ch in 0..<3 {
                    let before = a.values.samples[3 * p + ch], after = b.values.samples[3 * p + ch]
                    if a.clipMask[p] & (1 << UInt8(ch)) == 0 {
                        unflagged += 1
                        if before != after { changedUnflagged += 1 }
                    } else if after < before {
                        flaggedWentDown += 1
                    }
                }
            }
            #expect(changedUnflagged == 0, "\(method) \(phase)")
            #expect(unflagged * 5 > 3 * a.width * a.height, "\(method): only \(unflagged) unflagged values")
            if method != .rcd { #expect(flaggedWentDown == 0, "\(method) \(phase)") }
        }
    }

    // MARK: errors

    @Test func unsupportedPatternsAreSpecificErrors() throws {
        let image = randomMosaic(width: 8, height: 8, seed: 1, cfa: Phase.rggb.cfa)
        let cases: [(CFADescription, DemosaicError.Reason, FailureCategory, String)] = [
            (Mosaicking.cfa([0, 1, 1, 2, 1, 0, 2, 1, 1], rows: 3, cols: 3), .repeatPattern(rows: 3, cols: 3),
             .unsupportedFeature, "CFARepeatPatternDim 3×3 is not supported"),
            (Mosaicking.cfa(Array(repeating: 1, count: 36), rows: 6, cols: 6), .repeatPattern(rows: 6, cols: 6),
             .unsupportedFeature, "only 2×2 Bayer patterns"),
            (Mosaicking.cfa([0, 1, 1]), .patternCount(count: 3, rows: 2, cols: 2), .corruptData, "CFAPattern has 3 entries"),
            (Mosaicking.cfa([0, 1, 1, 2], layout: 2), .layout(2), .unsupportedFeature, "CFALayout 2 is not supported"),
            (Mosaicking.cfa([3, 1, 4, 5], planeColors: [3, 4, 5, 1]), .planeColors([3, 4, 5, 1]), .unsupportedFeature,
             "CFAPlaneColor [3, 4, 5, 1] is not supported"),
            (Mosaicking.cfa([0, 1, 2, 1]), .notBayer("RGBG"), .unsupportedFeature, "CFA pattern RGBG is not supported"),
            (Mosaicking.cfa([0, 1, 1, 0]), .notBayer("RGGR"), .unsupportedFeature, "CFA pattern RGGR"),
            (Mosaicking.cfa([0, 1, 3, 2]), .notBayer("RGCB"), .unsupportedFeature, "CFA pattern RGCB"),
        ]
        for (cfa, reason, category, message) in cases {
            do {
                _ = try Demosaicer.demosaic(image, cfa: cfa, method: .rcd)
                Issue.record("expected \(reason)")
            } catch {
                #expect(error == DemosaicError(ifd: "IFD0", reason: reason))
                #expect(error.category == category)
                #expect(error.description.hasPrefix("CFA demosaicing of IFD0: "))
                #expect(error.description.contains(message), "\(error.description)")
            }
        }
        let threePlanes = Mosaicking.linearImage(values: Array(repeating: 0, count: 48), clip: Array(repeating: 0, count: 16),
                                                 width: 4, height: 4, cfa: Phase.rggb.cfa, planes: 3)
        #expect(throws: DemosaicError(ifd: "IFD0", reason: .planeCount(3))) {
            try Demosaicer.demosaic(threePlanes, cfa: Phase.rggb.cfa, method: .bilinear)
        }
        let oneRow = randomMosaic(width: 5, height: 1, seed: 2, cfa: Phase.rggb.cfa)
        for method in DemosaicMethod.allCases {
            #expect(throws: DemosaicError(ifd: "IFD0", reason: .tooSmall(width: 5, height: 1))) {
                try Demosaicer.demosaic(oneRow, cfa: Phase.rggb.cfa, method: method)
            }
        }
    }
}
