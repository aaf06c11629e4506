import CaptureSimulation
import Foundation
import Testing
@testable import Measuring
@testable import Reporting
import SceneLinearKit
import TestSupport

/// E_v measured without holding the image (`Pipeline.illuminance` of a file: a DNG developed
/// patch by patch, our EXR or HDF5 file in its stored samples, the sums of each patch added in
/// the order of the patches' positions) equals the former whole-image computation (kept here
/// as `formerSums`) to 1e-12, the CFA sampling term (a difference of sums) to 1e-10: simulated
/// LinearRaw and CFA fisheye captures, with and without a clipped sun, the circle given and
/// found (`--circle auto`, two passes), a sun of less than a pixel, EXR and HDF5 files with and
/// without a standard deviation layer, an image in memory with per-pixel gains and NaNs; the
/// same at one thread and at three, bit for bit; and `calibrate --illuminance-vertical` takes
/// the same sums.
@Suite struct StreamedIlluminanceTests {
    typealias Sums = (sum: Double, noiseVariance: Double?, clippedSum: Double, clippedPixels: Int, solidAngle: Double, pixels: Int,
                      nonFinitePixels: Int, sampling: Double?)

    /// The whole-image sums as `Pipeline.illuminanceSums` computed them before E_v was
    /// streamed: one pass over the image in memory and its geometry's whole arrays, every
    /// pixel added in row-major order.
    static func formerSums(_ input: AnalysisInput, lens: FisheyeLens) -> Sums {
        let image = input.image
        let w = image.width, h = image.height
        let values = FisheyeGeometry(lens: lens, width: w, height: h).arrays
        let (theta, omega) = (values.theta, values.solidAngle)
        let weights = Rec2020.luminanceWeights
        let kernel = input.noise.map { NoiseModel.Kernel($0, luminance: weights) }
        var e = 0.0, bound = 0.0, solid = 0.0, pixels = 0, boundPixels = 0, nonFinite = 0
        var squares = SIMD3<Double>(), weightedOutputs = SIMD3<Double>(), weightedGains = 0.0
        var parity = ParitySums()
        let clip = image.clipMask
        let px = image.pixels.samples
        for i in 0..<(w * h) where omega[i] > 0 {
            let rgb = SIMD3(Double(px[3 * i]), Double(px[3 * i + 1]), Double(px[3 * i + 2]))
            let y = (rgb * weights).sum()
            let weight = Double(cos(theta[i])) * omega[i]
            pixels += 1
            guard rgb.x.isFinite, rgb.y.isFinite, rgb.z.isFinite else {
                nonFinite += 1
                continue
            }
            e += y * weight
            let position = ((i / w) & 1) * 2 + ((i % w) & 1)
            parity.sums[position] += SIMD4<Double>(rgb.x, rgb.y, rgb.z, 1) * weight
            solid += omega[i]
            if kernel != nil {
                // Σ w² g · rgb and Σ w² g²: the model's region variance (demosaic correlation included).
                let gain = input.noise?.pixelGains.map { Double($0[i]) } ?? 1
                weightedOutputs += rgb * (gain * weight * weight)
                weightedGains += gain * gain * weight * weight
            } else if let layer = input.deviation {
                let d = SIMD3(Double(layer.deviation[3 * i]), Double(layer.deviation[3 * i + 1]), Double(layer.deviation[3 * i + 2]))
                squares += d * d * (weight * weight)
            }
            if let clip, clip[i] != 0 {
                boundPixels += 1
                bound += y * weight
            }
        }
        let variance = kernel.map { $0.regionVariance(weightedOutputs: weightedOutputs, weightedGains: weightedGains).y }
            ?? input.deviation.map { $0.regionVariance(squares).w }
        // A CFA image: E_v over its raw sites, which the demosaic cannot bias, and the CFA's
        // sampling of sources smaller than its pattern (`SiteLayout`); a one-position green
        // estimate has about 4× the variance of the whole sum's noise.
        var sampling: Double?
        if let layout = SiteLayout.of(image), layout.covers(parity) {
            e = (layout.outputSums(parity) * weights).sum()
            sampling = layout.samplingUncertainty(parity, noise: e > 0 ? 2 * (variance ?? 0).squareRoot() / e : 0)
        }
        return (e, variance, bound, boundPixels, solid, pixels, nonFinite, sampling)
    }

    static let size = (width: 320, height: 240)

    /// An overcast dome filling the circle inscribed in a 320 × 240 image, with a sun (which
    /// one frame clips) or without.
    static func dome(sun: Bool, sky: [Double] = [0.45, 0.5, 0.6], sunRadius: Double = 0.9,
                     sunRGB: [Double] = [2.4e5, 2.3e5, 2.1e5]) -> SceneDescription {
        SceneDescription(name: "dome", width: size.width, height: size.height, background: [0, 0, 0], elements: [
            .init(type: "sky", name: "sky", rgb: sky, projection: "equisolid", fov: 180, model: "cie-overcast",
                  sun: sun ? [30, 60, sunRadius] : nil, sunRGB: sun ? sunRGB : nil),
        ])
    }

    static func simulate(_ dir: URL, layout: String, sun: Bool, scene: SceneDescription? = nil, noise: Bool = true) throws -> String {
        var camera = CameraModel()
        camera.sensitivityOffset = 0
        camera.layout = layout
        camera.noise = noise
        let out = try Pipeline.simulate(scene: try RenderedScene(scene ?? dome(sun: sun)), camera: camera, name: "dome", directory: dir.path)
        return try #require(out.files["dng"])
    }

    static var luminance: DevelopOptions {
        var o = DevelopOptions()
        o.exposure = .luminance
        o.includeMasks = false
        return o
    }

    static func close(_ a: Double?, _ b: Double?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return Tolerance.close(a, b, relative: Tolerance.regroupedSum)
    }

    /// A result against the former sums (in cd/m², so E_v is the sum itself).
    static func compare(_ r: IlluminanceResult, _ former: Sums, lens: FisheyeLens, _ label: String) {
        #expect(r.lens == lens, "\(label): \(r.lens)")
        #expect(close(r.illuminance, former.sum) && close(r.solidAngle, former.solidAngle),
                "\(label): E_v \(r.illuminance) against \(former.sum), Σω \(r.solidAngle) against \(former.solidAngle)")
        #expect(close(r.noiseUncertainty, former.noiseVariance.map { $0.squareRoot() }),
                "\(label): noise \(String(describing: r.noiseUncertainty)) against \(String(describing: former.noiseVariance.map { $0.squareRoot() }))")
        #expect(r.pixels == former.pixels && r.lowerBoundPixels == former.clippedPixels && r.nonFinitePixels == former.nonFinitePixels,
                "\(label): \(r.pixels) \(r.lowerBoundPixels) \(r.nonFinitePixels) against \(former.pixels) \(former.clippedPixels) \(former.nonFinitePixels)")
        #expect(close(r.lowerBoundShare, former.sum > 0 ? former.clippedSum / former.sum : 0), "\(label): share \(r.lowerBoundShare)")
        // The sampling term comes from the difference of the two greens' sums, less the noise:
        // the cancellation magnifies the sums' last-bit differences (1.5e-13 relative seen), so
        // it is compared to 1e-10 of itself or of the noise term.
        let sampling = (r.samplingUncertainty ?? 0) - (former.sampling ?? 0)
        #expect((r.samplingUncertainty == nil) == (former.sampling == nil)
                && abs(sampling) <= 1e-10 * max(r.samplingUncertainty ?? 0, r.noiseUncertainty ?? 0),
                "\(label): sampling \(String(describing: r.samplingUncertainty)) against \(String(describing: former.sampling))")
    }

    @Test(arguments: ["linear-raw", "cfa"], [false, true])
    func dngStreamedEqualsTheWholeImage(layout: String, sun: Bool) throws {
        let dir = TestData.temporaryDirectory("streamed-ev-\(layout)-\(sun)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = try Self.simulate(dir, layout: layout, sun: sun)
        let label = "\(layout)\(sun ? ", sun" : "")"
        let input = try AnalysisInput.load(dng, options: Self.luminance)
        let lens = FisheyeLens(projection: .equisolid, fieldOfView: 180, width: Self.size.width, height: Self.size.height)
        let former = Self.formerSums(input, lens: lens)
        let one = try Parallel.withThreadCount(1) { try Pipeline.illuminance(dng, lens: lens, options: Self.luminance) }
        let three = try Parallel.withThreadCount(3) { try Pipeline.illuminance(dng, lens: lens, options: Self.luminance) }
        #expect(one == three, "\(label): the threads changed the result")
        Self.compare(one, former, lens: lens, label)
        Self.compare(try Pipeline.illuminance(input, lens: lens), former, lens: lens, label + ", in memory")
        #expect(one.kind == (sun ? .lowerBound : .value) && (one.lowerBoundPixels > 0) == sun, "\(label): \(one.kind)")
        #expect((one.samplingUncertainty != nil) == (layout == "cfa"))

        // The circle found: its luminance gathered in a first pass, the sums in a second.
        let auto = FisheyeLensRequest(projection: .equisolid, circle: .detected)
        let found = try auto.lens(for: input.image, path: dng)
        Self.compare(try Pipeline.illuminance(dng, lens: auto, options: Self.luminance), Self.formerSums(input, lens: found),
                     lens: found, label + ", circle found")

        // calibrate --illuminance-vertical: the same sums, of the image without exposure scaling.
        var relative = Self.luminance
        relative.exposure = .none
        let reference = CalibrationReference(photo: dng, region: Region(name: "image", shape: .rectangle(PixelRect(width: 1, height: 1))),
                                             luminance: 1000 / Double.pi, relativeUncertainty: 0.01, method: "E_v",
                                             fisheye: FisheyeSpec(projection: .equisolid, fieldOfView: 180))
        if sun {
            #expect(throws: PhotometryError.self) {
                try Pipeline.calibrate([reference], develop: relative, meterRelativeUncertainty: 0)
            }
        } else {
            let calibration = try Pipeline.calibrate([reference], develop: relative, meterRelativeUncertainty: 0)
            let unscaled = Self.formerSums(try AnalysisInput.load(dng, options: relative), lens: lens)
            let measured = try #require(calibration.references.first)
            #expect(Self.close(measured.measured, unscaled.sum / Double.pi), "\(label): \(measured.measured) against \(unscaled.sum / Double.pi)")
            #expect(Self.close(measured.measuredRelativeUncertainty, (unscaled.noiseVariance ?? 0).squareRoot() / unscaled.sum))
        }
    }

    /// A sun of less than a pixel in a dark sky, not clipped, on a noise-free CFA capture, at
    /// a few azimuths: where it falls on one of the green sites the CFA sampling term is above
    /// the noise's, and the streamed one equals the former.
    @Test func samplingTermOfASmallSun() throws {
        let dir = TestData.temporaryDirectory("streamed-ev-small-sun")
        defer { try? FileManager.default.removeItem(at: dir) }
        let lens = FisheyeLens(projection: .equisolid, fieldOfView: 180, width: Self.size.width, height: Self.size.height)
        var above = 0
        for azimuth in stride(from: 0.0, to: 360, by: 40) {
            var scene = Self.dome(sun: true, sky: [0.0005, 0.0005, 0.0005], sunRadius: 0.3, sunRGB: [1.8, 1.7, 1.6])
            scene.elements[0].sun = [30, azimuth, 0.3]
            let dng = try Self.simulate(dir, layout: "cfa", sun: true, scene: scene, noise: false)
            let r = try Pipeline.illuminance(dng, lens: lens, options: Self.luminance)
            Self.compare(r, Self.formerSums(try AnalysisInput.load(dng, options: Self.luminance), lens: lens), lens: lens, "sun at \(azimuth)°")
            #expect(r.kind == .value, "sun at \(azimuth)°: \(r.kind)")
            if (r.samplingUncertainty ?? 0) > (r.noiseUncertainty ?? .infinity) { above += 1 }
        }
        #expect(above > 0, "the sampling term never exceeded the noise term")
    }

    /// Our EXR and HDF5 files: without a standard deviation layer read in their stored samples
    /// (streamed), with one read whole with the layer; either way the former sums.
    @Test func convertedFilesWithAndWithoutTheLayer() throws {
        let dir = TestData.temporaryDirectory("streamed-ev-files")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = try Self.simulate(dir, layout: "cfa", sun: true)
        let lens = FisheyeLens(projection: .equisolid, fieldOfView: 180, width: Self.size.width, height: Self.size.height)
        var asStored = DevelopOptions()
        asStored.exposure = .none
        for (name, std) in [("plain.exr", false), ("std.exr", true), ("plain.h5", false), ("std.h5", true)] {
            let file = dir.appendingPathComponent(name).path
            let r = try CLI.run(["convert", dng, "--units", "luminance", "-o", file, "-q"] + (std ? ["--std"] : []))
            try #require(r.status == 0, "\(r.stderr)")
            let input = try AnalysisInput.load(file, options: asStored)
            #expect((input.deviation != nil) == std, "\(name)")
            let streamed = try Pipeline.illuminance(file, lens: lens, options: asStored)
            Self.compare(streamed, Self.formerSums(input, lens: lens), lens: lens, name)
            #expect(streamed.kind == .lowerBound, "\(name): \(streamed.kind)")
        }
    }

    /// An image in memory with per-pixel gains in its noise model and pixels that are not
    /// finite numbers: the sums read the gains by the pixel's place in the image, leave the
    /// NaNs out and count them, as the former sums did.
    @Test func imageInMemoryWithGainsAndNaNs() throws {
        let dir = TestData.temporaryDirectory("streamed-ev-gains")
        defer { try? FileManager.default.removeItem(at: dir) }
        var input = try AnalysisInput.load(try Self.simulate(dir, layout: "linear-raw", sun: false), options: Self.luminance)
        let (w, h) = (input.image.width, input.image.height)
        var noise = try #require(input.noise)
        noise.pixelGains = (0..<(w * h)).map { 1 + Float($0 % 7) / 14 }
        input.noise = noise
        for i in [h / 2 * w + w / 2, h / 3 * w + w / 2 + 11, (h / 2 + 40) * w + w / 2 - 60] { input.image.pixels.samples[3 * i + 1] = .nan }
        let lens = FisheyeLens(projection: .equisolid, fieldOfView: 150, centerX: 170.5, centerY: 110.25, radius: 100)
        let r = try Pipeline.illuminance(input, lens: lens)
        #expect(r.nonFinitePixels == 3)
        Self.compare(r, Self.formerSums(input, lens: lens), lens: lens, "gains and NaNs")
        let held = FisheyeGeometry(lens: lens, width: w, height: h).whole()
        #expect(try Pipeline.illuminance(input, geometry: held) == r)
    }
}
