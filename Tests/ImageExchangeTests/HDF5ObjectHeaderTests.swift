import Foundation
import ImageCore
import ExchangeCore
@testable import HDF5Exchange
@testable import HDF5Format
import Testing
import TestSupport

/// The messages of version-1 object headers (no checksum) are checked before libhdf5 decodes
/// them: an attribute name without its NUL made libhdf5 1.10.8 `strdup` past the header
/// (docs/robustness.md, "Untrusted HDF5 input").
@Suite("HDF5 object headers")
struct HDF5ObjectHeaderTests {
    /// A version-1 header at address 0: the 16-byte prefix, the first chunk's `messages`,
    /// and `tail` after it (further chunks); addresses and lengths of 8 bytes.
    static func header(_ messages: [UInt8], count: Int, tail: [UInt8] = []) -> [UInt8] {
        var out: [UInt8] = [1, 0, UInt8(count), 0, 1, 0, 0, 0]
        let size = UInt32(messages.count)
        out += [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), 0, 0, 0, 0, 0, 0]
        return out + messages + tail
    }

    /// A message of `type` with `data` (padded to 8 bytes), flags `flags`.
    static func message(_ type: UInt16, _ data: [UInt8], flags: UInt8 = 0) -> [UInt8] {
        let padded = data + [UInt8](repeating: 0, count: (8 - data.count % 8) % 8)
        return [UInt8(type & 0xFF), UInt8(type >> 8), UInt8(padded.count & 0xFF), UInt8(padded.count >> 8), flags, 0, 0, 0] + padded
    }

    /// An attribute message's data of `version` named `name` (`terminated`: with its NUL):
    /// a 4-byte integer type, a dataspace of `points` points (scalar when nil; version 1 with
    /// 8-byte extents) and the data, 4 bytes per point (or `dataBytes`).
    static func attribute(_ name: String, version: UInt8 = 1, terminated: Bool = true, points: UInt64? = nil,
                          dataBytes: Int? = nil) -> [UInt8] {
        let bytes = Array(name.utf8) + (terminated ? [0] : [])
        let type: [UInt8] = [0x10, 0, 0, 0, 4, 0, 0, 0]
        var space: [UInt8] = [1, points == nil ? 0 : 1, 0, 0, 0, 0, 0, 0]
        if let points { space += (0..<8).map { UInt8(truncatingIfNeeded: points >> (8 * UInt64($0))) } }
        var head: [UInt8] = [version, 0, UInt8(bytes.count), 0, UInt8(type.count), 0, UInt8(space.count), 0]
        if version == 3 { head.append(0) }
        let namePart = version == 1 ? bytes + [UInt8](repeating: 0x41, count: (8 - bytes.count % 8) % 8) : bytes
        return head + namePart + type + space + [UInt8](repeating: 0x41, count: dataBytes ?? 4 * Int(points ?? 1))
    }

    static func continuation(to address: UInt64, length: UInt64) -> [UInt8] {
        var data = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            data[i] = UInt8(truncatingIfNeeded: address >> (8 * UInt64(i)))
            data[8 + i] = UInt8(truncatingIfNeeded: length >> (8 * UInt64(i)))
        }
        return message(0x10, data)
    }

    static func check(_ bytes: [UInt8]) throws -> HDF5ObjectHeader.Damage? {
        let path = TestData.temporaryDirectory("h5-ohdr").appendingPathComponent("header.bin").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let file = try HDF5MappedFile(path: path, base: 0)
        do {
            try HDF5ObjectHeader.check(file, at: 0, offsetSize: 8, lengthSize: 8)
            return nil
        } catch {
            return error
        }
    }

    /// Each rule on headers made by hand: attributes of versions 1–3 in the first chunk and
    /// behind a continuation pass; a name without NUL, a message past its chunk, a chunk past
    /// the file, a continuation loop, another header version fail, naming what is wrong; a
    /// version-2 header (`OHDR`, checksummed) and shared attributes are left to libhdf5.
    @Test func rules() throws {
        let second = Self.message(0x0C, Self.attribute("colour", version: 3, points: 3))
        let first = Self.message(0x0C, Self.attribute("format")) + Self.continuation(to: 16 + 112, length: UInt64(second.count))
            + Self.message(0x0C, Self.attribute("v2", version: 2))
        #expect(first.count == 112)
        #expect(try Self.check(Self.header(first, count: 4, tail: second)) == nil)

        let unterminated = Self.message(0x0C, Self.attribute("formatX", terminated: false))
        #expect(try Self.check(Self.header(unterminated, count: 1))
                == HDF5ObjectHeader.Damage("the attribute name \"formatX\" (7 bytes) does not end in NUL"))
        // The same bytes in a shared message are a reference (version 1: an address after 8
        // bytes, here the name's bytes "X\0..." read as an address far past the file), not an attribute.
        #expect(try Self.check(Self.header(Self.message(0x0C, Self.attribute("formatX", terminated: false), flags: 2), count: 1))
                == HDF5ObjectHeader.Damage("the header runs past the end of the file (64 bytes)"))
        var long = Self.message(0x0C, Self.attribute("format"))
        long[2] = 0xF0  // message size 240 in a chunk of 40 bytes
        #expect(try Self.check(Self.header(long, count: 1))
                == HDF5ObjectHeader.Damage("message 0x000C of 240 bytes at address 16 runs past its chunk"))
        #expect(try Self.check(Self.header(Self.continuation(to: 4096, length: 64), count: 1))
                == HDF5ObjectHeader.Damage("a chunk of 64 bytes at address 4096 runs past the end of the file (40 bytes)"))
        #expect(try Self.check(Self.header(Self.continuation(to: 16, length: 24), count: 1))
                == HDF5ObjectHeader.Damage("a continuation to address 16 seen before"))
        var other = Self.header(first, count: 4, tail: second)
        other[0] = 2
        #expect(try Self.check(other) == HDF5ObjectHeader.Damage("object header version 2"))
        #expect(try Self.check(Array("OHDR".utf8) + [UInt8](repeating: 0xFF, count: 60)) == nil)
        var nameSize = Self.message(0x0C, Self.attribute("format"))
        nameSize[8 + 2] = 200
        #expect(try Self.check(Self.header(nameSize, count: 1)) == HDF5ObjectHeader.Damage("an attribute name of 200 bytes in a message of 40"))
        var spaceSize = Self.message(0x0C, Self.attribute("format"))
        spaceSize[8 + 6] = 200
        #expect(try Self.check(Self.header(spaceSize, count: 1)) == HDF5ObjectHeader.Damage(
            "attribute format: a datatype of 8 and a dataspace of 200 bytes after the name do not fit in a message of 40"))
        #expect(try Self.check(Self.header(Self.message(0x0C, Self.attribute("format", points: 100, dataBytes: 8)), count: 1))
                == HDF5ObjectHeader.Damage("attribute format: 100 elements of 4 bytes do not fit in the 8 bytes after its dataspace"))
        // A variable-length string of 15 bytes (stored: 4 + 8 + 4) over unsigned bytes, a scalar.
        let vlenType: [UInt8] = [0x19, 1, 0, 0, 15, 0, 0, 0] + [0x10, 0, 0, 0, 1, 0, 0, 0, 0, 0, 8, 0]
        let vlenData: [UInt8] = [1, 0, 7, 0, 20, 0, 8, 0] + Array("format\0".utf8) + [0] + vlenType + [0, 0, 0, 0]
            + [1, 0, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16)
        let vlen = Self.message(0x0C, vlenData)
        #expect(try Self.check(Self.header(vlen, count: 1))
                == HDF5ObjectHeader.Damage("attribute format: a variable-length datatype of 15 bytes (this file's take 16)"))
        // Names inside datatypes (libhdf5 copies them with strdup): a compound member's must end
        // in NUL inside the message, and so must a filter's inside its stated length.
        let compound: [UInt8] = [0x16, 1, 0, 0, 4, 0, 0, 0] + Array("memberXY".utf8)
        #expect(try Self.check(Self.header(Self.message(0x03, compound), count: 1))
                == HDF5ObjectHeader.Damage("the datatype: a member name without its terminating NUL"))
        let member = [0x16, 1, 0, 0, 4, 0, 0, 0] + Array("member\0\0".utf8) + [0, 0, 0, 0] + [UInt8](repeating: 0, count: 28)
            + [0x10, 0, 0, 0, 4, 0, 0, 0, 0, 0, 32, 0]
        #expect(try Self.check(Self.header(Self.message(0x03, member), count: 1)) == nil)
        // An enumeration whose first name's padding runs past the message: the second name starts outside it.
        let enumeration: [UInt8] = [0x18, 2, 0, 0, 1, 0, 0, 0] + [0x10, 0, 0, 0, 1, 0, 0, 0, 0, 0, 8, 0] + Array("a\0".utf8)
        #expect(try Self.check(Self.header(Self.message(0x03, enumeration), count: 1))
                == HDF5ObjectHeader.Damage("the datatype: a member name without its terminating NUL"))
        let filter: [UInt8] = [1, 1, 0, 0, 0, 0, 0, 0] + [1, 0, 8, 0, 0, 0, 0, 0] + Array("deflateX".utf8)
        #expect(try Self.check(Self.header(Self.message(0x0B, filter), count: 1))
                == HDF5ObjectHeader.Damage("filter 1 of 1: a name of 8 bytes without its terminating NUL inside the message"))
        #expect(try Self.check(Self.header(Self.message(0x0B, [1, 1, 0, 0, 0, 0, 0, 0] + [1, 0, 8, 0, 0, 0, 0, 0]
                                                                 + Array("deflate\0".utf8)), count: 1)) == nil)
        #expect(try Self.check(Self.header(Self.message(0x0C, Self.attribute("format", points: 1 << 62, dataBytes: 8)), count: 1))
                == HDF5ObjectHeader.Damage("attribute format: 4611686018427387904 elements of 4 bytes do not fit in the 8 bytes after its dataspace"))
    }

    /// Files of the layout in h5py's default (earliest) format, plainly and after a 512-byte
    /// user block, and two damaged copies of each, made by walking the root group's header
    /// here (an independent reading of the format): "nul", the NUL of the root attribute
    /// `format` overwritten with "X"; "tail", the last message of the header's last chunk —
    /// an attribute — overwritten with "X" from its name's NUL to the end of the chunk, so
    /// that a `strdup` of the name reads past the header. Prints the files as JSON.
    static let h5pyWriter = """
    import sys, json, struct, h5py, numpy as np
    def write(path, **options):
        with h5py.File(path, "w", **options) as f:
            f.attrs["format"] = "SceneLinear"
            image = f.create_dataset("image", data=np.linspace(0, 1, 8 * 6 * 3, dtype=np.float16).reshape(8, 6, 3))
            image.attrs["color_space"] = "lin_rec2020_scene"
            f.attrs["format_version"] = np.int32(2)
    def messages(b, base):
        assert b[base:base + 8] == b"\\x89HDF\\r\\n\\x1a\\n" and b[base + 8] == 0
        so = b[base + 13]
        root = struct.unpack_from("<Q", b, base + 24 + 4 * so + 8)[0]
        version, _, count, _, size = struct.unpack_from("<BBHII", b, base + root)
        assert version == 1
        chunks, out = [(base + root + 16, size)], []
        while chunks:
            start, length = chunks.pop(0)
            p = start
            while p + 8 <= start + length:
                kind, n = struct.unpack_from("<HH", b, p)
                out.append((kind, p + 8, n, start + length))
                if kind == 0x10:
                    address, length2 = struct.unpack_from("<QQ", b, p + 8)
                    chunks.append((base + address, length2))
                p += 8 + n
        return out
    out = {}
    for name, base, options in [("plain", 0, {}), ("userblock", 512, {"userblock_size": 512})]:
        path = sys.argv[1] + "/" + name + ".h5"
        write(path, **options)
        good = open(path, "rb").read()
        found = messages(good, base)
        attributes = [m for m in found if m[0] == 0x0C]
        fmt = [m for m in attributes if good[m[1] + 8:m[1] + 15] == b"format\\0"]
        assert len(fmt) == 1 and good[fmt[0][1]] == 1
        b = bytearray(good)
        b[fmt[0][1] + 14] = ord("X")
        open(path + ".nul", "wb").write(b)
        kind, data, n, end = found[-1]
        assert kind == 0x0C and data + n == end, found
        size = struct.unpack_from("<H", good, data + 2)[0]
        b = bytearray(good)
        for i in range(data + 8 + size - 1, end):
            b[i] = ord("X")
        open(path + ".tail", "wb").write(b)
        out[name] = {"good": path, "nul": path + ".nul", "tail": path + ".tail",
                     "tailName": good[data + 8:data + 8 + size - 1].decode() + "X", "tailSize": size}
    print(json.dumps(out))
    """

    /// h5py's files read; each damaged copy is refused with the object, its address and the
    /// damage (without the check, the "tail" copy made libhdf5 read past its buffer).
    @Test("an h5py file whose attribute name lost its NUL is refused before libhdf5 reads it")
    func h5pyNameWithoutNUL() throws {
        let dir = TestData.temporaryDirectory("h5-ohdr-h5py")
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try TestData.runPython(Self.h5pyWriter, [dir.path])
        try #require(result.status == 0, "\(result.stderr)")
        let files = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: [String: Any]])
        #expect(files.count == 2)
        for (layout, file) in files {
            let good = try #require(file["good"] as? String), tailName = try #require(file["tailName"] as? String)
            let tailSize = try #require(file["tailSize"] as? Int)
            #expect(try HDF5File.readAttributes(good, object: "/")["format"] == .text("SceneLinear"), "\(layout)")
            for (copy, name, size) in [("nul", "formatX", 7), ("tail", tailName, tailSize)] {
                let path = try #require(file[copy] as? String)
                let error = try #require(throws: ExchangeError.self, "\(layout) \(copy)") { try HDF5File.readSceneLinear(path) }
                #expect(error.operation == "object header" && error.category == .corruptData && error.category.exitCode == 13,
                        "\(layout) \(copy): \(error.operation) \(error.message)")
                #expect(error.message.hasPrefix("/ at address ")
                        && error.message.hasSuffix(": the attribute name \"\(name)\" (\(size) bytes) does not end in NUL"),
                        "\(layout) \(copy): \(error.message)")
            }
        }
    }
}
