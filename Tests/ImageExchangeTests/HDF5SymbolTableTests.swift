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
}
