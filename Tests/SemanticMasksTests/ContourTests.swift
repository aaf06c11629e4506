import Analysis
import Foundation
import Testing
@testable import Batching
@testable import Engine
@testable import Measuring
@testable import Reporting
import SceneLinearKit
@testable import SimulationCheck
import TestSupport

/// The 0.5 iso-contours that outline mask regions on EV maps.
@Suite struct ContourTests {
    static func disc(width: Int, height: Int, centre: SIMD2<Double>, radius: Double) -> [Float] {
        var v = [Float](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let d = SIMD2(Double(x) + 0.5, Double(y) + 0.5) - centre
                v[y * width + x] = (d * d).sum() <= radius * radius ? 1 : 0
            }
        }
        return v
    }

    /// A disc of radius 20 gives one closed outline whose vertices lie within a pixel of the
    /// circle and whose area is within 3 % of π r².
    @Test func discHasOneRoundOutline() {
        let centre = SIMD2(50.0, 40.0)
        let loops = MaskContours.isoLines(Self.disc(width: 100, height: 80, centre: centre, radius: 20), width: 100, height: 80)
        #expect(loops.count == 1)
        let loop = loops[0]
        let distances = loop.map { (($0 - centre) * ($0 - centre)).sum().squareRoot() }
        #expect(distances.allSatisfy { abs($0 - 20) <= 1 }, "\(distances.min()!)…\(distances.max()!)")
        #expect(abs(MaskContours.area(loop) / (Double.pi * 400) - 1) < 0.03, "\(MaskContours.area(loop))")
    }

    /// A mask that is 1 everywhere is outlined along the image's edges (marching squares
    /// cuts each corner by a triangle of 1/8 pixel²); two separate discs
    /// give two outlines; a reduced map still finds the disc.
    @Test func edgesSeveralPartsAndReduction() {
        let full = MaskContours.isoLines([Float](repeating: 1, count: 30 * 20), width: 30, height: 20)
        #expect(full.count == 1 && abs(MaskContours.area(full[0]) - (600 - 4.0 / 8)) < 1e-9)
        #expect(full.first?.allSatisfy { $0.x == 0 || $0.x == 30 || $0.y == 0 || $0.y == 20 } == true)
        var two = Self.disc(width: 120, height: 60, centre: [30, 30], radius: 10)
        for (i, v) in Self.disc(width: 120, height: 60, centre: [90, 30], radius: 15).enumerated() { two[i] = max(two[i], v) }
        let loops = MaskContours.isoLines(two, width: 120, height: 60)
        #expect(loops.count == 2)
        #expect(Set(loops.map { (MaskContours.area($0) / (Double.pi * 25)).rounded() }) == [4, 9])
        let reduced = MaskContours.isoLines(Self.disc(width: 2000, height: 1000, centre: [1000, 500], radius: 300),
                                            width: 2000, height: 1000, maxSize: 500)
        #expect(reduced.count == 1 && abs(MaskContours.area(reduced[0]) / (Double.pi * 90000) - 1) < 0.03)
    }

    /// The EV map outlines a mask region instead of listing it; one that never reaches 0.5 is listed.
    @Test func evMapOutlinesMaskRegions() {
        let w = 60, h = 40
        let pixels = ImageBuffer<Float>(width: w, height: h, channels: 3, repeating: 0.25)
        let discLayer = SemanticMaskLayer(name: "disc", semanticName: "urn:x:disc", sourceIFD: "IFD0/SubIFD1",
                                          values: ImageBuffer(width: w, height: h, channels: 1,
                                                              samples: Self.disc(width: w, height: h, centre: [30, 20], radius: 12)))
        let faint = SemanticMaskLayer(name: "faint", semanticName: "urn:x:faint", sourceIFD: "IFD0/SubIFD2",
                                      values: ImageBuffer(width: w, height: h, channels: 1, repeating: 0.25))
        let image = SceneLinearImage(pixels: pixels, clipMask: nil, encoding: .linearRec2020, exposure: .none,
                                     provenance: ImageProvenance(sourceFile: "t", sourceSHA256: "", software: "", sourceIFD: "",
                                                                 whiteBalanceSource: "", whiteXY: [], cameraNeutral: [],
                                                                 cameraToOutput: [], dng: []), masks: [discLayer, faint])
        let map = AnalysisCharts.evMap(image, title: "t", regions: [Region(name: "d", shape: .mask("disc")),
                                                                    Region(name: "f", shape: .mask("faint"))])
        #expect(map.regions.count == 1 && map.regions[0].name == "d" && map.regions[0].outline.count > 20)
        #expect(map.subtitle?.contains("not outlined): f") == true, "\(map.subtitle ?? "")")
    }
}
