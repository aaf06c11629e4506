import Foundation
import ImageCore
import ExchangeCore
import RadianceExchange
import Testing
import TestSupport

/// Radiance pictures read back: our own writer's pictures round-trip within RGBE's steps
/// (Y to 0.4 % of the pixel's largest channel), the VIEW= line is kept, and truncated or
/// foreign files are refused naming the file. Lower bounds: counted in the header, marked
/// in the mask next to the picture, weighted by solid angle when given; "unknown" without
/// a clip mask; a mask left by an earlier run removed.
@Suite struct RadianceReaderTests {
    @Test func ourPicturesRoundTrip() throws {
        let dir = TestData.temporaryDirectory("radiance-read")
        defer { try? FileManager.default.removeItem(at: dir) }
        var rng = SeededGenerator(seed: 3)
        let w = 40, h = 23
        // Positive colours inside both gamuts, over 12 decades.
        let samples = (0..<(w * h)).flatMap { _ -> [Float] in
            let scale = Float(pow(10, Double.random(in: -6...6, using: &rng)))
            return [0.5, 0.45, 0.4].map { $0 * scale * Float.random(in: 0.9...1.1, using: &rng) }
        }
        let image = SceneLinearImage(pixels: ImageBuffer(width: w, height: h, channels: 3, samples: samples), clipMask: nil,
                                     encoding: .linearRec2020, exposure: ExposureScaling(mode: .luminance, factor: 1),
                                     provenance: Fixture.provenance())
        let path = dir.appendingPathComponent("x.hdr").path
        try RadianceFile.write(image, to: path, view: "-vta -vh 180 -vv 180")
        let picture = try RadianceFile.read(path)
        #expect(picture.width == w && picture.height == h && picture.view == "-vta -vh 180 -vv 180")
        let weights = Rec2020.luminanceWeights
        for i in 0..<(w * h) {
            let a = (SIMD3(Double(samples[3 * i]), Double(samples[3 * i + 1]), Double(samples[3 * i + 2])) * weights).sum()
            // The file holds W·sr⁻¹·m⁻²: × 179 gives cd/m² again.
            let b = (SIMD3(Double(picture.rec2020[3 * i]), Double(picture.rec2020[3 * i + 1]), Double(picture.rec2020[3 * i + 2])) * weights).sum() * 179
            #expect(abs(b / a - 1) < 0.005, "pixel \(i): \(b) against \(a)")
        }
        // Truncated: a scanline cut short is corrupt data, naming the file.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let cut = dir.appendingPathComponent("cut.hdr").path
        try bytes.prefix(bytes.count - 20).write(to: URL(fileURLWithPath: cut))
        #expect(throws: ExchangeError.self) { try RadianceFile.read(cut) }
        do { _ = try RadianceFile.read(cut) } catch let e as ExchangeError {
            #expect(e.category == .corruptData && e.description.contains("cut.hdr") && e.description.contains("scanline"), "\(e)")
        }
        let foreign = dir.appendingPathComponent("foreign.hdr").path
        try Data("P6\n2 2\n255\n".utf8).write(to: URL(fileURLWithPath: foreign))
        do { _ = try RadianceFile.read(foreign); Issue.record("read a PPM") } catch let e as ExchangeError {
            #expect(e.description.contains("not a Radiance picture"), "\(e)")
        }
    }

    /// A 10 × 4 picture with lower bounds at three pixels, then one without, then one
    /// without a clip mask, all at the same path.
    @Test func lowerBoundsInTheHeaderAndTheMask() throws {
        let dir = TestData.temporaryDirectory("radiance-bounds")
        defer { try? FileManager.default.removeItem(at: dir) }
        let w = 10, h = 4
        func image(_ clip: [UInt8]?) -> SceneLinearImage {
            SceneLinearImage(pixels: ImageBuffer(width: w, height: h, channels: 3, samples: [Float](repeating: 2, count: w * h * 3)),
                             clipMask: clip, encoding: .linearRec2020, exposure: ExposureScaling(mode: .luminance, factor: 1),
                             provenance: Fixture.provenance())
        }
        var clip = [UInt8](repeating: 0, count: w * h)
        for i in [3, 17, 39] { clip[i] = 4 }
        let path = dir.appendingPathComponent("x.hdr").path, maskPath = dir.appendingPathComponent("x.clip.hdr").path
        #expect(RadianceFile.maskPath(for: path) == maskPath)
        let bounds = try RadianceFile.write(image(clip), to: path, view: "-vta -vh 180 -vv 180")
        #expect(bounds.status == .present && bounds.pixels == 3 && bounds.share == 3.0 / 40 && bounds.shareOf == .pixels)
        #expect(bounds.mask == maskPath)
        let picture = try RadianceFile.read(path)
        #expect(picture.headerValue("SCENELINEAR_LOWER_BOUND_PIXELS") == "3")
        #expect(picture.headerValue("SCENELINEAR_LOWER_BOUND_PIXEL_SHARE") == "0.075")
        #expect(picture.headerValue("SCENELINEAR_LOWER_BOUND_MASK") == "x.clip.hdr")
        let mask = try RadianceFile.read(maskPath)
        #expect(mask.width == w && mask.height == h && mask.view == picture.view)
        // 1 where a lower bound (R = G = B; decoded with RGBE's half step), 0 elsewhere.
        let flagged = (0..<(w * h)).filter { mask.rec2020[3 * $0] > 0.5 }
        #expect(flagged == [3, 17, 39], "\(flagged)")
        #expect(mask.headerValue("SCENELINEAR_MASK_OF")?.hasPrefix("x.hdr:") == true)

        // Weighted by solid angle: the three pixels hold half of it.
        var omega = [Double](repeating: 1.0 / 37, count: w * h)
        for i in [3, 17, 39] { omega[i] = 1.0 / 3 }
        let weighted = try RadianceFile.write(image(clip), to: path, solidAngles: omega)
        #expect(weighted.shareOf == .solidAngle && abs(weighted.share! - 0.5) < 1e-12)
        #expect(try RadianceFile.read(path).headerValue("SCENELINEAR_LOWER_BOUND_SOLID_ANGLE_SHARE") == "0.5")

        // No lower bounds: the count is 0, the earlier mask goes.
        let none = try RadianceFile.write(image([UInt8](repeating: 0, count: w * h)), to: path)
        #expect(none.status == .none && none.pixels == 0 && none.mask == nil && none.warning(for: path) == nil)
        #expect(!FileManager.default.fileExists(atPath: maskPath))
        #expect(try RadianceFile.read(path).headerValue("SCENELINEAR_LOWER_BOUND_PIXELS") == "0")
        // No clip mask: unknown.
        let unknown = try RadianceFile.write(image(nil), to: path)
        #expect(unknown.status == .unknown && unknown.pixels == nil)
        #expect(try RadianceFile.read(path).headerValue("SCENELINEAR_LOWER_BOUND_PIXELS")?.hasPrefix("unknown") == true)
    }
}
