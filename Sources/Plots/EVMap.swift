import Foundation
import ImageCore

/// A false-colour map of luminance in stops relative to white, with a legend bar, clipped
/// pixels in magenta and labelled region outlines.
///
/// Each pixel shows log₂(Y) (EV; 0 EV = white, Y = 1) on `EVColorRamp`; values outside the
/// range take the end colours (the legend bar's end arrows say so), pixels with Y ≤ 0 (no
/// logarithm) are neutral grey. Images larger than `maxSize` are reduced by averaging
/// luminance in linear light over each output pixel's exact footprint, so the map shows
/// the mean light of each block; a block is marked clipped when any of its pixels is. Small
/// images are enlarged by a whole factor (each image pixel a square of map pixels) until
/// the longest side reaches at least 480 pixels, if `maxSize` allows.
public struct EVMap: Sendable {
    /// Title, at the top left.
    public var title: String
    /// A line under the title (source, quantity, exposure); nil = none.
    public var subtitle: String?
    /// The legend's label of 0 EV (Y = 1): "0 EV = white" for relative values.
    public var zeroLabel = "0 EV = white"
    /// For absolute values: the unit (e.g. "cd/m²"); the legend then labels its stops with
    /// the values themselves, 2^EV in that unit, as Radiance's falsecolor does.
    public var legendUnit: String?
    /// Width of the image in pixels.
    public var width: Int
    /// Height of the image in pixels.
    public var height: Int
    /// Luminance per pixel (linear, 1 = white), `width × height`, row by row from the top.
    public var luminance: [Float]
    /// EV range of the colour ramp; nil = automatic: from the 0.5th to the 99.9th
    /// percentile of log₂(Y), widened to whole stops, at least 4 and at most 20 stops.
    public var evRange: ClosedRange<Double>?
    /// Pixels to mark as clipped (magenta), `width × height`; nil = none.
    public var clipped: [Bool]?
    /// Regions to outline and label: closed polygons, vertices (x, y) in image pixel
    /// coordinates ((0, 0) = top-left corner of the first pixel); an empty name draws the
    /// outline without a label (e.g. the smaller parts of a region with several outlines).
    public var regions: [(name: String, outline: [SIMD2<Double>])]
    /// Longest side of the map in the rendered image, in pixels.
    public var maxSize: Int
    /// The luminance already reduced to the map's size (`LuminanceReduction`), used instead
    /// of `luminance` and `clipped` (then empty); its size must be `mapSize`'s.
    public var reducedLuminance: ReducedLuminance?

    /// A map of an image never held whole: its luminance reduced while the image passed by.
    public init(title: String, subtitle: String? = nil, reduced: ReducedLuminance, evRange: ClosedRange<Double>? = nil,
                regions: [(name: String, outline: [SIMD2<Double>])] = [], maxSize: Int = 1200) {
        self.init(title: title, subtitle: subtitle, width: reduced.sourceWidth, height: reduced.sourceHeight, luminance: [],
                  evRange: evRange, regions: regions, maxSize: maxSize)
        reducedLuminance = reduced
    }

    /// A map with an automatic EV range, no clip mask and no regions by default.
    public init(title: String, subtitle: String? = nil, width: Int, height: Int, luminance: [Float],
                evRange: ClosedRange<Double>? = nil, clipped: [Bool]? = nil,
                regions: [(name: String, outline: [SIMD2<Double>])] = [], maxSize: Int = 1200) {
        self.title = title
        self.subtitle = subtitle
        self.width = width
        self.height = height
        self.luminance = luminance
        self.evRange = evRange
        self.clipped = clipped
        self.regions = regions
        self.maxSize = maxSize
    }
}

/// Where an EV map put things.
public struct EVMapLayout: Sendable {
    /// Width of the whole rendered image.
    public var width: Int
    /// Height of the whole rendered image.
    public var height: Int
    /// The map in the rendered image.
    public var mapArea: PlotRect
    /// Rendered pixels per image pixel along each axis (< 1 when reduced, a whole number ≥ 1 when enlarged).
    public var pixelScale: Double
    /// Width of the map image itself (the reduced image when reduced, the original when enlarged).
    public var mapPixelsWide: Int
    /// Height of the map image itself.
    public var mapPixelsHigh: Int
    /// The EV range of the colour ramp.
    public var evRange: ClosedRange<Double>
    /// The legend bar (its top is `evRange.upperBound`).
    public var colorBar: PlotRect

    /// The rendered position of an image point (x, y) in image pixel coordinates.
    public func point(_ p: SIMD2<Double>) -> PlotPoint {
        PlotPoint(mapArea.minX + p.x * pixelScale, mapArea.minY + p.y * pixelScale)
    }
}

extension EVMap {
    /// Colour of pixels whose luminance has no logarithm (zero or negative).
    public static let noValueColor = RGBColor(hex: 0x9A9A9A)

    /// The map pixels (reduced when needed), EV range and layout, without drawing.
    struct Prepared {
        var layout: EVMapLayout
        var image: RasterImage
        var clippedCount: Int
        var noValueCount: Int
        var reduced: Bool
    }

    /// The image's geometry once rendered.
    public func layout() -> EVMapLayout {
        prepare().layout
    }

    /// The map as drawing items, ready for `rasterize()` or `svg()`.
    public func drawing() -> Drawing {
        draw(prepare())
    }

    /// The automatic EV range of luminance values (see `evRange`), leaving out values
    /// flagged in `excluding` (clipped pixels, shown in magenta whatever their value).
    public static func automaticRange(_ values: [Float], excluding: [Bool]? = nil) -> ClosedRange<Double> {
        // Histogram of log₂ in 1/16-stop bins from −64 to +32 EV.
        let binsPerStop = 16.0, lowest = -64.0
        let bins = Int(96 * binsPerStop)
        var histogram = [Int](repeating: 0, count: bins)
        var total = 0
        for (i, v) in values.enumerated() where v > 0 && v.isFinite && !(excluding?[i] ?? false) {
            let b = Int(((Double(log2(v)) - lowest) * binsPerStop).rounded(.down))
            histogram[min(bins - 1, max(0, b))] += 1
            total += 1
        }
        guard total > 0 else { return -8...0 }
        func percentile(_ p: Double) -> Double {
            let target = Int((p / 100 * Double(total)).rounded(.up))
            var running = 0
            for (i, c) in histogram.enumerated() {
                running += c
                if running >= max(1, target) { return lowest + (Double(i) + 0.5) / binsPerStop }
            }
            return lowest + Double(bins) / binsPerStop
        }
        var hi = (percentile(99.9) - 0.05).rounded(.up)
        var lo = (percentile(0.5) + 0.05).rounded(.down)
        if hi - lo < 4 {
            let extra = 4 - (hi - lo)
            hi += (extra / 2).rounded(.down)
            lo = hi - 4
        }
        if hi - lo > 20 { lo = hi - 20 }
        return lo...hi
    }

    /// The size of the map image for an image of `width × height` pixels: reduced so that
    /// its longest side is `maxSize` (at least 16) when it is longer, else the image's own.
    public static func mapSize(width: Int, height: Int, maxSize: Int) -> (width: Int, height: Int) {
        let w = max(1, width), h = max(1, height)
        let longest = max(w, h), limit = max(16, maxSize)
        guard longest > limit else { return (w, h) }
        let f = Double(limit) / Double(longest)
        return (max(1, Int((Double(w) * f).rounded())), max(1, Int((Double(h) * f).rounded())))
    }

    func prepare() -> Prepared {
        let w = max(0, width), h = max(0, height)
        let given = reducedLuminance.flatMap { r in
            w > 0 && h > 0 && r.sourceWidth == w && r.sourceHeight == h && r.values.count == r.width * r.height
                && Self.mapSize(width: w, height: h, maxSize: maxSize) == (r.width, r.height) ? r : nil
        }
        let valid = w > 0 && h > 0 && (given != nil || luminance.count == w * h)
        let sourceW = valid ? w : 1, sourceH = valid ? h : 1
        let source = valid && given == nil ? luminance : [0]
        let flags = valid && clipped?.count == w * h ? clipped : nil
        let longest = max(sourceW, sourceH)
        let limit = max(16, maxSize)

        var mapW = sourceW, mapH = sourceH
        var values = source
        var clippedMap = flags
        var scale = 1.0
        var reduced = false
        if let given, given.isReduced {
            (mapW, mapH) = (given.width, given.height)
            values = given.values
            clippedMap = given.clipped
            scale = Double(mapW) / Double(sourceW)
            reduced = true
        } else if longest > limit {
            (mapW, mapH) = Self.mapSize(width: sourceW, height: sourceH, maxSize: maxSize)
            values = AreaResample.average(source, width: sourceW, height: sourceH, targetWidth: mapW, targetHeight: mapH)
            clippedMap = flags.map { AreaResample.any($0, width: sourceW, height: sourceH, targetWidth: mapW, targetHeight: mapH) }
            scale = Double(mapW) / Double(sourceW)
            reduced = true
        } else {
            if let given {
                values = given.values
                clippedMap = given.clipped
            }
            let zoom = max(1, min(limit / longest, 480 / longest))
            scale = Double(zoom)
        }
        let range = evRange.flatMap { $0.upperBound > $0.lowerBound ? $0 : nil } ?? Self.automaticRange(values, excluding: clippedMap)

        // False colours, rows in parallel.
        var rgb = [UInt8](repeating: 0, count: mapW * mapH * 3)
        let lo = Float(range.lowerBound), inverseSpan = Float(1 / (range.upperBound - range.lowerBound))
        let last = Float(EVColorRamp.size - 1)
        let table = EVColorRamp.table
        let magenta = RGBColor.clipped, grey = Self.noValueColor
        values.withUnsafeBufferPointer { srcAll in
            rgb.withUnsafeMutableBufferPointer { dstAll in
                // Safe because each chunk reads the source and writes its own rows of the destination.
                nonisolated(unsafe) let src = srcAll, dst = dstAll
                let mask = clippedMap, rowLength = mapW
                Parallel.forEachChunk(count: mapH, minimumChunk: 32) { rows in
                    table.withUnsafeBufferPointer { ramp in
                        for y in rows {
                            for x in 0..<rowLength {
                                let i = y * rowLength + x
                                let v = src[i]
                                let o = 3 * i
                                if let mask, mask[i] {
                                    dst[o] = magenta.red
                                    dst[o + 1] = magenta.green
                                    dst[o + 2] = magenta.blue
                                } else if v > 0 && v.isFinite {
                                    let t = min(1, max(0, (log2(v) - lo) * inverseSpan))
                                    let k = 3 * Int((t * last).rounded())
                                    dst[o] = ramp[k]
                                    dst[o + 1] = ramp[k + 1]
                                    dst[o + 2] = ramp[k + 2]
                                } else {
                                    dst[o] = grey.red
                                    dst[o + 1] = grey.green
                                    dst[o + 2] = grey.blue
                                }
                            }
                        }
                    }
                }
            }
        }
        let clippedCount = given?.clippedCount ?? flags?.reduce(0) { $0 + ($1 ? 1 : 0) } ?? 0
        let noValueCount = given?.noValueCount ?? (valid ? luminance.reduce(0) { $0 + ($1 > 0 ? 0 : 1) } : 0)

        // Geometry: title block, map on the left, legend bar and its labels on the right.
        let m = 16.0
        let shownW = reduced ? Double(mapW) : Double(mapW) * scale
        let shownH = reduced ? Double(mapH) : Double(mapH) * scale
        let legendRows = 3.0
        let barHeight = max(120, shownH - legendRows * 18 - 28)
        let barX = m + shownW + 26
        let labelWidth = Double(legendLabels(range: range, barHeight: barHeight - 10).map { PlotFont.width(of: $0.1) }.max() ?? 40)
        let legendWidth = Double(["clipped (≥ white)", "Y ≤ 0 (no log)", "region"].map { PlotFont.width(of: $0) }.max()!) + 26
        var totalWidth = barX + 18 + 10 + max(labelWidth, legendWidth - 28) + m
        // A long title widens the chart up to 960 px, and wraps beyond.
        totalWidth = max(totalWidth, min(960, 2 * m + PlotFont.width(of: title, scale: 2, bold: true)))
        let titleLines = titleLines(width: Int(totalWidth.rounded(.up)))
        let titleBaseline = m + 18 + CartesianFrame.titleLineHeight * Double(titleLines.count - 1)
        let top = (subtitle == nil ? titleBaseline : titleBaseline + 20) + 18
        let mapArea = PlotRect(x: m, y: top, width: shownW, height: shownH)
        let bar = PlotRect(x: barX, y: top + 10, width: 18, height: barHeight - 10)
        let footnoteBaseline = max(mapArea.maxY, bar.maxY + legendRows * 18 + 20) + 22
        let totalHeight = footnoteBaseline + 6 + m
        let layout = EVMapLayout(width: Int(totalWidth.rounded(.up)), height: Int(totalHeight.rounded(.up)), mapArea: mapArea,
                                 pixelScale: reduced ? scale : Double(Int(scale)), mapPixelsWide: mapW, mapPixelsHigh: mapH,
                                 evRange: range, colorBar: bar)
        return Prepared(layout: layout, image: RasterImage(width: mapW, height: mapH, rgb: rgb),
                        clippedCount: clippedCount, noValueCount: noValueCount, reduced: reduced)
    }

    /// The title in the lines it takes in a chart `width` pixels wide (at most two, the second
    /// shortened with "…" when more is left).
    private func titleLines(width: Int) -> [String] {
        CartesianFrame.wrap(title, width: Double(width) - 32, scale: 2, bold: true)
    }

    /// Labelled stops of the legend bar: every stop, or every 2, 5, … when the bar is short.
    private func legendLabels(range: ClosedRange<Double>, barHeight: Double) -> [(Double, String)] {
        let span = range.upperBound - range.lowerBound
        let ticks = AxisTicks.stops(range, pixelsPerStop: barHeight / span, minimumSpacing: 17)
        if let unit = legendUnit {
            return ticks.compactMap { t in t.label.map { _ in (t.coordinate, Self.absoluteLabel(t.coordinate, unit: unit)) } }
        }
        return ticks.compactMap { t in t.label.map { _ in (t.coordinate, t.coordinate == 0 ? zeroLabel : AxisFormat.ev(t.coordinate)) } }
    }

    /// 2^ev in `unit`, with three significant digits ("0.125 cd/m²", "4096 cd/m²", "1.05e+06 cd/m²").
    static func absoluteLabel(_ ev: Double, unit: String) -> String {
        let v = pow(2, ev)
        let text = v >= 1e5 || v < 1e-3 ? String(format: "%.3g", v) : String(format: "%.4g", v)
        return text + " " + unit
    }

    private func draw(_ p: Prepared) -> Drawing {
        let layout = p.layout
        let map = layout.mapArea
        var d = Drawing(width: layout.width, height: layout.height, title: title)
        let m = 16.0
        let lines = titleLines(width: layout.width)
        for (i, line) in lines.enumerated() {
            d.add(.text(line, at: PlotPoint(m, m + 18 + CartesianFrame.titleLineHeight * Double(i)), TextStyle(scale: 2, bold: true)))
        }
        if let subtitle {
            let y = m + 38 + CartesianFrame.titleLineHeight * Double(lines.count - 1)
            d.add(.text(CartesianFrame.fit(subtitle, width: Double(layout.width) - 2 * m), at: PlotPoint(m, y),
                        TextStyle(color: PlotPalette.mutedText)))
        }
        d.add(.image(p.image, in: map))
        let frame = [PlotPoint(map.minX - 0.5, map.minY - 0.5), PlotPoint(map.maxX + 0.5, map.minY - 0.5),
                     PlotPoint(map.maxX + 0.5, map.maxY + 0.5), PlotPoint(map.minX - 0.5, map.maxY + 0.5)]
        d.add(.line(frame, LineStyle(color: PlotPalette.frame), closed: true))

        // Regions: white outline over a dark halo, name in white on a dark halo.
        d.add(.clip(map))
        let halo = LineStyle(color: RGBColor(hex: 0x101018, opacity: 0.6), width: 4.5)
        let outline = LineStyle(color: .white, width: 1.75)
        let outlines = regions.map { r in r.outline.map { layout.point($0) } }
        for points in outlines where points.count >= 2 { d.add(.line(points, halo, closed: true)) }
        for points in outlines where points.count >= 2 { d.add(.line(points, outline, closed: true, role: "region")) }
        d.add(.clip(nil))
        // Names at twice the text size on maps large enough for it.
        let labelScale = min(map.width, map.height) >= 300 ? 2 : 1
        for (i, points) in outlines.enumerated() where !points.isEmpty && !regions[i].name.isEmpty {
            // A name wider than the map: at the smaller size, shortened with "…" if need be.
            let scale = PlotFont.width(of: regions[i].name, scale: labelScale, bold: true) <= map.width - 8 ? labelScale : 1
            let name = CartesianFrame.fit(regions[i].name, width: map.width - 8, scale: scale, bold: true)
            let textWidth = PlotFont.width(of: name, scale: scale, bold: true), capHeight = PlotFont.capHeight(scale: scale)
            // Above the topmost vertex (leftmost of ties); below the region when that leaves
            // the map; inside the map in any case.
            let anchor = points.min { ($0.y, $0.x) < ($1.y, $1.x) }!
            let lowest = points.map(\.y).max()!
            let gap = 5.0 + 2 * Double(scale)
            var x = anchor.x
            var y = anchor.y - gap
            if y - capHeight < map.minY + 3 { y = min(lowest, map.maxY) + gap + capHeight }
            if y > map.maxY - 3 { y = anchor.y + gap + capHeight }
            x = min(max(map.minX + 4, x), map.maxX - 4 - textWidth)
            y = min(max(map.minY + 4 + capHeight, y), map.maxY - 4)
            d.add(.text(name, at: PlotPoint(x, y),
                        TextStyle(color: .white, scale: scale, bold: true, halo: RGBColor(hex: 0x101018, opacity: 0.85))))
        }

        // Legend bar: the ramp, whole-stop ticks, arrows for values beyond the ends.
        let bar = layout.colorBar
        let range = layout.evRange
        let barPixels = Int(bar.height.rounded())
        var ramp = [UInt8]()
        ramp.reserveCapacity(barPixels * 3)
        for row in 0..<barPixels {
            let c = EVColorRamp.color(at: 1 - (Double(row) + 0.5) / Double(barPixels))
            ramp += [c.red, c.green, c.blue]
        }
        let arrow = 9.0
        d.add(.polygon([PlotPoint(bar.minX, bar.minY), PlotPoint(bar.maxX, bar.minY), PlotPoint(bar.midX, bar.minY - arrow)],
                       fill: EVColorRamp.color(at: 1)))
        d.add(.polygon([PlotPoint(bar.minX, bar.maxY), PlotPoint(bar.maxX, bar.maxY), PlotPoint(bar.midX, bar.maxY + arrow)],
                       fill: EVColorRamp.color(at: 0)))
        d.add(.image(RasterImage(width: 1, height: barPixels, rgb: ramp), in: PlotRect(x: bar.minX, y: bar.minY, width: bar.width,
                                                                                        height: Double(barPixels))))
        // A light outline so the pale top end stands out from the paper.
        let outlinePoints = [PlotPoint(bar.minX - 0.5, bar.minY), PlotPoint(bar.midX, bar.minY - arrow - 0.7),
                             PlotPoint(bar.maxX + 0.5, bar.minY), PlotPoint(bar.maxX + 0.5, bar.minY + Double(barPixels)),
                             PlotPoint(bar.midX, bar.minY + Double(barPixels) + arrow + 0.7),
                             PlotPoint(bar.minX - 0.5, bar.minY + Double(barPixels))]
        d.add(.line(outlinePoints, LineStyle(color: PlotPalette.frame), closed: true))
        let span = range.upperBound - range.lowerBound
        for (ev, label) in legendLabels(range: range, barHeight: bar.height) {
            let y = (bar.minY + (range.upperBound - ev) / span * bar.height).rounded(.down)
            let row = min(y, bar.maxY - 1)
            d.add(.rect(PlotRect(x: bar.maxX, y: row, width: 5, height: 1), fill: PlotPalette.axis))
            d.add(.text(label, at: PlotPoint(bar.maxX + 9, row + 0.5),
                        TextStyle(bold: ev == 0, vertical: .capMiddle)))
        }
        // Swatches under the bar.
        var y = bar.maxY + arrow + 14
        let swatches: [(RGBColor, String, Bool)] = [(RGBColor.clipped, "clipped (≥ white)", false),
                                                    (Self.noValueColor, "Y ≤ 0 (no log)", false),
                                                    (RGBColor(hex: 0x303040), "region", true)]
        for (color, label, isRegion) in swatches {
            let box = PlotRect(x: bar.minX, y: y, width: 18, height: 11)
            d.add(.rect(box, fill: color))
            if isRegion {
                d.add(.line([PlotPoint(box.minX + 3.5, box.minY + 3.5), PlotPoint(box.maxX - 3.5, box.minY + 3.5),
                             PlotPoint(box.maxX - 3.5, box.maxY - 3.5), PlotPoint(box.minX + 3.5, box.maxY - 3.5)],
                            LineStyle(color: .white, width: 1.5), closed: true))
            }
            d.add(.text(label, at: PlotPoint(box.maxX + 8, box.minY + 1), TextStyle(vertical: .capTop)))
            y += 18
        }

        // Footnote: sizes, reduction, counts.
        var facts: [String] = []
        if p.reduced {
            facts.append("\(width) × \(height) px shown at \(layout.mapPixelsWide) × \(layout.mapPixelsHigh) (mean luminance per block)")
        } else if layout.pixelScale > 1 {
            facts.append("\(width) × \(height) px, each shown as \(Int(layout.pixelScale)) × \(Int(layout.pixelScale))")
        } else {
            facts.append("\(width) × \(height) px")
        }
        if clipped != nil || reducedLuminance?.clipped != nil { facts.append("clipped: \(AxisFormat.grouped(p.clippedCount)) px") }
        if p.noValueCount > 0 { facts.append("Y ≤ 0: \(AxisFormat.grouped(p.noValueCount)) px") }
        facts.append("ramp \(AxisFormat.ev(range.lowerBound)) … \(AxisFormat.ev(range.upperBound))")
        let footnote = facts.joined(separator: "  ·  ")
        d.add(.text(CartesianFrame.fit(footnote, width: Double(layout.width) - 2 * m), at: PlotPoint(m, Double(layout.height) - m - 6),
                    TextStyle(color: PlotPalette.mutedText)))
        return d
    }
}

extension PlotRect {
    var midX: Double { x + width / 2 }
    var midY: Double { y + height / 2 }
}
