import Foundation
import Testing
import ImageCore
import DNGContainer
import DNGWriter
@testable import RawDecode
import TestSupport

/// Stage 1 against decoders nobody on the project wrote.
@Suite struct IndependentDecoderTests {
    /// The real Canon EOS Kiss X4 DNG (uncompressed 14-bit packed MSB-first CFA): the stored
    /// samples equal LibRaw's raw buffer (SHA-256 and statistics from the dataset README).
    @Test func canonKissX4StoredSamplesMatchLibRaw() throws {
        let url = try TestData.shared("real/canon_kissx4_cfa14_uncompressed.dng")
        let dng = try DNGFile.open(path: url.path)
        let decoded = try RawDecoder.decode(dng, ifd: dng.mainRawImage())
        let stored = try #require(decoded.uint16, "14-bit samples are stored as UInt16")
        #expect(stored.width == 1888 && stored.height == 1182 && stored.channels == 1)
        var bytes = [UInt8](repeating: 0, count: stored.samples.count * 2)
        for (i, v) in stored.samples.enumerated() {
            bytes[2 * i] = UInt8(v & 0xFF)
            bytes[2 * i + 1] = UInt8(v >> 8)
        }
        #expect(bytes.withUnsafeBytes { SHA256Digest.hex(of: $0) } == "4b858970f8131549c8728e855a7439d92e54c96c66511dda2f48bdb517be5fe1")
        let area = PixelRect(top: 26, left: 152, bottom: 1182, right: 1886)
        var minimum = UInt16.max, maximum = UInt16.min, sum = 0
        for r in area.top..<area.bottom {
            for c in area.left..<area.right {
                let v = stored[r, c, 0]
                minimum = min(minimum, v)
                maximum = max(maximum, v)
                sum += Int(v)
            }
        }
        #expect(minimum == 1958 && maximum == 12128)
        #expect(abs(Double(sum) / Double(area.width * area.height) - 2634.036) < 0.001)
        #expect((0..<4).map { stored[26, 152 + $0, 0] } == [2056, 2093, 2080, 2077])
        #expect((0..<4).map { stored[27, 152 + $0, 0] } == [2075, 2067, 2082, 2075])
    }

    /// DNGs from the project's writer decoded by tifffile + imagecodecs (Python): the same
    /// stored samples, bit for bit, for lossless-JPEG and packed uncompressed data.
    @Test(arguments: [(12, true), (16, true), (12, false), (14, false)])
    func tifffileDecodesTheSameSamples(bits: Int, compressed: Bool) throws {
        let dir = TestData.temporaryDirectory("tifffile")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (w, h) = (100, 70)
        var rng = SeededGenerator(seed: UInt64(bits))
        var spec = LinearRawDNG(width: w, height: h,
                                samples: (0..<(w * h * 3)).map { _ in UInt16.random(in: 0...UInt16((1 << bits) - 1), using: &rng) })
        spec.bitsPerSample = bits
        spec.compression = compressed ? .losslessJPEG(predictor: 1) : .uncompressed
        spec.tileSize = (32, 32)
        spec.structure = .previewWithRawSubIFD
        spec.whiteLevel = Array(repeating: (1 << bits) - 1, count: 3)
        let path = dir.appendingPathComponent("t.dng").path
        try DNGWriter.write(spec, to: path)
        let dumped = dir.appendingPathComponent("t.u16").path
        let script = """
            import sys, numpy as np, tifffile
            with tifffile.TiffFile(sys.argv[1]) as t:
                a = t.pages[0].pages[0].asarray()
            assert a.shape == (\(h), \(w), 3), a.shape
            a.astype('<u2').tofile(sys.argv[2])
            print('ok', tifffile.__version__)
            """
        let py = try TestData.runPython(script, [path, dumped])
        #expect(py.status == 0, "\(py.stderr)")
        let theirs = try TestData.readU16LE(URL(fileURLWithPath: dumped))
        let dng = try DNGFile.open(path: path)
        let ours = try #require(try RawDecoder.decode(dng, ifd: dng.mainRawImage()).uint16).samples
        #expect(ours == theirs)
        #expect(ours == spec.samples)
    }
}
