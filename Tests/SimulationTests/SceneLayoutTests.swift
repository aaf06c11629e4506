import Foundation
import Testing
import ImageCore
@testable import CaptureSimulation
import SceneLinearKit
import SimulationCheck
import TestSupport

/// Scene descriptions are untrusted input (`simulate --scene FILE.json`, and the scene inside
/// every `<name>.truth.json` that `validate` reads): whatever the JSON says, building the
/// scene gives an image or a `SceneError`, never a trap, a hang or a huge allocation.
@Suite struct SceneLayoutTests {
    static func scene(_ json: String) throws -> SceneDescription {
        try SceneDescription.decode(Data(json.utf8), path: "scene.json")
    }

    static func refusal(_ json: String, limits: SceneLimits = SceneLimits()) throws -> SceneError {
        let description = try scene(json)
        return try #require(throws: SceneError.self) { try SceneLayout(description, limits: limits) }
    }

    /// The first finding of the `scene` fuzz target (Fuzz/run.sh scene): a rectangle in pixels
    /// whose right edge is 1.9 · 10⁶⁵ made the conversion to an integer trap.
    @Test func fuzzFindingHugeRectangleCoordinate() throws {
        let input = #"{"background": [0.004, 0.003, 0.002], "elements": [{"from": [0.3, 0.16, 0.08], "log": true, "name": "s[y gra", "rect": [0, 0, 0.30, 18888888888888888888888888888888888888888888888888888888888888888], "to": [0.05, 0.06, 0.09], "type": "gradient"}, {"name": "sky", "rect": [0.024], "type": "ret"}], "height": 24, "name": "sunset", "unit": "relative", "width": 38}"#
        // In pixels (not all ≤ 1): rows 0 to 0.3 hold no whole pixel.
        #expect(try Self.refusal(input) == SceneError(reason: "s[y gra covers no pixels"))
        // Far-out coordinates are clipped to the image like any other.
        let wide = try RenderedScene(Self.scene(#"""
            {"name": "w", "width": 20, "height": 16, "background": [0, 0, 0],
             "elements": [{"type": "rect", "name": "all", "rect": [-1e300, 2, 1e300, 1.9e65], "rgb": [0.5, 0.25, 0.125]},
                          {"type": "gradient", "rect": [0, -1e300, 1e300, 1e300], "from": [0, 0, 0], "to": [0, 0, 0]},
                          {"type": "rect", "name": "a", "rect": [3, 4, 5, 6], "rgb": [1, 1, 1]}]}
            """#))
        #expect(wide.patches.map(\.rect) == [PixelRect(top: 0, left: 2, bottom: 16, right: 20), PixelRect(top: 3, left: 4, bottom: 5, right: 6)])
        // The gradient (black to black, over the whole image) painted over the first rectangle.
        #expect(wide.radiance[0, 19, 0] == 0 && wide.radiance[4, 5, 2] == 1)
    }

    @Test func disksFarOutsideAreRefused() throws {
        let sunAt = { (center: String, radius: String) in
            #"{"name": "d", "width": 32, "height": 16, "elements": [{"type": "disk", "name": "sun", "center": \#(center), "radius": \#(radius), "rgb": [1, 1, 1]}]}"#
        }
        let reason = "sun: center and radius must be finite, at most 1000 image widths or heights"
        #expect(try Self.refusal(sunAt("[1e300, 0.5]", "0.1")) == SceneError(reason: reason))
        #expect(try Self.refusal(sunAt("[0.5, -1e20]", "0.1")) == SceneError(reason: reason))
        #expect(try Self.refusal(sunAt("[0.5, 0.5]", "1e300")) == SceneError(reason: reason))
        #expect(try Self.refusal(sunAt("[0.5, 0.5]", "0")) == SceneError(reason: "sun needs center [x, y] and radius"))
        #expect(try Self.refusal(sunAt("[900, 0.5]", "0.1")) == SceneError(reason: "sun lies outside the image"))
        // A disk of 1000 image heights covers the whole image; its patch keeps its true extent.
        let huge = try RenderedScene(Self.scene(sunAt("[0.5, 0.5]", "1000")))
        #expect(huge.patches[0].rect == PixelRect(top: -15992, left: -15984, bottom: 16008, right: 16016))
        #expect(huge.radiance.samples.allSatisfy { $0 == 1 })
    }

    @Test func radianceMustBeFiniteAndBounded() throws {
        let rect = { (rgb: String) in
            #"{"name": "r", "width": 16, "height": 16, "elements": [{"type": "rect", "name": "p", "rect": [0, 0, 1, 1], "rgb": \#(rgb)}]}"#
        }
        let reason = "p needs rgb [r, g, b] (finite, magnitude at most 1e15)"
        #expect(try Self.refusal(rect("[1e300, 0, 0]")) == SceneError(reason: reason))
        #expect(try Self.refusal(rect("[0, -2e15, 0]")) == SceneError(reason: reason))
        #expect(try Self.refusal(rect("[1, 1]")) == SceneError(reason: reason))
        #expect(try RenderedScene(Self.scene(rect("[1e15, -1e15, 0]"))).radiance[7, 7, 1] == -1e15)
        // A ramp whose brightest step overflows: rgb × top is checked too.
        let ramp = #"{"name": "r", "width": 16, "height": 16, "elements": [{"type": "ramp", "name": "g", "rect": [0, 0, 1, 1], "steps": 4, "top": 1e300, "rgb": [1e10, 1, 1]}]}"#
        #expect(try Self.refusal(ramp) == SceneError(reason: "g (rgb × top) needs rgb [r, g, b] (finite, magnitude at most 1e15)"))
    }

    /// A scene too large to simulate is refused from its size, before its pixels are
    /// allocated (a 20000 × 20000 scene would need some 51 GB).
    @Test func oversizeScenesAreRefusedBeforeAllocation() throws {
        let big = #"{"name": "big", "width": 20000, "height": 20000, "elements": [{"type": "rect", "rect": [0, 0, 1, 1], "rgb": [1, 1, 1]}]}"#
        let error = try Self.refusal(big, limits: SceneLimits(maxBytes: 8 << 30))
        #expect(error == SceneError(reason: "size 20000×20000: simulating it needs about 51200000000 bytes, more than the limit of 8589934592 bytes",
                                    category: .limitExceeded))
        #expect(error.category.exitCode == 17)
        #expect(throws: SceneError(reason: "size 20000×20000: simulating it needs about 51200000000 bytes, more than the limit of 8589934592 bytes",
                                   category: .limitExceeded)) {
            try RenderedScene(Self.scene(big), limits: SceneLimits(maxBytes: 8 << 30))
        }
        // The limit is on the estimate: just under it is accepted.
        let small = try Self.scene(#"{"name": "s", "width": 64, "height": 32}"#)
        #expect(try SceneLayout(small, limits: SceneLimits(maxBytes: 64 * 32 * 128)).width == 64)
        #expect(throws: SceneError.self) { try SceneLayout(small, limits: SceneLimits(maxBytes: 64 * 32 * 128 - 1)) }
        #expect(try Self.refusal(#"{"name": "s", "width": 20001, "height": 32}"#) == SceneError(reason: "size 20001×32 (16...20000 per side)"))
        #expect(try Self.refusal(#"{"name": "s", "width": 16, "height": -9223372036854775807}"#)
                    == SceneError(reason: "size 16×-9223372036854775807 (16...20000 per side)"))
    }

    /// Painting costs each element its area: a few hundred KB of JSON repeating a full-image
    /// rectangle must not keep a large scene painting for hours.
    @Test func paintedAreaIsBounded() throws {
        func scene(_ count: Int) throws -> SceneDescription {
            let element = #"{"type": "rect", "rect": [0, 0, 1, 1], "rgb": [1, 1, 1]}"#
            return try Self.scene(#"{"name": "many", "width": 16, "height": 16, "elements": [\#(Array(repeating: element, count: count).joined(separator: ","))]}"#)
        }
        #expect(try RenderedScene(scene(64)).patches.count == 64)
        #expect(throws: SceneError(reason: "at rect64, the elements paint more than 64 times the image's 16×16 pixels")) {
            try SceneLayout(scene(65))
        }
    }

    /// Errors of the JSON itself name the file.
    @Test func malformedJSONNamesTheFile() throws {
        let error = try #require(throws: SceneError.self) { try SceneDescription.decode(Data("{\"name\": 1".utf8), path: "dir/my scene.json") }
        #expect(error.reason.hasPrefix("dir/my scene.json is not a scene description: "), "\(error)")
        #expect(error.category == .corruptData)
    }

    /// An infinite radiance (possible in a radiance map read from an EXR) is clipped like any
    /// overexposure, with and without noise. With noise it used to make the Poisson sampler
    /// return NaN for about half the draws: through the companding table those pixels were
    /// stored as code 1 (black instead of white); without companding, `Int(NaN)` traps.
    @Test(arguments: [true, false])
    func infiniteRadianceClips(noise: Bool) throws {
        // Row 0 red infinite (16 draws of the sampler), pixel (1, 0) red 10⁶.
        var values = [Double](repeating: 0.2, count: 16 * 16 * 3)
        for x in 0..<16 { values[3 * x] = .infinity }
        values[3 * 16] = 1e6
        let scene = RenderedScene(name: "inf", radiance: ImageBuffer(width: 16, height: 16, channels: 3, samples: values))
        var camera = CameraModel()
        camera.noise = noise
        camera.storage = "uncompressed"
        let capture = try Simulator.capture(scene, camera: camera)
        // The infinite pixels' first channel reads as that of the pixel of red 10⁶: white.
        let white = capture.dng.samples[3 * 16]
        #expect((0..<16).map { capture.dng.samples[3 * $0] } == Array(repeating: white, count: 16))
        #expect(white == capture.dng.samples.max() && white > capture.dng.samples[3 * 40])
    }

    /// A camera whose parameters are finite but multiply to nothing usable (an exposure of
    /// 1e300 s at f/1e-300, a gain of 1e-300) is refused before any capture, naming the
    /// parameter; the default camera and the ProRAW-like range pass.
    @Test func camerasOutsidePhysicalRangesAreRefused() throws {
        try CameraModel().validate()
        func refusal(_ change: (inout CameraModel) -> Void) throws -> String {
            var camera = CameraModel()
            change(&camera)
            return try #require(throws: SceneError.self) { try camera.validate() }.reason
        }
        #expect(try refusal { $0.exposureTime = 1e300; $0.fNumber = 1e-300 }
                == "camera: exposureTime must be at most 3600 s, fNumber 0.5...1024, iso and baseISO at most 1e7")
        #expect(try refusal { $0.exposureTime = .infinity } == "camera: exposureTime must be at most 3600 s, fNumber 0.5...1024, iso and baseISO at most 1e7")
        #expect(try refusal { $0.iso = 1e-300 } == "camera: iso / baseISO must be 1e-4...1e4")
        #expect(try refusal { $0.fullWell = 1e300 }.hasPrefix("camera: fullWell at most 1e9"))
        #expect(try refusal { $0.quantumScale = 1e300 } == "camera: quantumScale must be at most 1e30")
        #expect(try refusal { $0.cameraMatrix = [1, 0, 0, 0, 1, 0, 0, 0, .nan] }.hasPrefix("camera: cameraMatrix"))
        #expect(try refusal { $0.quantumScale = 1e-320 }.hasPrefix("camera: the parameters give no usable capture"))
        var night = CameraModel()
        night.exposureTime = 30
        night.fNumber = 22
        night.iso = 6400
        try night.validate()
    }

    /// A radiance map (`simulate --scene map.exr|.h5`) too large to simulate under the
    /// memory limit is refused from its header, before its pixels are read; one that fits
    /// is read with its values divided by the file's exposure factor.
    @Test func radianceMapsAreReadWithinTheSimulationLimit() throws {
        let dir = TestData.temporaryDirectory("radiance-map-limit")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("map.exr").path
        let values = (0..<(32 * 24 * 3)).map { Float($0 % 97) / 16 }
        let image = SceneLinearImage(pixels: ImageBuffer(width: 32, height: 24, channels: 3, samples: values), clipMask: nil,
                                     encoding: .linearRec2020, exposure: ExposureScaling(mode: .baseline, factor: 2),
                                     provenance: ImageProvenance(sourceFile: "", sourceSHA256: "", software: "", sourceIFD: "",
                                                                 whiteBalanceSource: "", whiteXY: [], cameraNeutral: [],
                                                                 cameraToOutput: [], dng: []),
                                     masks: [])
        var options = EXROptions()
        options.pixelType = .float
        try EXRFile.write(image, to: path, options: options)
        let scene = try Pipeline.radianceMapScene(path)
        #expect(scene.radiance.width == 32 && scene.radiance.height == 24)
        #expect(scene.radiance.samples == values.map { Double($0) / 2 })
        let tight = SceneLimits(maxBytes: SceneLimits.simulationBytesPerPixel * (32 * 24 - 1))
        let error = try #require(throws: ExchangeError.self) { try Pipeline.radianceMapScene(path, limits: tight) }
        #expect(error.category == .limitExceeded && error.path == path, "\(error)")
        #expect(try Pipeline.radianceMapScene(path, limits: SceneLimits(maxBytes: SceneLimits.simulationBytesPerPixel * 32 * 24))
                .radiance.samples.count == 32 * 24 * 3)
    }
}
