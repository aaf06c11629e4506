import Foundation
import Testing
@testable import Analysis
import ImageCore
import TestSupport

@Suite struct AnalysisTests {
    /// A 40×20 image: left half (0.2, 0.1, 0.05), right half a ramp; a few clipped pixels and
    /// negative values in the bottom rows.
    static func image(clipped: Bool = true) -> SceneLinearImage {
        let w = 40, h = 20
        var samples = [Float](repeating: 0, count: w * h * 3)
        var mask = [UInt8](repeating: 0, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                let i = y * w + x
                let v: SIMD3<Float> = x < 20 ? [0.2, 0.1, 0.05] : SIMD3(repeating: Float(x - 19) / 32)
                samples[3 * i] = v.x
                samples[3 * i + 1] = v.y
                samples[3 * i + 2] = v.z
                if clipped && y == 0 && x >= 36 { mask[i] = 2 }
                if y == h - 1 && x >= 30 { samples[3 * i + 2] = -0.01 }
            }
        }
        return SceneLinearImage(pixels: ImageBuffer(width: w, height: h, channels: 3, samples: samples), clipMask: mask,
                                encoding: .linearRec2020, exposure: .none, provenance: .synthetic("t"))
    }

    @Test func statisticsOfAKnownRegion() throws {
        let m = try RegionStatistics.measure(Self.image(), region: Region(name: "left", shape: .rectangle(PixelRect(top: 0, left: 0, bottom: 20, right: 20))),
                                             percentiles: [50])
        #expect(m.pixels == 400 && m.clippedPixels == 0)
        let y = try #require(m.channels["Y"])
        let expectedY = 0.2627 * Double(Float(0.2)) + 0.6780 * Double(Float(0.1)) + 0.0593 * Double(Float(0.05))
        #expect(abs(y.mean - expectedY) < Tolerance.float)
        #expect(y.standardDeviation < Tolerance.float && abs(y.median - expectedY) < Tolerance.float)
        #expect(abs(m.channels["R"]!.mean - 0.2) < 1e-7)
    }

    @Test func rampPercentiles() throws {
        // The right half's R values are 1/32 ... 20/32, 20 rows each.
        let m = try RegionStatistics.measure(Self.image(clipped: false),
                                             region: Region(name: "ramp", shape: .fractionalRectangle(top: 0, left: 0.5, bottom: 1, right: 1)),
                                             percentiles: [25, 75])
        let r = try #require(m.channels["R"])
        #expect(abs(r.mean - 10.5 / 32) < Tolerance.float)
        #expect(abs(r.median - 10 / 32) < Tolerance.float)
        #expect(abs(r.minimum - 1 / 32) < 1e-7 && abs(r.maximum - 20 / 32) < 1e-7)
        #expect(abs((r.percentiles.first { $0.percentile == 25 }?.value ?? 0) - 5 / 32) < Tolerance.float)
        #expect(m.negativePixels == 10)
    }

    /// Every pixel is counted exactly once per quantity, whatever the range.
    @Test(arguments: [HistogramOptions(), HistogramOptions(binsPerStop: 8, range: -3 ... -1),
                      HistogramOptions(scale: .linear, linearBins: 10, range: 0...0.3)])
    func histogramCountsAddUp(options: HistogramOptions) {
        let image = Self.image()
        let h = Histogram.compute(image, options: options)
        #expect(h.pixels == 800 && h.clipped == 4)
        for q in RegionStatistics.quantities { #expect(h.total(q) == 800, "\(q)") }
        #expect(h.negative["B"] == (options.scale == .log2 ? 10 : 0) || h.below["B"] == 10)
    }

    @Test func histogramBinsAreWhereTheValuesAre() {
        let h = Histogram.compute(Self.image(clipped: false), options: HistogramOptions(binsPerStop: 1, range: -6...0))
        // Bin [−3, −2) is index 3, R in [0.125, 0.25): the left half (0.2, log2 = −2.32),
        // 400 pixels, and the ramp columns k/32 with k = 4…7, 4 × 20 = 80 pixels.
        let r = h.counts["R"]!
        #expect(r[3] == 480)
        #expect(r.reduce(0, +) == 800, "every R value (0.2 and 1/32 … 20/32) lies in 2⁻⁶ … 1")
        #expect(h.edges.count == 7 && h.edges.first == -6 && h.edges.last == 0)
    }

    @Test func polygonAndFractionRegions() throws {
        let triangle = Region(name: "t", shape: .polygon([SIMD2(0, 0), SIMD2(10, 0), SIMD2(0, 10)]))
        let w = try triangle.weights(width: 20, height: 20)
        // Pixel centres (x + 0.5, y + 0.5) with x + y + 1 < 10 are inside: 45 pixels.
        #expect(w.filter { $0 > 0 }.count == 45)
        #expect(try Region.parse("sky=0%,0%,50%,100%").shape == .fractionalRectangle(top: 0, left: 0, bottom: 0.5, right: 1))
        #expect(try Region.parse("box=10,20,30,40").shape == .rectangle(PixelRect(top: 10, left: 20, bottom: 30, right: 40)))
        #expect(throws: AnalysisError.self) { try Region.parse("nothing") }
        // Plain numbers are pixels: the old fraction form is refused, never read as pixels.
        for old in ["sky=0,0,0.5,1", "all=0,0,1,1", "x=0,0,2.5,3", "x=0%,0,5,5"] {
            #expect(throws: AnalysisError.self, "\(old)") { try Region.parse(old) }
        }
        // Outside or partly outside: refused, not clipped.
        for shape: Region.Shape in [.rectangle(PixelRect(top: 50, left: 50, bottom: 60, right: 60)),
                                    .rectangle(PixelRect(top: 0, left: 0, bottom: 21, right: 20)),
                                    .polygon([SIMD2(0, 0), SIMD2(20.5, 0), SIMD2(0, 10)])] {
            #expect(throws: AnalysisError.self, "\(shape)") { try Region(name: "x", shape: shape).weights(width: 20, height: 20) }
        }
        #expect(try Region.wholeImage().selection(width: 7, height: 5).bounds == PixelRect(width: 7, height: 5))
    }

    /// A region with clipped pixels turns a ratio into a bound, in the right direction.
    @Test func clippedRegionsGiveBounds() throws {
        let image = Self.image()
        let clippedTop = try RegionStatistics.measure(image, region: Region(name: "top", shape: .rectangle(PixelRect(top: 0, left: 30, bottom: 5, right: 40))))
        let clean = try RegionStatistics.measure(image, region: Region(name: "left", shape: .rectangle(PixelRect(top: 0, left: 0, bottom: 20, right: 20))))
        #expect(clippedTop.clippedPixels == 4)
        #expect(try RadianceRatio.between(clippedTop, clean).kind == .lowerBound)
        #expect(try RadianceRatio.between(clean, clippedTop).kind == .upperBound)
        #expect(try RadianceRatio.between(clippedTop, clippedTop).kind == .undetermined)
        let value = try RadianceRatio.between(clean, clean)
        #expect(value.kind == .value && abs(value.ratio - 1) < Tolerance.double)
        let json = String(decoding: try JSONEncoder().encode(try RadianceRatio.between(clippedTop, clean)), as: UTF8.self)
        #expect(json.contains("\"kind\":\"lower-bound\""))
    }

    /// The noise model propagates S·x + O through the colour matrix.
    @Test func noiseModelPropagation() throws {
        let m = Matrix3([2, -0.5, 0, 0, 1, 0, 0, 0.25, 1])
        let noise = try #require(NoiseModel(noiseProfile: [1e-4, 1e-6], cameraToOutput: m.e, exposureFactor: 2))
        let camera = SIMD3(0.3, 0.5, 0.2)
        let out = 2 * (m * camera)
        let v = noise.variance(ofOutput: out)
        let planes = SIMD3(1e-4 * 0.3 + 1e-6, 1e-4 * 0.5 + 1e-6, 1e-4 * 0.2 + 1e-6)
        let expectedR = 4 * (4 * planes.x + 0.25 * planes.y)
        #expect(abs(v.rgb.x - expectedR) < 1e-15)
        let wy = Rec2020.luminanceWeights
        var y = 0.0
        for j in 0..<3 {
            let c = wy.x * m[0, j] + wy.y * m[1, j] + wy.z * m[2, j]
            y += c * c * planes[j]
        }
        #expect(abs(v.y - 4 * y) < 1e-15)
        #expect(NoiseModel(noiseProfile: [1], cameraToOutput: m.e, exposureFactor: 1) == nil)
    }

    /// Mean standard errors match the scatter of means over seeded noisy trials.
    @Test func meanStandardErrorIsCalibrated() throws {
        let s = 2e-4, o = 1e-6
        let noise = try #require(NoiseModel(noiseProfile: [s, o], cameraToOutput: Matrix3.identity.e, exposureFactor: 1))
        var rng = SeededGenerator(seed: 3)
        var means: [Double] = []
        var predicted = 0.0
        for _ in 0..<400 {
            var samples = [Float](repeating: 0, count: 30 * 30 * 3)
            for i in samples.indices {
                // Box–Muller with the test's generator.
                let u = max(Double.random(in: 0..<1, using: &rng), 1e-300), v = Double.random(in: 0..<1, using: &rng)
                let z = (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
                samples[i] = Float(0.1 + z * (s * 0.1 + o).squareRoot())
            }
            let image = SceneLinearImage(pixels: ImageBuffer(width: 30, height: 30, channels: 3, samples: samples), clipMask: nil,
                                         encoding: .linearRec2020, exposure: .none, provenance: .synthetic("n"))
            let m = try RegionStatistics.measure(image, region: Region(name: "all", shape: .rectangle(PixelRect(width: 30, height: 30))), noise: noise)
            means.append(m.channels["R"]!.mean)
            predicted = m.channels["R"]!.meanStandardError!
        }
        let mean = means.reduce(0, +) / Double(means.count)
        let sd = (means.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(means.count - 1)).squareRoot()
        // 400 trials: the SD estimate is within about ±7 % (2 standard errors).
        #expect(abs(sd / predicted - 1) < 0.08, "measured \(sd), predicted \(predicted)")
    }
}
