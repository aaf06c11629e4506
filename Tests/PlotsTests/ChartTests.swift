import Foundation
import Plots
import ImageCore
import Testing
import TestSupport

/// Rendered charts checked pixel by pixel against their own axis mappings and layouts.
@Suite struct ChartTests {
    static func hex(_ c: RGBColor) -> SIMD3<UInt8> { SIMD3(c.red, c.green, c.blue) }

    static func count(_ image: RasterImage, _ color: RGBColor) -> Int {
        let target = hex(color)
        var n = 0
        for y in 0..<image.height { for x in 0..<image.width where image.pixel(x, y) == target { n += 1 } }
        return n
    }

    /// sRGB bytes → relative luminance (linear light).
    static func luminance(_ p: SIMD3<UInt8>) -> Double {
        func linear(_ v: UInt8) -> Double {
            let e = Double(v) / 255
            return e <= 0.04045 ? e / 12.92 : pow((e + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * linear(p.x) + 0.7152 * linear(p.y) + 0.0722 * linear(p.z)
    }

    static func blend(_ under: RGBColor, _ over: RGBColor, _ alpha: Double) -> SIMD3<UInt8> {
        func mix(_ a: UInt8, _ b: UInt8) -> UInt8 { UInt8((Double(a) + (Double(b) - Double(a)) * alpha).rounded()) }
        return SIMD3(mix(under.red, over.red), mix(under.green, over.green), mix(under.blue, over.blue))
    }

    /// The colour the EV map gives a luminance, computed as the renderer does (Float), and
    /// the two neighbouring ramp entries (rounding at an entry boundary may pick either).
    static func rampColors(_ value: Float, range: ClosedRange<Double>) -> [SIMD3<UInt8>] {
        let t = min(1, max(0, (log2(value) - Float(range.lowerBound)) * Float(1 / (range.upperBound - range.lowerBound))))
        let k = Int((t * Float(EVColorRamp.size - 1)).rounded())
        return [k - 1, k, k + 1].filter { $0 >= 0 && $0 < EVColorRamp.size }.map {
            SIMD3(EVColorRamp.table[3 * $0], EVColorRamp.table[3 * $0 + 1], EVColorRamp.table[3 * $0 + 2])
        }
    }

    // MARK: - Histogram

    @Test func histogramPixels() throws {
        let plot = Samples.histogram()
        let image = plot.drawing().rasterize()
        #expect(image.width == 960 && image.height == 540)
        // The PNG is exactly this raster, and says so in its header.
        let png = PlotRenderer.render(plot, format: .png)
        #expect(png == image.pngData())
        #expect(Array(png[16..<24]) == [0, 0, 0x03, 0xC0, 0, 0, 0x02, 0x1C], "IHDR 960 × 540")

        let white = Self.count(image, .white)
        #expect(Double(white) / Double(960 * 540) > 0.5, "background dominant: \(white) white pixels")
        // Each curve shows in its pure colour (the centres of its 1.5-pixel line).
        for name in ["R", "G", "B", "Y"] {
            let n = Self.count(image, PlotPalette.quantityColor(name)!)
            #expect(n > 150, "\(name): \(n) pixels of its colour")
        }

        // The clip line: dashed, in the column the x mapping gives for 0 EV.
        let layout = plot.layout()
        let plotArea = layout.plotArea
        let column = Int(layout.x.pixel(coordinate: 0).rounded(.down))
        let rows = Int(plotArea.minY)..<Int(plotArea.maxY)
        let onLine = rows.filter { image.pixel(column, $0) == Self.hex(PlotPalette.clipLine) }.count
        #expect(Double(onLine) > 0.45 * Double(rows.count), "dashes 6 on, 4 off: \(onLine) of \(rows.count) rows")
        let beside = rows.filter { image.pixel(column - 3, $0) == Self.hex(PlotPalette.clipLine) }.count
        #expect(beside == 0)
        // Above white the plot is tinted: 6 % of the clip colour over white.
        let tint = Self.blend(.white, PlotPalette.clipLine, 0.06)
        let tinted = rows.filter { image.pixel(Int(plotArea.maxX) - 5, $0) == tint }.count
        #expect(Double(tinted) > 0.8 * Double(rows.count))
        // The x axis spans the bin edges exactly.
        #expect(layout.x.domain == -14...2)
        #expect(layout.x.pixel(coordinate: -14) == plotArea.minX && layout.x.pixel(coordinate: 2) == plotArea.maxX)
    }

    @Test func histogramStepHeightFollowsTheCountAxis() {
        let plot = HistogramPlot(title: "One bin", binEdges: [0, 1, 2, 3, 4], logarithmic: false,
                                 series: [("counts", [0, 0, 9.5, 0])], logCounts: false)
        let image = plot.drawing().rasterize()
        let layout = plot.layout()
        #expect(layout.y.domain == 0...10, "0 … 9.5 × 1.04 widened to whole steps of 1")
        let color = Self.hex(PlotPalette.categorical[0])
        // Grid lines are at whole counts and every 0.5 in x: look between them.
        let top = Int(layout.y.pixel(9.5)!.rounded(.down))
        let middle = Int(layout.x.pixel(2.3)!.rounded(.down))
        #expect(image.pixel(middle, top) == color, "the step's top edge at count 9.5")
        #expect(image.pixel(middle, top - 3) == SIMD3(255, 255, 255), "nothing above it")
        // Bin 1 (count 0) has no top edge at that height, but its fill level is the axis.
        let inBin1 = Int(layout.x.pixel(1.3)!.rounded(.down))
        #expect(image.pixel(inBin1, top) != color)
        // Under the step: the translucent fill (9 %) over white, away from grid lines.
        let fill = Self.blend(.white, PlotPalette.categorical[0], 0.09)
        let filled = (top + 3..<Int(layout.plotArea.maxY) - 2).filter { image.pixel(middle, $0) == fill }.count
        #expect(filled > Int(layout.plotArea.maxY) - top - 20)
    }

    // MARK: - EV map

    /// 256 × 64 with luminance rising from −12 EV at the left to 0 EV at the right.
    static func gradientMap(clipped: [Bool]? = nil, regions: [(name: String, outline: [SIMD2<Double>])] = []) -> EVMap {
        let w = 256, h = 64
        var lum = [Float](repeating: 0, count: w * h)
        for y in 0..<h { for x in 0..<w { lum[y * w + x] = exp2f(-12 + 12 * (Float(x) + 0.5) / Float(w)) } }
        return EVMap(title: "Gradient", width: w, height: h, luminance: lum, evRange: -12...0, clipped: clipped, regions: regions)
    }

    @Test func evMapGradientIsMonotonicAndMatchesTheRamp() throws {
        let map = Self.gradientMap()
        let layout = map.layout()
        #expect(layout.pixelScale == 1 && layout.mapPixelsWide == 256 && layout.mapPixelsHigh == 64)
        let image = map.drawing().rasterize()
        #expect(image.width == layout.width && image.height == layout.height)
        let x0 = Int(layout.mapArea.minX), y = Int(layout.mapArea.minY) + 32
        var previous = -1.0
        for x in 0..<256 {
            let p = image.pixel(x0 + x, y)
            #expect(Self.rampColors(map.luminance[32 * 256 + x], range: -12...0).contains(p), "x = \(x)")
            let l = Self.luminance(p)
            #expect(l >= previous - 1e-9, "luminance of the colours must not fall along the gradient (x = \(x))")
            previous = max(previous, l)
        }
        #expect(Self.luminance(image.pixel(x0, y)) < 0.02)
        #expect(Self.luminance(image.pixel(x0 + 255, y)) > 0.8)
        // Different stops look different: 1 EV apart (21 pixels), colours differ clearly.
        for x in stride(from: 0, to: 235, by: 21) {
            let a = SIMD3<Int>(truncatingIfNeeded: image.pixel(x0 + x, y)), b = SIMD3<Int>(truncatingIfNeeded: image.pixel(x0 + x + 21, y))
            let d = a &- b
            #expect((d &* d).wrappedSum() > 200, "1 EV apart at x = \(x)")
        }
    }

    @Test func evMapClippedPixelsAreMagentaAndRegionsAreOutlined() {
        var clipped = [Bool](repeating: false, count: 256 * 64)
        for y in 20..<40 { for x in 100..<120 { clipped[y * 256 + x] = true } }
        let region: [SIMD2<Double>] = [SIMD2(140, 8), SIMD2(230, 8), SIMD2(230, 56), SIMD2(140, 56)]
        let map = Self.gradientMap(clipped: clipped, regions: [("card", region)])
        let layout = map.layout()
        let image = map.drawing().rasterize()
        let x0 = Int(layout.mapArea.minX), y0 = Int(layout.mapArea.minY)
        for y in 20..<40 { for x in 100..<120 { #expect(image.pixel(x0 + x, y0 + y) == SIMD3(255, 0, 255)) } }
        #expect(image.pixel(x0 + 99, y0 + 30) != SIMD3(255, 0, 255))
        #expect(image.pixel(x0 + 120, y0 + 30) != SIMD3(255, 0, 255))
        // The outline: white along the polygon's edges (the two pixel rows/columns the
        // 1.75-pixel line straddles), darkened by the halo just outside, untouched inside.
        for x in stride(from: 150, through: 220, by: 10) {
            for row in [7, 8, 55, 56] {
                let p = image.pixel(x0 + x, y0 + row)
                #expect(p.min() >= 215, "outline at (\(x), \(row)): \(p)")
            }
            let plain = image.pixel(x0 + x, y0 + 32)
            #expect(Self.rampColors(map.luminance[32 * 256 + x], range: -12...0).contains(plain))
            #expect(Self.luminance(image.pixel(x0 + x, y0 + 6)) < 0.7 * Self.luminance(plain), "halo at (\(x), 6)")
        }
        for yy in stride(from: 12, through: 52, by: 8) {
            // Anti-aliased: the brightest of the columns the line straddles is near white.
            #expect((139...141).map { Int(image.pixel(x0 + $0, y0 + yy).min()) }.max()! >= 200, "left edge at \(yy)")
            #expect((229...231).map { Int(image.pixel(x0 + $0, y0 + yy).min()) }.max()! >= 200, "right edge at \(yy)")
        }
    }

    @Test func evMapAveragesLinearLightWhenReducing() {
        // 3000 × 1200: bright (−2 EV) left of x = 1501, dark (−6 EV) from there; one clipped pixel.
        let w = 3000, h = 1200
        var lum = [Float](repeating: exp2f(-6), count: w * h)
        for y in 0..<h { for x in 0..<1501 { lum[y * w + x] = 0.25 } }
        var clipped = [Bool](repeating: false, count: w * h)
        clipped[600 * w + 2000] = true
        let map = EVMap(title: "Halves", width: w, height: h, luminance: lum, evRange: -8...0, clipped: clipped, maxSize: 1200)
        let layout = map.layout()
        #expect(layout.mapPixelsWide == 1200 && layout.mapPixelsHigh == 480)
        #expect(abs(layout.pixelScale - 0.4) < 1e-12)
        let image = map.drawing().rasterize()
        let x0 = Int(layout.mapArea.minX), y0 = Int(layout.mapArea.minY)
        // Map pixel 600 covers source [1500, 1502.5): 1 bright pixel and 1.5 dark ones.
        let mixed = Float((1 * 0.25 + 1.5 / 64) / 2.5)
        #expect(Self.rampColors(0.25, range: -8...0).contains(image.pixel(x0 + 599, y0 + 100)))
        #expect(Self.rampColors(mixed, range: -8...0).contains(image.pixel(x0 + 600, y0 + 100)))
        #expect(Self.rampColors(exp2f(-6), range: -8...0).contains(image.pixel(x0 + 601, y0 + 100)))
        // The clipped source pixel marks exactly the block that contains it.
        #expect(image.pixel(x0 + 800, y0 + 240) == SIMD3(255, 0, 255))
        for (dx, dy) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
            #expect(image.pixel(x0 + 800 + dx, y0 + 240 + dy) != SIMD3(255, 0, 255))
        }
    }

    @Test func evMapAutomaticRange() {
        // Values from 2^-10 to 2^-2 (uniform in stops), plus clipped pixels at 4 that do not count.
        var values: [Float] = (0..<10_000).map { exp2f(-10 + 8 * Float($0) / 10_000) }
        values += [Float](repeating: 4, count: 50)
        let excluded = [Bool](repeating: false, count: 10_000) + [Bool](repeating: true, count: 50)
        #expect(EVMap.automaticRange(values, excluding: excluded) == -10...(-2))
        // A narrow spread is widened to 4 stops.
        #expect(EVMap.automaticRange([Float](repeating: 0.1, count: 100)).upperBound
                - EVMap.automaticRange([Float](repeating: 0.1, count: 100)).lowerBound == 4)
        #expect(EVMap.automaticRange([0, -1]) == -8...0, "no positive value: a default range")
    }

    @Test func smallMapsAreEnlargedByAWholeFactor() {
        let map = EVMap(title: "Tiny", width: 40, height: 30, luminance: [Float](repeating: 0.1, count: 1200))
        let layout = map.layout()
        #expect(layout.pixelScale == 12, "480 / 40")
        #expect(layout.mapArea.width == 480 && layout.mapArea.height == 360)
    }

    // MARK: - XY plot

    @Test func xyPlotPointsLandOnTheirMarkers() {
        let plot = XYPlot(title: "Line", xLabel: "x", yLabel: "y",
                          series: [("a", [(0, 0, nil), (10, 10, 2)]), ("b", [(5, 1, nil), (6, 2, nil)])],
                          referenceLines: [(y: 5, label: "five")])
        let image = plot.drawing().rasterize()
        let layout = plot.layout()
        // Marker centres are the series colours; the point (10, 10) has an error bar to 12.
        let colors = PlotPalette.seriesColors(["a", "b"]).map(Self.hex)
        #expect(colors[0] != colors[1])
        let p = (x: Int(layout.x.pixel(10)!), y: Int(layout.y.pixel(10)!))
        #expect(image.pixel(p.x, p.y) == colors[0])
        #expect(layout.y.domain.upperBound >= 12, "the error bar is inside the axis")
        let q = (x: Int(layout.x.pixel(5)!), y: Int(layout.y.pixel(1)!))
        #expect(image.pixel(q.x, q.y) == colors[1])
        // The reference line is dashed grey at y = 5.
        let row = Int(layout.y.pixel(5)!.rounded(.down))
        let grey = (Int(layout.plotArea.minX)..<Int(layout.plotArea.maxX)).filter { image.pixel($0, row) == SIMD3(0x8A, 0x8A, 0x8A) }
        #expect(grey.count > Int(layout.plotArea.width * 0.4))
    }

    @Test func logAxesDropNonPositiveValues() {
        let plot = XYPlot(title: "Log", xLabel: "x", yLabel: "y",
                          series: [("s", [(0.001, 1e-4, nil), (0, 1, nil), (1, 0.01, nil), (10, -1, nil)])], logX: true, logY: true)
        let layout = plot.layout()
        #expect(layout.x.domain.lowerBound < -3 && layout.x.domain.upperBound > 0 && layout.x.domain.upperBound < 0.5)
        #expect(layout.y.domain.lowerBound < -4 && layout.y.domain.upperBound < -1.5)
        #expect(layout.x.pixel(0) == nil && layout.y.pixel(-1) == nil)
    }

    // MARK: - Determinism and sizes

    /// PNG and SVG; a PDF also records when it was made.
    @Test func sameInputSameBytes() {
        for format in [PlotFormat.png, .svg] {
            #expect(PlotRenderer.render(Samples.histogram(), format: format) == PlotRenderer.render(Samples.histogram(), format: format))
            #expect(PlotRenderer.render(Samples.xyPlot(), format: format) == PlotRenderer.render(Samples.xyPlot(), format: format))
            let map = Samples.evMap(width: 600, height: 400)
            #expect(PlotRenderer.render(map, format: format) == PlotRenderer.render(map, format: format))
        }
    }

    /// The parallel parts (reduction, colouring) give the same bytes on any number of threads.
    @Test func sameBytesOnOneThread() {
        let map = Samples.evMap(width: 1500, height: 1000, maxSize: 700)
        let parallel = PlotRenderer.render(map, format: .png)
        let serial = Parallel.withThreadCount(1) { PlotRenderer.render(map, format: .png) }
        let three = Parallel.withThreadCount(3) { PlotRenderer.render(map, format: .png) }
        #expect(serial == parallel)
        #expect(three == parallel)
    }

    @Test func otherSizes() {
        let image = Samples.histogram().drawing(width: 640, height: 360).rasterize()
        #expect(image.width == 640 && image.height == 360)
        let big = Samples.xyPlot().drawing(width: 1600, height: 900).rasterize()
        #expect(big.width == 1600 && big.height == 900)
    }

    @Test func emptyInputsStillRender() {
        let histogram = HistogramPlot(title: "Nothing", binEdges: [], series: [])
        #expect(histogram.drawing().rasterize().width == 960)
        let xy = XYPlot(title: "Nothing", xLabel: "x", yLabel: "y", series: [])
        #expect(PlotRenderer.render(xy, format: .png).count > 100)
        let map = EVMap(title: "Nothing", width: 0, height: 0, luminance: [])
        #expect(PlotRenderer.render(map, format: .png).count > 100)
    }
}
