import Foundation
@testable import Plots
import Testing

/// Titles, notes and error bars that stay readable: nothing cut at the chart's edge, nothing
/// hidden behind another series.
@Suite struct ChartTextTests {
    static let longTitle = "a_very_long_file_name_from_the_field_campaign_2026_site_B_camera_3_bracket_17_exposure_0.dng — region the western sky above the ridge"

    /// Every text item that starts at its anchor ends inside the drawing; the title lines.
    static func check(_ d: Drawing, _ label: String) -> [String] {
        var titles: [String] = []
        for case .text(let text, let at, let style) in d.items where style.horizontal == .start && !style.rotated {
            let end = at.x + PlotFont.width(of: text, scale: style.scale, bold: style.bold)
            #expect(at.x >= 0 && end <= Double(d.width) + 0.5, "\(label): “\(text)” spans \(at.x)…\(end) of \(d.width)")
            if style.scale == 2 && style.bold { titles.append(text) }
        }
        return titles
    }

    @Test func longTitlesWrapInsideTheChart() {
        let histogram = HistogramPlot(title: Self.longTitle, subtitle: Self.longTitle, binEdges: [-2, -1, 0], logarithmic: true,
                                      series: [("Y", [3, 4])], clipLevel: 0)
        let xy = XYPlot(title: Self.longTitle, subtitle: Self.longTitle, xLabel: "x", yLabel: "y", series: [("a", [(0, 1, nil), (1, 2, nil)])])
        let map = EVMap(title: Self.longTitle, width: 64, height: 48, luminance: [Float](repeating: 0.25, count: 64 * 48),
                        regions: [(name: String(repeating: "long region name ", count: 6), outline: [SIMD2(2, 2), SIMD2(30, 2), SIMD2(30, 20)])])
        for (label, d) in [("histogram", histogram.drawing()), ("xy", xy.drawing()), ("ev map", map.drawing())] {
            let titles = Self.check(d, label)
            #expect(titles.count == 2, "\(label): the title in two lines: \(titles)")
            #expect(titles.joined().hasPrefix("a_very_long_file_name"), "\(label)")
        }
        // A title that fits stays one line, whole.
        let short = HistogramPlot(title: "sunset.dng — region sky", binEdges: [-2, -1, 0], logarithmic: true, series: [("Y", [3, 4])])
        #expect(Self.check(short.drawing(), "short") == ["sunset.dng — region sky"])
    }

    @Test func wrapBreaksAtSpacesAndShortensTheLastLine() {
        let words = CartesianFrame.wrap("alpha beta gamma delta epsilon", width: PlotFont.width(of: "alpha beta gamma"))
        #expect(words == ["alpha beta gamma", "delta epsilon"])
        let long = CartesianFrame.wrap(String(repeating: "x", count: 400), width: 200)
        #expect(long.count == 2 && long[1].hasSuffix("…") && long.allSatisfy { PlotFont.width(of: $0) <= 200 })
    }

    /// R, G and B bars at one x are drawn side by side, each on its own marker.
    @Test func errorBarsOfSeriesSharingXStandApart() {
        let plot = XYPlot(title: "Bias", xLabel: "EV", yLabel: "%",
                          series: ["R", "G", "B"].map { ($0, [(x: -3.0, y: 0.1, error: 0.3), (x: -1.0, y: 0.0, error: 0.2)]) },
                          connectPoints: false)
        var bars: [Double] = []
        for case .line(let points, _, _, let role) in plot.drawing().items where role == "error-bar" { bars.append(points[0].x) }
        #expect(bars.count == 6)
        let left = bars.filter { $0 < bars.max()! - 50 }.sorted()
        #expect(left.count == 3 && zip(left, left.dropFirst()).allSatisfy { $1 - $0 >= 6 }, "\(bars)")
        let centre = plot.layout().x.pixel(-3)!
        #expect(abs(left.reduce(0, +) / 3 - centre) < 0.01, "the bars straddle the true x")
        // One series with bars: drawn at the true x.
        let single = XYPlot(title: "One", xLabel: "x", yLabel: "y", series: [("R", [(x: 1, y: 1, error: 0.5)]), ("G", [(x: 1, y: 2, error: nil)])])
        for case .line(let points, _, _, let role) in single.drawing().items where role == "error-bar" {
            #expect(points[0].x == single.layout().x.pixel(1)!)
        }
    }
}
