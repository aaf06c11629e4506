import Foundation
import LosslessJPEG
import Testing
import TestSupport

/// One entry of `lj92/MANIFEST.json` in the shared datasets.
struct ManifestEntry: Decodable {
    let stream: String
    let decoded: String
    let shape: [Int]
    let sha256_decoded: String
    let min: Int
    let max: Int
}

/// The frame each stream of the shared datasets must report: width, height, components,
/// precision, predictor.
let expectedFrames: [String: (width: Int, height: Int, components: Int, precision: Int, predictor: Int)] = [
    "1px.ljp": (1, 1, 1, 16, 1),
    "dng1.ljp": (256, 256, 1, 16, 1),
    "dng2.ljp": (256, 256, 1, 16, 2),
    "dng3.ljp": (256, 256, 1, 16, 3),
    "dng4.ljp": (256, 256, 1, 16, 4),
    "dng5.ljp": (256, 256, 1, 16, 5),
    "dng6.ljp": (256, 256, 1, 16, 6),
    "dng7.ljp": (256, 256, 1, 16, 7),
    "linearraw.ljp": (504, 378, 3, 12, 7),
]

/// Reads a file of the shared `lj92` folder (the test is skipped when it is absent).
func sharedStream(_ name: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: try TestData.shared("lj92/\(name)")))
}

/// The manifest of the shared `lj92` folder (the test is skipped when it is absent).
func lj92Manifest() throws -> [ManifestEntry] {
    try JSONDecoder().decode([ManifestEntry].self, from: Data(contentsOf: try TestData.shared("lj92/MANIFEST.json")))
}

@Suite("Decoding the shared lossless-JPEG streams")
struct DatasetTests {
    @Test("SHA-256 helper matches the FIPS 180-4 examples")
    func sha256KnownAnswers() {
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("The manifest lists every stream the tests expect")
    func manifestIsComplete() throws {
        let manifest = try lj92Manifest()
        #expect(Set(manifest.map(\.stream)) == Set(expectedFrames.keys))
    }

    @Test("Bit-exact decode, frame fields, shape, digest and range", arguments: expectedFrames.keys.sorted())
    func decodesBitExact(name: String) throws {
        let manifest = try lj92Manifest()
        let stream = try sharedStream(name)
        let decodedURL = try TestData.shared("lj92/\(name).decoded.u16le")
        let entry = try #require(manifest.first { $0.stream == name })
        let expected = try #require(expectedFrames[name])
        let reference = try TestData.readU16LE(decodedURL)

        let (frame, samples) = try LJ92Decoder.decode(stream)
        #expect(frame.width == expected.width)
        #expect(frame.height == expected.height)
        #expect(frame.components == expected.components)
        #expect(frame.precision == expected.precision)
        #expect(frame.predictor == expected.predictor)
        #expect(frame.pointTransform == 0)
        #expect(frame.restartInterval == 0)
        #expect(frame.sampleCount == samples.count)

        // Manifest shape is (rows, cols[, components]).
        let shape = frame.components == 1 ? [frame.height, frame.width] : [frame.height, frame.width, frame.components]
        #expect(entry.shape == shape)
        #expect(samples.count == reference.count)
        #expect(samples == reference)
        if samples != reference, let first = zip(samples, reference).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
            Issue.record("first difference at sample \(first.offset): decoded \(first.element.0), reference \(first.element.1)")
        }
        #expect(SHA256.hex(littleEndian: samples) == entry.sha256_decoded)
        #expect(Int(samples.min() ?? 0) == entry.min)
        #expect(Int(samples.max() ?? 0) == entry.max)

        // The header-only reader and the pointer API agree with the convenience API.
        let headerFrame = try stream.withUnsafeBytes { raw in try LJ92Decoder.readFrame(raw) }
        #expect(headerFrame == frame)
        var direct = [UInt16](repeating: 0xABCD, count: frame.sampleCount + 5)
        let directFrame = try stream.withUnsafeBytes { raw in
            try direct.withUnsafeMutableBufferPointer { out in try LJ92Decoder.decode(raw, into: out) }
        }
        #expect(directFrame == frame)
        #expect(Array(direct[0..<frame.sampleCount]) == reference)
        #expect(direct[frame.sampleCount...].allSatisfy { $0 == 0xABCD }, "no writes past the frame")
    }
}
