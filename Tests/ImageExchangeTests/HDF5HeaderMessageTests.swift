import Foundation
import ImageCore
import ExchangeCore
@testable import HDF5Exchange
@testable import HDF5Format
import Testing
import TestSupport

/// Every message type of a version-1 object header is checked by its layout before libhdf5
/// decodes it, a type the reader does not check is refused as unsupported, shared messages
/// lead to the header they name, and a group's symbol table below the root is walked like
/// the root's (docs/robustness.md, "Untrusted HDF5 input").
@Suite("HDF5 header messages")
struct HDF5HeaderMessageTests {
    typealias H = HDF5ObjectHeaderTests

    static func le(_ value: UInt64, _ width: Int) -> [UInt8] { (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }

    static func check(_ messages: [[UInt8]], tail: [UInt8] = []) throws -> HDF5ObjectHeader.Damage? {
        let body = messages.flatMap { $0 }
        return try H.check(H.header(body, count: messages.count, tail: tail))
    }

    /// Messages as h5py's files hold them pass: a simple dataspace with maximum dimensions, a
    /// contiguous, a chunked and a compact layout (version 3), fill values of versions 1–3, a
    /// modification time, a comment, a hard and a soft link, group and link info, a null message.
    @Test func wellFormedMessagesPass() throws {
        let dataspace = H.message(0x01, [1, 2, 1, 0, 0, 0, 0, 0] + Self.le(4, 8) + Self.le(5, 8) + Self.le(4, 8) + Self.le(5, 8))
        let contiguous = H.message(0x08, [3, 1] + Self.le(4096, 8) + Self.le(160, 8))
        // (A chunk index address of all ones: no chunk written yet.)
        let chunked = H.message(0x08, [3, 2, 3] + Self.le(UInt64.max, 8) + Self.le(2, 4) + Self.le(5, 4) + Self.le(2, 4))
        let compact = H.message(0x08, [3, 0] + Self.le(4, 2) + [1, 2, 3, 4])
        let fills = [H.message(0x05, [1, 2, 0, 1] + Self.le(2, 4) + [0, 0]), H.message(0x05, [2, 2, 2, 0]),
                     H.message(0x05, [3, 0x20 | 2] + Self.le(4, 4) + [0, 0, 128, 63]), H.message(0x04, Self.le(2, 4) + [0, 0])]
        let time = H.message(0x12, [1, 0, 0, 0] + Self.le(1_700_000_000, 4))
        let comment = H.message(0x0D, Array("made by hand\0".utf8))
        let hard = H.message(0x06, [1, 0x00, 3] + Array("abc".utf8) + Self.le(800, 8))
        let soft = H.message(0x06, [1, 0x08, 1, 4] + Array("link".utf8) + Self.le(2, 2) + Array("/a".utf8))
        let info = [H.message(0x02, [0, 0] + Self.le(UInt64.max, 8) + Self.le(UInt64.max, 8)), H.message(0x0A, [0, 0]),
                    H.message(0x15, [0, 1] + Self.le(0, 2) + Self.le(UInt64.max, 8) + Self.le(UInt64.max, 8))]
        let all = [dataspace, contiguous, chunked, compact] + fills + [time, comment, hard, soft] + info + [H.message(0x00, [0, 0, 0])]
        #expect(try Self.check(all) == nil)
    }

    /// Each layout rule, with the exact message.
    @Test func damagedMessagesAreRefused() throws {
        let cases: [([UInt8], String)] = [
            (H.message(0x01, [1, 3, 0, 0, 0, 0, 0, 0] + Self.le(4, 8)), "the dataspace: a dataspace of rank 3 in 16 bytes"),
            (H.message(0x01, [1, 1, 1, 0, 0, 0, 0, 0] + Self.le(4, 8)), "the dataspace: a dataspace of rank 1 in 16 bytes"),
            (H.message(0x01, [3, 1, 0, 0, 0, 0, 0, 0]), "the dataspace: dataspace version 3"),
            (H.message(0x08, [3, 0] + Self.le(1000, 2) + [1, 2, 3, 4]), "a data layout message of 8 bytes runs short"),
            (H.message(0x08, [3, 2, 40] + Self.le(4096, 8)), "a chunked layout of rank 40"),
            (H.message(0x08, [4, 2, 0, 2, 8] + Self.le(4, 8) + Self.le(4, 8) + [9] + Self.le(0, 8)), "chunk index type 9"),
            (H.message(0x08, [3, 3] + Self.le(0, 8)), "layout version 3 of class 3"),
            (H.message(0x08, [5, 1]), "data layout message version 5"),
            (H.message(0x05, [2, 2, 2, 1] + Self.le(100, 4)), "a fill value message of 8 bytes runs short"),
            (H.message(0x05, [1, 2, 0, 1] + Self.le(9, 4)), "a fill value message of 8 bytes runs short"),
            (H.message(0x04, Self.le(9, 4)), "a fill value message of 8 bytes runs short"),
            (H.message(0x06, [1, 0x01] + Self.le(300, 2) + Array("abc".utf8)), "a link message of 8 bytes runs short"),
            (H.message(0x06, [1, 0x00, 0] + Self.le(800, 8)), "a link with an empty name"),
            (H.message(0x0D, Array("no terminator...".utf8)), "a comment without its terminating NUL"),
            (H.message(0x07, [1, 0, 0, 0] + Self.le(1, 2) + Self.le(2, 2) + Self.le(0, 8)), "an external-file list using 2 of 1 slots"),
            (H.message(0x07, [1, 0, 0, 0] + Self.le(1, 2) + Self.le(1, 2) + Self.le(0, 8)), "its local heap of names is not in the file"),
            (H.message(0x11, Self.le(0, 8) + Self.le(4096, 8)), "the group's symbol table is damaged: its local heap of names is not in the file"),
            (H.message(0x11, Self.le(0, 8)), "a symbol-table message of 8 bytes"),
        ]
        // A message of 4 bytes where a modification time takes 8 (messages are not padded here).
        #expect(try Self.check([[0x12, 0, 4, 0, 0, 0, 0, 0, 1, 0, 0, 0]]) == HDF5ObjectHeader.Damage("a modification time message of 4 bytes runs short"))
        for (message, expected) in cases {
            let damage = try Self.check([message])
            #expect(damage == HDF5ObjectHeader.Damage(expected), "\(expected)")
            #expect(damage?.unsupported == false)
        }
    }

    /// A chunk-index B-tree node of `entries` entries at `level`, type `type`, with children
    /// `children` (keys of a 3-dimensional layout: size, filter mask, three offsets).
    static func treeNode(level: UInt8, entries: Int, type: UInt8 = 1, children: [UInt64]) -> [UInt8] {
        var node: [UInt8] = Array("TREE".utf8) + [type, level] + Self.le(UInt64(entries), 2) + Self.le(UInt64.max, 8) + Self.le(UInt64.max, 8)
        let key = Self.le(64, 4) + Self.le(0, 4) + Self.le(0, 8) + Self.le(0, 8) + Self.le(0, 8)
        for child in children { node += key + Self.le(child, 8) }
        return node + key
    }

    /// The version-1 B-tree of a chunked layout (version 3) is walked: a two-level tree made by
    /// hand passes; a node past the file, of another type, at the wrong level, with more than
    /// 2K entries, or reached twice is refused, each with its message.
    @Test func chunkIndexTreeIsWalked() throws {
        // The header (16 + 32 bytes) at 0, then the root at 48 and a leaf after it.
        func layout(_ root: UInt64) -> [UInt8] { H.message(0x08, [3, 2, 3] + Self.le(root, 8) + Self.le(2, 4) + Self.le(5, 4) + Self.le(2, 4)) }
        #expect(layout(0).count == 32)
        let rootAt: UInt64 = 48
        let rootSize = Self.treeNode(level: 1, entries: 1, children: [0]).count
        let leafAt = rootAt + UInt64(rootSize)
        func check(_ root: [UInt8], _ leaf: [UInt8] = []) throws -> HDF5ObjectHeader.Damage? {
            try H.check(H.header(layout(rootAt), count: 1, tail: root + leaf))
        }
        let leaf = Self.treeNode(level: 0, entries: 2, children: [4096, 8192])
        #expect(try check(Self.treeNode(level: 1, entries: 1, children: [leafAt]), leaf) == nil)
        #expect(try check(Self.treeNode(level: 1, entries: 1, children: [1 << 40]), leaf)
                == HDF5ObjectHeader.Damage("the chunk index node at address 1099511627776 is not in the file or has no TREE signature"))
        #expect(try check(Self.treeNode(level: 1, entries: 1, type: 0, children: [leafAt]), leaf)
                == HDF5ObjectHeader.Damage("the chunk index node at address 48 is of type 0, not 1 (chunks)"))
        #expect(try check(Self.treeNode(level: 2, entries: 1, children: [leafAt]), leaf)
                == HDF5ObjectHeader.Damage("the chunk index node at address \(leafAt) is at level 0, its parent's child level 1"))
        #expect(try check(Self.treeNode(level: 1, entries: 1, children: [rootAt]), leaf)
                == HDF5ObjectHeader.Damage("the chunk index reaches the node at address 48 twice"))
        var many = Self.treeNode(level: 0, entries: 1, children: [4096])
        many[6] = 65  // 65 entries where K = 32 allows 64
        #expect(try check(many) == HDF5ObjectHeader.Damage("the chunk index node at address 48 has 65 entries, more than 64"))
        many[6] = 3   // 3 entries in a node that holds 1
        #expect(try check(many) == HDF5ObjectHeader.Damage("the chunk index node at address 48 (3 entries) runs past the end of the file"))
    }

    /// An h5py file (earliest format) whose dataset of 400 chunks has a two-level chunk index:
    /// it reads; with its root node claiming 200 entries (libhdf5 reads a node of 64) it is
    /// refused before libhdf5 opens the dataset, naming it.
    @Test func h5pyChunkIndexDamage() throws {
        let dir = TestData.temporaryDirectory("h5-chunk-tree")
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = try TestData.runPython("""
            import sys, struct, h5py, numpy as np
            path = sys.argv[1] + "/chunks.h5"
            with h5py.File(path, "w") as f:
                d = f.create_dataset("data", data=np.arange(400, dtype=np.float32).reshape(20, 20), chunks=(1, 1))
                d.attrs["units"] = "counts"
            b = bytearray(open(path, "rb").read())
            roots = [i for i in range(len(b) - 8) if b[i:i + 4] == b"TREE" and b[i + 4] == 1 and b[i + 5] == 1]
            assert len(roots) == 1, roots
            struct.pack_into("<H", b, roots[0] + 6, 200)
            open(path + ".damaged", "wb").write(b)
            print(path, roots[0])
            """, [dir.path])
        try #require(made.status == 0, "\(made.stderr)")
        let fields = made.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let path = fields[0], root = fields[1]
        #expect(try HDF5File.readAttributes(path, object: "data")["units"] == .text("counts"))
        let error = try #require(throws: ExchangeError.self) { try HDF5File.readAttributes(path + ".damaged", object: "data") }
        #expect(error.operation == "object header" && error.category == .corruptData, "\(error)")
        #expect(error.message.hasPrefix("data at address ") && error.message.hasSuffix("the chunk index node at address \(root) has 200 entries, more than 64"),
                "\(error.message)")
    }

    /// The project's own files have checksummed version-2 headers, but their chunked layout
    /// (version 3) indexes the chunks with a version-1 B-tree, which has none: it is walked
    /// too. The file reads; with the tree's root claiming 100 entries it is refused, naming
    /// the dataset, before libhdf5 opens it.
    @Test func ownFilesChunkIndexIsWalked() throws {
        let dir = TestData.temporaryDirectory("h5-own-tree")
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("good.h5").path
        try HDF5File.write(Fixture.image(), to: good)
        _ = try HDF5File.readSceneLinear(good)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        #expect(Array(bytes[0..<8]) == [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A] && bytes[8] >= 2, "superblock version \(bytes[8])")
        let trees = (0..<(bytes.count - 8)).filter { Array(bytes[$0..<($0 + 4)]) == Array("TREE".utf8) && bytes[$0 + 4] == 1 }
        try #require(!trees.isEmpty)
        for tree in trees { bytes[tree + 6] = 100; bytes[tree + 7] = 0 }
        let damaged = dir.appendingPathComponent("damaged.h5").path
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let error = try #require(throws: ExchangeError.self) { try HDF5File.readSceneLinear(damaged) }
        #expect(error.operation == "object header" && error.category == .corruptData, "\(error)")
        #expect(error.message.contains("has 100 entries, more than 64"), "\(error.message)")
    }

    /// A message type libhdf5 decodes that the reader does not check, and a message shared
    /// through the file's shared-message heap, are unsupported (exit 14), not damage; a type
    /// libhdf5 does not know passes (it keeps the bytes undecoded); a shared message names
    /// another header, which is walked too.
    @Test func uncheckedTypesAreUnsupportedAndSharedMessagesAreFollowed() throws {
        #expect(try Self.check([H.message(0x09, [1, 2, 3])]) == .unsupported("message type 0x0009, not one this reader checks"))
        #expect(try Self.check([H.message(0x17, [1, 2, 3])]) == .unsupported("message type 0x0017, not one this reader checks"))
        #expect(try Self.check([H.message(0x18, [1, 2, 3])]) == .unsupported("message type 0x0018, not one this reader checks"))
        // A type libhdf5 does not know it keeps as bytes, undecoded.
        #expect(try Self.check([H.message(0x19, [1, 2, 3]), H.message(0x1234, [9])]) == nil)
        #expect(try Self.check([H.message(0x03, [3, 1] + Self.le(7, 8), flags: 2)])
                == .unsupported("message 0x0003 is shared through the file's shared-message heap, which this reader does not read"))
        // A committed datatype: the first header shares its datatype with a second header at
        // address 40 (after the first's 16-byte prefix and its one 24-byte message).
        let committed = H.header(H.message(0x03, [0x10, 0, 0, 0, 4, 0, 0, 0, 0, 0, 32, 0]), count: 1)
        let sharing = H.message(0x03, [2, 0] + Self.le(40, 8), flags: 2)
        #expect(sharing.count == 24)
        #expect(try H.check(H.header(sharing, count: 1, tail: committed)) == nil)
        // The second header's datatype, a compound whose member name lacks its NUL, is checked.
        let bad = H.header(H.message(0x03, [0x16, 1, 0, 0, 4, 0, 0, 0] + Array("memberXY".utf8)), count: 1)
        #expect(try H.check(H.header(sharing, count: 1, tail: bad)) == HDF5ObjectHeader.Damage("the datatype: a member name without its terminating NUL"))
        // A header sharing a message with itself is walked once.
        let selfShared = H.message(0x03, [2, 0] + Self.le(0, 8), flags: 2)
        #expect(try H.check(H.header(selfShared, count: 1)) == nil)
    }

    /// An h5py file (earliest format) with a group: the group's symbol table is walked before
    /// libhdf5 opens the group — a local heap claiming more bytes than the file has, or a
    /// symbol entry whose name offset lies past its heap, is refused naming the group.
    @Test func damagedGroupSymbolTableIsRefused() throws {
        let dir = TestData.temporaryDirectory("h5-group-stab")
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = try TestData.runPython("""
            import sys, json, struct, h5py, numpy as np
            path = sys.argv[1] + "/groups.h5"
            with h5py.File(path, "w") as f:
                f.attrs["format"] = "SceneLinear"
                g = f.create_group("dng")
                g.attrs["camera"] = "hand-made"
                g.create_group("inner")
            b = open(path, "rb").read()
            assert b[8] == 0
            root_heap = struct.unpack_from("<Q", b, 56 + 24 + 8)[0]
            heaps = [i for i in range(len(b) - 4) if b[i:i + 4] == b"HEAP" and i != root_heap]
            root_tree = struct.unpack_from("<Q", b, 56 + 24)[0]
            root_snod = struct.unpack_from("<Q", b, root_tree + 8 + 16 + 8)[0]
            snods = [i for i in range(len(b) - 4) if b[i:i + 4] == b"SNOD"]
            # Heaps of dng and inner; symbol-table nodes of / and dng (inner is empty).
            assert len(heaps) == 2 and len(snods) == 2 and root_snod in snods, (heaps, snods, root_snod)
            # The dng group's heap: the one whose names include "inner".
            heap = [h for h in heaps if b"inner" in b[struct.unpack_from("<Q", b, h + 24)[0]:][:struct.unpack_from("<Q", b, h + 8)[0]]]
            assert len(heap) == 1
            size = bytearray(b); struct.pack_into("<Q", size, heap[0] + 8, 1 << 40)
            open(path + ".heap", "wb").write(size)
            snod = [s for s in snods if s != root_snod and struct.unpack_from("<H", b, s + 6)[0] == 1]
            name = bytearray(b); struct.pack_into("<Q", name, snod[0] + 8, 1 << 20)
            open(path + ".name", "wb").write(name)
            print(path)
            """, [dir.path])
        try #require(made.status == 0, "\(made.stderr)")
        let path = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try HDF5File.readAttributes(path, object: "dng")["camera"] == .text("hand-made"))
        for (copy, expected) in [("heap", "its local heap's 1099511627776 bytes of names are not in the file"),
                                 ("name", "a symbol-table entry names offset 1048576 of a heap of ")] {
            let error = try #require(throws: ExchangeError.self, "\(copy)") { try HDF5File.readAttributes(path + "." + copy, object: "dng") }
            #expect(error.operation == "object header" && error.category == .corruptData, "\(copy): \(error)")
            #expect(error.message.hasPrefix("dng at address ") && error.message.contains("the group's symbol table is damaged: \(expected)"),
                    "\(copy): \(error.message)")
        }
    }
}
