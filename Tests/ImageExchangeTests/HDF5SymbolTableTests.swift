import Foundation
import ImageCore
import ExchangeCore
import HDF5Exchange
import Testing
import TestSupport

/// Files of the earliest HDF5 format (h5py's default) whose root symbol table points outside
/// the file are refused as corrupt data before libhdf5 follows the address (it crashed on an
/// undefined child address, found by the hdf5-h5py fuzz target); the intact file reads.
@Suite struct HDF5SymbolTableTests {
    @Test func damagedRootSymbolTableIsRefused() throws {
        let dir = TestData.temporaryDirectory("hdf5-stab")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("old.h5").path
        let made = try TestData.runPython("""
            import sys, h5py, numpy as np
            with h5py.File(sys.argv[1], "w") as f:
                f["image"] = np.ones((4, 5, 3), dtype=np.float16)
            """, [path])
        try #require(made.status == 0, "\(made.stderr)")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(bytes[8] == 0, "superblock version \(bytes[8])")
        // The intact file: our reader reaches its contents (and refuses them as not ours).
        do { _ = try HDF5File.readSceneLinear(path) } catch let e as ExchangeError {
            #expect(!e.description.contains("symbol table"), "\(e)")
        }
        // The root group's B-tree: its first child (after the signature, type, level, entry
        // count, two sibling addresses and the first key, 8 bytes each) made undefined.
        let tree = try #require((0..<(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == Array("TREE".utf8) })
        for i in 0..<8 { bytes[tree + 8 + 16 + 8 + i] = 0xFF }
        let damaged = dir.appendingPathComponent("damaged.h5").path
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        #expect(throws: ExchangeError.self) { try HDF5File.readSceneLinear(damaged) }
        do { _ = try HDF5File.readSceneLinear(damaged) } catch let e as ExchangeError {
            #expect(e.category == .corruptData && e.description.contains("damaged.h5") && e.description.contains("symbol table"), "\(e)")
        }
    }

    /// The superblock (version 0) is checked before libhdf5 opens the file: a driver
    /// information address (a family, multi or split file) is unsupported, a B-tree rank of 0
    /// and another root-entry version are damage, and the root group's object header is walked
    /// first (here its version changed).
    @Test func superblockAndRootHeader() throws {
        let dir = TestData.temporaryDirectory("hdf5-superblock")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("old.h5").path
        let made = try TestData.runPython("""
            import sys, h5py, numpy as np
            with h5py.File(sys.argv[1], "w") as f:
                f.attrs["format"] = "SceneLinear"
            """, [path])
        try #require(made.status == 0, "\(made.stderr)")
        let good = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(try HDF5File.readAttributes(path, object: "/")["format"] == .text("SceneLinear"))
        // Superblock version 0 with 8-byte addresses: base, free space, end of file, driver
        // information from byte 24; the root entry's object header address at 24 + 32 + 8.
        var root = 0
        for i in 0..<8 { root |= Int(good[64 + i]) << (8 * i) }
        func damaged(_ name: String, _ change: (inout [UInt8]) -> Void) throws -> ExchangeError {
            var bytes = good
            change(&bytes)
            let copy = dir.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: copy))
            return try #require(throws: ExchangeError.self, "\(name)") { try HDF5File.readAttributes(copy, object: "/") }
        }
        let driver = try damaged("driver.h5") { for i in 0..<8 { $0[24 + 24 + i] = 0 } }
        #expect(driver.category == .unsupportedFeature && driver.message.contains("stored in several parts"), "\(driver)")
        let rank = try damaged("rank.h5") { $0[16] = 0; $0[17] = 0 }
        #expect(rank.category == .corruptData && rank.message == "symbol-table B-tree ranks 0, 16 (at least 1)", "\(rank)")
        let entry = try damaged("entry.h5") { $0[10] = 7 }
        #expect(entry.category == .corruptData && entry.message.contains("root-group or shared-header versions 0, 7, 0"), "\(entry)")
        let header = try damaged("header.h5") { $0[root] = 9 }
        #expect(header.operation == "object header" && header.category == FailureCategory.corruptData, "\(header)")
        #expect(header.message == "/ at address \(root): object header version 9", "\(header)")
    }
}
