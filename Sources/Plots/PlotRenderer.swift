/// File formats the charts render to.
public enum PlotFormat: String, Sendable, CaseIterable {
    /// 8-bit RGB PNG.
    case png
    /// SVG 1.1 (vector; text as glyph outlines, images embedded as PNG).
    case svg
    /// PDF 1.5 (vector; fonts embedded), one page.
    case pdf
}

/// Renders charts to the bytes of a PNG or SVG file.
///
/// Every chart is first built as a `Drawing` (a list of shapes, text and images), which Cairo
/// draws on an image, SVG or PDF surface: one drawing code for the three formats. PNG and
/// SVG bytes are deterministic (the same input gives the same bytes); a PDF also records
/// the time it was made.
public enum PlotRenderer {
    /// A histogram, `width × height` pixels.
    public static func render(_ plot: HistogramPlot, format: PlotFormat, width: Int = 960, height: Int = 540) -> [UInt8] {
        encode(plot.drawing(width: width, height: height), format)
    }

    /// An EV map; its size follows from the image and `maxSize`.
    public static func render(_ map: EVMap, format: PlotFormat) -> [UInt8] {
        encode(map.drawing(), format)
    }

    /// An XY plot, `width × height` pixels.
    public static func render(_ plot: XYPlot, format: PlotFormat, width: Int = 960, height: Int = 540) -> [UInt8] {
        encode(plot.drawing(width: width, height: height), format)
    }

    /// A drawing in the given format.
    public static func encode(_ drawing: Drawing, _ format: PlotFormat) -> [UInt8] {
        switch format {
        case .png: return drawing.png()
        case .svg: return drawing.svgData()
        case .pdf: return drawing.pdfData()
        }
    }
}
