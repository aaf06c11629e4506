import Foundation
@testable import Plots
import Testing

/// The chart font, the drawing primitives and the axis helpers.
@Suite struct FontAndAxisTests {
    /// Pango's metrics of the chart font: capitals `PlotFont.capHeight` pixels tall, widths
    /// that grow with the text, the scale and the weight.
    @Test func fontMetrics() {
        #expect(PlotFont.width(of: "") == 0)
        let e = PlotFont.width(of: "E"), ee = PlotFont.width(of: "EE")
        #expect(e > 4 && e < 12 && abs(ee - 2 * e) < 0.01, "\(e) \(ee)")
        #expect(abs(PlotFont.width(of: "EE", scale: 2) - 2 * ee) < 0.5)
        #expect(PlotFont.width(of: "EE", bold: true) > ee)
        #expect(abs(PlotFont.width(of: "0123456789") - 10 * PlotFont.width(of: "0")) < 0.01, "tabular digits")
        // Drawn at scale 2 with its top on y = 10.5: the ink of "H" spans 18 ± 1 rows.
        var d = Drawing(width: 60, height: 40)
        d.add(.text("H", at: PlotPoint(5, 10), TextStyle(color: .black, scale: 2, vertical: .capTop)))
        let image = d.rasterize()
        let inked = (0..<40).filter { y in (0..<60).contains { x in image.pixel(x, y).x < 128 } }
        #expect(inked.count >= 17 && inked.count <= 19 && abs((inked.first ?? 0) - 10) <= 1, "\(inked)")
        // Characters beyond ASCII used by the charts have glyphs (not the empty box of a missing one).
        for s in ["µ", "·", "×", "±", "−", "≤", "≥", "Δ", "σ", "²"] { #expect(PlotFont.width(of: s) > 2, "\(s)") }
    }

    /// Cairo draws the primitives where the drawing says: a one-pixel line through pixel
    /// centres, butt ends, dashes, even–odd polygons with anti-aliased edges, discs, clipping.
    @Test func drawingPrimitives() {
        var d = Drawing(width: 40, height: 30)
        d.add(.line([PlotPoint(10.5, 2), PlotPoint(10.5, 12)], LineStyle(color: .black)))
        d.add(.line([PlotPoint(0, 20.5), PlotPoint(20, 20.5)], LineStyle(color: .black, dash: [3, 2])))
        d.add(.polygon([PlotPoint(20, 2), PlotPoint(30.5, 2), PlotPoint(30.5, 12), PlotPoint(20, 12)], fill: RGBColor(0, 0, 255)))
        d.add(.circle(center: PlotPoint(35, 25), radius: 3, fill: RGBColor(255, 0, 0), stroke: nil))
        let image = d.rasterize()
        for y in 2..<12 { #expect(image.pixel(10, y) == SIMD3(0, 0, 0)) }
        #expect(image.pixel(9, 5) == SIMD3(255, 255, 255) && image.pixel(11, 5) == SIMD3(255, 255, 255))
        #expect(image.pixel(10, 1) == SIMD3(255, 255, 255) && image.pixel(10, 12) == SIMD3(255, 255, 255), "butt ends")
        let dashes = (0..<20).map { image.pixel($0, 20) == SIMD3(0, 0, 0) }
        #expect(dashes == [true, true, true, false, false, true, true, true, false, false,
                           true, true, true, false, false, true, true, true, false, false])
        #expect(image.pixel(25, 7) == SIMD3(0, 0, 255))
        let edge = image.pixel(30, 7)
        #expect(edge.x > 100 && edge.x < 156 && edge.z == 255, "half-covered column: \(edge)")
        #expect(image.pixel(31, 7) == SIMD3(255, 255, 255) && image.pixel(19, 7) == SIMD3(255, 255, 255))
        #expect(image.pixel(35, 25) == SIMD3(255, 0, 0) && image.pixel(39, 29) == SIMD3(255, 255, 255))

        var c = Drawing(width: 20, height: 20)
        c.add(.clip(PlotRect(x: 5, y: 5, width: 10, height: 10)))
        c.add(.rect(PlotRect(x: 0, y: 0, width: 20, height: 20), fill: .black))
        let clipped = c.rasterize()
        #expect(clipped.pixel(4, 10) == SIMD3(255, 255, 255) && clipped.pixel(5, 10) == SIMD3(0, 0, 0))
        #expect(clipped.pixel(14, 14) == SIMD3(0, 0, 0) && clipped.pixel(15, 14) == SIMD3(255, 255, 255))
    }

    /// An EV map of absolute values labels its stops with the values (falsecolor's way).
    @Test func absoluteLegendLabels() {
        #expect(EVMap.absoluteLabel(0, unit: "cd/m²") == "1 cd/m²")
        #expect(EVMap.absoluteLabel(10, unit: "cd/m²") == "1024 cd/m²")
        #expect(EVMap.absoluteLabel(-3, unit: "cd/m²") == "0.125 cd/m²")
        #expect(EVMap.absoluteLabel(20, unit: "cd/m²") == "1.05e+06 cd/m²")
        #expect(EVMap.absoluteLabel(-12, unit: "W·sr⁻¹·m⁻²") == "0.000244 W·sr⁻¹·m⁻²")
    }

    @Test func niceTicks() {
        #expect(AxisTicks.niceStep(span: 10, target: 5) == 2)
        #expect(AxisTicks.niceStep(span: 1, target: 4) == 0.2)
        #expect(AxisTicks.niceStep(span: 700, target: 3) == 200)
        #expect(AxisTicks.niceStep(span: 0.035, target: 7) == 0.005)
        let ticks = AxisTicks.linear(0...1, target: 5)
        #expect(ticks.map(\.coordinate).map { ($0 * 10).rounded() } == [0, 2, 4, 6, 8, 10])
        #expect(ticks.map(\.label) == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"])
        #expect(AxisTicks.linear(-12.6...0.6, target: 7).compactMap(\.label) == ["\u{2212}12", "\u{2212}10", "\u{2212}8", "\u{2212}6", "\u{2212}4", "\u{2212}2", "0"])
        #expect(AxisTicks.niceRange(0...10.4, target: 5) == 0...12)
    }

    @Test func stopTicks() {
        // Every stop ticked; labels every stop when there is room, else every 2 or 5.
        let wide = AxisTicks.stops(-4...2, pixelsPerStop: 60, minimumSpacing: 30)
        #expect(wide.map(\.coordinate) == [-4, -3, -2, -1, 0, 1, 2])
        #expect(wide.map(\.label) == ["\u{2212}4", "\u{2212}3", "\u{2212}2", "\u{2212}1", "0", "+1", "+2"])
        let narrow = AxisTicks.stops(-10...0, pixelsPerStop: 12, minimumSpacing: 30)
        #expect(narrow.count == 11)
        #expect(narrow.compactMap(\.label) == ["\u{2212}10", "\u{2212}5", "0"])
    }

    @Test func logTicks() {
        let ticks = AxisTicks.logarithmic(0...3, maximumLabels: 6)
        #expect(ticks.compactMap(\.label) == ["1", "10", "100", "1k"])
        #expect(ticks.filter { $0.label == nil }.count == 3 * 8, "2…9 in each of three decades")
        let few = AxisTicks.logarithmic(-3...(-1.5), maximumLabels: 6)
        #expect(few.compactMap(\.label) == ["0.001", "0.002", "0.005", "0.01", "0.02"])
        let many = AxisTicks.logarithmic(-12...0, maximumLabels: 5)
        #expect(many.compactMap(\.label) == ["1e\u{2212}12", "1e\u{2212}9", "1e\u{2212}6", "0.001", "1"])
    }

    @Test func numberFormats() {
        #expect(AxisFormat.number(-3, step: 1) == "\u{2212}3")
        #expect(AxisFormat.number(0.25, step: 0.05) == "0.25")
        #expect(AxisFormat.number(-0.0001, step: 0.1) == "0.0", "no negative zero")
        #expect(AxisFormat.stops(2) == "+2" && AxisFormat.stops(0) == "0" && AxisFormat.stops(-8) == "\u{2212}8")
        #expect(AxisFormat.ev(-2.5) == "\u{2212}2.5 EV")
        #expect(AxisFormat.count(20_000, step: 5_000) == "20k")
        #expect(AxisFormat.count(2_500_000, step: 500_000) == "2.5M")
        #expect(AxisFormat.count(250, step: 50) == "250")
        #expect(AxisFormat.count(8000, step: 2000, largest: 12_000) == "8k", "one unit per axis")
        #expect(AxisFormat.count(8000, step: 2000) == "8000")
        #expect(AxisFormat.power(0) == "1" && AxisFormat.power(3) == "1k" && AxisFormat.power(7) == "10M")
        #expect(AxisFormat.power(-2) == "0.01" && AxisFormat.power(-7) == "1e\u{2212}7")
        #expect(AxisFormat.grouped(1_234_567) == "1 234 567" && AxisFormat.grouped(-12) == "\u{2212}12")
    }

    /// OKLab lightness of an sRGB colour (the OKLab definition's matrices).
    static func oklabLightness(_ c: RGBColor) -> Double {
        func linear(_ v: UInt8) -> Double {
            let e = Double(v) / 255
            return e <= 0.04045 ? e / 12.92 : pow((e + 0.055) / 1.055, 2.4)
        }
        let r = linear(c.red), g = linear(c.green), b = linear(c.blue)
        let l = cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b)
        let m = cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b)
        let s = cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b)
        return 0.2104542553 * l + 0.7936177850 * m - 0.0040720468 * s
    }

    @Test func rampIsEvenInLightnessAndAvoidsMagenta() {
        for i in 0..<EVColorRamp.size {
            let t = Double(i) / Double(EVColorRamp.size - 1)
            let c = EVColorRamp.color(at: t)
            // Lightness 0.20 … 0.95, linear in t (to the rounding of 8-bit components).
            #expect(abs(Self.oklabLightness(c) - (0.20 + 0.75 * t)) < 0.004, "entry \(i): \(c)")
            // Far from magenta: never red and blue both well above green.
            #expect(!(Int(c.red) - Int(c.green) > 60 && Int(c.blue) - Int(c.green) > 60), "entry \(i): \(c)")
        }
        // The clipped colour and the no-value grey are not on the ramp.
        let magenta = Self.oklabLightness(.clipped)
        let ramp = (0..<EVColorRamp.size).map { EVColorRamp.color(at: Double($0) / Double(EVColorRamp.size - 1)) }
        #expect(!ramp.contains(.clipped) && !ramp.contains(EVMap.noValueColor))
        #expect(magenta > 0.6)
    }
}
