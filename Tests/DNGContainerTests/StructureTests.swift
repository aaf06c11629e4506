import Foundation
import Testing
import ImageCore
@testable import DNGContainer
import DNGWriter
import TestSupport

/// The TIFF structure reader on hand-built and damaged files: every problem is a specific
/// error, never a crash or an endless loop.
@Suite struct StructureTests {
    static func parse(_ bytes: [UInt8]) throws(ContainerError) -> DNGFile {
        try DNGFile(file: FileBytes(data: Data(bytes), path: "t.dng"))
    }

    @Test(arguments: [false, true])
    func minimalDNGInBothByteOrders(bigEndian: Bool) throws {
        var b = TIFFBuilder(bigEndian: bigEndian)
        let pixels = b.data.count
        b.data += [UInt8](repeating: 7, count: 24)
        b.setFirstIFD(b.appendIFD(b.minimalDNG(stripOffset: UInt32(pixels))))
        let dng = try Self.parse(b.data)
        #expect(dng.byteOrder == (bigEndian ? .bigEndian : .littleEndian))
        #expect(dng.metadata.dngVersion == "1.4.0.0")
        #expect(try dng.mainRawImage().layout?.offsets == [pixels])
    }

    /// Releasing a mapped file's pages, whole or a range with partial pages at both ends,
    /// changes nothing the reader sees: the bytes come back from the page cache.
    @Test func releasedPagesReadTheSame() throws {
        let dir = TestData.temporaryDirectory("file-bytes")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("bytes.bin").path
        let bytes = (0..<(5 * 4096 + 123)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let file = try FileBytes(path: path)
        #expect(file.bytes(offset: 0, length: bytes.count) == bytes)
        file.releaseResidentPages(offset: 1000, length: 3 * 4096)
        file.releaseResidentPages(offset: 4096 * 5, length: 123)
        file.releaseResidentPages(offset: 10, length: 20)
        #expect(file.bytes(offset: 0, length: bytes.count) == bytes)
        file.releaseResidentPages()
        #expect(file.bytes(offset: 4000, length: 9000) == Array(bytes[4000..<13000]))
    }

    @Test func bigTIFF() throws {
        var b = TIFFBuilder(bigTIFF: true)
        let pixels = b.data.count
        b.data += [UInt8](repeating: 1, count: 24)
        b.setFirstIFD(b.appendIFD(b.minimalDNG(stripOffset: UInt32(pixels))))
        let dng = try Self.parse(b.data)
        #expect(dng.structure.isBigTIFF)
        #expect(try dng.mainRawImage().width == 2)
    }

    @Test func cyclicIFDChainIsRefused() {
        var b = TIFFBuilder()
        let first = b.appendIFD(b.minimalDNG(stripOffset: 8))
        b.setFirstIFD(first)
        // IFD0's "next IFD" field is its last 4 bytes before the value area; point it at itself.
        let entries = 11
        b.patchOffset(at: Int(first) + 2 + entries * 12, first)
        #expect(throws: ContainerError.self) { try Self.parse(b.data) }
        do { _ = try Self.parse(b.data) } catch {
            #expect(error.description.contains("cyclic"), "\(error)")
            #expect(error.category == .corruptData)
        }
    }

    @Test func subIFDPointingAtItsParentIsRefused() {
        var b = TIFFBuilder()
        let at = UInt32(b.data.count + 200) // not yet known: use a placeholder and patch below
        var entries = b.minimalDNG(stripOffset: 8)
        entries.append(b.long(330, [at]))
        let first = b.appendIFD(entries)
        b.setFirstIFD(first)
        // Patch the SubIFDs value (inline) to IFD0's own offset.
        let sorted = entries.sorted { $0.tag < $1.tag }
        let index = sorted.firstIndex { $0.tag == 330 }!
        b.patchOffset(at: Int(first) + 2 + index * 12 + 8, first)
        do {
            _ = try Self.parse(b.data)
            Issue.record("a SubIFD cycle must be refused")
        } catch {
            #expect(error.description.contains("referenced twice"), "\(error)")
        }
    }

    @Test(arguments: [
        ([UInt8]("GIF89a-not-a-tiff".utf8), "byte-order mark"),
        ([0x49, 0x49, 0x2B, 0x00], "too short"),
        ([0x49, 0x49, 0x2A, 0x01, 0, 0, 0, 0], "magic number is 298"),
        ([0x49, 0x49, 0x2A, 0x00, 0xFF, 0xFF, 0, 0, 0, 0], "truncated file"),
    ])
    func notTIFFOrBrokenHeader(bytes: [UInt8], message: String) {
        do {
            _ = try Self.parse(bytes)
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains(message), "\(error)")
            #expect(error.description.hasPrefix("t.dng: "))
        }
    }

    @Test func tiffWithoutDNGVersionIsNotDNG() {
        var b = TIFFBuilder()
        b.setFirstIFD(b.appendIFD([b.long(256, [1]), b.long(257, [1])]))
        #expect(throws: ContainerError.notDNG(path: "t.dng")) { try Self.parse(b.data) }
    }

    @Test func newerBackwardVersionIsUnsupported() {
        var b = TIFFBuilder()
        b.setFirstIFD(b.appendIFD(b.minimalDNG(stripOffset: 8, extra: [b.byte(50707, [1, 8, 0, 0])])))
        do {
            _ = try Self.parse(b.data)
            Issue.record("expected unsupported version")
        } catch {
            #expect(error == .unsupportedVersion(path: "t.dng", backwardVersion: "1.8.0.0", supported: "1.7.1.0"))
            #expect(error.category == .unsupportedVersion)
        }
    }

    @Test func mainImageWithAnUnsupportedPhotometricInterpretation() throws {
        var b = TIFFBuilder()
        var entries = b.minimalDNG(stripOffset: 8)
        entries.removeAll { $0.tag == 262 }
        entries.append(b.short(262, [2])) // RGB: not a raw image
        b.setFirstIFD(b.appendIFD(entries))
        let dng = try Self.parse(b.data)
        do {
            _ = try dng.mainRawImage()
            Issue.record("an RGB main image is not a raw image")
        } catch {
            #expect(error.category == .unsupportedFeature)
            #expect(error.description.contains("PhotometricInterpretation 2 (RGB)"), "\(error)")
        }
    }

    @Test func hugeEntryCountIsRefused() {
        var b = TIFFBuilder()
        let first = b.appendIFD(b.minimalDNG(stripOffset: 8))
        b.setFirstIFD(first)
        b.data.replaceSubrange(Int(first)..<(Int(first) + 2), with: b.u16(60000))
        #expect(throws: ContainerError.self) { try Self.parse(b.data) }
    }

    /// A generated DNG cut at every length up to its end: always a specific error (or, once
    /// everything the metadata needs is present, a successful parse) — never a crash.
    @Test func everyTruncationOfARealStructure() throws {
        let dir = TestData.temporaryDirectory("trunc")
        defer { try? FileManager.default.removeItem(at: dir) }
        var spec = LinearRawDNG(width: 40, height: 30, samples: Array(repeating: 1000, count: 40 * 30 * 3))
        spec.structure = .previewWithRawSubIFD
        spec.tileSize = (16, 16)
        spec.noiseProfile = [1e-5, 1e-7]
        let path = dir.appendingPathComponent("t.dng").path
        try DNGWriter.write(spec, to: path)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var errors = 0, parsed = 0
        for length in stride(from: 0, to: bytes.count, by: 1) {
            do {
                _ = try Self.parse(Array(bytes.prefix(length)))
                parsed += 1
            } catch {
                errors += 1
                #expect([.notDNG, .truncated, .corruptData].contains(error.category), "length \(length): \(error)")
            }
        }
        #expect(errors > 0 && errors + parsed == bytes.count)
    }

    /// Seeded random byte changes in a real structure never crash the parser.
    @Test func randomCorruption() throws {
        let dir = TestData.temporaryDirectory("flip")
        defer { try? FileManager.default.removeItem(at: dir) }
        var spec = LinearRawDNG(width: 40, height: 30, samples: Array(repeating: 1000, count: 40 * 30 * 3))
        spec.structure = .previewWithRawSubIFD
        let path = dir.appendingPathComponent("t.dng").path
        try DNGWriter.write(spec, to: path)
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var rng = SeededGenerator(seed: 99)
        for _ in 0..<3000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                bytes[at] = UInt8.random(in: 0...255, using: &rng)
            }
            _ = try? Self.parse(bytes)
        }
    }
}
