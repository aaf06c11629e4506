import CCairo
import Foundation
@testable import Plots
import Testing
import TestSupport

/// The PNG writer against libpng (through Cairo's PNG reader): every pixel read back as
/// written, for rows on which each of the five filters is the one chosen.
@Suite struct PNGEncoderTests {
    /// Rows of 3-byte pixels, each built so that one filter predicts it exactly: 0 none (a
    /// zero row), 1 sub (a ramp), 2 up (the row above again), 3 average and 4 Paeth (each
    /// predictor's own recursion over random starts), between rows of noise.
    static func image(width: Int) -> RasterImage {
        var rng = SeededGenerator(seed: 31)
        let n = 3 * width
        var rows: [[UInt8]] = [(0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }]
        for kind in [0, 1, 2, 3, 4, 1, 3, 4, 2, 0] {
            let up = rows.last!
            var r = [UInt8](repeating: 0, count: n)
            for i in 0..<n {
                let a = i >= 3 ? Int(r[i - 3]) : Int(rng.next() % 256), b = Int(up[i]), c = i >= 3 ? Int(up[i - 3]) : 0
                switch kind {
                case 0: r[i] = 0
                case 1: r[i] = UInt8(truncatingIfNeeded: i >= 3 ? a + 7 : a)
                case 2: r[i] = up[i]
                case 3: r[i] = UInt8(i >= 3 ? (a + b) >> 1 : a)
                default:
                    let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                    r[i] = UInt8(i >= 3 ? (pa <= pb && pa <= pc ? a : pb <= pc ? b : c) : a)
                }
            }
            rows.append(r)
            rows.append((0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        }
        return RasterImage(width: width, height: rows.count, rgb: rows.flatMap { $0 })
    }

    @Test(arguments: [1, 5, 333])
    func pixelsReadBackByLibpng(width: Int) throws {
        let image = Self.image(width: width)
        // Which filter each row takes: all five occur (for rows wide enough to tell them apart).
        var chosen = Set<Int>()
        var candidate = [[UInt8]](repeating: [UInt8](repeating: 0, count: 3 * width), count: 5)
        var previous = [UInt8](repeating: 0, count: 3 * width)
        for y in 0..<image.height {
            let row = Array(image.rgb[(3 * width * y)..<(3 * width * (y + 1))])
            chosen.insert(PNGEncoder.filterRow(row, previous: previous, into: &candidate))
            previous = row
        }
        if width > 100 { #expect(chosen == [0, 1, 2, 3, 4], "filters chosen: \(chosen.sorted())") }

        let png = image.pngData()
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let path = TestData.temporaryDirectory("png").appendingPathComponent("x.png").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(png).write(to: URL(fileURLWithPath: path))
        let surface = try #require(cairo_image_surface_create_from_png(path))
        defer { cairo_surface_destroy(surface) }
        #expect(cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS)
        #expect(Int(cairo_image_surface_get_width(surface)) == width && Int(cairo_image_surface_get_height(surface)) == image.height)
        let stride = Int(cairo_image_surface_get_stride(surface))
        let data = try #require(cairo_image_surface_get_data(surface))
        var mismatches = 0
        for y in 0..<image.height {
            let row = UnsafeRawPointer(data + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<width {
                let v = row[x], i = 3 * (y * width + x)
                if [UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
                    != Array(image.rgb[i..<(i + 3)]) { mismatches += 1 }
            }
        }
        #expect(mismatches == 0, "\(mismatches) of \(width * image.height) pixels differ")
    }
}
