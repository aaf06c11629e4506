import Analysis
import Foundation
import ImageCore
import Measuring
import Plots
import Studies

/// The study's E_v against time: each set's value with its 95 % interval, and each lower bound
/// (a pixel clipped in every frame) drawn as a bound — a bar from its 95 % low end to the value
/// and an arrow up — in a series of its own, so a chart never shows a bound as a measurement.
public enum StudyChart {
    /// Nil when no set has an E_v.
    public static func plot(_ records: [StudySetRecord]) -> XYPlot? {
        let rows = records.filter { $0.illuminance != nil }.sorted { $0.mid < $1.mid }
        guard let first = rows.first, case .success(let t0) = UTCTime.parse(iso: first.mid) else { return nil }
        let midnight = (t0.seconds / 86400).rounded(.down) * 86400
        let day = String(UTCTime(seconds: midnight).iso8601.prefix(10))
        func hours(_ r: StudySetRecord) -> Double {
            guard case .success(let t) = UTCTime.parse(iso: r.mid) else { return .nan }
            return (t.seconds - midnight) / 3600
        }
        let values = rows.filter { $0.illuminanceKind != ResultKind.lowerBound.rawValue }
        let bounds = rows.filter { $0.illuminanceKind == ResultKind.lowerBound.rawValue }
        let all = rows.compactMap(\.illuminance).filter { $0 > 0 }
        let logarithmic = (all.max() ?? 1) / max(all.min() ?? 1, 1e-300) > 20
        var plot = XYPlot(title: "E_v per bracket set", subtitle: "\(rows.count) sets; bars: 95 % intervals; arrows: lower bounds (clipped in every frame)",
                          xLabel: "hours (UTC) from \(day) 00:00", yLabel: "E_v (lx)",
                          series: [("E_v (95 % interval)", values.map { (hours($0), $0.illuminance!, nil) }),
                                   ("E_v lower bound (≥)", bounds.map { (hours($0), $0.illuminance!, nil) })],
                          logY: logarithmic, connectPoints: false)
        plot.intervals = [values.map { r in r.illuminanceLow95.map { XYPlot.Interval(low: $0, high: r.illuminanceHigh95) } },
                          bounds.map { r in XYPlot.Interval(low: r.illuminanceLow95 ?? r.illuminance!, high: nil) }]
        return plot
    }

    /// The chart written whole (PNG, SVG or PDF by the path's extension: `AnalysisCharts.write`);
    /// nothing without an E_v.
    public static func write(_ records: [StudySetRecord], to path: String) throws {
        guard let plot = plot(records) else { return }
        try AnalysisCharts.write({ PlotRenderer.render(plot, format: $0) }, to: path)
    }
}
