import Measuring
import Engine
import Plots
import Analysis
import Foundation

/// A measurement report of one or more images: for each file its provenance, a false-colour
/// EV map with the regions outlined, a statistics table per region, dynamic range, radiance
/// ratios with their 95 % intervals (or the bound they are), and a histogram chart per
/// region.
///
/// HTML reports are one self-contained file (charts embedded as PNG data URIs, no external
/// style sheet or script). Markdown reports are a `.md` file with the charts as PNG files in
/// a folder beside it named `<stem>_files/`. PDF reports are A4 pages with the charts as
/// vector drawings and the text in embedded fonts (`ReportPages`). All are written
/// atomically: a failed run leaves neither a partial report nor a partial folder.
public enum AnalysisReport {
    public enum Format: String, Sendable, CaseIterable {
        case html, markdown, pdf

        /// The format named by a path's extension (.html/.htm, .md/.markdown or .pdf).
        public init?(path: String) {
            switch URL(fileURLWithPath: path).pathExtension.lowercased() {
            case "html", "htm": self = .html
            case "md", "markdown": self = .markdown
            case "pdf": self = .pdf
            default: return nil
            }
        }
    }

    /// The charts of one file.
    struct Charts: Sendable {
        /// The EV map and, for HTML and Markdown, its PNG: made on a thread of their own, from
        /// the end of the measurement's first pass on when the measurement streams.
        var evMap: BackgroundValue<EVMapChart>
        var histograms: [Drawing]
    }

    struct EVMapChart: Sendable {
        var drawing: Drawing
        var png: [UInt8]?
    }

    /// The EV map chart of a file's picture.
    static func evMap(_ picture: AnalysisPicture, regions: [Region]) -> Drawing {
        let name = URL(fileURLWithPath: picture.path).lastPathComponent
        return AnalysisCharts.evMap(picture, title: name, regions: regions, maxSize: 1000).drawing()
    }

    /// Analyses `paths` and writes the report to `path`.
    /// - Returns: the per-file results (failed files carry their error and appear in the
    ///   report as such).
    /// - Throws: `OutputError` when the report cannot be written.
    @discardableResult
    public static func write(_ paths: [String], request: AnalysisRequest, format: Format, to path: String,
                             progress: (@Sendable (Int, Int) -> Void)? = nil) throws -> [FileAnalysis] {
        var request = request
        if request.histogram == nil { request.histogram = HistogramOptions() }
        let store = SharedStore<Int, Charts>()
        let early = SharedStore<Int, BackgroundValue<EVMapChart>>()
        let regions = request.regions, embedsPNG = format != .pdf
        // The EV map (and the PNG that HTML and Markdown embed) is made while the later passes run.
        let draw: @Sendable (Int, AnalysisPicture) -> BackgroundValue<EVMapChart> = { i, picture in
            let made = BackgroundValue { () -> EVMapChart in
                let drawing = evMap(picture, regions: regions)
                return EVMapChart(drawing: drawing, png: embedsPNG ? drawing.png() : nil)
            }
            early[i] = made
            return made
        }
        let results = Pipeline.analyze(paths, request: request, progress: progress, pictureSize: 1000, visit: { i, picture, result in
            let histograms = result.regions.compactMap { AnalysisCharts.histogram(result, region: $0) }
                .map { $0.drawing(width: 900, height: 480) }
            store[i] = Charts(evMap: early[i] ?? draw(i, picture), histograms: histograms)
        }, pictureReady: { _ = draw($0, $1) })
        let charts = (0..<paths.count).map { store[$0] }
        switch format {
        case .html:
            var out = TextBuilder(format: .html) { _, drawing, png in
                "data:image/png;base64," + Data(png ?? drawing.png()).base64EncodedString()
            }
            try document(results, charts: charts, request: request, into: &out)
            try writeText(out.text, to: path)
        case .markdown:
            try writeMarkdown(results, charts: charts, request: request, to: path)
        case .pdf:
            var out = ReportPages()
            try document(results, charts: charts, request: request, into: &out)
            let bytes = out.pdf()
            guard !bytes.isEmpty else { throw OutputError(path: path, reason: "cannot create the file") }
            try AtomicFile.write(Data(bytes), to: path)
        }
        return results
    }

    // MARK: document

    /// The report's content, written into `out` (HTML or Markdown text, or PDF pages).
    static func document<W: ReportWriter>(_ results: [FileAnalysis], charts: [Charts?], request: AnalysisRequest,
                                          into out: inout W) throws {
        out.begin(title: "SceneLinear measurement report")
        out.heading(1, "SceneLinear measurement report")
        out.paragraph("\(SceneLinearVersion.software), \(timestamp()). Values are scene-linear: 1.0 is sensor white after black subtraction, times the exposure factor — or, where a file's units say so, luminance in cd/m² or radiance in W·sr⁻¹·m⁻². Y is luminance with Rec.2020 weights (0.2627 R + 0.6780 G + 0.0593 B). Standard errors and 95 % intervals come from the DNG NoiseProfile propagated through the colour matrix; clipped pixels (a camera channel at white) make means lower bounds and ratios bounds.")
        for (i, f) in results.enumerated() {
            let name = URL(fileURLWithPath: f.file).lastPathComponent
            out.heading(2, name)
            if let e = f.error {
                out.paragraph("**Not measured** (\(f.errorCategory ?? "error")): \(e)")
                continue
            }
            out.table(["", ""], [
                ["file", f.file],
                ["SHA-256", f.sourceSHA256.isEmpty ? "—" : f.sourceSHA256],
                ["size", "\(f.width) × \(f.height)"],
                ["colour encoding", f.colorSpace],
                ["units", f.unitSymbol.isEmpty ? "exposure \(f.exposureScaling) × \(String(format: "%.6g", f.exposureFactor))"
                    : "\(f.unitSymbol): \(String(format: "%.6g", f.exposureFactor)) per linear value" + (f.scaleRelativeUncertainty.map { String(format: " ± %.3g %%", 100 * $0) } ?? "")],
                ["noise model", f.noiseModel ? "NoiseProfile (standard errors and intervals below)" : "none in the file: no standard errors or intervals"],
            ], header: false)
            if let source = f.scaleSource { out.paragraph("Absolute scale: \(source).") }
            let stem = (name as NSString).deletingPathExtension
            if let c = charts[i] {
                let map = c.evMap.wait()
                try out.chart("\(i + 1)-\(stem)-ev-map.png", map.drawing, alt: "EV map of \(name)", png: map.png)
            }
            out.heading(3, "Statistics")
            for r in f.regions {
                let m = r.measurement
                out.paragraph("Region **\(r.name)**: \(m.pixels) pixels, \(m.clippingSummary), \(m.negativePixels) with a negative channel"
                              + (r.nonFinitePixels > 0 ? "; \(r.nonFinitePixels) NaN or infinite pixels left out." : "."))
                let ps = m.channels["Y"]?.percentiles.map(\.percentile).filter { request.percentiles.contains($0) } ?? []
                let header = ["", "mean", "± s.e.", "median", "± s.e.", "std", "min", "max"] + ps.map { "p" + String(format6: $0) }
                var rows: [[String]] = []
                for q in RegionStatistics.quantities {
                    guard let s = m.channels[q] else { continue }
                    var row = [q, g(s.mean, s.kind), s.meanStandardError.map(g) ?? "—", g(s.median, s.medianKind),
                               s.medianStandardError.map(g) ?? "—", g(s.standardDeviation, s.standardDeviationKind),
                               g(s.minimum, s.minimumKind), g(s.maximum, s.maximumKind)]
                    for p in ps {
                        let v = s.percentiles.first { $0.percentile == p }
                        row.append(g(v?.value ?? .nan, v?.kind ?? .value))
                    }
                    rows.append(row)
                }
                out.table(header, rows)
                if let legend = AnalysisOutput.kindLegend(m) { out.paragraph(legend + ".") }
                let dr = r.dynamicRange
                var text = "Dynamic range of Y:"
                if let s = dr.robustStops {
                    text += String(format: " %.2f stops between the p%@ and p%@ percentiles", s, String(format6: dr.lowPercentile), String(format6: dr.highPercentile))
                } else { text += " not measurable (no positive percentiles)" }
                if let s = dr.stopsAboveNoiseFloor, let floor = dr.noiseFloor {
                    text += String(format: "; %.2f stops above the noise floor (Y = %.3g, where signal equals noise)", s, floor)
                }
                if !dr.kind.isValue {
                    text += dr.kind == .lowerBound ? " — at least this: the high percentile is a lower bound" : " — \(dr.kind.words)"
                }
                out.paragraph(text + ".")
                if let budgets = r.budgets, !budgets.isEmpty {
                    // Absolute units: each budget's items, combined, and its 95 % interval.
                    let names = budgets[0].items.map(\.name)
                    let bHeader = ["\(f.unitSymbol)", "value"] + names.map { "u(\($0))" } + ["combined u", "95 % interval"]
                    let bRows = budgets.map { b -> [String] in
                        ["\(b.quantity) \(b.statistic)", g(b.value, b.kind)] + names.map { n in b.items.first { $0.name == n }.map { String(format: "%.3g %%", 100 * $0.relative) } ?? "—" }
                            + [String(format: "%.3g %%", 100 * b.relativeStandardUncertainty), intervalCell(b.kind, b.low95, b.high95)]
                    }
                    out.table(bHeader, bRows)
                    var notes = ["Uncertainty budget: relative standard uncertainties (k = 1) in quadrature."]
                    notes += budgets[0].items.filter { $0.name != "noise" }.map { "\($0.name.prefix(1).uppercased() + $0.name.dropFirst()): \($0.note)." }
                    if let source = f.scaleSource { notes.append("Scale: \(source).") }
                    notes += budgets[0].notIncluded.map { "Not included: \($0)." }
                    out.paragraph(notes.joined(separator: " "))
                }
            }
            if !f.ratios.isEmpty {
                out.heading(3, "Radiance ratios")
                var rows: [[String]] = []
                for r in f.ratios {
                    let interval = intervalCell(r.kind, r.low95, r.high95)
                    let kind: String
                    switch r.kind {
                    case .value: kind = "value"
                    case .lowerBound: kind = "lower bound: " + r.explanation
                    case .upperBound: kind = "upper bound: " + r.explanation
                    case .undetermined: kind = "undetermined: " + r.explanation
                    case .clippingUnknown: kind = "clipping unknown: " + r.explanation
                    }
                    rows.append(["\(r.numerator) / \(r.denominator)", "\(r.quantity) \(r.statistic)", g(r.ratio, r.kind), interval,
                                 r.relativeStandardError.map { String(format: "%.3g %%", 100 * $0) } ?? "—", kind])
                }
                out.table(["ratio", "of", "value", "95 % interval", "relative s.e.", "kind"], rows)
            }
            if let c = charts[i], !c.histograms.isEmpty {
                out.heading(3, "Histograms")
                for (k, drawing) in c.histograms.enumerated() {
                    let region = k < f.regions.count ? f.regions[k].name : "\(k + 1)"
                    try out.chart("\(i + 1)-\(stem)-histogram-\(k + 1).png", drawing, alt: "histogram of region \(region)")
                }
            }
        }
        out.end()
    }

    /// A table value: five significant digits, 0 (and −0) as "0", "—" when not a finite number.
    static func g(_ v: Double) -> String { !v.isFinite ? "—" : v == 0 ? "0" : String(format: "%.5g", v) }

    /// A number marked by its kind ("≥ 12.3" for a lower bound; see `ResultKind.symbol`).
    static func g(_ v: Double, _ kind: ResultKind) -> String { kind.isValue ? g(v) : kind.symbol + " " + g(v) }

    /// A 95 % interval for a table: "[a, b]" for a value, "≥ a" (lower end) for a lower bound,
    /// "≤ b" for an upper bound, "—" when there is none.
    static func intervalCell(_ kind: ResultKind, _ low: Double?, _ high: Double?) -> String {
        switch kind {
        case .lowerBound: return low.map { "≥ " + g($0) } ?? "—"
        case .upperBound: return high.map { "≤ " + g($0) } ?? "—"
        case .undetermined: return "—"
        case .value, .clippingUnknown: return low.flatMap { lo in high.map { hi in "[\(g(lo)), \(g(hi))]" } } ?? "—"
        }
    }

    static func timestamp() -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: Date())
    }

    // MARK: writing

    static func writeText(_ text: String, to path: String) throws {
        try AtomicFile.write(Data(text.utf8), to: path)
    }

    /// The Markdown file and its chart folder: the folder is filled under a temporary name,
    /// the Markdown written atomically, then the folder renamed into place (an old one of
    /// the same name is replaced).
    static func writeMarkdown(_ results: [FileAnalysis], charts: [Charts?], request: AnalysisRequest, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let folderName = url.deletingPathExtension().lastPathComponent + "_files"
        let directory = url.deletingLastPathComponent()
        let folder = directory.appendingPathComponent(folderName)
        let staging = directory.appendingPathComponent(".\(folderName).partial-\(getpid())")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw OutputError(path: path, reason: "directory \(directory.path) does not exist")
        }
        try? FileManager.default.removeItem(at: staging)
        do {
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: false)
        } catch {
            throw OutputError(path: staging.path, reason: "cannot create the chart folder")
        }
        do {
            var out = TextBuilder(format: .markdown) { name, drawing, png in
                let file = staging.appendingPathComponent(name)
                guard FileManager.default.createFile(atPath: file.path, contents: Data(png ?? drawing.png())) else {
                    throw OutputError(path: file.path, reason: "cannot create the file")
                }
                return "\(folderName)/\(name)"
            }
            try document(results, charts: charts, request: request, into: &out)
            try writeText(out.text, to: path)
            try? FileManager.default.removeItem(at: folder)
            guard rename(staging.path, folder.path) == 0 else {
                throw OutputError(path: folder.path, failed: "rename failed", systemError: errno)
            }
        } catch {
            try? FileManager.default.removeItem(at: staging)
            throw error
        }
    }
}

/// What the report's content is written into: text (`TextBuilder`) or pages (`ReportPages`).
protocol ReportWriter {
    mutating func begin(title: String)
    mutating func heading(_ level: Int, _ s: String)
    /// A paragraph; `**bold**` spans are bold.
    mutating func paragraph(_ s: String)
    mutating func table(_ header: [String], _ rows: [[String]], header showHeader: Bool)
    /// A chart; `name` is its file name where the format keeps charts as files.
    /// A chart; `png`, when given, is its PNG made beforehand.
    mutating func chart(_ name: String, _ drawing: Drawing, alt: String, png: [UInt8]?) throws
    mutating func end()
}

extension ReportWriter {
    mutating func chart(_ name: String, _ drawing: Drawing, alt: String) throws { try chart(name, drawing, alt: alt, png: nil) }
    mutating func table(_ header: [String], _ rows: [[String]]) { table(header, rows, header: true) }
}

/// Headings, paragraphs, tables and images in HTML or Markdown.
struct TextBuilder: ReportWriter {
    enum Kind { case html, markdown }
    let format: Kind
    var text = ""
    /// Turns a chart (file name, drawing, its PNG when made beforehand) into the reference an
    /// image element points at.
    let store: (String, Drawing, [UInt8]?) throws -> String

    init(format: Kind, store: @escaping (String, Drawing, [UInt8]?) throws -> String) {
        self.format = format
        self.store = store
    }

    mutating func chart(_ name: String, _ drawing: Drawing, alt: String, png: [UInt8]?) throws {
        image(try store(name, drawing, png), alt: alt)
    }

    mutating func begin(title: String) {
        guard format == .html else { return }
        text += """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
            <style>
            body { font-family: system-ui, sans-serif; max-width: 1000px; margin: 2em auto; padding: 0 1em; color: #222; }
            table { border-collapse: collapse; margin: 0.6em 0 1em; font-size: 0.9em; }
            th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
            td:first-child, th:first-child { text-align: left; }
            img { max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }
            h2 { border-top: 2px solid #444; padding-top: 0.6em; margin-top: 2em; }
            </style></head><body>

            """
    }

    mutating func end() {
        if format == .html { text += "</body></html>\n" }
    }

    mutating func heading(_ level: Int, _ s: String) {
        switch format {
        case .html: text += "<h\(level)>\(escape(s))</h\(level)>\n"
        case .markdown: text += "\n" + String(repeating: "#", count: level) + " " + s + "\n\n"
        }
    }

    /// A paragraph; `**bold**` spans become <strong> in HTML.
    mutating func paragraph(_ s: String) {
        switch format {
        case .html:
            var html = escape(s)
            var bold = false
            while let r = html.range(of: "**") {
                html.replaceSubrange(r, with: bold ? "</strong>" : "<strong>")
                bold.toggle()
            }
            text += "<p>\(html)</p>\n"
        case .markdown: text += s + "\n\n"
        }
    }

    mutating func table(_ header: [String], _ rows: [[String]], header showHeader: Bool) {
        switch format {
        case .html:
            text += "<table>\n"
            if showHeader { text += "<tr>" + header.map { "<th>\(escape($0))</th>" }.joined() + "</tr>\n" }
            for row in rows { text += "<tr>" + row.map { "<td>\(escape($0))</td>" }.joined() + "</tr>\n" }
            text += "</table>\n"
        case .markdown:
            func line(_ cells: [String]) -> String {
                "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |\n"
            }
            text += line(header)
            text += "|" + header.map { _ in " --- |" }.joined() + "\n"
            for row in rows { text += line(row) }
            text += "\n"
        }
    }

    mutating func image(_ source: String, alt: String) {
        switch format {
        case .html: text += "<p><img src=\"\(source)\" alt=\"\(escape(alt))\"></p>\n"
        case .markdown: text += "![\(alt)](\(source))\n\n"
        }
    }

    func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
