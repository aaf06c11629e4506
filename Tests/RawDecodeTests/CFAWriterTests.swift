import Foundation
import Testing
import ImageCore
import DNGContainer
import DNGWriter
@testable import RawDecode
import TestSupport

/// CFA DNGs from the project's writer: every Bayer phase, uncompressed and lossless JPEG
/// with one full-width or two half-width components, decode to the samples written.
@Suite struct CFAWriterTests {
    static let patterns: [(String, [UInt8])] = [("RGGB", [0, 1, 1, 2]), ("BGGR", [2, 1, 1, 0]), ("GRBG", [1, 0, 2, 1]), ("GBRG", [1, 2, 0, 1])]

    @Test(arguments: ["RGGB", "BGGR", "GRBG", "GBRG"], [0, 1, 2])
    func cfaRoundTrip(pattern name: String, mode: Int) throws {
        let pattern = Self.patterns.first { $0.0 == name }!.1
        let dir = TestData.temporaryDirectory("cfa")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (w, h) = (70, 46)
        var rng = SeededGenerator(seed: UInt64(mode * 10 + Int(pattern[0])))
        var spec = RawDNG(width: w, height: h, samples: (0..<(w * h)).map { _ in UInt16.random(in: 0...16383, using: &rng) })
        spec.cfaPattern = pattern
        spec.bitsPerSample = 14
        spec.blackLevel = [512]
        spec.whiteLevel = [16383]
        spec.tileSize = (32, 32)
        switch mode {
        case 0: spec.compression = .uncompressed
        case 1: spec.compression = .losslessJPEG(predictor: 1)
        default:
            spec.compression = .losslessJPEG(predictor: 1)
            spec.cfaJPEGLayout = .twoComponents
        }
        let path = dir.appendingPathComponent("c.dng").path
        try DNGWriter.write(spec, to: path)
        let dng = try DNGFile.open(path: path)
        let raw = try dng.mainRawImage()
        #expect(raw.photometric == Photometric.cfa)
        #expect(raw.cfa?.patternName == name)
        #expect(raw.samplesPerPixel == 1)
        let stored = try RawDecoder.decode(dng, ifd: raw)
        #expect(stored.uint16?.samples == spec.samples)
    }
}
