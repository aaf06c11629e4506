import Foundation
import ImageCore
import ExchangeCore
import HDF5Exchange
import Testing
import TestSupport

/// The HDF5 reader finds variable-length strings in the global heap itself and refuses a
/// damaged collection or reference with an error naming the file, the attribute and the
/// damage (libhdf5 1.10.8's own read of the heap trusts the damaged sizes: fuzzing made it
/// copy past the collection, segfault and loop forever, docs/robustness.md).
@Suite("HDF5 global heap")
struct HDF5GlobalHeapTests {
    /// The global heap collection (file offset and size) whose object 1 holds `first`, the
    /// first string the writer stored; checked to be a version-1 collection.
    static func collection(in bytes: [UInt8], first: String) throws -> (offset: Int, size: Int) {
        let signature: [UInt8] = Array("GCOL".utf8), data: [UInt8] = Array(first.utf8)
        let found = (0..<(bytes.count - 48)).filter { (at: Int) -> Bool in
            guard Array(bytes[at..<(at + 4)]) == signature, bytes[at + 16] == 1, bytes[at + 17] == 0 else { return false }
            return Array(bytes[(at + 32)..<(at + 32 + data.count)]) == data
        }
        let at = try #require(found.first, "no collection holds \(first) as object 1")
        #expect(found.count == 1)
        #expect(bytes[at + 4] == 1)
        #expect(number(bytes, at + 24, 8) == UInt64(data.count))
        return (at, Int(number(bytes, at + 8, 8)))
    }

    static func number(_ bytes: [UInt8], _ at: Int, _ size: Int) -> UInt64 {
        (0..<size).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
    }

    static func put(_ value: UInt64, _ bytes: inout [UInt8], _ at: Int, _ size: Int) {
        for i in 0..<size { bytes[at + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
    }

    /// Collection offsets of the objects of the 4096-byte collection at `at`, in file order,
    /// with their indices; the last entry is the free space (index 0).
    static func objects(_ bytes: [UInt8], collection at: Int) -> [(offset: Int, index: Int)] {
        var out: [(Int, Int)] = []
        var position = 16
        while 4096 - position >= 16 {
            let index = Int(number(bytes, at + position, 2))
            out.append((position, index))
            if index == 0 { break }
            position += 16 + Int((number(bytes, at + position + 8, 8) + 7) & ~7)
        }
        return out
    }

    /// One kind of damage to the collection holding the root attribute `format` (object 1,
    /// "SceneLinear", 11 bytes) and the end of the message it gives.
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case objectSize, freeSpaceSize, collectionSize, collectionPastEnd, version, signature, missingObject,
             sizeMismatch, duplicateIndex

        var testDescription: String { rawValue }

        /// Damages `bytes` (the collection at `at`, which is also its address) and returns
        /// what the reader must say about it.
        func apply(_ bytes: inout [UInt8], collection at: Int) -> String {
            let place = "the collection at address \(at)"
            switch self {
            case .objectSize:
                // What the fuzzer found: a size that runs far past the collection.
                HDF5GlobalHeapTests.put(0x7FFF_FFFF_FFFF, &bytes, at + 24, 8)
                return "\(place): object 1 of 140737488355327 bytes at collection offset 16 runs past the end of the collection (4096 bytes)"
            case .freeSpaceSize:
                // libhdf5 1.10.8 loops forever on a free space of size 0.
                let free = HDF5GlobalHeapTests.objects(bytes, collection: at).last!
                #expect(free.index == 0)
                HDF5GlobalHeapTests.put(0, &bytes, at + free.offset + 8, 8)
                return "\(place): the free space (object 0) at collection offset \(free.offset) claims 0 bytes; \(4096 - free.offset) remain"
            case .collectionSize:
                HDF5GlobalHeapTests.put(2048, &bytes, at + 8, 8)
                return "\(place): collection size 2048 is below the minimum of 4096 bytes"
            case .collectionPastEnd:
                let size = bytes.count - at + 8
                HDF5GlobalHeapTests.put(UInt64(size), &bytes, at + 8, 8)
                return "\(place): the collection of \(size) bytes runs past the end of the file (\(bytes.count - at) bytes from its start)"
            case .version:
                bytes[at + 4] = 2
                return "\(place): collection version 2; only version 1 is defined"
            case .signature:
                bytes[at + 3] = UInt8(ascii: "X")
                return "\(place): no global heap collection (signature GCOL) there"
            case .missingObject:
                HDF5GlobalHeapTests.put(999, &bytes, at + 16, 2)
                return "\(place) holds no object 1"
            case .sizeMismatch:
                // 16 pads to the same 16 bytes as 11: the walk is unchanged.
                HDF5GlobalHeapTests.put(16, &bytes, at + 24, 8)
                return "\(place): object 1 holds 16 bytes, the string 11"
            case .duplicateIndex:
                HDF5GlobalHeapTests.put(1, &bytes, at + HDF5GlobalHeapTests.objects(bytes, collection: at)[1].offset, 2)
                return "\(place): object index 1 appears twice"
            }
        }
    }

    @Test("a damaged collection in a file of the project's writer is refused, naming the attribute and the damage",
          arguments: Damage.allCases)
    func damagedCollection(_ damage: Damage) throws {
        let dir = TestData.temporaryDirectory("h5-heap")
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("good.h5").path
        try HDF5File.write(Fixture.image(), to: good)
        var bytes = [UInt8](Fixture.bytes(good))
        let (at, size) = try Self.collection(in: bytes, first: HDF5File.formatName)
        #expect(size == 4096)
        let expected = "attribute format of /: " + damage.apply(&bytes, collection: at)
        let path = dir.appendingPathComponent("damaged.h5").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: ExchangeError.self) { try HDF5File.readSceneLinear(path) }
        #expect(error == ExchangeError(path: path, operation: "global heap", message: expected, category: .corruptData),
                "\(error)")
        #expect(error.description == "cannot read \(path): global heap: \(expected)")
        #expect(error.category.exitCode == 13)
        let attributesError = try #require(throws: ExchangeError.self) { try HDF5File.readAttributes(path, object: "/") }
        #expect(attributesError == error)
        // The undamaged file reads.
        #expect(try HDF5File.readSceneLinear(good).provenance.dng == Fixture.dngItems)
    }

    /// h5py (its own HDF5 library, the earliest file format: version-1 object headers without
    /// checksums) writes the layout with variable-length UTF-8 strings: scalars, an array, an
    /// empty string, non-ASCII text, a 5000-byte string (a collection of its own), 400 strings
    /// in /dng (several collections) and an overwritten attribute (its old heap object
    /// removed); once plainly and once after a 512-byte user block (addresses relative to it).
    static let h5pyWriter = """
    import sys, json, h5py, numpy as np
    def write(path, **options):
        with h5py.File(path, "w", **options) as f:
            f.attrs["format"] = "SceneLinear"
            f.attrs["format_version"] = np.int32(2)
            f.attrs["software"] = "h5py " + h5py.__version__
            f.attrs["source_file"] = "naïve ✓.dng"
            f.attrs["source_ifd"] = ""
            f.attrs["source_sha256"] = "x" * 5000
            image = f.create_dataset("image", data=np.linspace(0, 1, 8 * 6 * 3, dtype=np.float16).reshape(8, 6, 3))
            image.attrs["color_space"] = "lin_rec2020_scene"
            image.attrs["channel_names"] = ["R", "G", "B"]
            image.attrs["exposure_scaling"] = "none"
            image.attrs["white_balance_source"] = "placeholder"
            image.attrs["white_balance_source"] = "AsShotNeutral"
            dng = f.create_group("dng")
            for i in range(400):
                dng.attrs[f"item{i:03d}"] = f"value {i} " + "y" * (i % 37)
            dng.attrs["empty"] = ""
    write(sys.argv[1])
    write(sys.argv[2], userblock_size=512)
    strings = {}
    with h5py.File(sys.argv[1], "r") as f:
        for name in ["/", "/image", "/dng"]:
            strings[name] = {k: (",".join(v) if not isinstance(v, str) else v)
                             for k, v in f[name].attrs.items() if isinstance(v, str) or getattr(v, "dtype", None) == object}
    print(json.dumps(strings))
    """

    @Test("h5py's variable-length string attributes read as h5py reads them, with and without a user block")
    func h5pyStrings() throws {
        let dir = TestData.temporaryDirectory("h5-heap-h5py")
        defer { try? FileManager.default.removeItem(at: dir) }
        let plain = dir.appendingPathComponent("h5py.h5").path, userBlock = dir.appendingPathComponent("h5py-ub.h5").path
        let result = try TestData.runPython(Self.h5pyWriter, [plain, userBlock])
        try #require(result.status == 0, "\(result.stderr)")
        let expected = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: [String: String]])
        #expect(expected["/dng"]?.count == 401 && expected["/image"]?["channel_names"] == "R,G,B")
        for path in [plain, userBlock] {
            for (object, strings) in expected {
                let read = try HDF5File.readAttributes(path, object: object)
                let texts = read.compactMapValues { value -> String? in
                    if case .text(let t) = value { return t }
                    return nil
                }
                #expect(texts == strings, "\(path) \(object)")
            }
            let image = try HDF5File.readSceneLinear(path)
            #expect(image.width == 6 && image.height == 8 && image.encoding == .linearRec2020)
            #expect(image.provenance.sourceFile == "naïve ✓.dng" && image.provenance.sourceIFD == "")
            #expect(image.provenance.sourceSHA256 == String(repeating: "x", count: 5000))
            #expect(image.provenance.whiteBalanceSource == "AsShotNeutral")
        }
    }

    /// The stored references of h5py's file are not under a checksum, so a reference can be
    /// damaged too: a length shorter than its object (libhdf5 would copy the whole object into
    /// a buffer sized from the length), an address past the end of the file; and an object
    /// size, as in the project's own files.
    @Test("damaged references and objects in an h5py file are refused, naming the attribute and the damage")
    func h5pyDamage() throws {
        let dir = TestData.temporaryDirectory("h5-heap-h5py-damage")
        defer { try? FileManager.default.removeItem(at: dir) }
        let plain = dir.appendingPathComponent("h5py.h5").path, userBlock = dir.appendingPathComponent("h5py-ub.h5").path
        let result = try TestData.runPython(Self.h5pyWriter, [plain, userBlock])
        try #require(result.status == 0, "\(result.stderr)")
        for (path, base) in [(plain, 0), (userBlock, 512)] {
            let good = [UInt8](Fixture.bytes(path))
            let (at, size) = try Self.collection(in: good, first: "SceneLinear")
            let address = at - base
            // The root attribute format: length 11, the collection's address, object 1.
            var reference = [UInt8](repeating: 0, count: 16)
            Self.put(11, &reference, 0, 4)
            Self.put(UInt64(address), &reference, 4, 8)
            Self.put(1, &reference, 12, 4)
            let stored = (0..<(good.count - 16)).filter { Array(good[$0..<($0 + 16)]) == reference }
            try #require(stored.count == 1, "\(stored)")
            let cases: [(String, (inout [UInt8]) -> Void, String)] = [
                ("short length", { Self.put(5, &$0, stored[0], 4) },
                 "the collection at address \(address): object 1 holds 11 bytes, the string 5"),
                ("address past the end", { Self.put(1 << 40, &$0, stored[0] + 4, 8) },
                 "the collection at address 1099511627776: the address is past the end of the file (\(good.count) bytes)"),
                ("object size", { Self.put(0xFFFF_FFFF, &$0, at + 24, 8) },
                 "the collection at address \(address): object 1 of 4294967295 bytes at collection offset 16 runs past the end of the collection (\(size) bytes)"),
            ]
            for (label, damage, message) in cases {
                var bytes = good
                damage(&bytes)
                let damaged = dir.appendingPathComponent("damaged.h5").path
                try Data(bytes).write(to: URL(fileURLWithPath: damaged))
                let error = try #require(throws: ExchangeError.self, "\(label)") { try HDF5File.readSceneLinear(damaged) }
                #expect(error == ExchangeError(path: damaged, operation: "global heap",
                                               message: "attribute format of /: \(message)", category: .corruptData),
                        "\(label) (user block \(base)): \(error)")
            }
        }
    }
}
