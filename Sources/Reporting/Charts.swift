import Measuring
import Engine
import Analysis
import Foundation
@_exported import Plots

/// Charts of analysis results: histogram plots and false-colour EV maps with the measured
/// regions outlined. Used by `histogram --plot`, `report` and `validate --plot`.
public enum AnalysisCharts {
    /// The histogram of one region as a chart: R, G, B and Y against their bins, the clip
    /// level marked (sensor white × the exposure factor), and the counts that are not binned
    /// (clipped, zero, negative, outside the range: each channel that has any) listed beside it.
    /// - Returns: nil when the region has no histogram.
    public static func histogram(_ file: FileAnalysis, region: RegionAnalysis, logCounts: Bool = true) -> HistogramPlot? {
        guard let h = region.histogram, h.edges.count >= 2 else { return nil }
        let series = RegionStatistics.quantities.map { q in (name: q, counts: (h.counts[q] ?? []).map(Double.init)) }
        let white = file.exposureFactor > 0 ? file.exposureFactor : 1
        let clip = h.scale == .log2 ? log2(white) : white
        var notes: [(String, String)] = [("pixels", grouped(h.pixels))]
        func share(_ n: Int) -> String {
            h.pixels > 0 ? "\(grouped(n)) (\(String(format: "%.2g", 100 * Double(n) / Double(h.pixels))) %)" : grouped(n)
        }
        notes.append(("clipped", h.clipped.map(share) ?? "unknown (no clip mask)"))
        // Values not binned, per channel that has any (one line each): none is left unsaid.
        for (label, counts) in [("zero", h.zero), ("negative", h.negative), ("below range", h.below), ("above range", h.above)] {
            if let lines = channelLines(counts, share) { notes.append((label, lines)) }
        }
        let unit = file.unitSymbol
        let exposure = !unit.isEmpty ? ", values in \(unit)"
            : file.exposureScaling == "none" ? "" : ", exposure \(file.exposureScaling) ×\(String(format: "%.4g", file.exposureFactor))"
        // Absolute values: the axis in stops of the unit (white is where the clip line is).
        let xLabel: String? = unit.isEmpty ? nil
            : h.scale == .log2 ? "stops relative to 1 \(unit) (EV = log2 of the value in \(unit))" : "value (\(unit))"
        return HistogramPlot(
            title: "\(URL(fileURLWithPath: file.file).lastPathComponent) — region \(region.name)",
            subtitle: "\(file.width)×\(file.height), \(file.colorSpace)\(exposure); \(h.scale == .log2 ? "EV bins (0 EV = \(unit.isEmpty ? "1.0" : "1 " + unit))" : "linear bins")",
            binEdges: h.edges, logarithmic: h.scale == .log2, series: series, clipLevel: clip, notes: notes,
            logCounts: logCounts, xLabel: xLabel)
    }

    /// The channels with a count above 0, one line per count ("B 5 190 (51 %)"; channels
    /// with the same count share a line: "R, G, B 3 (0.03 %)"); nil when none has any.
    static func channelLines(_ counts: [String: Int], _ share: (Int) -> String) -> String? {
        var lines: [(names: [String], count: Int)] = []
        for q in RegionStatistics.quantities {
            guard let n = counts[q], n > 0 else { continue }
            if let i = lines.firstIndex(where: { $0.count == n }) { lines[i].names.append(q) } else { lines.append(([q], n)) }
        }
        return lines.isEmpty ? nil : lines.map { "\($0.names.joined(separator: ", ")) \(share($0.count))" }.joined(separator: "\n")
    }

    /// A false-colour map of luminance Y (Rec.2020 weights) in stops, clipped pixels in
    /// magenta, and each region's outline: rectangles and polygons as given, weight and
    /// semantic-mask regions by their 0.5 iso-contours (`MaskContours`; the name labels the
    /// largest one). A mask region that never reaches 0.5 is listed in the subtitle.
    public static func evMap(_ image: SceneLinearImage, title: String, regions: [Region] = [],
                             evRange: ClosedRange<Double>? = nil, maxSize: Int = 1200) -> EVMap {
        evMap(AnalysisPicture(image, path: "", maxSize: maxSize), title: title, regions: regions, evRange: evRange, maxSize: maxSize)
    }

    /// The EV map of a file measured in a batch (`AnalysisPicture`: its luminance reduced as
    /// it was measured); `maxSize` should be the picture's.
    public static func evMap(_ picture: AnalysisPicture, title: String, regions: [Region] = [],
                             evRange: ClosedRange<Double>? = nil, maxSize: Int = 1200) -> EVMap {
        let w = picture.width, h = picture.height
        var outlines: [(name: String, outline: [SIMD2<Double>])] = []
        var masks: [String] = []
        for region in regions {
            if let o = outline(of: region, width: w, height: h) {
                outlines.append((region.name, o))
                continue
            }
            let contours = picture.weights(region).map {
                MaskContours.isoLines($0, width: w, height: h, level: 0.5, maxSize: min(maxSize, 800))
            } ?? []
            guard let largest = contours.indices.max(by: { MaskContours.area(contours[$0]) < MaskContours.area(contours[$1]) }) else {
                masks.append(region.name)
                continue
            }
            // Unnamed outlines are drawn without a label.
            for (k, c) in contours.enumerated() { outlines.append((k == largest ? region.name : "", c)) }
        }
        let one = !picture.unitSymbol.isEmpty ? "1 \(picture.unitSymbol)" : picture.exposureFactor == 1 ? "sensor white" : "1.0"
        var subtitle = "luminance Y in stops relative to \(one); magenta = clipped"
        if !masks.isEmpty { subtitle += "; mask regions below 0.5 everywhere (not outlined): " + masks.joined(separator: ", ") }
        var map = EVMap(title: title, subtitle: subtitle, reduced: picture.luminance, evRange: evRange, regions: outlines, maxSize: maxSize)
        map.zeroLabel = "0 EV = " + (picture.exposureFactor == 1 && picture.unitSymbol.isEmpty ? "white" : one)
        if !picture.unitSymbol.isEmpty { map.legendUnit = picture.unitSymbol }
        return map
    }

    /// The outline of a region in pixel coordinates ((0, 0) = top-left corner of the first
    /// pixel), clamped to the image; nil for weight and mask regions (see `MaskContours`).
    public static func outline(of region: Region, width: Int, height: Int) -> [SIMD2<Double>]? {
        func rect(_ t: Double, _ l: Double, _ b: Double, _ r: Double) -> [SIMD2<Double>] {
            let t = min(max(t, 0), Double(height)), b = min(max(b, 0), Double(height))
            let l = min(max(l, 0), Double(width)), r = min(max(r, 0), Double(width))
            return [SIMD2(l, t), SIMD2(r, t), SIMD2(r, b), SIMD2(l, b)]
        }
        switch region.shape {
        case .rectangle(let r):
            return rect(Double(r.top), Double(r.left), Double(r.bottom), Double(r.right))
        case .fractionalRectangle(let t, let l, let b, let r):
            // The same rounding as Region.weights, so the outline matches the measured pixels.
            return rect((t * Double(height)).rounded(), (l * Double(width)).rounded(),
                        (b * Double(height)).rounded(), (r * Double(width)).rounded())
        case .polygon(let vertices):
            return vertices
        case .weights, .mask:
            return nil
        }
    }

    /// Writes chart bytes atomically; the format follows the extension (.png, .svg or .pdf).
    public static func write(_ render: (PlotFormat) -> [UInt8], to path: String) throws {
        let format = try format(of: path)
        let bytes = render(format)
        try AtomicFile.write(Data(bytes), to: path)
    }

    /// The chart format named by a path's extension.
    /// - Throws: `OutputError` for anything but .png, .svg and .pdf.
    public static func format(of path: String) throws -> PlotFormat {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "png": return .png
        case "svg": return .svg
        case "pdf": return .pdf
        default: throw OutputError(path: path, reason: "a plot must end in .png, .svg or .pdf")
        }
    }

    static func grouped(_ n: Int) -> String {
        let digits = String(n)
        var out = ""
        for (i, c) in digits.reversed().enumerated() {
            if i > 0 && i % 3 == 0 { out.append(" ") }
            out.append(c)
        }
        return String(out.reversed())
    }
}
