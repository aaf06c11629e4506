import Analysis
import Foundation
import ImageCore
import Measuring
import Reporting
import Plots
import Studies

/// A study's quantity against time — E_v or DGP: each set's value with its 95 % interval, and
/// each lower bound (a pixel clipped in every frame) drawn as a bound — a bar from its 95 % low
/// end to the value and an arrow up — in a series of its own, so a chart never shows a bound as
/// a measurement.
public enum StudyChart {
    /// What a chart draws of each set: its value, interval ends and kind.
    public struct Quantity: Sendable {
        let name: String, units: String, title: String
        let pick: @Sendable (StudySetRecord) -> (value: Double, low: Double?, high: Double?, kind: String)?
        /// Whether a wide range is drawn on a logarithmic axis.
        let logarithmicWhenWide: Bool

        public static let illuminance = Quantity(name: "E_v", units: "lx", title: "E_v per bracket set", pick: { r in
            r.illuminance.map { ($0, r.illuminanceLow95, r.illuminanceHigh95, r.illuminanceKind ?? "") }
        }, logarithmicWhenWide: true)

        public static let glareProbability = Quantity(name: "DGP", units: "1", title: "Daylight glare probability per bracket set", pick: { r in
            r.glare.map { g in (g.dgp.value, g.dgp.low95, g.dgp.high95, g.dgp.kind.rawValue) }
        }, logarithmicWhenWide: false)
    }

    /// Nil when no set has the quantity.
    public static func plot(_ records: [StudySetRecord], _ quantity: Quantity = .illuminance) -> XYPlot? {
        let rows = records.compactMap { r in quantity.pick(r).map { (r, $0) } }.sorted { $0.0.mid < $1.0.mid }
        guard let first = rows.first, case .success(let t0) = UTCTime.parse(iso: first.0.mid) else { return nil }
        let midnight = (t0.seconds / 86400).rounded(.down) * 86400
        let day = String(UTCTime(seconds: midnight).iso8601.prefix(10))
        func hours(_ r: StudySetRecord) -> Double {
            guard case .success(let t) = UTCTime.parse(iso: r.mid) else { return .nan }
            return (t.seconds - midnight) / 3600
        }
        let bound = ResultKind.lowerBound.rawValue
        let values = rows.filter { $0.1.kind != bound }, bounds = rows.filter { $0.1.kind == bound }
        let all = rows.map(\.1.value).filter { $0 > 0 }
        let logarithmic = quantity.logarithmicWhenWide && (all.max() ?? 1) / max(all.min() ?? 1, 1e-300) > 20
        let n = quantity.name
        var plot = XYPlot(title: quantity.title, subtitle: "\(rows.count) sets; bars: 95 % intervals; arrows: lower bounds (clipped in every frame)",
                          xLabel: "hours (UTC) from \(day) 00:00", yLabel: quantity.units == "1" ? n : "\(n) (\(quantity.units))",
                          series: [("\(n) (95 % interval)", values.map { (hours($0.0), $0.1.value, nil) }),
                                   ("\(n) lower bound (≥)", bounds.map { (hours($0.0), $0.1.value, nil) })],
                          logY: logarithmic, connectPoints: false)
        plot.intervals = [values.map { v in v.1.low.map { XYPlot.Interval(low: $0, high: v.1.high) } },
                          bounds.map { b in XYPlot.Interval(low: b.1.low ?? b.1.value, high: nil) }]
        return plot
    }

    /// The chart written whole (PNG, SVG or PDF by the path's extension: `AnalysisCharts.write`);
    /// nothing when no set has the quantity.
    public static func write(_ records: [StudySetRecord], _ quantity: Quantity = .illuminance, to path: String) throws {
        guard let plot = plot(records, quantity) else { return }
        try AnalysisCharts.write({ PlotRenderer.render(plot, format: $0) }, to: path)
    }
}
