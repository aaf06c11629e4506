/// A point in drawing coordinates: pixels, x to the right, y down, (0, 0) the top-left corner
/// of the top-left pixel (pixel centres are at half-integers).
public typealias PlotPoint = SIMD2<Double>

/// An axis-aligned rectangle in drawing coordinates.
public struct PlotRect: Sendable, Hashable {
    /// Left edge.
    public var x: Double
    /// Top edge.
    public var y: Double
    /// Width (≥ 0).
    public var width: Double
    /// Height (≥ 0).
    public var height: Double

    /// A rectangle from its top-left corner and size.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// Left edge.
    public var minX: Double { x }
    /// Top edge.
    public var minY: Double { y }
    /// Right edge.
    public var maxX: Double { x + width }
    /// Bottom edge.
    public var maxY: Double { y + height }

    /// Whether `p` lies inside (edges included).
    public func contains(_ p: PlotPoint) -> Bool {
        p.x >= minX && p.x <= maxX && p.y >= minY && p.y <= maxY
    }

    /// Whether the two rectangles overlap (touching edges do not count).
    public func intersects(_ other: PlotRect) -> Bool {
        minX < other.maxX && other.minX < maxX && minY < other.maxY && other.minY < maxY
    }

    /// The rectangle shrunk by `d` on every side (grown for negative `d`).
    public func insetBy(_ d: Double) -> PlotRect {
        PlotRect(x: x + d, y: y + d, width: max(0, width - 2 * d), height: max(0, height - 2 * d))
    }
}

/// How a line is stroked.
public struct LineStyle: Sendable, Hashable {
    /// Colour and opacity.
    public var color: RGBColor
    /// Width in pixels.
    public var width: Double
    /// Alternating dash and gap lengths in pixels; empty = solid.
    public var dash: [Double]

    /// A solid line by default.
    public init(color: RGBColor, width: Double = 1, dash: [Double] = []) {
        self.color = color
        self.width = width
        self.dash = dash
    }
}

/// How text is drawn and where it sits relative to its anchor point.
public struct TextStyle: Sendable, Hashable {
    /// Which point of the text's width the anchor names.
    public enum HorizontalAnchor: Sendable, Hashable { case start, middle, end }
    /// Which height of the text the anchor names.
    public enum VerticalAnchor: Sendable, Hashable {
        /// The baseline.
        case baseline
        /// Half the height of capitals and digits above the baseline (centres labels on ticks).
        case capMiddle
        /// The top of capitals and digits.
        case capTop
    }

    /// Colour of the glyphs.
    public var color: RGBColor
    /// Size step: capitals are `PlotFont.capHeight(scale:)` = 9·scale pixels tall.
    public var scale: Int
    /// Heavier strokes (titles, headings, values).
    public var bold: Bool
    /// Which point along the text the anchor is.
    public var horizontal: HorizontalAnchor
    /// Which height of the text the anchor is.
    public var vertical: VerticalAnchor
    /// Reads from bottom to top (turned 90° anticlockwise about the anchor), as y-axis titles do.
    public var rotated: Bool
    /// A contrasting outline behind the glyphs, for text over data.
    public var halo: RGBColor?

    /// Body text, anchored at the start of its baseline, by default.
    public init(color: RGBColor = PlotPalette.text, scale: Int = 1, bold: Bool = false,
                horizontal: HorizontalAnchor = .start, vertical: VerticalAnchor = .baseline,
                rotated: Bool = false, halo: RGBColor? = nil) {
        self.color = color
        self.scale = scale
        self.bold = bold
        self.horizontal = horizontal
        self.vertical = vertical
        self.rotated = rotated
        self.halo = halo
    }

    /// Offset from the anchor to the left end of the baseline, along and across the text.
    func baselineOffset(width: Double) -> (along: Double, across: Double) {
        let along: Double
        switch horizontal {
        case .start: along = 0
        case .middle: along = -width / 2
        case .end: along = -width
        }
        let across: Double
        switch vertical {
        case .baseline: across = 0
        case .capMiddle: across = PlotFont.capHeight(scale: scale) / 2
        case .capTop: across = PlotFont.capHeight(scale: scale)
        }
        return (along, across)
    }
}

/// An 8-bit RGB image, row by row from the top.
public struct RasterImage: Sendable, Equatable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// `width × height × 3` bytes.
    public var rgb: [UInt8]

    /// An image from its bytes.
    /// - Precondition: `rgb.count == width * height * 3`.
    public init(width: Int, height: Int, rgb: [UInt8]) {
        precondition(rgb.count == width * height * 3, "expected \(width * height * 3) bytes")
        self.width = width
        self.height = height
        self.rgb = rgb
    }

    /// The colour of pixel (`x`, `y`).
    public func pixel(_ x: Int, _ y: Int) -> SIMD3<UInt8> {
        let i = (y * width + x) * 3
        return SIMD3(rgb[i], rgb[i + 1], rgb[i + 2])
    }

    /// The image as a PNG file (written by Cairo).
    public func pngData() -> [UInt8] {
        CairoRenderer.png(rgb: rgb, width: width, height: height)
    }
}

/// One element of a `Drawing`.
public enum DrawItem: Sendable {
    /// A filled rectangle.
    case rect(PlotRect, fill: RGBColor)
    /// A polyline (closed: back to its first point); `role` names it in SVG output (`class`).
    case line([PlotPoint], LineStyle, closed: Bool = false, role: String? = nil)
    /// A filled polygon (even–odd rule); `role` names it in SVG output.
    case polygon([PlotPoint], fill: RGBColor, role: String? = nil)
    /// A circle, filled and/or outlined.
    case circle(center: PlotPoint, radius: Double, fill: RGBColor?, stroke: LineStyle?)
    /// A line of text.
    case text(String, at: PlotPoint, TextStyle)
    /// An image scaled (nearest pixel) into a rectangle.
    case image(RasterImage, in: PlotRect)
    /// Clips what follows to a rectangle, up to the next `.clip`; `nil` ends clipping.
    case clip(PlotRect?)
    /// Another drawing, scaled to fill `in` (its own background and items, clipped to it):
    /// charts placed on the pages of a report.
    indirect case drawing(Drawing, in: PlotRect)
}

/// A chart as a list of drawing items, drawn by Cairo (with Pango for the text) to pixels
/// (`rasterize`, `png`), SVG (`svgData`) or PDF (`pdfData`).
///
/// The three outputs come from the same drawing code, so they show the same chart; SVG and
/// PDF are vector files (text as glyph outlines in SVG, as embedded fonts in PDF, images at
/// their own resolution).
public struct Drawing: Sendable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// The paper colour under everything.
    public var background: RGBColor
    /// What is drawn, first to last.
    public var items: [DrawItem]
    /// The title, stored in the SVG's `<title>` element.
    public var title: String

    /// An empty drawing.
    public init(width: Int, height: Int, background: RGBColor = .white, title: String = "") {
        self.width = width
        self.height = height
        self.background = background
        self.items = []
        self.title = title
    }

    /// Appends `item` (drawn over everything before it).
    public mutating func add(_ item: DrawItem) {
        items.append(item)
    }

    /// Renders the drawing to pixels (anti-aliased).
    public func rasterize() -> RasterImage {
        CairoRenderer.raster(self)
    }

    /// The drawing as a PNG file (8-bit RGB).
    public func png() -> [UInt8] {
        CairoRenderer.render([self], .png)
    }

    /// The drawing as an SVG 1.1 file, one unit per pixel.
    public func svgData() -> [UInt8] {
        CairoRenderer.render([self], .svg)
    }

    /// The drawing as a one-page PDF, one point per pixel.
    public func pdfData() -> [UInt8] {
        CairoRenderer.render([self], .pdf)
    }

    /// Several drawings as the pages of one PDF, each page the size of its drawing.
    public static func pdf(pages: [Drawing]) -> [UInt8] {
        CairoRenderer.render(pages, .pdf)
    }
}
