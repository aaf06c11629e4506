import Foundation
import ImageCore
import ExchangeCore
import EXRExchange
import HDF5Exchange
import Testing
import TestSupport

@Suite("Failures leave nothing behind and reads never crash")
struct ErrorTests {
    static func listing(_ dir: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted()
    }

    @Test("a missing directory is an OutputError and creates nothing")
    func missingDirectory() throws {
        let dir = TestData.temporaryDirectory("err-missing")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image()
        let exr = dir.appendingPathComponent("no/such/dir/x.exr").path
        let h5 = dir.appendingPathComponent("no/such/dir/x.h5").path
        #expect(throws: OutputError.self) { try EXRFile.write(image, to: exr) }
        #expect(throws: OutputError.self) { try HDF5File.write(image, to: h5) }
        #expect(Self.listing(dir).isEmpty)
    }

    @Test("an unwritable directory is an OutputError and stays empty")
    func unwritableDirectory() throws {
        guard geteuid() != 0 else {
            FileHandle.standardError.write(Data("skipped: running as root, every directory is writable\n".utf8))
            return
        }
        let dir = TestData.temporaryDirectory("err-ro")
        defer {
            chmod(dir.path, 0o755)
            try? FileManager.default.removeItem(at: dir)
        }
        chmod(dir.path, 0o555)
        #expect(throws: OutputError.self) { try EXRFile.write(Fixture.image(), to: dir.appendingPathComponent("x.exr").path) }
        #expect(throws: OutputError.self) { try HDF5File.write(Fixture.image(), to: dir.appendingPathComponent("x.h5").path) }
        #expect(Self.listing(dir).isEmpty)
    }

    @Test("a directory at the destination is an OutputError and the folder is unchanged")
    func directoryAtDestination() throws {
        let dir = TestData.temporaryDirectory("err-isdir")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("x.exr"), withIntermediateDirectories: false)
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("x.h5"), withIntermediateDirectories: false)
        let before = Self.listing(dir)
        #expect(throws: OutputError.self) { try EXRFile.write(Fixture.image(), to: dir.appendingPathComponent("x.exr").path) }
        #expect(throws: OutputError.self) { try HDF5File.write(Fixture.image(), to: dir.appendingPathComponent("x.h5").path) }
        #expect(Self.listing(dir) == before)
    }

    @Test("a library failure in the middle of a write is an ExchangeError with the library's message, no temp file")
    func libraryFailureMidWrite() throws {
        let dir = TestData.temporaryDirectory("err-lib")
        defer { try? FileManager.default.removeItem(at: dir) }
        // EXR attribute names are limited to 255 bytes: the header write fails after the
        // file was created.
        let longKey = String(repeating: "k", count: 300)
        let exrImage = Fixture.image(provenance: Fixture.provenance([MetadataItem(longKey, .integer(1))]))
        let exrPath = dir.appendingPathComponent("long.exr").path
        let exrError = try #require(throws: ExchangeError.self) { try EXRFile.write(exrImage, to: exrPath) }
        #expect(exrError.category == .outputFailure)
        #expect(exrError.operation.hasPrefix("exr_attr_set"), "\(exrError)")
        #expect(exrError.path == exrPath)
        #expect(!exrError.message.isEmpty)
        // HDF5 refuses a second attribute with the same name in /dng.
        let h5Image = Fixture.image(provenance: Fixture.provenance([MetadataItem("iso", .integer(1)),
                                                                    MetadataItem("iso", .integer(2))]))
        let h5Path = dir.appendingPathComponent("dup.h5").path
        let h5Error = try #require(throws: ExchangeError.self) { try HDF5File.write(h5Image, to: h5Path) }
        #expect(h5Error.category == .outputFailure)
        #expect(h5Error.operation == "H5Acreate2 (iso)", "\(h5Error)")
        #expect(h5Error.path == h5Path)
        #expect(h5Error.message.contains("H5A"), "\(h5Error)")
        #expect(Self.listing(dir).isEmpty, "\(Self.listing(dir))")
    }

    @Test("invalid options are refused before anything is written")
    func invalidOptions() throws {
        let dir = TestData.temporaryDirectory("err-opt")
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(throws: ExchangeError.self) {
            try EXRFile.write(Fixture.image(), to: dir.appendingPathComponent("a.exr").path,
                              options: EXROptions(compression: .zip, zipLevel: 13))
        }
        #expect(throws: ExchangeError.self) {
            try HDF5File.write(Fixture.image(), to: dir.appendingPathComponent("a.h5").path,
                               options: HDF5Options(compression: .deflate(level: -1)))
        }
        #expect(throws: ExchangeError.self) {
            try HDF5File.write(Fixture.image(), to: dir.appendingPathComponent("b.h5").path, options: HDF5Options(chunkRows: 0))
        }
        #expect(Self.listing(dir).isEmpty)
    }

    @Test("missing files are inputUnreadable; other files are corruptData")
    func notOurFiles() throws {
        let dir = TestData.temporaryDirectory("err-read")
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = dir.appendingPathComponent("missing").path
        #expect(try #require(throws: ExchangeError.self) { try EXRFile.read(missing) }.category == .inputUnreadable)
        #expect(try #require(throws: ExchangeError.self) { try HDF5File.readSceneLinear(missing) }.category == .inputUnreadable)
        let text = dir.appendingPathComponent("text.txt")
        try Data(String(repeating: "not an image file\n", count: 100).utf8).write(to: text)
        let exrError = try #require(throws: ExchangeError.self) { try EXRFile.read(text.path) }
        #expect(exrError.category == .corruptData, "\(exrError)")
        #expect(exrError.operation == "exr_start_read")
        #expect(try #require(throws: ExchangeError.self) { try HDF5File.readSceneLinear(text.path) }.category == .corruptData)
        // Each format's reader refuses the other format.
        let exr = dir.appendingPathComponent("a.exr").path
        let h5 = dir.appendingPathComponent("a.h5").path
        try EXRFile.write(Fixture.image(), to: exr)
        try HDF5File.write(Fixture.image(), to: h5)
        #expect(throws: ExchangeError.self) { try EXRFile.read(h5) }
        #expect(throws: ExchangeError.self) { try HDF5File.readSceneLinear(exr) }
    }

    @Test("truncated files throw at every length", arguments: ["exr-zip", "exr-none", "exr-piz", "h5"])
    func truncated(_ kind: String) throws {
        let dir = TestData.temporaryDirectory("err-trunc")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image(width: 97, height: 83)
        let path = dir.appendingPathComponent("full").path
        switch kind {
        case "exr-zip": try EXRFile.write(image, to: path, options: EXROptions(compression: .zip))
        case "exr-none": try EXRFile.write(image, to: path, options: EXROptions(compression: .none))
        case "exr-piz": try EXRFile.write(image, to: path, options: EXROptions(compression: .piz))
        default: try HDF5File.write(image, to: path)
        }
        let full = Fixture.bytes(path)
        let cut = dir.appendingPathComponent("cut").path
        let lengths = Set([0, 1, 4, 8, 40, 200, full.count / 4, full.count / 2, full.count * 3 / 4, full.count - 100,
                           full.count - 8, full.count - 1]).sorted()
        for length in lengths {
            try full.prefix(length).write(to: URL(fileURLWithPath: cut))
            if kind == "h5" {
                let error = try #require(throws: ExchangeError.self, "length \(length)") { try HDF5File.readSceneLinear(cut) }
                // Once the superblock is complete, HDF5 compares the file size with the one
                // it records; a cut superblock is a checksum error (corrupt data).
                #expect(error.category == (length >= 200 ? .truncated : .corruptData), "\(error)")
            } else {
                #expect(throws: ExchangeError.self, "length \(length)") { try EXRFile.read(cut) }
            }
        }
    }

    @Test("overwritten bytes in an EXR give an error or an image, never a crash")
    func corruptedEXR() throws {
        let dir = TestData.temporaryDirectory("err-corrupt")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("full").path
        // (R, G, B only: the counts below were found for this layout.)
        try EXRFile.write(Fixture.image(width: 97, height: 83), to: path, options: EXROptions(compression: .zip, includeClipMask: false))
        let full = Fixture.bytes(path)
        let original = try EXRFile.read(path)
        var rng = SeededGenerator(seed: 99)
        var failures = 0, intact = 0, changed = 0
        for trial in 0..<60 {
            var bytes = full
            let start = Int(rng.next() % UInt64(full.count))
            let count = 1 + Int(rng.next() % 64)
            for i in start..<min(full.count, start + count) { bytes[i] = UInt8(truncatingIfNeeded: rng.next()) }
            let cut = dir.appendingPathComponent("c\(trial)").path
            try bytes.write(to: URL(fileURLWithPath: cut))
            do {
                let read = try EXRFile.read(cut)
                // Read as an image: then its pixels are exactly the undamaged file's (the damage
                // hit bytes that carry no pixel, e.g. an attribute's text).
                #expect(read.width == original.width && read.height == original.height, "trial \(trial)")
                if read.halfChannels.mapValues({ $0.map(\.bitPattern) }) == original.halfChannels.mapValues({ $0.map(\.bitPattern) }) {
                    intact += 1
                } else {
                    changed += 1
                }
            } catch is ExchangeError {
                failures += 1
            }
        }
        // Seeded, so exact: 55 refused (deflated chunks carry Adler-32 checksums; header and
        // offset damage is caught); 3 read as the undamaged pixels (the damage hit bytes that
        // carry none); 2 read with different pixels — this random image's chunks do not
        // compress and are stored as they are, and EXR has no checksum for stored chunks.
        #expect(failures == 55 && intact == 3 && changed == 2, "\(failures) refused, \(intact) intact, \(changed) changed")
    }

    /// Damaged pixel chunks must be errors, not silently wrong pixels. (Damaged global
    /// heaps, which hold the variable-length strings, are `HDF5GlobalHeapTests`.)
    @Test("overwritten bytes in HDF5 pixel chunks are an ExchangeError")
    func corruptedHDF5Chunks() throws {
        let dir = TestData.temporaryDirectory("err-corrupt-h5")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("full.h5").path
        try HDF5File.write(Fixture.image(width: 97, height: 83), to: path)
        let script = """
        import sys, h5py
        with h5py.File(sys.argv[1], "r") as f:
            d = f["image"]
            for i in range(d.id.get_num_chunks()):
                info = d.id.get_chunk_info(i)
                print(info.byte_offset, info.size)
        """
        let result = try TestData.runPython(script, [path])
        #expect(result.status == 0, "\(result.stderr)")
        let chunks = result.stdout.split(separator: "\n").compactMap { line -> (Int, Int)? in
            let f = line.split(separator: " ").compactMap { Int($0) }
            return f.count == 2 ? (f[0], f[1]) : nil
        }
        #expect(chunks.count == 6)
        let chunkOffsets = [0, 16, 32, 48, 64, 80]
        let full = Fixture.bytes(path)
        var rng = SeededGenerator(seed: 7)
        for trial in 0..<24 {
            let (offset, size) = chunks[trial % chunks.count]
            var bytes = full
            let start = offset + Int(rng.next() % UInt64(size))
            let count = 1 + Int(rng.next() % 16)
            for i in start..<min(offset + size, start + count) { bytes[i] ^= UInt8(1 + rng.next() % 255) }
            let cut = dir.appendingPathComponent("c\(trial).h5").path
            try bytes.write(to: URL(fileURLWithPath: cut))
            let error = try #require(throws: ExchangeError.self, "trial \(trial)") { try HDF5File.readSceneLinear(cut) }
            // Each chunk is a zlib stream with an Adler-32 checksum: the reader's inflate refuses it.
            #expect(error.operation == "chunk data" && error.category == .corruptData, "\(error)")
            #expect(error.message.hasPrefix("/image: the chunk at [\(chunkOffsets[trial % chunks.count]), 0, 0] "), "\(error)")
        }
    }
}

/// The readers refuse an image over the limits from its header, before allocating its
/// pixels (a crafted 28 KB EXR claiming 64 × 16 777 008 pixels once made the reader ask for
/// 21 GB).
@Suite struct ReadLimitTests {
    @Test func oversizeImagesAreRefusedBeforeReading() throws {
        let dir = TestData.temporaryDirectory("read-limits")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image(width: 97, height: 83)
        let exr = dir.appendingPathComponent("a.exr").path, h5 = dir.appendingPathComponent("a.h5").path
        try EXRFile.write(image, to: exr, options: EXROptions(compression: .zip))
        try HDF5File.write(image, to: h5)
        for limits in [ReadLimits(maxPixels: 97 * 83 - 1), ReadLimits(maxBytes: 97 * 83 * 12)] {
            #expect(throws: ExchangeError.self) { _ = try EXRFile.readSceneLinear(exr, limits: limits) }
            #expect(throws: ExchangeError.self) { _ = try HDF5File.readSceneLinear(h5, limits: limits) }
            do { _ = try EXRFile.readSceneLinear(exr, limits: limits) } catch let e as ExchangeError {
                #expect(e.category == .limitExceeded && e.description.contains(exr), "\(e)")
            }
            do { _ = try HDF5File.readSceneLinear(h5, limits: limits) } catch let e as ExchangeError {
                #expect(e.category == .limitExceeded && e.description.contains(h5), "\(e)")
            }
        }
        // At the limit: read.
        #expect(try EXRFile.readSceneLinear(exr, limits: ReadLimits(maxPixels: 97 * 83)).width == 97)
        #expect(try HDF5File.readSceneLinear(h5, limits: ReadLimits(maxPixels: 97 * 83)).height == 83)
    }
}
