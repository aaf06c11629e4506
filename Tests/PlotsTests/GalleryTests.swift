import Foundation
import Plots
import Testing
import TestSupport

/// Writes the example charts (PNG and SVG) and a font sheet to the folder named by
/// `SCENELINEAR_PLOTS_OUTPUT`, for looking at them; `docs/images` holds three of them.
@Suite("Plot gallery", .enabled(if: ProcessInfo.processInfo.environment["SCENELINEAR_PLOTS_OUTPUT"] != nil))
struct GalleryTests {
    static var folder: URL {
        URL(fileURLWithPath: ProcessInfo.processInfo.environment["SCENELINEAR_PLOTS_OUTPUT"]!)
    }

    static func write(_ bytes: [UInt8], _ name: String) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(bytes).write(to: folder.appendingPathComponent(name))
    }

    @Test func examples() throws {
        for format in PlotFormat.allCases {
            try Self.write(try PlotRenderer.render(Samples.histogram(), format: format), "histogram.\(format.rawValue)")
            try Self.write(try PlotRenderer.render(Samples.histogram(logCounts: false), format: format), "histogram-linear.\(format.rawValue)")
            try Self.write(try PlotRenderer.render(Samples.evMap(), format: format), "ev-map.\(format.rawValue)")
            try Self.write(try PlotRenderer.render(Samples.xyPlot(), format: format), "xy-plot.\(format.rawValue)")
            try Self.write(try PlotRenderer.render(Samples.noisePlot(), format: format), "xy-noise.\(format.rawValue)")
        }
    }

    @Test func fontSheet() throws {
        var d = Drawing(width: 900, height: 330)
        let ascii = (32...126).map { String(UnicodeScalar(UInt8($0))) }.joined()
        let lines = [String(ascii.prefix(48)), String(ascii.dropFirst(48)), "µ · × ± ° ² − – — … ≤ ≥ ≈ Δ σ → ← ′ é"]
        var y = 20.0
        for scale in 1...3 {
            for (i, line) in lines.enumerated() where scale == 1 || i < 2 {
                d.add(.text(line, at: PlotPoint(10, y), TextStyle(scale: scale, vertical: .capTop)))
                y += Double(14 * scale)
            }
            d.add(.text("Bold: Sunset 12.5 EV (−3.2 %)", at: PlotPoint(10, y), TextStyle(scale: scale, bold: true, vertical: .capTop)))
            y += Double(16 * scale)
        }
        try Self.write(try d.png(), "font.png")
        var ramp = Drawing(width: 512, height: 40)
        for i in 0..<512 {
            ramp.add(.rect(PlotRect(x: Double(i), y: 0, width: 1, height: 40), fill: EVColorRamp.color(at: Double(i) / 511)))
        }
        try Self.write(try ramp.png(), "ramp.png")
    }
}
