import Foundation

extension Drawing {
    /// Font families asked for in SVG output: common sans-serif faces.
    public static let svgFontFamily = "Helvetica, Arial, Liberation Sans, DejaVu Sans, sans-serif"

    /// The SVG font size (pixels) for `BitmapFont` text at `scale`: 9·scale / 0.8. Sans-serif
    /// capitals are 0.72–0.73 em tall, so they come out about 10 % smaller than the bitmap's;
    /// that keeps the common faces close to their natural width when fitted to the bitmap
    /// font's widths.
    public static func svgFontSize(scale: Int) -> Double {
        Double(BitmapFont.capHeight * max(1, scale)) / 0.8
    }

    /// The drawing as an SVG 1.1 document (UTF-8 text).
    ///
    /// Lines, polygons, rectangles and circles become vector elements with the same
    /// coordinates as in the raster; text becomes `<text>` elements in a sans-serif font of
    /// about the same capital height, fitted (`textLength`) to the width the bitmap font
    /// gives it, so the layout holds whichever font the viewer has; images are embedded as
    /// base64 PNG; clipping uses `<clipPath>`. Paths with a role carry it as their `class`.
    public func svg() throws(PNGEncoderError) -> String {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1" \
            width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" font-family="\(Self.svgFontFamily)">

            """
        if !title.isEmpty { out += "<title>\(Self.escape(title))</title>\n" }
        out += "<rect x=\"0\" y=\"0\" width=\"\(width)\" height=\"\(height)\" fill=\"\(background.hexString)\"/>\n"
        var clipCount = 0
        var clipOpen = false
        for item in items {
            switch item {
            case .rect(let r, let fill):
                out += "<rect x=\"\(svgNumber(r.x))\" y=\"\(svgNumber(r.y))\" width=\"\(svgNumber(r.width))\" height=\"\(svgNumber(r.height))\"\(Self.fill(fill))/>\n"
            case .line(let points, let style, let closed, let role):
                guard points.count >= 2 else { continue }
                out += "<path\(Self.role(role)) d=\"\(Self.path(points, closed: closed))\" fill=\"none\"\(Self.stroke(style))/>\n"
            case .polygon(let points, let fill, let role):
                guard points.count >= 3 else { continue }
                out += "<path\(Self.role(role)) d=\"\(Self.path(points, closed: true))\"\(Self.fill(fill)) fill-rule=\"evenodd\"/>\n"
            case .circle(let center, let radius, let fill, let stroke):
                out += "<circle cx=\"\(svgNumber(center.x))\" cy=\"\(svgNumber(center.y))\" r=\"\(svgNumber(radius))\""
                out += fill.map { Self.fill($0) } ?? " fill=\"none\""
                if let stroke { out += Self.stroke(stroke) }
                out += "/>\n"
            case .text(let text, let at, let style):
                out += Self.text(text, at: at, style: style)
            case .image(let image, let rect):
                let png = Data(try image.pngData()).base64EncodedString()
                out += "<image x=\"\(svgNumber(rect.x))\" y=\"\(svgNumber(rect.y))\" width=\"\(svgNumber(rect.width))\" height=\"\(svgNumber(rect.height))\" "
                out += "preserveAspectRatio=\"none\" image-rendering=\"pixelated\" style=\"image-rendering:pixelated\" "
                out += "xlink:href=\"data:image/png;base64,\(png)\"/>\n"
            case .clip(let rect):
                if clipOpen {
                    out += "</g>\n"
                    clipOpen = false
                }
                if let rect {
                    clipCount += 1
                    out += "<clipPath id=\"clip\(clipCount)\"><rect x=\"\(svgNumber(rect.x))\" y=\"\(svgNumber(rect.y))\" "
                    out += "width=\"\(svgNumber(rect.width))\" height=\"\(svgNumber(rect.height))\"/></clipPath>\n"
                    out += "<g clip-path=\"url(#clip\(clipCount))\">\n"
                    clipOpen = true
                }
            }
        }
        if clipOpen { out += "</g>\n" }
        out += "</svg>\n"
        return out
    }

    /// The SVG document as UTF-8 bytes.
    public func svgData() throws(PNGEncoderError) -> [UInt8] {
        Array(try svg().utf8)
    }

    private static func text(_ text: String, at: PlotPoint, style: TextStyle) -> String {
        let anchor: String
        switch style.horizontal {
        case .start: anchor = "start"
        case .middle: anchor = "middle"
        case .end: anchor = "end"
        }
        // Baseline below the anchor, in the text's own frame.
        let across = style.baselineOffset(width: 0).across
        var s = "<text"
        if style.rotated {
            s += " transform=\"translate(\(svgNumber(at.x)) \(svgNumber(at.y))) rotate(-90)\" x=\"0\" y=\"\(svgNumber(across))\""
        } else {
            s += " x=\"\(svgNumber(at.x))\" y=\"\(svgNumber(at.y + across))\""
        }
        s += " font-size=\"\(svgNumber(svgFontSize(scale: style.scale)))\" text-anchor=\"\(anchor)\"\(fill(style.color))"
        // The width the bitmap font gives the text, so the layout holds in any font.
        let width = BitmapFont.width(of: text, scale: style.scale, bold: style.bold)
        if width > 0 { s += " textLength=\"\(width)\" lengthAdjust=\"spacingAndGlyphs\"" }
        if style.bold { s += " font-weight=\"bold\"" }
        if let halo = style.halo {
            s += " stroke=\"\(halo.hexString)\" stroke-width=\"\(svgNumber(3 * Double(max(1, style.scale))))\" stroke-linejoin=\"round\""
            if halo.opacity < 1 { s += " stroke-opacity=\"\(svgNumber(halo.opacity, digits: 3))\"" }
            s += " paint-order=\"stroke\""
        }
        s += ">\(escape(text))</text>\n"
        return s
    }

    private static func path(_ points: [PlotPoint], closed: Bool) -> String {
        var d = ""
        d.reserveCapacity(points.count * 14)
        for (i, p) in points.enumerated() {
            d += i == 0 ? "M" : "L"
            d += "\(svgNumber(p.x)) \(svgNumber(p.y))"
        }
        if closed { d += "Z" }
        return d
    }

    private static func fill(_ color: RGBColor) -> String {
        color.opacity < 1 ? " fill=\"\(color.hexString)\" fill-opacity=\"\(svgNumber(color.opacity, digits: 3))\"" : " fill=\"\(color.hexString)\""
    }

    private static func stroke(_ style: LineStyle) -> String {
        var s = " stroke=\"\(style.color.hexString)\" stroke-width=\"\(svgNumber(style.width))\" stroke-linejoin=\"round\""
        if style.color.opacity < 1 { s += " stroke-opacity=\"\(svgNumber(style.color.opacity, digits: 3))\"" }
        if !style.dash.isEmpty { s += " stroke-dasharray=\"\(style.dash.map { svgNumber($0) }.joined(separator: " "))\"" }
        return s
    }

    private static func role(_ role: String?) -> String {
        role.map { " class=\"\(escape($0))\"" } ?? ""
    }

    /// Escapes the XML special characters of `text`.
    static func escape(_ text: String) -> String {
        var s = ""
        s.reserveCapacity(text.count)
        for c in text {
            switch c {
            case "&": s += "&amp;"
            case "<": s += "&lt;"
            case ">": s += "&gt;"
            case "\"": s += "&quot;"
            case "'": s += "&apos;"
            default: s.append(c)
            }
        }
        return s
    }
}

/// A decimal number with at most `digits` decimals and no trailing zeros, independent of
/// the locale ("12.5", "-3", "0.25").
func svgNumber(_ value: Double, digits: Int = 2) -> String {
    guard value.isFinite else { return "0" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (value * scale).rounded()
    if scaled == 0 { return "0" }
    let negative = scaled < 0
    let magnitude = abs(scaled)
    let whole = (magnitude / scale).rounded(.down)
    var fraction = Int(magnitude - whole * scale)
    var s = negative ? "-" : ""
    s += String(Int64(whole))
    if fraction > 0 {
        var decimals = digits
        while fraction % 10 == 0 {
            fraction /= 10
            decimals -= 1
        }
        let f = String(fraction)
        s += "." + String(repeating: "0", count: decimals - f.count) + f
    }
    return s
}
