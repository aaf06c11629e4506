import Demosaic
import Foundation
import ImageCore
import Testing
import TestSupport

/// The measured error of every method on the known-truth scenes of `Scenes`, each mosaicked
/// in all four Bayer phases; every figure is the worst of the four phases. These are the
/// numbers stated in docs/demosaic.md ("measured error on known-truth images"); the tests
/// below assert them with margins. `DEMOSAIC_REPORT=1` prints the table.
struct Metrics: Sendable {
    /// PSNR on linear values (peak 1), all pixels, dB.
    var psnr = Double.infinity
    /// PSNR of the pixels within 8 (superpixel: 4) of the image edge, dB.
    var psnrBorder = Double.infinity
    /// RMS error in stops, values floored at 2⁻¹².
    var rmsEV = 0.0
    /// Achromatic scenes: RMS and maximum of `max(|R − G|, |B − G|)`.
    var falseColorRMS = 0.0
    var falseColorMax = 0.0
    /// Patches: RMS error of the colour differences R − G and B − G within 3 pixels of a
    /// patch edge.
    var edgeChromaRMS = 0.0
    /// Patches: relative error inside the flat patches (8 pixels in from their edges).
    var flatMeanRelative = 0.0
    var flatMaxRelative = 0.0
    /// Zone plate: PSNR where the local frequency is below 0.125 and 0.25 cycles per
    /// pixel (of the full-resolution mosaic), dB.
    var psnrBelowEighth = Double.infinity
    var psnrBelowQuarter = Double.infinity
    /// The largest absolute error in the outermost two rows and columns.
    var outerMaxError = 0.0

    mutating func worst(_ o: Metrics) {
        psnr = min(psnr, o.psnr)
        psnrBorder = min(psnrBorder, o.psnrBorder)
        rmsEV = max(rmsEV, o.rmsEV)
        falseColorRMS = max(falseColorRMS, o.falseColorRMS)
        falseColorMax = max(falseColorMax, o.falseColorMax)
        edgeChromaRMS = max(edgeChromaRMS, o.edgeChromaRMS)
        flatMeanRelative = max(flatMeanRelative, o.flatMeanRelative)
        flatMaxRelative = max(flatMaxRelative, o.flatMaxRelative)
        psnrBelowEighth = min(psnrBelowEighth, o.psnrBelowEighth)
        psnrBelowQuarter = min(psnrBelowQuarter, o.psnrBelowQuarter)
        outerMaxError = max(outerMaxError, o.outerMaxError)
    }
}

enum QualityTable {
    /// Metrics per scene name and method, worst over the four phases.
    static let results: [String: [DemosaicMethod: Metrics]] = {
        var table: [String: [DemosaicMethod: Metrics]] = [:]
        for (name, truth) in Scenes.all {
            for method in DemosaicMethod.allCases {
                var worst = Metrics()
                for phase in Phase.allCases {
                    let out = try! Demosaicer.demosaic(Mosaicking.mosaic(truth, cfa: phase.cfa), cfa: phase.cfa,
                                                       method: method)
                    worst.worst(measure(name: name, truth: truth, out: out.values, half: method == .superpixel))
                }
                table[name, default: [:]][method] = worst
            }
        }
        return table
    }()

    static func measure(name: String, truth full: RGBImage, out: ImageBuffer<Float>, half: Bool) -> Metrics {
        let truth = half ? full.boxHalf() : full
        let scale = half ? 2 : 1
        let w = truth.width, h = truth.height
        var m = Metrics()
        m.psnr = Measure.psnr(out, truth)
        let border = 8 / scale
        m.psnrBorder = Measure.psnr(out, truth) { r, c in
            r < border || c < border || r >= h - border || c >= w - border
        }
        m.rmsEV = Measure.rmsEV(out, truth)
        for r in 0..<h {
            for c in 0..<w where min(r, c, h - 1 - r, w - 1 - c) < 2 {
                for ch in 0..<3 { m.outerMaxError = max(m.outerMaxError, Double(abs(out[r, c, ch] - truth[r, c, ch]))) }
            }
        }
        switch name {
        case "edges", "zone plate":
            (m.falseColorRMS, m.falseColorMax) = Measure.falseColor(out)
            if name == "zone plate" {
                let radius = Double(Scenes.size) / 2
                func frequency(_ r: Int, _ c: Int) -> Double {
                    let y = Double(r * scale) + Double(scale) / 2 - radius, x = Double(c * scale) + Double(scale) / 2 - radius
                    return 0.45 * (x * x + y * y).squareRoot() / radius
                }
                m.psnrBelowEighth = Measure.psnr(out, truth) { frequency($0, $1) < 0.125 }
                m.psnrBelowQuarter = Measure.psnr(out, truth) { frequency($0, $1) < 0.25 }
            }
        case "patches":
            let p = Scenes.patchSize / scale, near = max(1, 3 / scale)
            // Pixels distance (in pixels) from the nearest boundary between two patches.
            func distance(_ x: Int, _ count: Int) -> Int {
                var d = Int.max
                for k in 1..<(count / p) { d = min(d, x < k * p ? k * p - 1 - x : x - k * p) }
                return d
            }
            var sum = 0.0, n = 0
            for r in 0..<h {
                for c in 0..<w where min(distance(r, h), distance(c, w)) < near {
                    for ch in [0, 2] {
                        let d = Double(out[r, c, ch] - out[r, c, 1]) - Double(truth[r, c, ch] - truth[r, c, 1])
                        sum += d * d
                        n += 1
                    }
                }
            }
            m.edgeChromaRMS = (sum / Double(n)).squareRoot()
            let inset = 8 / scale
            (m.flatMeanRelative, m.flatMaxRelative) = Measure.relative(out, truth) { r, c in
                let pr = r % p, pc = c % p
                return pr >= inset && pr < p - inset && pc >= inset && pc < p - inset
            }
        default:
            break
        }
        return m
    }

    /// The table as Markdown, for docs/demosaic.md.
    static var markdown: String {
        var lines = [
            "| scene | method | PSNR dB | border PSNR dB | max error, outer 2 px | RMS error EV | other |",
            "|---|---|---|---|---|---|---|",
        ]
        for (name, _) in Scenes.all {
            for method in DemosaicMethod.allCases {
                let m = results[name]![method]!
                var other = ""
                switch name {
                case "edges": other = String(format: "false colour RMS %.4f, max %.3f", m.falseColorRMS, m.falseColorMax)
                case "zone plate":
                    other = String(format: "PSNR f < 0.125: %.2f dB, f < 0.25: %.2f dB; false colour RMS %.4f",
                                   m.psnrBelowEighth, m.psnrBelowQuarter, m.falseColorRMS)
                case "patches":
                    other = String(format: "edge chroma RMS %.4f; flat rel. error mean %.1e, max %.1e", m.edgeChromaRMS,
                                   m.flatMeanRelative, m.flatMaxRelative)
                default: break
                }
                lines.append(String(format: "| %@ | %@ | %.2f | %.2f | %.4f | %.4f | %@ |", name, method.rawValue, m.psnr,
                                    m.psnrBorder, m.outerMaxError, m.rmsEV, other))
            }
        }
        return lines.joined(separator: "\n")
    }
}

@Suite struct QualityTests {
    static func m(_ scene: String, _ method: DemosaicMethod) -> Metrics { QualityTable.results[scene]![method]! }

    @Test("Prints the quality table", .enabled(if: ProcessInfo.processInfo.environment["DEMOSAIC_REPORT"] == "1"))
    func printTable() {
        print(QualityTable.markdown)
    }

    /// Flat areas are reproduced exactly (relative error < 1e-6) by every method.
    @Test(arguments: DemosaicMethod.allCases)
    func flatPatchesAreExact(method: DemosaicMethod) {
        let q = Self.m("patches", method)
        #expect(q.flatMaxRelative < 1e-6, "\(method): \(q.flatMaxRelative)")
        #expect(q.flatMeanRelative < 1e-7)
    }

    /// Lower bounds on PSNR (dB), about 1 dB below the measured worst phase.
    @Test(arguments: [
        ("gradient", DemosaicMethod.bilinear, 77.0), ("gradient", .rcd, 76.0), ("gradient", .superpixel, 60.0),
        ("edges", .bilinear, 29.0), ("edges", .rcd, 45.0), ("edges", .superpixel, 25.0),
        ("zone plate", .bilinear, 17.5), ("zone plate", .rcd, 20.0),
        ("patches", .bilinear, 30.0), ("patches", .rcd, 33.0),
        ("dead leaves", .bilinear, 28.0), ("dead leaves", .rcd, 34.5),
    ])
    func psnrAtLeast(scene: String, method: DemosaicMethod, bound: Double) {
        let q = Self.m(scene, method)
        #expect(q.psnr >= bound, "\(scene) \(method): \(q.psnr) dB")
    }

    /// The edge-aware method beats bilinear where it matters.
    @Test(arguments: [("edges", 14.0), ("dead leaves", 5.0), ("patches", 2.5), ("zone plate", 2.0)])
    func rcdBeatsBilinear(scene: String, margin: Double) {
        let gain = Self.m(scene, .rcd).psnr - Self.m(scene, .bilinear).psnr
        #expect(gain >= margin, "\(scene): RCD − bilinear = \(gain) dB")
    }

    /// False colour on achromatic edges and colour error at colour edges.
    @Test func falseColorAtEdges() {
        let bilinear = Self.m("edges", .bilinear), rcd = Self.m("edges", .rcd)
        #expect(rcd.falseColorRMS < 0.25 * bilinear.falseColorRMS)
        #expect(rcd.falseColorRMS < 0.01)
        let chromaB = Self.m("patches", .bilinear).edgeChromaRMS, chromaR = Self.m("patches", .rcd).edgeChromaRMS
        #expect(chromaR < 0.8 * chromaB, "edge chroma RMS: RCD \(chromaR), bilinear \(chromaB)")
    }

    /// No garbage at the image edges. On scenes whose content does not change towards the
    /// edges the 8-pixel border strip is within 2 dB of the whole image; on the gradient the
    /// outermost two rows and columns are off by about one pixel's worth of slope in each
    /// direction (the mirror assumes zero slope at the edge; the slope reaches 0.003 per
    /// pixel, so a corner can be off by 0.006).
    @Test(arguments: DemosaicMethod.allCases)
    func bordersAreNotWorse(method: DemosaicMethod) {
        for name in ["edges", "patches", "dead leaves"] {
            let q = Self.m(name, method)
            #expect(q.psnrBorder >= q.psnr - 2, "\(name) \(method): border \(q.psnrBorder) dB, all \(q.psnr) dB")
        }
        #expect(Self.m("gradient", method).outerMaxError < 0.006)
    }
}
