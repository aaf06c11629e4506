import Foundation
import ImageCore
import Opcodes
import Testing
import TestSupport

/// The gain a GainMap gives at pixel (row, column), computed here from the chapter 7
/// description: relative position of the pixel centre within `bounds`, map index
/// (position − origin) / spacing clamped to the map, bilinear between the four points.
func referenceGain(_ m: GainMap, row: Int, column: Int, mapPlane: Int, bounds: PixelRect) -> Double {
    func axis(_ pixel: Int, _ start: Int, _ extent: Int, _ points: Int, _ origin: Double, _ spacing: Double) -> (Int, Int, Double) {
        if points == 1 { return (0, 0, 0) }
        let position = (Double(pixel - start) + 0.5) / Double(extent)
        let f = min(max((position - origin) / spacing, 0), Double(points - 1))
        let i = min(Int(f.rounded(.down)), points - 2)
        return (i, i + 1, f - Double(i))
    }
    let (r0, r1, ty) = axis(row, bounds.top, bounds.height, m.pointsV, m.originV, m.spacingV)
    let (c0, c1, tx) = axis(column, bounds.left, bounds.width, m.pointsH, m.originH, m.spacingH)
    func g(_ r: Int, _ c: Int) -> Double { Double(m.gain(row: r, column: c, plane: mapPlane)) }
    return (1 - ty) * ((1 - tx) * g(r0, c0) + tx * g(r0, c1)) + ty * ((1 - tx) * g(r1, c0) + tx * g(r1, c1))
}

@Suite struct GainMapTests {
    /// A constant image times the map: exactly the map's gains at pixels sitting on map
    /// points, the bilinear interpolation between them, edge gains replicated outside.
    @Test func constantImageGivesInterpolatedGains() throws {
        // 32 × 32 pixels; map points at relative 1/64 + k/4, i.e. on the centres of pixels
        // 0, 8, 16, 24 (and one point past the image at 32).
        var rng = SeededGenerator(seed: 11)
        let map = GainMap(area: OpcodeArea(top: 0, left: 0, bottom: 32, right: 32), pointsV: 5, pointsH: 5,
                          spacingV: 0.25, spacingH: 0.25, originV: 1.0 / 64, originH: 1.0 / 64, mapPlanes: 1,
                          gains: (0..<25).map { _ in Float.random(in: 0.8...2.5, using: &rng) })
        var image = ImageBuffer<Float>(width: 32, height: 32, channels: 1, repeating: 0.25)
        let report = try applyList([.gainMap(map)], to: &image)
        #expect(report.applied == [.init(index: 0, id: 9, samples: 1024, outOfRange: 0)])
        for i in 0..<4 {
            for j in 0..<4 {
                #expect(image[8 * i, 8 * j, 0] == 0.25 * map.gain(row: i, column: j, plane: 0), "map point \(i),\(j)")
            }
        }
        let bounds = PixelRect(width: 32, height: 32)
        for r in 0..<32 {
            for c in 0..<32 {
                let expected = min(0.25 * referenceGain(map, row: r, column: c, mapPlane: 0, bounds: bounds), 1)
                #expect(abs(Double(image[r, c, 0]) - expected) <= Tolerance.float, "pixel \(r),\(c)")
            }
        }
        // Halfway between points (pixel 4 lies halfway between pixels 0 and 8).
        let mid = 0.25 * (map.gain(row: 0, column: 0, plane: 0) + map.gain(row: 0, column: 1, plane: 0)) / 2
        #expect(abs(image[0, 4, 0] - mid) <= 2e-7)
    }

    /// A map smaller than the image: outside its points the nearest edge gain is used.
    @Test func edgeGainsAreReplicated() throws {
        let map = GainMap(area: OpcodeArea(top: 0, left: 0, bottom: 16, right: 16), pointsV: 2, pointsH: 2,
                          spacingV: 0.5, spacingH: 0.5, originV: 0.25, originH: 0.25, mapPlanes: 1, gains: [1.0, 2.0, 3.0, 4.0])
        var image = ImageBuffer<Float>(width: 16, height: 16, channels: 1, repeating: 0.125)
        try applyList([.gainMap(map)], to: &image)
        // Rows/columns 0 ... 3 have centres before relative 0.25; 12 ... 15 after 0.75.
        for r in 0..<4 { for c in 0..<4 { #expect(image[r, c, 0] == 0.125) } }
        for r in 12..<16 { for c in 12..<16 { #expect(image[r, c, 0] == 0.5) } }
        for r in 0..<4 { for c in 12..<16 { #expect(image[r, c, 0] == 0.25) } }
        for r in 12..<16 { for c in 0..<4 { #expect(image[r, c, 0] == 0.375) } }
    }

    /// Only the area's rows and columns on its pitch grid and its planes change; the last
    /// map plane serves the planes beyond `mapPlanes`.
    @Test func areaPlanesAndPitchesAreRespected() throws {
        let original = randomImage(width: 30, height: 20, channels: 4, seed: 3)
        var rng = SeededGenerator(seed: 4)
        let area = OpcodeArea(top: 3, left: 5, bottom: 17, right: 26, plane: 1, planes: 3, rowPitch: 2, colPitch: 3)
        let map = GainMap(area: area, pointsV: 3, pointsH: 4, spacingV: 0.5, spacingH: 1.0 / 3, originV: 0, originH: 0,
                          mapPlanes: 2, gains: (0..<24).map { _ in Float.random(in: 0.5...1.5, using: &rng) })
        var image = original
        try applyList([.gainMap(map)], to: &image)
        let bounds = PixelRect(width: 30, height: 20)
        for r in 0..<20 {
            for c in 0..<30 {
                for p in 0..<4 {
                    let inArea = (3..<17).contains(r) && (r - 3) % 2 == 0 && (5..<26).contains(c) && (c - 5) % 3 == 0 && p >= 1
                    if inArea {
                        let mapPlane = min(p - 1, 1)
                        let expected = min(Double(original[r, c, p]) * referenceGain(map, row: r, column: c, mapPlane: mapPlane, bounds: bounds), 1)
                        #expect(abs(Double(image[r, c, p]) - expected) <= 2e-6, "\(r),\(c),\(p)")
                    } else {
                        #expect(image[r, c, p] == original[r, c, p], "untouched \(r),\(c),\(p)")
                    }
                }
            }
        }
    }

    /// The shape phones write for lens shading on a Bayer image: four GainMap opcodes, one
    /// per CFA position (row/column pitch 2, offsets 0/1), 17 × 13 points spanning the
    /// image (spacing 1/(points − 1), origin 0). On a flat field the result divided by the
    /// field is the map of each CFA position, interpolated at every pixel.
    @Test func phoneStyleLensShadingReproducesTheMap() throws {
        let (width, height) = (252, 190)
        let (pointsH, pointsV) = (17, 13)
        var rng = SeededGenerator(seed: 17)
        var maps: [GainMap] = []
        for channel in 0..<4 {
            let (dr, dc) = (channel / 2, channel % 2)
            // A radial falloff shape like real shading tables, different per channel.
            let gains = (0..<(pointsV * pointsH)).map { k -> Float in
                let v = Double(k / pointsH) / Double(pointsV - 1) - 0.5, h = Double(k % pointsH) / Double(pointsH - 1) - 0.5
                return Float(1 + (1.2 + 0.1 * Double(channel)) * (v * v + h * h)) + Float.random(in: 0...0.01, using: &rng)
            }
            maps.append(GainMap(area: OpcodeArea(top: dr, left: dc, bottom: height, right: width, plane: 0, planes: 1,
                                                 rowPitch: 2, colPitch: 2),
                                pointsV: pointsV, pointsH: pointsH, spacingV: 1.0 / Double(pointsV - 1),
                                spacingH: 1.0 / Double(pointsH - 1), originV: 0, originH: 0, mapPlanes: 1, gains: gains))
        }
        let flat: Float = 0.3
        var image = ImageBuffer<Float>(width: width, height: height, channels: 1, repeating: flat)
        let report = try applyList(maps.map { .gainMap($0) }, to: &image,
                                   context: OpcodeContext(imageBounds: PixelRect(width: width, height: height), clipping: .keepRange))
        #expect(report.applied.map(\.samples) == Array(repeating: width * height / 4, count: 4))
        let bounds = PixelRect(width: width, height: height)
        var worst = 0.0
        for r in 0..<height {
            for c in 0..<width {
                let map = maps[(r % 2) * 2 + c % 2]
                let expected = referenceGain(map, row: r, column: c, mapPlane: 0, bounds: bounds)
                worst = max(worst, abs(Double(image[r, c, 0] / flat) - expected))
            }
        }
        #expect(worst <= 2e-6, "largest deviation from the map \(worst)")
        // The corners carry the map's corner gains (the pixel centres lie just inside, at
        // most half a pixel from the map's corner points).
        let corner = Double(image[0, 0, 0] / flat), cornerGain = Double(maps[0].gain(row: 0, column: 0, plane: 0))
        #expect(abs(corner - cornerGain) < 0.01)
    }

    /// A single map point (1 × 1) is a constant gain whatever its spacing and origin.
    @Test func singlePointMapIsConstant() throws {
        let map = GainMap(area: OpcodeArea(top: 0, left: 0, bottom: 0, right: 0, planes: 3), pointsV: 1, pointsH: 1,
                          spacingV: 0, spacingH: -3, originV: 7, originH: 0.2, mapPlanes: 3, gains: [2, 3, 4])
        var image = ImageBuffer<Float>(width: 6, height: 5, channels: 3, repeating: 0.125)
        try applyList([.gainMap(map)], to: &image)
        for r in 0..<5 { for c in 0..<6 { #expect([image[r, c, 0], image[r, c, 1], image[r, c, 2]] == [0.25, 0.375, 0.5]) } }
    }
}
