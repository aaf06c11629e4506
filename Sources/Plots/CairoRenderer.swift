internal import CCairo
import Foundation

/// The chart typeface and its metrics, measured with Pango.
///
/// Text is set in DejaVu Sans (Debian's default sans-serif; fontconfig substitutes another
/// sans-serif face when it is missing) at a size whose capitals are `capHeight(scale)`
/// pixels tall: 9 px at scale 1. Layout code asks `width(of:)` for the advance width
/// Pango gives a string, so what is laid out is what is drawn.
public enum PlotFont {
    /// The font family asked of fontconfig.
    public static let family = "DejaVu Sans"
    /// Capital height in pixels at scale 1.
    public static let capHeight = 9

    /// Capital height in pixels at `scale`.
    public static func capHeight(scale: Int) -> Double { Double(capHeight * max(1, scale)) }

    /// The font size (pixels per em) whose capitals are `capHeight(scale:)` tall.
    public static func pixelSize(scale: Int) -> Double { capHeight(scale: scale) / capRatio }

    /// Capital height / font size of the face, from the ink height of "H" at 100 px.
    static let capRatio: Double = {
        let measured = TextLayout.withLayout("H", scale: nil, bold: false, pixelSize: 100) { layout -> Double in
            var ink = PangoRectangle(), logical = PangoRectangle()
            pango_layout_get_extents(layout, &ink, &logical)
            return Double(ink.height) / Double(ccairo_pango_scale()) / 100
        }
        return measured > 0.5 && measured < 0.9 ? measured : 0.729
    }()

    /// Advance width of `text` in pixels.
    public static func width(of text: String, scale: Int = 1, bold: Bool = false) -> Double {
        guard !text.isEmpty else { return 0 }
        return TextLayout.withLayout(text, scale: scale, bold: bold) { layout in
            var ink = PangoRectangle(), logical = PangoRectangle()
            pango_layout_get_extents(layout, &ink, &logical)
            return Double(logical.width) / Double(ccairo_pango_scale())
        }
    }
}

/// Pango layouts on a scratch surface, for measuring text.
enum TextLayout {
    static func fontDescription(scale: Int?, bold: Bool, pixelSize: Double? = nil) -> OpaquePointer? {
        let description = pango_font_description_new()
        pango_font_description_set_family(description, PlotFont.family)
        let size = pixelSize ?? PlotFont.pixelSize(scale: scale ?? 1)
        pango_font_description_set_absolute_size(description, size * Double(ccairo_pango_scale()))
        pango_font_description_set_weight(description, bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL)
        return description
    }

    /// Runs `body` with a layout of `text` on `cr`. Metrics are not hinted, so text has the
    /// same width on every surface (PNG, SVG, PDF) and in `PlotFont.width`.
    static func onContext<T>(_ cr: OpaquePointer, _ text: String, scale: Int?, bold: Bool, pixelSize: Double? = nil,
                             _ body: (OpaquePointer) -> T) -> T {
        let options = cairo_font_options_create()
        defer { cairo_font_options_destroy(options) }
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_SLIGHT)
        cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
        cairo_set_font_options(cr, options)
        let layout = pango_cairo_create_layout(cr)!
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        let description = fontDescription(scale: scale, bold: bold, pixelSize: pixelSize)
        defer { pango_font_description_free(description) }
        pango_layout_set_font_description(layout, description)
        // Pango 1.44+ rounds glyph positions to whole pixels by default: not for vector output.
        pango_context_set_round_glyph_positions(pango_layout_get_context(layout), 0)
        pango_layout_context_changed(layout)
        pango_layout_set_text(layout, text, -1)
        return body(layout)
    }

    /// Runs `body` with a layout of `text` on a 1 × 1 scratch surface.
    static func withLayout<T>(_ text: String, scale: Int?, bold: Bool, pixelSize: Double? = nil,
                              _ body: (OpaquePointer) -> T) -> T {
        let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1)
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)!
        defer { cairo_destroy(cr) }
        return onContext(cr, text, scale: scale, bold: bold, pixelSize: pixelSize, body)
    }
}

/// Draws `Drawing`s with Cairo: one drawing code for the PNG, SVG and PDF of a chart.
enum CairoRenderer {
    enum Target { case png, svg, pdf }

    /// The bytes of `pages` (one page each; PNG and SVG take the first) as `target`.
    static func render(_ pages: [Drawing], _ target: Target) -> [UInt8] {
        guard let first = pages.first else { return [] }
        var buffer = ccairo_buffer()
        defer { ccairo_buffer_free(&buffer) }
        let surface: OpaquePointer
        switch target {
        case .png: surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(first.width), Int32(first.height))
        case .svg: surface = ccairo_svg_surface(&buffer, Double(first.width), Double(first.height))
        case .pdf: surface = ccairo_pdf_surface(&buffer, Double(first.width), Double(first.height))
        }
        defer { cairo_surface_destroy(surface) }
        if target == .pdf {
            cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "SceneLinear")
            if !first.title.isEmpty { cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, first.title) }
        }
        let cr = cairo_create(surface)!
        for (index, page) in (target == .pdf ? pages : [first]).enumerated() {
            if index > 0 {
                cairo_pdf_surface_set_size(surface, Double(page.width), Double(page.height))
            }
            draw(page, on: cr)
            if target == .pdf { cairo_show_page(cr) }
        }
        cairo_destroy(cr)
        if target == .png {
            cairo_surface_flush(surface)
            return PNGEncoder.encode(surface) ?? []
        }
        cairo_surface_finish(surface)
        guard buffer.failed == 0, let data = buffer.data else { return [] }
        let bytes = Array(UnsafeBufferPointer(start: data, count: buffer.size))
        // SVG: a comment after the root element names the software that wrote it.
        return target == .svg ? stableSurfaceIDs(bytes) + Array("<!-- written by scenelinear -->\n".utf8) : bytes
    }

    /// Cairo names SVG surfaces and images by process-wide counters (`surface42`,
    /// `image547`); renumbered in order of appearance, the same drawing gives the same bytes
    /// in any process.
    static func stableSurfaceIDs(_ svg: [UInt8]) -> [UInt8] {
        let text = String(decoding: svg, as: UTF8.self)
        guard let pattern = try? NSRegularExpression(pattern: "\\b(surface|image)[0-9]+\\b") else { return svg }
        var names: [String: String] = [:]
        var out = ""
        var last = text.startIndex
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            guard let range = Range(match.range, in: text) else { continue }
            let name = String(text[range])
            let kind = name.hasPrefix("surface") ? "surface" : "image"
            let stable = names[name] ?? "\(kind)-\(names.count + 1)"
            names[name] = stable
            out += text[last..<range.lowerBound] + stable
            last = range.upperBound
        }
        out += text[last...]
        return Array(out.utf8)
    }

    /// `drawing` as 8-bit RGB pixels.
    static func raster(_ drawing: Drawing) -> RasterImage {
        let w = drawing.width, h = drawing.height
        let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(w), Int32(h))!
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)!
        draw(drawing, on: cr)
        cairo_destroy(cr)
        cairo_surface_flush(surface)
        let stride = Int(cairo_image_surface_get_stride(surface))
        let data = cairo_image_surface_get_data(surface)!
        var rgb = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            let row = UnsafeRawPointer(data + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<w {
                let v = row[x]   // native-endian 0xXXRRGGBB
                let i = (y * w + x) * 3
                rgb[i] = UInt8((v >> 16) & 0xFF)
                rgb[i + 1] = UInt8((v >> 8) & 0xFF)
                rgb[i + 2] = UInt8(v & 0xFF)
            }
        }
        return RasterImage(width: w, height: h, rgb: rgb)
    }

    /// RGB bytes as a PNG file.
    static func png(rgb: [UInt8], width: Int, height: Int) -> [UInt8] {
        guard let surface = imageSurface(rgb: rgb, width: width, height: height) else { return [] }
        defer { cairo_surface_destroy(surface) }
        return PNGEncoder.encode(surface) ?? []
    }

    /// An RGB24 image surface holding `rgb`.
    static func imageSurface(rgb: [UInt8], width: Int, height: Int) -> OpaquePointer? {
        guard width > 0, height > 0, let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height)) else {
            return nil
        }
        cairo_surface_flush(surface)
        let stride = Int(cairo_image_surface_get_stride(surface))
        let data = cairo_image_surface_get_data(surface)!
        for y in 0..<height {
            let row = UnsafeMutableRawPointer(data + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<width {
                let i = (y * width + x) * 3
                row[x] = 0xFF00_0000 | UInt32(rgb[i]) << 16 | UInt32(rgb[i + 1]) << 8 | UInt32(rgb[i + 2])
            }
        }
        cairo_surface_mark_dirty(surface)
        return surface
    }

    private static func setColor(_ cr: OpaquePointer, _ c: RGBColor) {
        cairo_set_source_rgba(cr, Double(c.red) / 255, Double(c.green) / 255, Double(c.blue) / 255, c.opacity)
    }

    private static func path(_ cr: OpaquePointer, _ points: [PlotPoint], closed: Bool) {
        cairo_new_path(cr)
        for (i, p) in points.enumerated() {
            if i == 0 { cairo_move_to(cr, p.x, p.y) } else { cairo_line_to(cr, p.x, p.y) }
        }
        if closed { cairo_close_path(cr) }
    }

    private static func stroke(_ cr: OpaquePointer, _ style: LineStyle) {
        setColor(cr, style.color)
        cairo_set_line_width(cr, style.width)
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT)
        if style.dash.isEmpty {
            cairo_set_dash(cr, nil, 0, 0)
        } else {
            cairo_set_dash(cr, style.dash, Int32(style.dash.count), 0)
        }
        cairo_stroke(cr)
    }

    /// Draws every item of `drawing` on `cr`, first to last, over its background.
    static func draw(_ drawing: Drawing, on cr: OpaquePointer) {
        cairo_save(cr)
        setColor(cr, drawing.background)
        cairo_rectangle(cr, 0, 0, Double(drawing.width), Double(drawing.height))
        cairo_fill(cr)
        cairo_set_antialias(cr, CAIRO_ANTIALIAS_GOOD)
        for item in drawing.items {
            switch item {
            case .rect(let r, let fill):
                setColor(cr, fill)
                cairo_rectangle(cr, r.x, r.y, r.width, r.height)
                cairo_fill(cr)
            case .line(let points, let style, let closed, _):
                guard points.count >= 2 else { continue }
                path(cr, points, closed: closed)
                stroke(cr, style)
            case .polygon(let points, let fill, _):
                guard points.count >= 3 else { continue }
                path(cr, points, closed: true)
                cairo_set_fill_rule(cr, CAIRO_FILL_RULE_EVEN_ODD)
                setColor(cr, fill)
                cairo_fill(cr)
            case .circle(let center, let radius, let fill, let outline):
                cairo_new_path(cr)
                cairo_arc(cr, center.x, center.y, radius, 0, 2 * Double.pi)
                if let fill {
                    setColor(cr, fill)
                    if outline != nil { cairo_fill_preserve(cr) } else { cairo_fill(cr) }
                }
                if let outline { stroke(cr, outline) }
            case .text(let text, let at, let style):
                drawText(cr, text, at: at, style: style)
            case .image(let image, let rect):
                guard rect.width > 0, rect.height > 0,
                      let surface = imageSurface(rgb: image.rgb, width: image.width, height: image.height) else { continue }
                cairo_save(cr)
                cairo_rectangle(cr, rect.x, rect.y, rect.width, rect.height)
                cairo_clip(cr)
                cairo_translate(cr, rect.x, rect.y)
                cairo_scale(cr, rect.width / Double(image.width), rect.height / Double(image.height))
                cairo_set_source_surface(cr, surface, 0, 0)
                cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST)
                cairo_paint(cr)
                cairo_restore(cr)
                cairo_surface_destroy(surface)
            case .drawing(let inner, let rect):
                guard inner.width > 0, inner.height > 0, rect.width > 0, rect.height > 0 else { continue }
                cairo_save(cr)
                cairo_translate(cr, rect.x, rect.y)
                cairo_scale(cr, rect.width / Double(inner.width), rect.height / Double(inner.height))
                cairo_rectangle(cr, 0, 0, Double(inner.width), Double(inner.height))
                cairo_clip(cr)
                draw(inner, on: cr)
                cairo_restore(cr)
            case .clip(let rect):
                cairo_reset_clip(cr)
                if let rect {
                    cairo_rectangle(cr, rect.x, rect.y, rect.width, rect.height)
                    cairo_clip(cr)
                }
            }
        }
        cairo_restore(cr)
    }

    private static func drawText(_ cr: OpaquePointer, _ text: String, at: PlotPoint, style: TextStyle) {
        guard !text.isEmpty else { return }
        TextLayout.onContext(cr, text, scale: style.scale, bold: style.bold) { layout in
            var ink = PangoRectangle(), logical = PangoRectangle()
            pango_layout_get_extents(layout, &ink, &logical)
            let unit = Double(ccairo_pango_scale())
            let width = Double(logical.width) / unit
            let baseline = Double(pango_layout_get_baseline(layout)) / unit
            let (along, across) = style.baselineOffset(width: width)
            cairo_save(cr)
            cairo_translate(cr, at.x, at.y)
            if style.rotated { cairo_rotate(cr, -Double.pi / 2) }
            // Move so that the layout's baseline start sits at the anchor's offset.
            cairo_move_to(cr, along, across - baseline)
            if let halo = style.halo {
                pango_cairo_layout_path(cr, layout)
                setColor(cr, halo)
                cairo_set_line_width(cr, max(2, PlotFont.capHeight(scale: style.scale) / 3))
                cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
                cairo_set_dash(cr, nil, 0, 0)
                cairo_stroke(cr)
                cairo_move_to(cr, along, across - baseline)
            }
            setColor(cr, style.color)
            pango_cairo_show_layout(cr, layout)
            cairo_restore(cr)
        }
    }
}
