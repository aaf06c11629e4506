import Foundation

/// A histogram of one or more quantities over shared bins, e.g. R, G, B and luminance Y of
/// an image against stops relative to white.
///
/// Each series is drawn as a step outline (the luminance series, or a lone series, over a
/// faint fill of its colour); series
/// named after a quantity get its colour (R red, G green, B blue, Y near black), others the
/// colour-blind-safe categorical set. The clip level is a dashed magenta line labelled
/// "white (clipped above)" with the region above it lightly tinted. Counts that do not belong
/// in the bins (clipped, zero, negative, out of range) are listed in the side panel under
/// "Notes" rather than folded into the end bins.
public struct HistogramPlot: Sendable {
    /// Title, at the top left.
    public var title: String
    /// A line under the title (source, binning, exposure); nil = none.
    public var subtitle: String?
    /// Bin edges on the x axis, one more than the counts of each series: in EV (log₂ of the
    /// value, 0 = white) when `logarithmic`, else linear values.
    public var binEdges: [Double]
    /// Whether `binEdges` are in EV (ticks at every stop) rather than linear values.
    public var logarithmic: Bool
    /// One curve per quantity, drawn in order: e.g. ("R", counts), ("G", …), ("B", …), ("Y", …).
    public var series: [(name: String, counts: [Double])]
    /// Position of the clipping level (sensor white) on the x axis, drawn as a marked line; nil = none.
    public var clipLevel: Double?
    /// Lines for the side panel, label and value: e.g. ("clipped", "1 234 px (0.3 %)").
    public var notes: [(String, String)]
    /// Log scale on the y axis.
    public var logCounts: Bool
    /// Title of the x axis; nil = a default that names the unit.
    public var xLabel: String?
    /// Title of the y axis; nil = "pixels per bin".
    public var yLabel: String?

    /// A chart from its data; optional parts default to absent.
    public init(title: String, subtitle: String? = nil, binEdges: [Double], logarithmic: Bool = true,
                series: [(name: String, counts: [Double])], clipLevel: Double? = nil, notes: [(String, String)] = [],
                logCounts: Bool = false, xLabel: String? = nil, yLabel: String? = nil) {
        self.title = title
        self.subtitle = subtitle
        self.binEdges = binEdges
        self.logarithmic = logarithmic
        self.series = series
        self.clipLevel = clipLevel
        self.notes = notes
        self.logCounts = logCounts
        self.xLabel = xLabel
        self.yLabel = yLabel
    }
}

/// Where a chart with axes put its data: the plot area and the two axis mappings.
public struct ChartLayout: Sendable {
    /// The data area in pixels.
    public var plotArea: PlotRect
    /// x: axis coordinate → pixel column.
    public var x: AxisMapping
    /// y: axis coordinate → pixel row.
    public var y: AxisMapping
}

extension HistogramPlot {
    /// The chart's geometry at a given size (where bins and the clip level land).
    public func layout(width: Int = 960, height: Int = 540) -> ChartLayout {
        build(width: width, height: height).layout
    }

    /// The chart as drawing items, ready for `rasterize()` or `svg()`.
    public func drawing(width: Int = 960, height: Int = 540) -> Drawing {
        build(width: width, height: height).drawing
    }

    private var validEdges: [Double] {
        guard binEdges.count >= 2, binEdges.allSatisfy(\.isFinite),
              zip(binEdges, binEdges.dropFirst()).allSatisfy({ $0 < $1 }) else { return [] }
        return binEdges
    }

    private func build(width: Int, height: Int) -> (drawing: Drawing, layout: ChartLayout) {
        let edges = validEdges
        let xDomain = edges.isEmpty ? 0...1 : edges.first!...edges.last!
        let bins = max(0, edges.count - 1)
        let counts = series.map { Array($0.counts.prefix(bins)).map { $0.isFinite ? max(0, $0) : 0 } }
        let maxCount = counts.flatMap { $0 }.max() ?? 0
        let minPositive = counts.flatMap { $0 }.filter { $0 > 0 }.min() ?? 1

        // y domain and ticks (the tick count depends only on the height, known now).
        let approximatePlotHeight = Double(height) - 140
        let yTarget = max(2, Int(approximatePlotHeight / 55))
        let yDomain: ClosedRange<Double>
        let yTicks: [AxisTick]
        if logCounts {
            let lo = log10(min(1, minPositive)) - 0.15
            let hi = max(lo + 1, log10(max(1, maxCount)) + 0.2)
            yDomain = lo...hi
            yTicks = AxisTicks.logarithmic(yDomain, maximumLabels: yTarget)
        } else {
            yDomain = maxCount > 0 ? AxisTicks.niceRange(0...maxCount * 1.04, target: yTarget) : 0...1
            let step = AxisTicks.niceStep(span: yDomain.upperBound, target: yTarget)
            let ticks = AxisTicks.linear(yDomain, target: yTarget)
            let largest = ticks.last?.coordinate ?? yDomain.upperBound
            yTicks = ticks.map { AxisTick($0.coordinate, AxisFormat.count($0.coordinate, step: step, largest: largest)) }
        }
        let yLabelWidth = Double(yTicks.compactMap { $0.label.map { PlotFont.width(of: $0) } }.max() ?? 10)

        // Side panel: legend, clip marker, notes.
        var entries: [PanelEntry] = []
        for (i, s) in series.enumerated() {
            entries.append(PanelEntry(label: s.name, kind: .line(seriesStyle(s.name, i), marker: nil,
                                                                fill: isFilled(i) ? fillColor(i).withOpacity(0.16) : nil)))
        }
        if clipLevel != nil {
            entries.append(PanelEntry(label: "white (clip level)", kind: .line(clipStyle, marker: nil, fill: nil)))
        }
        if !notes.isEmpty {
            entries.append(PanelEntry(label: "", kind: .gap))
            entries.append(PanelEntry(label: "Notes", kind: .heading))
            for (label, value) in notes { entries.append(PanelEntry(label: label, kind: .note(value: value))) }
        }
        let panelWidth = entries.isEmpty ? 0 : max(110, CartesianFrame.panelWidth(entries, limit: Double(width) * 0.3))
        let frame = CartesianFrame(width: width, height: height, title: title, subtitle: subtitle, yLabelWidth: yLabelWidth,
                                   panelWidth: panelWidth)
        let plot = frame.plot
        let x = AxisMapping(domain: xDomain, start: plot.minX, end: plot.maxX)
        let y = AxisMapping(domain: yDomain, start: plot.maxY, end: plot.minY, logarithmic: logCounts)

        let xTicks: [AxisTick]
        if logarithmic {
            let widest = Double(max(PlotFont.width(of: AxisFormat.stops(xDomain.lowerBound.rounded(.up))),
                                    PlotFont.width(of: AxisFormat.stops(xDomain.upperBound.rounded(.down)))))
            let span = xDomain.upperBound - xDomain.lowerBound
            xTicks = AxisTicks.stops(xDomain, pixelsPerStop: plot.width / max(1e-9, span), minimumSpacing: widest + 14)
        } else {
            xTicks = AxisTicks.linear(xDomain, target: max(2, Int(plot.width / 90)))
        }

        var d = Drawing(width: width, height: height, title: title)
        frame.drawGrid(x: x, xTicks: xTicks, y: y, yTicks: yTicks, into: &d)
        d.add(.clip(plot))
        let clipX = clipLevel.map { x.pixel(coordinate: $0) }
        if let clipX, clipX < plot.maxX {
            let from = max(plot.minX, clipX)
            d.add(.rect(PlotRect(x: from, y: plot.minY, width: plot.maxX - from, height: plot.height),
                        fill: PlotPalette.clipLine.withOpacity(0.06)))
        }
        // Step outlines, with their fills under all outlines.
        var outlines: [[PlotPoint]] = []
        for c in counts {
            var points: [PlotPoint] = []
            let base = plot.maxY + 2
            func row(_ count: Double) -> Double {
                guard let p = y.pixel(count) else { return base }
                return min(base, p)
            }
            // Vertices on pixel centres keep the 1.5-pixel steps sharp.
            func column(_ edge: Int) -> Double { x.pixel(coordinate: edges[edge]).rounded(.down) + 0.5 }
            if !c.isEmpty {
                points.append(PlotPoint(column(0), base))
                for (i, count) in c.enumerated() {
                    let r = row(count).rounded(.down) + 0.5
                    points.append(PlotPoint(column(i), r))
                    points.append(PlotPoint(column(i + 1), r))
                }
                points.append(PlotPoint(column(c.count), base))
            }
            outlines.append(Self.simplified(points))
        }
        for (i, points) in outlines.enumerated() where points.count >= 3 && isFilled(i) {
            d.add(.polygon(points, fill: fillColor(i), role: "series-fill"))
        }
        for (i, points) in outlines.enumerated() where points.count >= 2 {
            d.add(.line(points, seriesStyle(series[i].name, i), role: "series"))
        }
        if let clipX, clipX >= plot.minX - 1, clipX <= plot.maxX + 1 {
            let cx = clipX.rounded(.down) + 0.5
            d.add(.line([PlotPoint(cx, plot.minY), PlotPoint(cx, plot.maxY)], clipStyle, role: "clip-level"))
        }
        d.add(.clip(nil))
        if let clipX, clipX >= plot.minX - 1, clipX <= plot.maxX + 1 {
            let cx = clipX.rounded(.down) + 0.5
            let text = "white (clipped above)"
            let textWidth = PlotFont.width(of: text)
            let leftSide = cx - plot.minX > textWidth + 12
            d.add(.text(text, at: PlotPoint(leftSide ? cx - 7 : cx + 7, plot.minY + 8),
                        TextStyle(color: PlotPalette.clipLine, horizontal: leftSide ? .end : .start, vertical: .capTop,
                                  halo: RGBColor.white.withOpacity(0.9))))
        }
        if edges.isEmpty || series.isEmpty {
            d.add(.text(edges.isEmpty ? "no bins" : "no data", at: PlotPoint(plot.minX + plot.width / 2, plot.minY + plot.height / 2),
                        TextStyle(color: PlotPalette.mutedText, scale: 2, horizontal: .middle, vertical: .capMiddle)))
        }
        let xTitle = xLabel ?? (logarithmic ? "stops relative to white (EV = log2 of the value; 0 EV = white)" : "value (1 = white)")
        let yTitle = yLabel ?? (logCounts ? "pixels per bin (log scale)" : "pixels per bin")
        frame.drawAxes(x: x, xTicks: xTicks, xTitle: xTitle, y: y, yTicks: yTicks, yTitle: yTitle, into: &d)
        frame.drawTitles(into: &d)
        frame.drawPanel(entries, into: &d)
        return (d, ChartLayout(plotArea: plot, x: x, y: y))
    }

    private var clipStyle: LineStyle {
        LineStyle(color: PlotPalette.clipLine, width: 1.5, dash: [6, 4])
    }

    /// Only the luminance series (or a lone series) is filled: several overlapping fills
    /// would mix into an unreadable grey.
    private func isFilled(_ index: Int) -> Bool {
        series.count == 1 || PlotPalette.quantityColor(series[index].name) == PlotPalette.quantityColor("Y")
    }

    private func fillColor(_ index: Int) -> RGBColor {
        seriesStyle(series[index].name, index).color.withOpacity(0.09)
    }

    private func seriesStyle(_ name: String, _ index: Int) -> LineStyle {
        let color = PlotPalette.seriesColors(series.map(\.name))[index]
        let luminance = PlotPalette.quantityColor(name) == PlotPalette.quantityColor("Y")
        return LineStyle(color: color, width: luminance ? 2 : 1.5)
    }

    /// Drops points that lie on the straight line through their neighbours (runs of equal
    /// counts), which keeps SVG paths short without changing the drawing.
    static func simplified(_ points: [PlotPoint]) -> [PlotPoint] {
        guard points.count > 2 else { return points }
        var out = [points[0]]
        for i in 1..<(points.count - 1) {
            let a = out.last!, b = points[i], c = points[i + 1]
            let cross = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
            if abs(cross) > 1e-9 || ((b - a) * (c - b)).sum() < 0 { out.append(b) }
        }
        out.append(points.last!)
        return out
    }
}
