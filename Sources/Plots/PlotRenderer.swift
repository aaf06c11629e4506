/// File formats the charts render to.
public enum PlotFormat: String, Sendable, CaseIterable {
    /// 8-bit RGB PNG.
    case png
    /// SVG 1.1 with text as `<text>` and images as embedded PNG.
    case svg
}

/// Renders charts to the bytes of a PNG or SVG file.
///
/// Every chart is first built as a `Drawing` (a list of shapes, text and images); the PNG is
/// that drawing rasterised by `Canvas` and the SVG the same items written as SVG elements,
/// so the two formats show the same chart. Output is deterministic: the same input gives the
/// same bytes.
public enum PlotRenderer {
    /// A histogram, `width × height` pixels.
    public static func render(_ plot: HistogramPlot, format: PlotFormat, width: Int = 960, height: Int = 540) throws(PNGEncoderError) -> [UInt8] {
        try encode(plot.drawing(width: width, height: height), format)
    }

    /// An EV map; its size follows from the image and `maxSize`.
    public static func render(_ map: EVMap, format: PlotFormat) throws(PNGEncoderError) -> [UInt8] {
        try encode(map.drawing(), format)
    }

    /// An XY plot, `width × height` pixels.
    public static func render(_ plot: XYPlot, format: PlotFormat, width: Int = 960, height: Int = 540) throws(PNGEncoderError) -> [UInt8] {
        try encode(plot.drawing(width: width, height: height), format)
    }

    /// A drawing in the given format.
    public static func encode(_ drawing: Drawing, _ format: PlotFormat) throws(PNGEncoderError) -> [UInt8] {
        switch format {
        case .png: return try drawing.png()
        case .svg: return try drawing.svgData()
        }
    }
}
