import Foundation
import ImageCore
import ImageExchange
import Testing
import TestSupport

/// Radiance pictures read back: our own writer's pictures round-trip within RGBE's steps
/// (Y to 0.4 % of the pixel's largest channel), the VIEW= line is kept, and truncated or
/// foreign files are refused naming the file.
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
}
