import Foundation
import Plots
import Testing

/// A full-size EV map: a 12-megapixel image reduced to 1200 pixels and written as PNG, its
/// layout and signature checked. The time is printed, not asserted (timings are the
/// benchmarks' work, docs/performance.md).
@Suite struct SpeedTests {
    @Test func twelveMegapixelEVMap() throws {
        let w = 4032, h = 3024
        var lum = [Float](repeating: 0, count: w * h)
        var clipped = [Bool](repeating: false, count: w * h)
        for y in 0..<h {
            let fy = Float(y) / Float(h)
            for x in 0..<w {
                // Stops from −14 to +1 along a diagonal, with a fine pattern.
                let stops = -14 + 15 * (Float(x) / Float(w) * 0.7 + fy * 0.3) + ((x ^ y) & 7 == 0 ? 0.5 : 0)
                lum[y * w + x] = exp2f(stops)
                clipped[y * w + x] = stops >= 0
            }
        }
        let map = EVMap(title: "12 MP", width: w, height: h, luminance: lum, clipped: clipped,
                        regions: [("a", [SIMD2(100, 100), SIMD2(900, 100), SIMD2(900, 700), SIMD2(100, 700)])], maxSize: 1200)
        let start = DispatchTime.now().uptimeNanoseconds
        let png = try PlotRenderer.render(map, format: .png)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        FileHandle.standardError.write(Data("EV map 4032 × 3024 → 1200 × 900 PNG (\(png.count) bytes): \(String(format: "%.3f", seconds)) s\n".utf8))
        let layout = map.layout()
        #expect(layout.mapPixelsWide == 1200 && layout.mapPixelsHigh == 900)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }
}
