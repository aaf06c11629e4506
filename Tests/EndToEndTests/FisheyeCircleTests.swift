import CaptureSimulation
import Foundation
import SceneLinearKit
import SimulationCheck
import Testing
import TestSupport

/// `illuminance --circle auto` on simulated fisheye skies, whose image circle is known: the
/// circle inscribed in the image, centred. The radius found is within 0.3 px of it for every
/// projection, sharp (LinearRaw) and demosaiced (CFA: RCD, bilinear) images, several seeds,
/// and a frame 6 stops darker (noise around the circle no longer mistaken for sky).
@Suite struct FisheyeCircleTests {
    static let width = 384, height = 288

    static func dome(_ projection: FisheyeProjection) -> SceneDescription {
        SceneDescription(name: "dome", width: width, height: height, background: [0, 0, 0], elements: [
            .init(type: "sky", name: "sky", rgb: [0.45, 0.5, 0.6], projection: projection.rawValue, fov: 180, model: "cie-overcast",
                  sun: [30, 60, 0.2665], sunRGB: [2.4e5, 2.3e5, 2.1e5]),
        ])
    }

    /// The circle `illuminance --circle auto` found: centre x, y and radius.
    static func found(_ dng: String, _ projection: FisheyeProjection, demosaic: String = "rcd") throws -> (x: Double, y: Double, r: Double) {
        let r = try CLI.run(["illuminance", dng, "--projection", projection.rawValue, "--circle", "auto", "--json", "--demosaic", demosaic])
        try #require(r.status == 0, "\(r.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let lens = try #require(((doc["results"] as? [[String: Any]])?.first?["lens"]) as? [String: Any])
        return (try #require(lens["centerX"] as? Double), try #require(lens["centerY"] as? Double), try #require(lens["radius"] as? Double))
    }

    static func check(_ c: (x: Double, y: Double, r: Double), _ label: String) {
        let truth = (x: Double(width) / 2, y: Double(height) / 2, r: Double(min(width, height)) / 2)
        #expect(abs(c.r - truth.r) < 0.3, "\(label): radius \(c.r) px, truth \(truth.r) px")
        #expect(abs(c.x - truth.x) < 0.2 && abs(c.y - truth.y) < 0.2, "\(label): centre (\(c.x), \(c.y)), truth (\(truth.x), \(truth.y))")
    }

    @Test(arguments: FisheyeProjection.allCases)
    func radiusWithinAThirdOfAPixel(_ projection: FisheyeProjection) throws {
        let dir = TestData.temporaryDirectory("circle-\(projection.rawValue)")
        defer { try? FileManager.default.removeItem(at: dir) }
        // Bilinear demosaicing spreads the edge most: 0.84 px too large by a fixed 2 % threshold.
        for (layout, seed, demosaic) in [("linear-raw", UInt64(1), "rcd"), ("cfa", 1, "rcd"), ("cfa", 2, "rcd"), ("cfa", 3, "bilinear")] {
            var camera = CameraModel()
            camera.layout = layout
            camera.seed = seed
            let name = "dome-\(layout)-\(seed)"
            let out = try Pipeline.simulate(scene: try RenderedScene(Self.dome(projection)), camera: camera, name: name, directory: dir.path)
            Self.check(try Self.found(out.files["dng"]!, projection, demosaic: demosaic), "\(projection) \(layout) \(demosaic) seed \(seed)")
        }
    }

    @Test func darkFrameOfABracket() throws {
        let dir = TestData.temporaryDirectory("circle-dark")
        defer { try? FileManager.default.removeItem(at: dir) }
        var camera = CameraModel()
        camera.layout = "cfa"
        let out = try Pipeline.simulateBracket(scene: try RenderedScene(Self.dome(.equidistant)), camera: camera, stops: [-6, 0],
                                               name: "dome", directory: dir.path)
        Self.check(try Self.found(out.frames[0], .equidistant), "−6 EV frame")
    }
}
