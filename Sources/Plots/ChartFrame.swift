import Foundation

/// Marker shapes for XY series, in the order series use them.
public enum MarkerShape: Int, Sendable, CaseIterable {
    /// Shapes by series index: ●, ■, ▲, ◆, ▼.
    case circle, square, triangle, diamond, invertedTriangle

    /// The outline of the marker centred at `c` with "radius" `r`, as a polygon (nil = circle).
    func polygon(at c: PlotPoint, radius r: Double) -> [PlotPoint]? {
        switch self {
        case .circle: return nil
        case .square:
            let h = r * 0.86
            return [c + PlotPoint(-h, -h), c + PlotPoint(h, -h), c + PlotPoint(h, h), c + PlotPoint(-h, h)]
        case .triangle:
            let h = r * 1.2
            return [c + PlotPoint(0, -h), c + PlotPoint(h * 0.94, h * 0.62), c + PlotPoint(-h * 0.94, h * 0.62)]
        case .invertedTriangle:
            let h = r * 1.2
            return [c + PlotPoint(0, h), c + PlotPoint(h * 0.94, -h * 0.62), c + PlotPoint(-h * 0.94, -h * 0.62)]
        case .diamond:
            let h = r * 1.22
            return [c + PlotPoint(0, -h), c + PlotPoint(h, 0), c + PlotPoint(0, h), c + PlotPoint(-h, 0)]
        }
    }

    /// Adds the marker: filled with `color`, outlined in white so overlapping markers stay apart.
    func draw(at c: PlotPoint, radius r: Double, color: RGBColor, into drawing: inout Drawing, role: String? = nil) {
        let outline = LineStyle(color: .white, width: 1.25)
        if let points = polygon(at: c, radius: r) {
            drawing.add(.polygon(points, fill: color, role: role))
            drawing.add(.line(points, outline, closed: true))
        } else {
            drawing.add(.circle(center: c, radius: r, fill: color, stroke: outline))
        }
    }
}

/// One row of a chart's side panel.
struct PanelEntry {
    enum Kind {
        /// A line sample (optionally with a marker and a translucent fill under it).
        case line(LineStyle, marker: MarkerShape?, fill: RGBColor?)
        /// A filled square (optionally outlined).
        case swatch(RGBColor, outline: RGBColor?)
        /// A bold heading.
        case heading
        /// A label with its value on the next line (several lines when it holds "\n").
        case note(value: String)
        /// Vertical space.
        case gap
    }

    var label: String
    var kind: Kind
}

/// Layout and furniture shared by the charts with axes (histograms, XY plots): title block,
/// plot area, axes with ticks, grid and titles, and a side panel for the legend and notes.
struct CartesianFrame {
    static let margin = 16.0
    static let rowHeight = 18.0
    static let swatchLength = 24.0

    let width: Int
    let height: Int
    /// The data area.
    let plot: PlotRect
    /// Left edge and width of the side panel (nil = no panel).
    let panel: (x: Double, width: Double)?
    let titleBaseline: Double
    let subtitleBaseline: Double?
    /// The title in one or two lines and the subtitle, each within the chart's width.
    let titleLines: [String]
    let subtitle: String?

    /// Baseline to baseline of a title's lines (scale 2).
    static let titleLineHeight = 26.0

    /// Lays out a chart: the title block at the top (the title wrapped to two lines and
    /// shortened with "…" beyond them, so it is never cut at the edge), room for y tick labels
    /// `yLabelWidth` wide and a rotated y title on the left, x tick labels and the x title
    /// below, and the side panel `panelWidth` wide on the right (0 = none).
    init(width: Int, height: Int, title: String, subtitle: String?, yLabelWidth: Double, panelWidth: Double) {
        self.width = width
        self.height = height
        let m = Self.margin
        let left = (m + 14 + 10 + yLabelWidth + 9).rounded()
        // The titles start above the plot's left edge.
        let available = Double(width) - left - m
        titleLines = Self.wrap(title, width: available, scale: 2, bold: true)
        self.subtitle = subtitle.map { Self.fit($0, width: available) }
        titleBaseline = (m + PlotFont.capHeight(scale: 2)).rounded()
        let lastTitleLine = titleBaseline + Self.titleLineHeight * Double(titleLines.count - 1)
        subtitleBaseline = subtitle != nil ? lastTitleLine + 20 : nil
        let top = (subtitleBaseline ?? lastTitleLine) + 24
        let bottom = Double(height) - m - 38
        let right: Double
        if panelWidth > 0 {
            right = (Double(width) - m - panelWidth - 22).rounded()
            panel = (right + 22, panelWidth)
        } else {
            right = Double(width) - m - 8
            panel = nil
        }
        plot = PlotRect(x: left, y: top.rounded(), width: max(10, right - left), height: max(10, (bottom - top).rounded()))
    }

    /// Width the panel needs for `entries`, at most `limit`.
    static func panelWidth(_ entries: [PanelEntry], limit: Double) -> Double {
        var w = 0.0
        for e in entries {
            switch e.kind {
            case .line, .swatch: w = max(w, swatchLength + 8 + PlotFont.width(of: e.label))
            case .heading: w = max(w, PlotFont.width(of: e.label, bold: true))
            case .note(let value):
                let lines = value.split(separator: "\n").map { PlotFont.width(of: String($0), bold: true) + 8 }
                w = max(w, PlotFont.width(of: e.label), lines.max() ?? 0)
            case .gap: break
            }
        }
        return min(limit, w.rounded(.up))
    }

    /// The height of an entry's drawn rows (a note: its label and each line of its value).
    static func drawnHeight(_ e: PanelEntry) -> Double {
        guard case .note(let value) = e.kind else { return rowHeight }
        return 15 * Double(value.split(separator: "\n", omittingEmptySubsequences: false).count) + rowHeight
    }

    /// `text` shortened with "…" to fit `width` pixels at `scale`.
    static func fit(_ text: String, width: Double, scale: Int = 1, bold: Bool = false) -> String {
        if PlotFont.width(of: text, scale: scale, bold: bold) <= width { return text }
        var s = text
        while !s.isEmpty && PlotFont.width(of: s + "…", scale: scale, bold: bold) > width { s.removeLast() }
        return s + "…"
    }

    /// `text` in at most `maxLines` lines no wider than `width` pixels at `scale`: broken at
    /// the last space that fits, or inside a word (a long file name) where none does; the last
    /// line is shortened with "…" when text is left over.
    static func wrap(_ text: String, width: Double, scale: Int = 1, bold: Bool = false, maxLines: Int = 2) -> [String] {
        func fits(_ t: Substring) -> Bool { PlotFont.width(of: String(t), scale: scale, bold: bold) <= width }
        var lines: [String] = []
        var rest = Substring(text)
        while lines.count < maxLines - 1 && !fits(rest) {
            // The longest prefix that fits (at least one character), by bisection.
            var lo = 1, hi = rest.count
            while hi - lo > 1 {
                let mid = (lo + hi) / 2
                if fits(rest.prefix(mid)) { lo = mid } else { hi = mid }
            }
            var cut = rest.index(rest.startIndex, offsetBy: lo)
            // Back to the last space unless the prefix ends a word.
            if rest[cut] != " ", let space = rest[..<cut].lastIndex(of: " "), space > rest.startIndex { cut = space }
            lines.append(rest[..<cut].trimmingCharacters(in: .whitespaces))
            rest = rest[cut...].drop { $0 == " " }
        }
        lines.append(fit(String(rest), width: width, scale: scale, bold: bold))
        return lines
    }

    /// Adds the title and subtitle.
    func drawTitles(into d: inout Drawing) {
        for (i, line) in titleLines.enumerated() {
            d.add(.text(line, at: PlotPoint(plot.minX, titleBaseline + Self.titleLineHeight * Double(i)),
                        TextStyle(color: PlotPalette.text, scale: 2, bold: true)))
        }
        if let subtitle, let y = subtitleBaseline {
            d.add(.text(subtitle, at: PlotPoint(plot.minX, y), TextStyle(color: PlotPalette.mutedText)))
        }
    }

    /// Adds grid lines at the labelled ticks (behind the data).
    func drawGrid(x: AxisMapping, xTicks: [AxisTick], y: AxisMapping, yTicks: [AxisTick], into d: inout Drawing) {
        for t in xTicks where t.label != nil {
            let p = x.pixel(coordinate: t.coordinate).rounded(.down)
            guard p >= plot.minX, p < plot.maxX else { continue }
            d.add(.rect(PlotRect(x: p, y: plot.minY, width: 1, height: plot.height), fill: PlotPalette.grid))
        }
        for t in yTicks where t.label != nil {
            let p = y.pixel(coordinate: t.coordinate).rounded(.down)
            guard p >= plot.minY, p < plot.maxY else { continue }
            d.add(.rect(PlotRect(x: plot.minX, y: p, width: plot.width, height: 1), fill: PlotPalette.grid))
        }
    }

    /// Adds the axis lines, tick marks, tick labels and axis titles (over the data).
    func drawAxes(x: AxisMapping, xTicks: [AxisTick], xTitle: String, y: AxisMapping, yTicks: [AxisTick], yTitle: String,
                  into d: inout Drawing) {
        let axis = PlotPalette.axis
        d.add(.rect(PlotRect(x: plot.minX - 1, y: plot.minY, width: 1, height: plot.height + 1), fill: axis))
        d.add(.rect(PlotRect(x: plot.minX - 1, y: plot.maxY, width: plot.width + 1, height: 1), fill: axis))
        let label = TextStyle(color: PlotPalette.text, horizontal: .middle, vertical: .capTop)
        for t in xTicks {
            let p = x.pixel(coordinate: t.coordinate).rounded(.down)
            guard p >= plot.minX - 1, p <= plot.maxX else { continue }
            let length: Double = t.label == nil ? 3 : 5
            d.add(.rect(PlotRect(x: p, y: plot.maxY + 1, width: 1, height: length), fill: axis))
            if let text = t.label {
                d.add(.text(text, at: PlotPoint(p + 0.5, plot.maxY + 10), label))
            }
        }
        let yLabel = TextStyle(color: PlotPalette.text, horizontal: .end, vertical: .capMiddle)
        for t in yTicks {
            let p = y.pixel(coordinate: t.coordinate).rounded(.down)
            guard p >= plot.minY - 1, p <= plot.maxY else { continue }
            let length: Double = t.label == nil ? 3 : 5
            d.add(.rect(PlotRect(x: plot.minX - 1 - length, y: p, width: length, height: 1), fill: axis))
            if let text = t.label {
                d.add(.text(text, at: PlotPoint(plot.minX - 9, p + 0.5), yLabel))
            }
        }
        let titleStyle = TextStyle(color: PlotPalette.mutedText, horizontal: .middle, vertical: .baseline)
        d.add(.text(Self.fit(xTitle, width: plot.width), at: PlotPoint(plot.minX + plot.width / 2, plot.maxY + 37), titleStyle))
        var rotated = titleStyle
        rotated.rotated = true
        rotated.vertical = .capMiddle
        d.add(.text(Self.fit(yTitle, width: plot.height), at: PlotPoint(Self.margin + 6, plot.minY + plot.height / 2), rotated))
    }

    /// Adds the side panel entries from the top of the plot area down.
    func drawPanel(_ entries: [PanelEntry], into d: inout Drawing) {
        guard let panel else { return }
        var y = plot.minY + 4
        let textX = panel.x + Self.swatchLength + 8
        for e in entries {
            guard y + Self.drawnHeight(e) <= plot.maxY + 12 else {
                // Say that something is left out rather than cut it silently.
                d.add(.text("… (more than fits)", at: PlotPoint(panel.x, y), TextStyle(color: PlotPalette.mutedText, vertical: .capTop)))
                break
            }
            let mid = y + PlotFont.capHeight(scale: 1) / 2
            switch e.kind {
            case .line(let style, let marker, let fill):
                if let fill {
                    d.add(.rect(PlotRect(x: panel.x, y: mid - 1, width: Self.swatchLength, height: 7), fill: fill))
                }
                let ly = mid.rounded(.down) + 0.5
                d.add(.line([PlotPoint(panel.x, ly), PlotPoint(panel.x + Self.swatchLength, ly)], style))
                marker?.draw(at: PlotPoint(panel.x + Self.swatchLength / 2, ly), radius: 4, color: style.color, into: &d)
                d.add(.text(Self.fit(e.label, width: panel.width - Self.swatchLength - 8), at: PlotPoint(textX, y),
                            TextStyle(vertical: .capTop)))
                y += Self.rowHeight
            case .swatch(let color, let outline):
                let box = PlotRect(x: panel.x + 6, y: y - 1, width: 12, height: 11)
                d.add(.rect(box, fill: color))
                if let outline {
                    d.add(.line([PlotPoint(box.minX + 0.5, box.minY + 0.5), PlotPoint(box.maxX - 0.5, box.minY + 0.5),
                                 PlotPoint(box.maxX - 0.5, box.maxY - 0.5), PlotPoint(box.minX + 0.5, box.maxY - 0.5)],
                                LineStyle(color: outline), closed: true))
                }
                d.add(.text(Self.fit(e.label, width: panel.width - Self.swatchLength - 8), at: PlotPoint(textX, y),
                            TextStyle(vertical: .capTop)))
                y += Self.rowHeight
            case .heading:
                d.add(.text(Self.fit(e.label, width: panel.width, bold: true), at: PlotPoint(panel.x, y),
                            TextStyle(bold: true, vertical: .capTop)))
                y += Self.rowHeight + 2
            case .note(let value):
                d.add(.text(Self.fit(e.label, width: panel.width), at: PlotPoint(panel.x, y),
                            TextStyle(color: PlotPalette.mutedText, vertical: .capTop)))
                for line in value.split(separator: "\n", omittingEmptySubsequences: false) {
                    d.add(.text(Self.fit(String(line), width: panel.width - 8, bold: true), at: PlotPoint(panel.x + 8, y + 15),
                                TextStyle(bold: true, vertical: .capTop)))
                    y += 15
                }
                y += Self.rowHeight + 4
            case .gap:
                y += Self.rowHeight / 2
            }
        }
    }
}
