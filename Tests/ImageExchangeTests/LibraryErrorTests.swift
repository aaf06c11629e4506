import Foundation
import ImageCore
import ExchangeCore
import EXRExchange
import HDF5Exchange
import Testing
import TestSupport

/// The error routes of OpenEXRCore and HDF5, driven by crafted files: OpenEXRCore's error
/// handler (`EXRErrorRouter` → the context's `EXRMessageLog`) and HDF5's error stack
/// (`HDF5Library.takeErrorStack`), each message reaching an `ExchangeError` that names the
/// file, the failing call and the category. The suite runs under AddressSanitizer in
/// `make test-asan`.
@Suite struct LibraryErrorTests {
    /// Where the chunk offset table of a scanline EXR starts: after the header's attributes
    /// (name, type, 4-byte size, value) and the byte that ends them.
    static func chunkTableOffset(_ bytes: Data) -> Int {
        var at = 8
        while bytes[at] != 0 {
            while bytes[at] != 0 { at += 1 }
            at += 1
            while bytes[at] != 0 { at += 1 }
            at += 1
            let size = (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
            at += 4 + size
        }
        return at + 1
    }

    static func put(_ value: Int, bytes count: Int, at offset: Int, in data: inout Data) {
        for k in 0..<count { data[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * k)) }
    }

    /// An EXR whose chunk table points chunk 1 past the end of the file: OpenEXRCore rebuilds
    /// the table from the chunks themselves and reads the image exactly; when chunk 1's own
    /// leader is damaged too, it cannot, and says so through the error handler.
    @Test func exrChunkTablePointingOutsideTheFile() throws {
        let dir = TestData.temporaryDirectory("lib-errors-exr")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("a.exr").path
        try EXRFile.write(Fixture.image(width: 16, height: 40), to: path, options: EXROptions(compression: .zip))
        let original = try EXRFile.read(path)
        let bytes = Fixture.bytes(path)
        let table = Self.chunkTableOffset(bytes)
        let chunk1 = (0..<8).reduce(0) { $0 | Int(bytes[table + 8 + $1]) << (8 * $1) }
        // The leader of chunk 1 (ZIP: 16 scanlines a chunk) says scanline 16.
        #expect(bytes[chunk1..<(chunk1 + 4)].elementsEqual([16, 0, 0, 0]))
        let outside = bytes.count + 4096
        var pointedOut = bytes
        Self.put(outside, bytes: 8, at: table + 8, in: &pointedOut)
        let bad = dir.appendingPathComponent("bad.exr").path
        try pointedOut.write(to: URL(fileURLWithPath: bad))
        let rebuilt = try EXRFile.read(bad)
        #expect(rebuilt.halfChannels.mapValues { $0.map(\.bitPattern) } == original.halfChannels.mapValues { $0.map(\.bitPattern) })

        var wrongLeader = pointedOut
        Self.put(0x12345, bytes: 4, at: chunk1, in: &wrongLeader)
        try wrongLeader.write(to: URL(fileURLWithPath: bad))
        let error = try #require(throws: ExchangeError.self) { try EXRFile.read(bad) }
        #expect(error == ExchangeError(path: bad, operation: "exr_read_scanline_chunk_info (chunk 1)",
                                       message: "EXR_ERR_BAD_CHUNK_LEADER: Corrupt chunk offset table: scanline 16, chunk index 1 recorded at file offset \(outside)",
                                       category: .corruptData))
        #expect(error.description.hasPrefix("cannot read \(bad): exr_read_scanline_chunk_info (chunk 1): "))

        // Two messages for one failure, both kept, in order: the rebuild finds chunk 1's size
        // out of range, then the table entry is reported.
        var wrongSize = pointedOut
        Self.put(0x7FFF_FFF0, bytes: 4, at: chunk1 + 4, in: &wrongSize)
        try wrongSize.write(to: URL(fileURLWithPath: bad))
        let twoMessages = try #require(throws: ExchangeError.self) { try EXRFile.read(bad) }
        #expect(twoMessages.message == "EXR_ERR_BAD_CHUNK_LEADER: Invalid chunk size reconstructing chunk table: found out of range 2147483632; Corrupt chunk offset table: scanline 16, chunk index 1 recorded at file offset \(outside)")
        #expect(twoMessages.operation == "exr_read_scanline_chunk_info (chunk 1)" && twoMessages.path == bad)
        // The table is rebuilt once, before the decoding threads start: the same message on
        // every read (two threads rebuilding it at once logged the first message twice).
        for _ in 0..<20 {
            let again = try #require(throws: ExchangeError.self) { try EXRFile.read(bad) }
            #expect(again.message == twoMessages.message)
        }

        // With the table intact, the damaged size is found when the chunk is read.
        var sizeOnly = bytes
        Self.put(0x7FFF_FFF0, bytes: 4, at: chunk1 + 4, in: &sizeOnly)
        try sizeOnly.write(to: URL(fileURLWithPath: bad))
        #expect(throws: ExchangeError(path: bad, operation: "exr_read_scanline_chunk_info (chunk 1)",
                                      message: "EXR_ERR_BAD_CHUNK_LEADER: Preparing to read scanline 16 (chunk 1), found corrupt leader: packed data size says 2147483632, must be between 0 and 2048",  // 16 rows × 16 pixels × 4 half channels (R, G, B, mask_clipped)
                                      category: .corruptData)) {
            try EXRFile.read(bad)
        }
    }

    /// Files that are not HDF5: text (refused by `H5Fis_hdf5`, before HDF5 opens anything), the
    /// HDF5 signature followed by garbage and a file cut in half (refused by `H5Fopen`, the
    /// error stack in the message, cleared afterwards so the next failure reports only its own).
    @Test func hdf5ErrorStackReachesTheError() throws {
        let dir = TestData.temporaryDirectory("lib-errors-h5")
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("good.h5").path
        try HDF5File.write(Fixture.image(width: 16, height: 40), to: good)
        let full = Fixture.bytes(good)

        let text = dir.appendingPathComponent("text.h5").path
        try Data("not an HDF5 file at all, just text\n".utf8).write(to: URL(fileURLWithPath: text))
        #expect(throws: ExchangeError(path: text, operation: "H5Fis_hdf5", message: "not an HDF5 file", category: .corruptData)) {
            try HDF5File.readSceneLinear(text)
        }

        let garbage = dir.appendingPathComponent("garbage.h5").path
        try (full.prefix(8) + Data(repeating: 0x5A, count: 200)).write(to: URL(fileURLWithPath: garbage))
        let first = try #require(throws: ExchangeError.self) { try HDF5File.readSceneLinear(garbage) }
        #expect(first.path == garbage && first.operation == "H5Fopen" && first.category == .corruptData)
        #expect(first.message.hasPrefix("H5Fopen: unable to open file; "), "\(first)")
        #expect(first.message.hasSuffix("H5F__superblock_prefix_decode: bad superblock version number"), "\(first)")
        let again = try #require(throws: ExchangeError.self) { try HDF5File.readSceneLinear(garbage) }
        #expect(again == first)

        let half = dir.appendingPathComponent("half.h5").path
        try full.prefix(full.count / 2).write(to: URL(fileURLWithPath: half))
        let cut = try #require(throws: ExchangeError.self) { try HDF5File.readSceneLinear(half) }
        #expect(cut.path == half && cut.operation == "H5Fopen" && cut.category == .truncated)
        #expect(cut.message.hasPrefix("H5Fopen: unable to open file; "), "\(cut)")
        #expect(cut.message.hasSuffix("truncated file: eof = \(full.count / 2), sblock->base_addr = 0, stored_eof = \(full.count)"), "\(cut)")
        #expect(!cut.message.contains("superblock version"))
        #expect(cut.category.exitCode == 12)

        // The library is left in a state to read the next file.
        #expect(try HDF5File.readSceneLinear(good).width == 16)
    }
}
