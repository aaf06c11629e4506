import Foundation
import Testing
import ImageCore
import EXRExchange
import RadianceExchange
import TestSupport

/// `.hdr` output read by Radiance's own pvalue and getinfo (PyPI pyradiance ships them):
/// 179 × (0.265 R + 0.670 G + 0.065 B) equals our luminance within RGBE's precision, the
/// header is Radiance's, relative units are refused.
@Suite struct RadianceOutputTests {
    /// Radiance's binaries from the project's Python environment, or nil (test skipped).
    static func radianceBin() throws -> URL? {
        guard let python = try? TestData.requirePython() else { return nil }
        let r = try TestData.run(python, ["-c", "import pyradiance, os; print(os.path.join(os.path.dirname(pyradiance.__file__), 'bin'))"])
        guard r.status == 0 else { return nil }
        let dir = URL(fileURLWithPath: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        return FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("pvalue").path) ? dir : nil
    }

    /// Luminance per pixel (cd/m², top row first) as pvalue decodes the picture.
    static func pvalueLuminance(_ bin: URL, _ path: String, width: Int, height: Int, dir: URL) throws -> [Double] {
        // Binary 32-bit floats (-df): full precision, not pvalue's four printed digits.
        let out = dir.appendingPathComponent("values.bin").path
        let r = try TestData.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "\"$0\" -h -H -df -b \"$1\" > \"$2\"",
                                                                    bin.appendingPathComponent("pvalue").path, path, out])
        try #require(r.status == 0, "\(r.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        let values = data.withUnsafeBytes { raw in raw.bindMemory(to: Float.self).map { Double($0) * 179 } }
        try #require(values.count == width * height, "\(values.count) values")
        return values
    }

    @Test func pictureReadByRadiance() throws {
        guard let bin = try Self.radianceBin() else {
            Issue.record("pyradiance (Radiance's pvalue and getinfo) is not installed: skipped")
            return
        }
        let dir = TestData.temporaryDirectory("radiance-out")
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = try CLI.run(["simulate", "--scene", "sunset", "--size", "256x192", "--seed", "6", "-o", dir.path, "-q"])
        try #require(made.status == 0, "\(made.stderr)")
        let dng = dir.appendingPathComponent("sunset.dng").path
        let hdr = dir.appendingPathComponent("sunset.hdr").path, exr = dir.appendingPathComponent("sunset.exr").path
        let r = try CLI.run(["convert", dng, "-o", hdr, "--units", "luminance"])
        try #require(r.status == 0, "\(r.stderr)")
        try #require(try CLI.run(["convert", dng, "-o", exr, "--units", "luminance", "--exr-type", "float", "-q"]).status == 0)
        let image = try EXRFile.readSceneLinear(exr)
        let w = Rec2020.luminanceWeights
        let ours = (0..<(image.width * image.height)).map { i in
            (SIMD3(Double(image.pixels.samples[3 * i]), Double(image.pixels.samples[3 * i + 1]), Double(image.pixels.samples[3 * i + 2])) * w).sum()
        }
        let theirs = try Self.pvalueLuminance(bin, hdr, width: image.width, height: image.height, dir: dir)
        // Pixels inside Radiance's gamut with a luminance above the noise: within RGBE's steps.
        // RGBE keeps each channel to 1/256 of the pixel's largest (truncated, decoded at the
        // step's middle): within 0.39 % of the largest channel, so Y of a strongly coloured
        // pixel (the orange sun: Y below its red) can move a little more.
        var compared = 0, within = 0, worst = 0.0
        let top = ours.max()!
        for (a, b) in zip(ours, theirs) where a > 1e-3 * top {
            let rel = abs(b / a - 1)
            guard rel < 0.05 else { continue }  // a channel outside Radiance's gamut, written as 0
            compared += 1
            worst = max(worst, rel)
            if rel <= 0.005 { within += 1 }
        }
        #expect(compared > ours.count * 9 / 10, "\(compared) of \(ours.count) pixels compared")
        #expect(worst < 0.006 && within >= compared * 999 / 1000, "largest relative difference \(worst); \(within) of \(compared) within 0.5 %")
        // The mean luminance agrees to 0.05 %.
        let meanOurs = ours.reduce(0, +) / Double(ours.count), meanTheirs = theirs.reduce(0, +) / Double(theirs.count)
        #expect(abs(meanTheirs / meanOurs - 1) < 0.0005, "\(meanTheirs) against \(meanOurs)")

        let info = try TestData.run(bin.appendingPathComponent("getinfo"), [hdr]).stdout
        #expect(info.contains("#?RADIANCE") && info.contains("FORMAT=32-bit_rle_rgbe") && info.contains("EXPOSURE=1.000000e+00")
                && info.contains("SOFTWARE=scenelinear") && info.contains("SCENELINEAR_SCALE=")
                && info.contains("SCENELINEAR_SCALE_SOURCE=exposure metadata") && info.contains("SCENELINEAR_SOURCE=sunset.dng"), "\(info)")
        let size = try TestData.run(bin.appendingPathComponent("getinfo"), ["-d", hdr]).stdout
        #expect(size.contains("-Y 192 +X 256"), "\(size)")

        // Relative units are refused before anything is written; radiance units give the same file.
        let refused = try CLI.run(["convert", dng, "-o", dir.appendingPathComponent("relative.hdr").path])
        #expect(refused.status == 64 && refused.stderr.contains("--units luminance"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("relative.hdr").path))
        let rad = dir.appendingPathComponent("radiance.hdr").path
        try #require(try CLI.run(["convert", dng, "-o", rad, "--units", "radiance", "-q"]).status == 0)
        let viaRadiance = try Self.pvalueLuminance(bin, rad, width: image.width, height: image.height, dir: dir)
        #expect(zip(viaRadiance, theirs).allSatisfy { abs($0 - $1) <= 0.008 * max(abs($0), abs($1)) + 1e-9 })
    }

    /// Narrow images are written flat (no run-length coding below 8 pixels), wide ones in
    /// runs; both decode to the values written (RGBE's truncation: within 1/128 of the
    /// largest channel), zero and negative values as zero.
    @Test func flatAndRunLengthScanlines() throws {
        guard let bin = try Self.radianceBin() else {
            Issue.record("pyradiance (Radiance's pvalue) is not installed: skipped")
            return
        }
        let dir = TestData.temporaryDirectory("radiance-rle")
        defer { try? FileManager.default.removeItem(at: dir) }
        for width in [5, 300] {
            let height = 3
            var samples = [Float](repeating: 0, count: width * height * 3)
            for i in 0..<(width * height) {
                // Runs (equal pixels) and changes, a zero pixel and a negative channel.
                let v = Float(i / 7 % 5) * 40 + 3
                samples[3 * i] = v
                samples[3 * i + 1] = v * 1.5
                samples[3 * i + 2] = i % 11 == 0 ? -1 : v * 0.5
                if i == 4 { samples[3 * i] = 0; samples[3 * i + 1] = 0; samples[3 * i + 2] = 0 }
            }
            let image = SceneLinearImage(pixels: ImageBuffer(width: width, height: height, channels: 3, samples: samples), clipMask: nil,
                                         encoding: .linearRec709, exposure: ExposureScaling(mode: .radiance, factor: 1),
                                         provenance: ImageProvenance(sourceFile: "x", sourceSHA256: "", software: "test", sourceIFD: "",
                                                                     whiteBalanceSource: "", whiteXY: [], cameraNeutral: [], cameraToOutput: [], dng: [], processing: []))
            let path = dir.appendingPathComponent("w\(width).hdr").path
            try RadianceFile.write(image, to: path)
            let r = try TestData.run(bin.appendingPathComponent("pvalue"), ["-h", "-H", "-d", path])
            try #require(r.status == 0, "\(r.stderr)")
            let values = r.stdout.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
            try #require(values.count == width * height * 3, "width \(width): \(values.count) values")
            // Rec.709 and Radiance's primaries differ only in green (0.300 against 0.290):
            // compare luminance, which the conversion keeps.
            for i in 0..<(width * height) {
                let ours = 0.2126 * Double(max(0, samples[3 * i])) + 0.7152 * Double(max(0, samples[3 * i + 1]))
                    + 0.0722 * Double(samples[3 * i + 2])
                let theirs = 0.265 * values[3 * i] + 0.670 * values[3 * i + 1] + 0.065 * values[3 * i + 2]
                if samples[3 * i + 2] < 0 { continue }  // a negative channel is written as 0
                #expect(abs(theirs - ours) <= 0.01 * max(ours, 1e-9) + 1e-12, "width \(width) pixel \(i): \(theirs) against \(ours)")
            }
        }
        let file = dir.appendingPathComponent("w300.hdr").path
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)).count < 300 * 3 * 4, "run-length coded")
    }
}
