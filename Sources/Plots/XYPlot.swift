import Foundation

/// Points against a continuous x, with optional error bars and horizontal reference lines:
/// validation reports such as relative bias with ±95 % intervals, or measured/predicted noise
/// against stops.
///
/// Each series gets a colour from the colour-blind-safe categorical set (or its quantity
/// colour when named R, G, B or Y) and its own marker shape, so series stay apart in
/// greyscale too; points are joined by lines unless `connectPoints` is false. Error bars are
/// ± `error` around y, with caps; when several series have them, each series is drawn a few
/// pixels to the side of the true x so that bars at one x do not hide each other. Reference lines are dashed grey with their label at the
/// right end. Points with no place on a logarithmic axis (≤ 0) are left out. A point may
/// instead carry an `Interval` — an asymmetric 95 % interval, or a lower bound: a bar from its
/// low end up to the point and an arrow above it, since the value lies higher by an unknown
/// amount.
public struct XYPlot: Sendable {
    /// An interval about a point: `low`…`high`, or with `high` nil a lower bound (the point is
    /// at least its y; `low` is the bound's own 95 % low end).
    public struct Interval: Sendable, Equatable {
        public var low: Double
        public var high: Double?
        public init(low: Double, high: Double?) {
            self.low = low
            self.high = high
        }
    }

    /// Title, at the top left.
    public var title: String
    /// A line under the title (source, binning, exposure); nil = none.
    public var subtitle: String?
    /// Title of the x axis.
    public var xLabel: String
    /// Title of the y axis.
    public var yLabel: String
    /// Series in drawing order; `error` is the half-length of the error bar (nil = none).
    public var series: [(name: String, points: [(x: Double, y: Double, error: Double?)])]
    /// Horizontal lines at a y value, labelled at their right end.
    public var referenceLines: [(y: Double, label: String)]
    /// Logarithmic (base 10) x axis.
    public var logX: Bool
    /// Logarithmic (base 10) y axis.
    public var logY: Bool
    /// Join consecutive points of a series with lines.
    public var connectPoints: Bool
    /// Per series, per point (parallel to `series`), its interval or bound; nil = none. A
    /// series whose list does not match its points is drawn without.
    public var intervals: [[Interval?]] = []

    /// A chart from its data; optional parts default to absent.
    public init(title: String, subtitle: String? = nil, xLabel: String, yLabel: String,
                series: [(name: String, points: [(x: Double, y: Double, error: Double?)])],
                referenceLines: [(y: Double, label: String)] = [], logX: Bool = false, logY: Bool = false,
                connectPoints: Bool = true) {
        self.title = title
        self.subtitle = subtitle
        self.xLabel = xLabel
        self.yLabel = yLabel
        self.series = series
        self.referenceLines = referenceLines
        self.logX = logX
        self.logY = logY
        self.connectPoints = connectPoints
    }
}

extension XYPlot {
    /// The chart's geometry at a given size.
    public func layout(width: Int = 960, height: Int = 540) -> ChartLayout {
        build(width: width, height: height).layout
    }

    /// The chart as drawing items, ready for `rasterize()` or `svg()`.
    public func drawing(width: Int = 960, height: Int = 540) -> Drawing {
        build(width: width, height: height).drawing
    }

    /// The colour of series `index`.
    public func color(ofSeries index: Int) -> RGBColor {
        PlotPalette.seriesColors(series.map(\.name))[index]
    }

    private static func domain(_ values: [Double], logarithmic: Bool) -> ClosedRange<Double> {
        guard var lo = values.min(), var hi = values.max() else { return 0...1 }
        if hi - lo < 1e-12 {
            let pad = logarithmic ? 0.5 : max(1e-9, abs(lo) * 0.1, lo == 0 ? 1 : 0)
            lo -= pad
            hi += pad
        }
        let pad = (hi - lo) * 0.05
        return (lo - pad)...(hi + pad)
    }

    /// Point `k` of series `i`'s interval, when the series has a list as long as its points.
    func interval(series i: Int, point k: Int) -> Interval? {
        guard i < intervals.count, intervals[i].count == series[i].points.count else { return nil }
        return intervals[i][k]
    }

    /// An interval's bar with caps; a lower bound's bar from its low end to the point, capped
    /// below, and an arrow up from the point.
    private func drawInterval(_ interval: Interval, at point: PlotPoint, y: AxisMapping, plot: PlotRect, style: LineStyle, into d: inout Drawing) {
        let bottom = y.pixel(interval.low) ?? plot.maxY + 2
        let px = point.x
        d.add(.line([PlotPoint(px - 3, bottom), PlotPoint(px + 3, bottom)], style))
        if let high = interval.high {
            let top = y.pixel(high) ?? plot.minY
            d.add(.line([PlotPoint(px, bottom), PlotPoint(px, top)], style, role: "interval"))
            d.add(.line([PlotPoint(px - 3, top), PlotPoint(px + 3, top)], style))
        } else {
            let tip = max(plot.minY + 1, point.y - 18)
            d.add(.line([PlotPoint(px, bottom), PlotPoint(px, tip)], style, role: "lower-bound"))
            d.add(.line([PlotPoint(px - 4, tip + 5), PlotPoint(px, tip), PlotPoint(px + 4, tip + 5)], style, role: "lower-bound"))
        }
    }

    /// Horizontal pixel offsets per series, so that the error bars of series sharing x
    /// values (R, G and B of one patch) stand side by side instead of on top of each other:
    /// 8 px apart around the true x, less where the points are closer than that; all zero
    /// when fewer than two series have error bars.
    private func dodgeOffsets(x: AxisMapping) -> [Double] {
        let barred = series.filter { $0.points.contains { $0.error.map { $0.isFinite && $0 != 0 } ?? false } }.count
        guard barred >= 2 else { return series.map { _ in 0 } }
        let columns = Set(series.flatMap { $0.points.compactMap { x.pixel($0.x) } }).sorted()
        let closest = zip(columns, columns.dropFirst()).map { $1 - $0 }.filter { $0 > 0.5 }.min() ?? .infinity
        let step = min(8, closest / Double(series.count + 1))
        return series.indices.map { (Double($0) - Double(series.count - 1) / 2) * step }
    }

    private func build(width: Int, height: Int) -> (drawing: Drawing, layout: ChartLayout) {
        let xProbe = AxisMapping(domain: 0...1, start: 0, end: 1, logarithmic: logX)
        let yProbe = AxisMapping(domain: 0...1, start: 0, end: 1, logarithmic: logY)
        var xs: [Double] = [], ys: [Double] = []
        for s in series {
            for p in s.points {
                guard let x = xProbe.coordinate(p.x), let y = yProbe.coordinate(p.y) else { continue }
                xs.append(x)
                ys.append(y)
                if let e = p.error, e.isFinite {
                    if let lo = yProbe.coordinate(p.y - abs(e)) { ys.append(lo) }
                    if let hi = yProbe.coordinate(p.y + abs(e)) { ys.append(hi) }
                }
            }
        }
        for (i, s) in series.enumerated() {
            for (k, p) in s.points.enumerated() {
                guard let interval = self.interval(series: i, point: k), xProbe.coordinate(p.x) != nil else { continue }
                for v in [interval.low, interval.high].compactMap({ $0 }) { if let c = yProbe.coordinate(v) { ys.append(c) } }
            }
        }
        for r in referenceLines { if let y = yProbe.coordinate(r.y) { ys.append(y) } }
        let xDomain = Self.domain(xs, logarithmic: logX)
        let yDomain = Self.domain(ys, logarithmic: logY)

        let yTarget = max(2, Int((Double(height) - 140) / 55))
        let yTicks = logY ? AxisTicks.logarithmic(yDomain, maximumLabels: yTarget) : AxisTicks.linear(yDomain, target: yTarget)
        let yLabelWidth = Double(yTicks.compactMap { $0.label.map { PlotFont.width(of: $0) } }.max() ?? 10)

        var entries: [PanelEntry] = []
        for (i, s) in series.enumerated() {
            let marker = MarkerShape.allCases[i % MarkerShape.allCases.count]
            entries.append(PanelEntry(label: s.name, kind: .line(LineStyle(color: color(ofSeries: i), width: 1.75),
                                                                marker: marker, fill: nil)))
        }
        let panelWidth = entries.isEmpty ? 0 : CartesianFrame.panelWidth(entries, limit: Double(width) * 0.3)
        let frame = CartesianFrame(width: width, height: height, title: title, subtitle: subtitle, yLabelWidth: yLabelWidth,
                                   panelWidth: panelWidth)
        let plot = frame.plot
        let x = AxisMapping(domain: xDomain, start: plot.minX, end: plot.maxX, logarithmic: logX)
        let y = AxisMapping(domain: yDomain, start: plot.maxY, end: plot.minY, logarithmic: logY)
        let xTarget = max(2, Int(plot.width / 90))
        let xTicks = logX ? AxisTicks.logarithmic(xDomain, maximumLabels: xTarget) : AxisTicks.linear(xDomain, target: xTarget)

        var d = Drawing(width: width, height: height, title: title)
        frame.drawGrid(x: x, xTicks: xTicks, y: y, yTicks: yTicks, into: &d)
        d.add(.clip(plot))
        let referenceStyle = LineStyle(color: RGBColor(hex: 0x8A8A8A), width: 1.25, dash: [5, 4])
        for r in referenceLines {
            guard let py = y.pixel(r.y) else { continue }
            let row = py.rounded(.down) + 0.5
            d.add(.line([PlotPoint(plot.minX, row), PlotPoint(plot.maxX, row)], referenceStyle, role: "reference"))
        }
        // Lines and error bars of every series, then all markers on top.
        var markers: [(PlotPoint, Int)] = []
        let offsets = dodgeOffsets(x: x)
        for (i, s) in series.enumerated() {
            let style = LineStyle(color: color(ofSeries: i), width: 1.75)
            let barStyle = LineStyle(color: color(ofSeries: i).withOpacity(0.85), width: 1.25)
            var run: [PlotPoint] = []
            var runs: [[PlotPoint]] = []
            for (k, p) in s.points.enumerated() {
                guard let px = x.pixel(p.x).map({ $0 + offsets[i] }), let py = y.pixel(p.y) else {
                    if run.count >= 2 { runs.append(run) }
                    run = []
                    continue
                }
                let point = PlotPoint(px, py)
                run.append(point)
                markers.append((point, i))
                if let interval = interval(series: i, point: k) {
                    drawInterval(interval, at: point, y: y, plot: plot, style: barStyle, into: &d)
                }
                if let e = p.error, e.isFinite, e != 0 {
                    let top = y.pixel(p.y + abs(e)) ?? plot.minY
                    let bottom = y.pixel(p.y - abs(e)) ?? plot.maxY + 2
                    d.add(.line([PlotPoint(px, bottom), PlotPoint(px, top)], barStyle, role: "error-bar"))
                    for end in [top, bottom] {
                        d.add(.line([PlotPoint(px - 3, end), PlotPoint(px + 3, end)], barStyle))
                    }
                }
            }
            if run.count >= 2 { runs.append(run) }
            if connectPoints {
                for r in runs { d.add(.line(r, style, role: "series")) }
            }
        }
        for (point, i) in markers {
            MarkerShape.allCases[i % MarkerShape.allCases.count].draw(at: point, radius: 4, color: color(ofSeries: i), into: &d,
                                                                       role: "marker")
        }
        d.add(.clip(nil))
        // Reference labels at the right end above their line, else below it, else at the left end.
        var placed: [PlotRect] = []
        for r in referenceLines.sorted(by: { $0.y > $1.y }) {
            guard let py = y.pixel(r.y), py >= plot.minY, py <= plot.maxY else { continue }
            let row = py.rounded(.down)
            let w = PlotFont.width(of: r.label), h = PlotFont.capHeight(scale: 1)
            let candidates: [(PlotPoint, TextStyle.HorizontalAnchor, PlotRect)] = [
                (PlotPoint(plot.maxX - 6, row - 4), .end, PlotRect(x: plot.maxX - 6 - w, y: row - 4 - h, width: w, height: h)),
                (PlotPoint(plot.maxX - 6, row + 5 + h), .end, PlotRect(x: plot.maxX - 6 - w, y: row + 5, width: w, height: h)),
                (PlotPoint(plot.minX + 6, row - 4), .start, PlotRect(x: plot.minX + 6, y: row - 4 - h, width: w, height: h)),
                (PlotPoint(plot.minX + 6, row + 5 + h), .start, PlotRect(x: plot.minX + 6, y: row + 5, width: w, height: h)),
            ]
            let free = candidates.first { c in
                c.2.minY >= plot.minY && c.2.maxY <= plot.maxY && !placed.contains { $0.insetBy(-2).intersects(c.2) }
            } ?? candidates[0]
            placed.append(free.2)
            d.add(.text(r.label, at: free.0, TextStyle(color: PlotPalette.mutedText, horizontal: free.1, vertical: .baseline,
                                                       halo: RGBColor.white.withOpacity(0.9))))
        }
        if series.allSatisfy({ $0.points.isEmpty }) {
            d.add(.text("no data", at: PlotPoint(plot.minX + plot.width / 2, plot.minY + plot.height / 2),
                        TextStyle(color: PlotPalette.mutedText, scale: 2, horizontal: .middle, vertical: .capMiddle)))
        }
        frame.drawAxes(x: x, xTicks: xTicks, xTitle: xLabel, y: y, yTicks: yTicks, yTitle: yLabel, into: &d)
        frame.drawTitles(into: &d)
        frame.drawPanel(entries, into: &d)
        return (d, ChartLayout(plotArea: plot, x: x, y: y))
    }
}
