import Foundation
import Testing
import DNGWriter
@testable import Batching
@testable import Engine
@testable import Measuring
@testable import Reporting
import SceneLinearKit
@testable import SimulationCheck
import TestSupport

/// `--source enhanced` develops the DNG 1.6 enhanced image (NewSubFileType 16) instead of the
/// main raw image, and the transparency mask (NewSubFileType 4) becomes an output layer. The
/// test file is written by tifffile, independently of this project: a preview in IFD0, the
/// main LinearRaw image (16-bit) in SubIFD0 with a DefaultCrop, an enhanced float16 LinearRaw
/// image of the same size in SubIFD1 without crop tags, and a 1-bit transparency mask (right
/// half opaque) in SubIFD2.
@Suite struct EnhancedImageTests {
    static let script = """
        import sys, numpy as np, tifffile
        out, cm, npy = sys.argv[1], [float(v) for v in sys.argv[2].split(",")], sys.argv[3]
        h, w = 48, 64
        yy, xx = np.mgrid[0:h, 0:w]
        raw = np.stack([xx * 900 + 1000, yy * 1200 + 2000, xx * 300 + yy * 400 + 500], axis=-1).astype(np.uint16)
        enh = (raw.astype(np.float32) / 65535.0 * 0.5).astype(np.float16)
        def srat(vals, den=1000000):
            r = []
            for v in vals:
                r += [int(round(v * den)), den]
            return r
        ifd0 = [(50706, 1, 4, (1, 6, 0, 0), True), (50707, 1, 4, (1, 4, 0, 0), True),
                (50708, 2, 0, "Enhanced test", True), (50721, 10, 9, srat(cm), True),
                (50778, 3, 1, 21, True), (50728, 5, 3, [1, 1, 1, 1, 1, 1], True)]
        crop = [(50719, 5, 2, [4, 1, 2, 1], True), (50720, 5, 2, [56, 1, 44, 1], True)]
        with tifffile.TiffWriter(out) as t:
            t.write(np.zeros((8, 8, 3), np.uint8), photometric="rgb", subfiletype=1, subifds=3, extratags=ifd0)
            t.write(raw, photometric=34892, subfiletype=0, extratags=crop)
            t.write(enh, photometric=34892, subfiletype=16)
            t.write(xx >= 32, photometric=4, subfiletype=4)
        np.save(npy, np.stack([raw.astype(np.float32) / 65535.0, enh.astype(np.float32)]))
        """

    @Test func enhancedImageIsDevelopedOnRequest() throws {
        let dir = TestData.temporaryDirectory("enhanced")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = dir.appendingPathComponent("enhanced.dng").path
        let npy = dir.appendingPathComponent("expected.npy").path
        let matrix = RawDNG.rec2020CameraMatrix.map { String($0) }.joined(separator: ",")
        let made = try TestData.runPython(Self.script, [dng, matrix, npy])
        #expect(made.status == 0, "\(made.stderr)")
        // The expected planes: [2, 48, 64, 3] float32 after the 128-byte .npy header.
        let data = try Data(contentsOf: URL(fileURLWithPath: npy))
        let floats: [Float] = data.dropFirst(128).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(floats.count == 2 * 48 * 64 * 3)

        var options = DevelopOptions()
        options.encoding = .cameraNative
        for (source, plane, ifd) in [(ImageSource.raw, 0, "IFD0/SubIFD0"), (.enhanced, 1, "IFD0/SubIFD1")] {
            options.source = source
            let d = try Pipeline.develop(path: dng, options: options)
            #expect(d.rawIFD.path == ifd)
            // The main image's DefaultCrop (origin 4, 2; size 56 × 44) applies to both.
            #expect(d.image.width == 56 && d.image.height == 44)
            var worst: Float = 0
            for y in 0..<44 {
                for x in 0..<56 {
                    for c in 0..<3 {
                        let expected = floats[plane * 48 * 64 * 3 + ((y + 2) * 64 + x + 4) * 3 + c]
                        let got = d.image.pixels.samples[(y * 56 + x) * 3 + c]
                        worst = max(worst, abs(got - expected) / max(expected, 1e-6))
                    }
                }
            }
            // float16 outputs of float16 inputs are exact; 16-bit inputs round to half.
            #expect(worst <= (source == .enhanced ? 1e-6 : 1.0 / 1024), "\(source): \(worst)")
        }
        let enhanced = try Pipeline.develop(path: dng, options: options).image
        #expect(enhanced.provenance.processingValue("source") == .text("enhanced image IFD0/SubIFD1 (NewSubFileType 16)"))
        // The transparency mask: 1 where x ≥ 32 in the raw image, i.e. output x ≥ 28 after
        // the crop (bilinear between the two columns at the edge).
        let layer = try #require(enhanced.masks.first)
        #expect(enhanced.masks.count == 1 && layer.name == "transparency" && layer.sourceIFD == "IFD0/SubIFD2")
        #expect(layer.semanticName == "transparency mask (NewSubFileType 4)")
        let row = Array(layer.values.samples[(10 * 56)..<(11 * 56)])
        #expect(row[0..<27].allSatisfy { $0 == 0 } && row[29..<56].allSatisfy { $0 == 1 }, "\(row)")

        // A file without an enhanced image falls back to the raw image and says so.
        let chart = dir.appendingPathComponent("chart.dng").path
        try DNGWriter.write(try TestChart.make(width: 64, height: 48, tileSize: (32, 32)).dng, to: chart)
        let fallback = try Pipeline.develop(path: chart, options: options)
        #expect(fallback.image.provenance.processingValue("source") == .text("main raw image IFD0/SubIFD0: the file has no enhanced image"))

        let cli = try CLI.run(["convert", dng, "-o", dir.appendingPathComponent("e.exr").path, "--source", "enhanced", "--json"])
        #expect(cli.status == 0, "\(cli.stderr)")
    }
}
