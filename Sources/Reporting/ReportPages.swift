import Measuring
import Foundation
import Plots

/// A report laid out on A4 pages, for a PDF: headings, wrapped paragraphs, tables (split into
/// several when their columns do not fit the width) and charts as vector drawings, each kept
/// whole on a page. Pages are laid out at 96 units per inch (794 × 1123) and placed on A4
/// paper (595 × 842 pt), so the body text is 9.2 pt.
struct ReportPages: ReportWriter {
    static let width = 794.0, height = 1123.0, margin = 64.0
    static let paper = (width: 595, height: 842)
    private(set) var pages: [Drawing] = []
    private var page = Drawing(width: Int(Self.width), height: Int(Self.height))
    private var y = Self.margin
    private var title = ""
    private var pageCount = 0

    private var usableWidth: Double { Self.width - 2 * Self.margin }
    private let lineHeight = 17.0

    mutating func begin(title: String) { self.title = title }

    /// The heading just set, while nothing has followed it: it moves to the next page with
    /// what follows when that does not fit (no heading alone at the foot of a page).
    private var lastHeading: (level: Int, text: String, items: Int, y: Double)?

    /// Starts a new page when less than `height` remains on this one.
    private mutating func ensure(_ height: Double) {
        guard y + height > Self.height - Self.margin && y > Self.margin else { return }
        if let h = lastHeading, h.y > Self.margin {
            page.items.removeLast(page.items.count - h.items)
            y = h.y
            newPage()
            heading(h.level, h.text)
        } else {
            newPage()
        }
    }

    private mutating func newPage() {
        finishPage()
        page = Drawing(width: Int(Self.width), height: Int(Self.height))
        y = Self.margin
    }

    private mutating func finishPage() {
        pageCount += 1
        page.add(.text("\(title) — page \(pageCount)", at: PlotPoint(Self.width / 2, Self.height - Self.margin / 2),
                       TextStyle(color: PlotPalette.text, horizontal: .middle, vertical: .capMiddle)))
        pages.append(page)
    }

    mutating func heading(_ level: Int, _ s: String) {
        let scale = level == 1 ? 3 : level == 2 ? 2 : 1
        let cap = PlotFont.capHeight(scale: scale)
        lastHeading = nil
        ensure(cap * 2 + 3 * lineHeight)
        let mark = (items: page.items.count, y: y)
        defer { lastHeading = (level, s, mark.items, mark.y) }
        y += level == 1 ? 0 : cap * 1.2
        if level == 2 {
            page.add(.line([PlotPoint(Self.margin, y), PlotPoint(Self.width - Self.margin, y)], LineStyle(color: PlotPalette.text, width: 1.5)))
            y += cap * 0.8
        }
        for line in wrap(s, scale: scale, bold: true, width: usableWidth) {
            page.add(.text(line, at: PlotPoint(Self.margin, y + cap), TextStyle(color: PlotPalette.text, scale: scale, bold: true)))
            y += cap * 1.6
        }
        y += cap * 0.4
    }

    /// A paragraph, word-wrapped; `**…**` spans are set in bold.
    mutating func paragraph(_ s: String) {
        // Words with their weight, split at spaces and at the `**` markers; a word that follows
        // a marker without a space (punctuation after a bold word) is glued to the one before.
        var words: [(text: String, bold: Bool, glued: Bool)] = []
        var previousEndsWord = false
        for (k, part) in s.components(separatedBy: "**").enumerated() {
            let startsGlued = previousEndsWord && !(part.first?.isWhitespace ?? true)
            if !part.isEmpty { previousEndsWord = !(part.last!.isWhitespace) }
            for (n, w) in part.split(separator: " ", omittingEmptySubsequences: true).enumerated() {
                words.append((String(w), k % 2 == 1, n == 0 && startsGlued))
            }
        }
        let space = PlotFont.width(of: " ")
        var x = 0.0
        var line: [(String, Bool, Double)] = []
        func flush(_ pages: inout ReportPages) {
            guard !line.isEmpty else { return }
            pages.ensure(pages.lineHeight)
            for (w, bold, at) in line {
                pages.page.add(.text(w, at: PlotPoint(Self.margin + at, pages.y + PlotFont.capHeight(scale: 1) + 3),
                                     TextStyle(color: PlotPalette.text, bold: bold)))
            }
            pages.y += pages.lineHeight
            pages.lastHeading = nil
            line = []
            x = 0
        }
        for (w, bold, glued) in words {
            let width = PlotFont.width(of: w, bold: bold)
            if glued && x > 0 { x -= space }
            if x > 0 && x + width > usableWidth && !glued { flush(&self) }
            line.append((w, bold, x))
            x += width + space
        }
        flush(&self)
        y += lineHeight * 0.6
    }

    mutating func table(_ header: [String], _ rows: [[String]], header showHeader: Bool) {
        guard let columns = ([header] + rows).map(\.count).max(), columns > 0 else { return }
        let padding = 8.0
        let cells = ([header] + rows).map { row in (0..<columns).map { $0 < row.count ? row[$0] : "" } }
        var widths = (0..<columns).map { c in
            cells.enumerated().map { r, row in PlotFont.width(of: row[c], bold: r == 0 && showHeader) }.max()! + 2 * padding
        }
        widths = widths.map { max($0, 24) }
        // The first column (the row names) repeats in every part when the table is split.
        var parts: [[Int]] = []
        var current: [Int] = [0], used = widths[0]
        for c in 1..<max(1, columns) where columns > 1 {
            if used + widths[c] > usableWidth && current.count > 1 {
                parts.append(current)
                current = [0]
                used = widths[0]
            }
            current.append(c)
            used += widths[c]
        }
        parts.append(current)
        let shown = showHeader ? cells : Array(cells.dropFirst())
        for part in parts {
            // A table part that fits on a page is not split across two.
            ensure(Double(shown.count) * (lineHeight + 4))
            for (r, row) in shown.enumerated() {
                ensure(lineHeight + 4)
                let isHeader = showHeader && r == 0
                var x = Self.margin
                let top = y
                if isHeader {
                    page.add(.rect(PlotRect(x: x, y: top, width: part.map { widths[$0] }.reduce(0, +), height: lineHeight + 4),
                                   fill: RGBColor(hex: 0xE8E8E8)))
                }
                for c in part {
                    let text = row[c]
                    let right = c > 0  // numbers to the right, names to the left
                    page.add(.text(text, at: PlotPoint(right ? x + widths[c] - padding : x + padding, top + PlotFont.capHeight(scale: 1) + 5),
                                   TextStyle(color: PlotPalette.text, bold: isHeader, horizontal: right ? .end : .start)))
                    x += widths[c]
                }
                y += lineHeight + 4
                page.add(.line([PlotPoint(Self.margin, y), PlotPoint(x, y)], LineStyle(color: RGBColor(hex: 0xBBBBBB), width: 0.75)))
                lastHeading = nil
            }
            y += lineHeight * 0.6
        }
    }

    /// A chart, scaled to the width of the text (never enlarged), kept whole on a page.
    mutating func chart(_ name: String, _ drawing: Drawing, alt: String, png _: [UInt8]?) throws {
        guard drawing.width > 0, drawing.height > 0 else { return }
        let scale = min(1, usableWidth / Double(drawing.width), (Self.height - 2 * Self.margin) / Double(drawing.height))
        let w = Double(drawing.width) * scale, h = Double(drawing.height) * scale
        ensure(h + 8)
        page.add(.drawing(drawing, in: PlotRect(x: Self.margin, y: y, width: w, height: h)))
        y += h + lineHeight
        lastHeading = nil
    }

    mutating func end() { finishPage() }

    /// The pages on A4 paper, as one PDF.
    func pdf() -> [UInt8] {
        let paper = pages.map { content -> Drawing in
            var sheet = Drawing(width: Self.paper.width, height: Self.paper.height, title: title)
            sheet.add(.drawing(content, in: PlotRect(x: 0, y: 0, width: Double(Self.paper.width), height: Double(Self.paper.height))))
            return sheet
        }
        return Drawing.pdf(pages: paper)
    }

    /// `text` in lines no wider than `width`.
    private func wrap(_ text: String, scale: Int, bold: Bool, width: Double) -> [String] {
        var lines: [String] = [], line = ""
        for word in text.split(separator: " ") {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            if !line.isEmpty && PlotFont.width(of: candidate, scale: scale, bold: bold) > width {
                lines.append(line)
                line = String(word)
            } else {
                line = candidate
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
