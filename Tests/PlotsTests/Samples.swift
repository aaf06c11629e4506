import Foundation
import Plots
import TestSupport

/// Synthetic inputs for the chart tests and the example gallery.
enum Samples {
    /// A histogram of a high-contrast scene in 1/8-stop bins from −14 to +2 EV: shadows,
    /// mid-tones and a highlight peak that runs into white, R/G/B offset like a warm light.
    static func histogram(logCounts: Bool = true) -> HistogramPlot {
        let perStop = 8
        let lo = -14.0, hi = 2.0
        let bins = Int((hi - lo) * Double(perStop))
        let edges = (0...bins).map { lo + Double($0) / Double(perStop) }
        func peak(_ ev: Double, _ centre: Double, _ width: Double, _ height: Double) -> Double {
            height * exp(-0.5 * pow((ev - centre) / width, 2))
        }
        func counts(shift: Double, scale: Double) -> [Double] {
            (0..<bins).map { i in
                let ev = lo + (Double(i) + 0.5) / Double(perStop) - shift
                let v = peak(ev, -9.5, 1.1, 2600) + peak(ev, -5.2, 1.6, 9000) + peak(ev, -1.6, 0.7, 3800) + peak(ev, -12.5, 0.6, 300)
                return ev > 0 ? 0 : (v * scale).rounded()
            }
        }
        return HistogramPlot(
            title: "sunset.dng — linear Rec.2020",
            subtitle: "4032 × 3024 px, 1/8-stop bins; exposure as shot (1.0 = sensor white)",
            binEdges: edges, logarithmic: true,
            series: [("R", counts(shift: 0.35, scale: 1)), ("G", counts(shift: 0, scale: 1.05)),
                     ("B", counts(shift: -0.6, scale: 0.9)), ("Y", counts(shift: 0.05, scale: 1.1))],
            clipLevel: 0,
            notes: [("clipped (any channel ≥ white)", "21 388 px (0.18 %)"), ("zero or negative (Y)", "1 052 px (0.01 %)"),
                    ("below −14 EV (Y)", "310 px")],
            logCounts: logCounts)
    }

    /// A 4032 × 3024-like scene, scaled: a sky gradient, a sun disc that clips, a dark
    /// foreground with noise and a grey card; luminance in linear light (1 = white).
    static func scene(width: Int, height: Int) -> (luminance: [Float], clipped: [Bool]) {
        var lum = [Float](repeating: 0, count: width * height)
        var clipped = [Bool](repeating: false, count: width * height)
        var rng = SeededGenerator(seed: 7)
        let sunX = Float(width) * 0.68, sunY = Float(height) * 0.38, sunR = Float(min(width, height)) * 0.06
        for y in 0..<height {
            let fy = Float(y) / Float(height)
            for x in 0..<width {
                let fx = Float(x) / Float(width)
                var ev: Float
                if fy < 0.62 {
                    // Sky: brighter towards the sun and the horizon.
                    let dx = (Float(x) - sunX) / Float(width), dy = (Float(y) - sunY) / Float(height)
                    let glow = expf(-(dx * dx + dy * dy) * 18)
                    ev = -6.5 + 2.2 * fy + 5.2 * glow
                } else {
                    // Foreground: dark, textured.
                    ev = -11 + 2.5 * sinf(fx * 23 + fy * 7) * cosf(fx * 5 - fy * 31) + 1.5 * (1 - fy)
                }
                let r = sqrtf(powf(Float(x) - sunX, 2) + powf(Float(y) - sunY, 2))
                if r < sunR { ev = 1.5 }
                // Grey card in the foreground.
                if fx > 0.16 && fx < 0.30 && fy > 0.70 && fy < 0.86 { ev = -7.2 }
                let u = Float(rng.next() >> 40) / Float(1 << 24) - 0.5
                let value = exp2f(ev) * (1 + 0.08 * u) + 0.0004 * u
                lum[y * width + x] = value
                clipped[y * width + x] = value >= 1
            }
        }
        return (lum, clipped)
    }

    static func evMap(width: Int = 2016, height: Int = 1512, maxSize: Int = 1000) -> EVMap {
        let s = scene(width: width, height: height)
        let w = Double(width), h = Double(height)
        let card: [SIMD2<Double>] = [SIMD2(0.16 * w, 0.70 * h), SIMD2(0.30 * w, 0.70 * h), SIMD2(0.30 * w, 0.86 * h), SIMD2(0.16 * w, 0.86 * h)]
        let sky: [SIMD2<Double>] = [SIMD2(0.06 * w, 0.08 * h), SIMD2(0.40 * w, 0.10 * h), SIMD2(0.44 * w, 0.40 * h), SIMD2(0.10 * w, 0.46 * h)]
        return EVMap(title: "sunset.dng — luminance in stops", subtitle: "linear Rec.2020 Y, 0 EV = sensor white",
                     width: width, height: height, luminance: s.luminance, clipped: s.clipped,
                     regions: [("grey card", card), ("sky", sky)], maxSize: maxSize)
    }

    /// Relative bias of region means and medians of a simulated grey ramp against stops,
    /// with 95 % intervals that widen in the shadows and a clipping bias at the top.
    static func xyPlot() -> XYPlot {
        let stops = stride(from: -12.0, through: 0, by: 1).map { $0 }
        var rng = SeededGenerator(seed: 11)
        func jitter() -> Double { Double(rng.next() >> 11) / Double(1 << 53) - 0.5 }
        let halfWidth = stops.map { 0.08 + 2.4 * exp2((-12 - $0) / 1.6 + 0) + 0.9 * exp2(-($0 + 12) / 2.5) }
        let mean = zip(stops, halfWidth).map { s, e -> (x: Double, y: Double, error: Double?) in
            (s, (s > -0.5 ? -3.1 : 0) + e * 0.8 * jitter(), e)
        }
        let median = zip(stops, halfWidth).map { s, e -> (x: Double, y: Double, error: Double?) in
            (s, (s > -0.5 ? -3.4 : 0) - 0.6 * exp2(-(s + 12) / 1.5) + e * jitter(), e * 1.25)
        }
        return XYPlot(title: "Grey ramp: bias against ground truth",
                      subtitle: "simulated capture, 13 patches, 95 % intervals from the noise model",
                      xLabel: "patch exposure (EV relative to white)", yLabel: "relative bias (%)",
                      series: [("mean", mean), ("median", median)],
                      referenceLines: [(0, "no bias"), (1, "+1 %"), (-1, "\u{2212}1 %")],
                      logX: false, logY: false)
    }

    /// Measured against predicted noise (log–log).
    static func noisePlot() -> XYPlot {
        let signal = stride(from: -12.0, through: -0.5, by: 0.5).map { exp2($0) }
        func sigma(_ s: Double, gain: Double) -> Double { (s / 4000 * gain + 2e-8).squareRoot() }
        var rng = SeededGenerator(seed: 5)
        func jitter() -> Double { 1 + 0.06 * (Double(rng.next() >> 11) / Double(1 << 53) - 0.5) }
        return XYPlot(title: "Noise: measured and predicted", xLabel: "mean signal (1 = white)", yLabel: "standard deviation",
                      series: [("R measured", signal.map { ($0, sigma($0, gain: 1.3) * jitter(), nil) }),
                               ("G measured", signal.map { ($0, sigma($0, gain: 1) * jitter(), nil) }),
                               ("predicted (G)", signal.map { ($0, sigma($0, gain: 1), nil) })],
                      logX: true, logY: true, connectPoints: true)
    }
}
