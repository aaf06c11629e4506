import Foundation
import Testing
import ImageCore
import DNGContainer
import DNGWriter
@testable import RawDecode
import TestSupport

/// Stage 1 against files written by the project's DNG writer (libtiff): the decoded stored
/// samples must equal the samples written, bit for bit.
@Suite struct StoredSamplesRoundTripTests {
    static func randomSamples(width: Int, height: Int, bits: Int, seed: UInt64) -> [UInt16] {
        var rng = SeededGenerator(seed: seed)
        let max = UInt16((1 << bits) - 1)
        return (0..<(width * height * 3)).map { _ in UInt16.random(in: 0...max, using: &rng) }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let bits: Int
        let tiled: Bool
        let order: DNGByteOrder
        let structure: DNGStructure
        let compressed: Bool
        var testDescription: String { "\(bits)-bit \(tiled ? "tiles" : "strips") \(order) \(structure) \(compressed ? "LJ92" : "uncompressed")" }
    }

    static let cases: [Case] = {
        var out: [Case] = []
        for bits in [8, 10, 12, 14, 16] {
            for tiled in [true, false] {
                for order in [DNGByteOrder.littleEndian, .bigEndian] {
                    for compressed in [false, true] {
                        out.append(Case(bits: bits, tiled: tiled, order: order,
                                        structure: bits == 12 ? .previewWithRawSubIFD : .rawInIFD0, compressed: compressed))
                    }
                }
            }
        }
        return out
    }()

    @Test(arguments: cases)
    func decodesExactlyWhatWasWritten(_ c: Case) throws {
        let dir = TestData.temporaryDirectory("stage1")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (w, h) = (83, 61) // not a multiple of the tile size: partial edge tiles
        var spec = LinearRawDNG(width: w, height: h, samples: Self.randomSamples(width: w, height: h, bits: c.bits, seed: UInt64(c.bits)))
        spec.bitsPerSample = c.bits
        spec.tileSize = c.tiled ? (32, 16) : nil
        spec.rowsPerStrip = 7
        spec.byteOrder = c.order
        spec.structure = c.structure
        spec.compression = c.compressed ? .losslessJPEG(predictor: 1) : .uncompressed
        spec.whiteLevel = Array(repeating: (1 << c.bits) - 1, count: 3)
        let path = dir.appendingPathComponent("t.dng").path
        try DNGWriter.write(spec, to: path)

        let dng = try DNGFile.open(path: path)
        #expect(dng.byteOrder == (c.order == .littleEndian ? .littleEndian : .bigEndian))
        let raw = try dng.mainRawImage()
        #expect(raw.path == (c.structure == .rawInIFD0 ? "IFD0" : "IFD0/SubIFD0"))
        let stored = try RawDecoder.decode(dng, ifd: raw)
        #expect(stored.width == w && stored.height == h && stored.channels == 3 && stored.sampleType == .uint16)
        #expect(stored.uint16?.samples == spec.samples)
    }

    @Test func truncatedTileIsNamed() throws {
        let dir = TestData.temporaryDirectory("stage1-trunc")
        defer { try? FileManager.default.removeItem(at: dir) }
        var spec = LinearRawDNG(width: 64, height: 64, samples: Self.randomSamples(width: 64, height: 64, bits: 16, seed: 3))
        spec.tileSize = (32, 32)
        let path = dir.appendingPathComponent("t.dng").path
        try DNGWriter.write(spec, to: path)
        // Point tile 3 past the end of the file, as in a file cut off by a failed transfer.
        let dng = try DNGFile.open(path: path)
        let entry = try #require(dng.structure.ifds[0].entry(Tag.tileOffsets))
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        let past = UInt32(data.count + 1000)
        let at = entry.valueOffset + 4 * 3
        for k in 0..<4 { data[at + k] = UInt8(truncatingIfNeeded: past >> (8 * UInt32(k))) } // little-endian file
        let broken = try DNGFile(file: FileBytes(data: data, path: "broken.dng"))
        let error = try #require(throws: RawDecodeError.self) { try RawDecoder.decode(broken, ifd: broken.mainRawImage()) }
        #expect(error.category == .truncated)
        #expect(error.description == "broken.dng: truncated file: tile 3 of IFD0 at offset \(past) (\(spec.samples.count / 4 * 2) bytes) extends past end of file (\(data.count) bytes)")
    }
}
