import SceneLinearKit
import Analysis
import Engine
import Foundation
import Plots

/// Charts of a simulated-capture validation: bias per patch against brightness, and
/// measured against predicted noise variance.
public enum ValidationCharts {
    /// Relative bias of the measured patch means (R, G, B, in %) against stops below white,
    /// each with a ±1.96 standard-error bar, and the bias threshold as reference lines.
    /// Clipped patches are left out (their means are bounds, not estimates), and so are
    /// patches whose 95 % interval is wider than ±`maximumInterval` % (deep shadows, where
    /// noise dwarfs the threshold); the subtitle says how many.
    public static func bias(_ report: ValidationReport, maximumInterval: Double = 0.5) -> XYPlot {
        let unclipped = report.patches.filter { $0.clippedFraction == 0 && $0.truth.allSatisfy { $0 > 0 } }
        func interval(_ p: PatchValidation, _ c: Int) -> Double { 100 * 1.96 * p.standardError[c] / p.truth[c] }
        let patches = unclipped.filter { p in (0..<3).allSatisfy { interval(p, $0) <= maximumInterval } }
        let series = ["R", "G", "B"].enumerated().map { c, name in
            (name: name, points: patches.map { p -> (x: Double, y: Double, error: Double?) in
                (x: -p.stopsBelowWhite, y: 100 * p.relativeBias[c], error: interval(p, c))
            }.sorted { $0.x < $1.x })
        }
        let t = 100 * report.thresholds.meanBias
        var subtitle = "\(report.scene), \(report.layout)\(report.noise ? ", noisy" : ", noise-free"); bars: 95 % intervals of the mean; \(report.passed ? "all checks passed" : "some checks FAILED")"
        let left = unclipped.count - patches.count
        if left > 0 { subtitle += String(format: "; %d noisier patches (interval over ±%.2g %%) not drawn", left, maximumInterval) }
        return XYPlot(title: "Bias of patch means — \(URL(fileURLWithPath: report.capture).lastPathComponent)",
                      subtitle: subtitle,
                      xLabel: "patch luminance (EV relative to white)", yLabel: "relative bias (%)", series: series,
                      referenceLines: [(y: t, label: String(format: "+%.2g %%", t)), (y: -t, label: String(format: "−%.2g %%", t)), (y: 0, label: "0")],
                      connectPoints: false)
    }

    /// Measured noise variance against the NoiseProfile prediction per patch and channel
    /// (log–log); points on the diagonal agree. Nil without a prediction (noise-free capture).
    public static func noise(_ report: ValidationReport) -> XYPlot? {
        let patches = report.patches.filter { $0.predictedVariance != nil && $0.clippedFraction == 0 }
        guard !patches.isEmpty else { return nil }
        let series = ["R", "G", "B"].enumerated().map { c, name in
            (name: name, points: patches.compactMap { p -> (x: Double, y: Double, error: Double?)? in
                guard let v = p.varianceRatio?[c], v.isFinite else { return nil }
                // Standard error of a sample variance ratio: √(2/(n−1)) for Gaussian noise.
                return (x: -p.stopsBelowWhite, y: v, error: 1.96 * (2 / Double(max(p.pixels - 1, 1))).squareRoot() * v)
            }.sorted { $0.x < $1.x })
        }
        let t = report.thresholds.varianceRelative
        return XYPlot(title: "Noise variance: measured / NoiseProfile prediction — \(URL(fileURLWithPath: report.capture).lastPathComponent)",
                      subtitle: "per patch and channel; bars: 95 % sampling intervals of a variance",
                      xLabel: "patch luminance (EV relative to white)", yLabel: "measured / predicted variance", series: series,
                      referenceLines: [(y: 1 + t, label: String(format: "+%.0f %%", 100 * t)), (y: 1 - t, label: String(format: "−%.0f %%", 100 * t)), (y: 1, label: "1")],
                      connectPoints: false)
    }
}

extension ValidationCharts {
    /// Draws the bias chart to `path` (.png, .svg or .pdf) and, for a noisy capture, the noise
    /// chart to `<name>-noise.<ext>` beside it.
    /// - Throws: `AnalysisCharts.write`'s errors.
    public static func write(_ report: ValidationReport, to path: String) throws {
        let bias = bias(report)
        try AnalysisCharts.write({ PlotRenderer.render(bias, format: $0) }, to: path)
        guard let noise = noise(report) else { return }
        let url = URL(fileURLWithPath: path)
        let target = url.deletingPathExtension().path + "-noise." + url.pathExtension
        try AnalysisCharts.write({ PlotRenderer.render(noise, format: $0) }, to: target)
    }
}
