import Foundation
import ImageCore
import EXRExchange
import Testing
import TestSupport

/// The reader on files this module did not write: FLOAT, HALF and UINT channels from the
/// Python `OpenEXR` package with an offset data window, and tiled / mipmapped versions
/// made by the C++ library's `exrmaketiled`.
@Suite("EXR files from other writers")
struct EXRForeignFileTests {
    static func digest(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { SHA256Digest.hex(of: $0) } }

    static func littleEndian<T: FixedWidthInteger>(_ values: [T]) -> [UInt8] {
        values.flatMap { v in (0..<(T.bitWidth / 8)).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    }

    /// SHA-256 of each channel as Python prints it: R, B float32; G float16; id as float32.
    static func digests(_ c: EXRContents) throws -> [String: String] {
        [
            "R": digest(littleEndian(try #require(c.channels["R"]).map(\.bitPattern))),
            "B": digest(littleEndian(try #require(c.channels["B"]).map(\.bitPattern))),
            "G": digest(littleEndian(try #require(c.halfChannels["G"]).map(\.bitPattern))),
            "id": digest(littleEndian(try #require(c.channels["id"]).map(\.bitPattern))),
        ]
    }

    @Test("FLOAT, HALF and UINT channels, offset data window, scanline and tiled")
    func pythonAndTiled() throws {
        let dir = TestData.temporaryDirectory("exr-foreign")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("py.exr").path
        let script = """
        import sys, hashlib, OpenEXR, numpy as np
        h, w = 37, 53
        rng = np.random.default_rng(3)
        data = {
            "R": (rng.standard_normal((h, w)) * 100).astype(np.float32),
            "G": rng.standard_normal((h, w)).astype(np.float16),
            "B": rng.standard_normal((h, w)).astype(np.float32),
            "id": rng.integers(0, 2**32 - 1, (h, w), dtype=np.uint32),
        }
        header = {"compression": OpenEXR.PIZ_COMPRESSION, "type": OpenEXR.scanlineimage,
                  "dataWindow": ((10, 20), (10 + w - 1, 20 + h - 1))}
        with OpenEXR.File(header, dict(data)) as f:
            f.write(sys.argv[1])
        for name in ("R", "B"):
            print(name, hashlib.sha256(data[name].astype("<f4").tobytes()).hexdigest())
        print("G", hashlib.sha256(data["G"].astype("<f2").tobytes()).hexdigest())
        print("id", hashlib.sha256(data["id"].astype("<f4").tobytes()).hexdigest())
        """
        let result = try TestData.runPython(script, [path])
        #expect(result.status == 0, "\(result.stderr)")
        var expected: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ").map(String.init)
            if parts.count == 2 { expected[parts[0]] = parts[1] }
        }
        #expect(expected.count == 4, "\(result.stdout)")

        let scan = try EXRFile.read(path)
        #expect(scan.width == 53 && scan.height == 37)
        #expect(scan.attributes["dataWindow"] == .box2i([10, 20, 62, 56]))
        #expect(scan.compression == .piz)
        #expect(scan.halfChannels.keys.sorted() == ["G"])
        #expect(try Self.digests(scan) == expected)

        let tool = try TestData.tool("exrmaketiled")
        for (name, flags) in [("tiled", ["-o", "-t", "16", "16"]), ("mipmap", ["-m", "-t", "8", "8"])] {
            let tiled = dir.appendingPathComponent("\(name).exr").path
            let made = try TestData.run(tool, flags + [path, tiled])
            #expect(made.status == 0, "\(made.stderr)")
            let contents = try EXRFile.read(tiled)
            if case .tileDescription(let w, let h, _, _)? = contents.attributes["tiles"] {
                #expect(w == Int(flags[2]) && h == Int(flags[3]))
            } else {
                Issue.record("\(name): no tiles attribute")
            }
            #expect(contents.width == 53 && contents.height == 37)
            #expect(try Self.digests(contents) == expected, "\(name)")
        }
    }

    @Test("a tiled copy of a written file (C++ library) reads back as the same scene-linear image")
    func tiledCopyOfOurFile() throws {
        let tool = try TestData.tool("exrmaketiled")
        let dir = TestData.temporaryDirectory("exr-tiled-ours")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image(width: 77, height: 45)
        let path = dir.appendingPathComponent("ours.exr").path
        let tiled = dir.appendingPathComponent("tiled.exr").path
        try EXRFile.write(image, to: path, options: EXROptions(includeClipMask: true))
        let made = try TestData.run(tool, ["-t", "32", "16", path, tiled])
        #expect(made.status == 0, "\(made.stderr)")
        let back = try EXRFile.readSceneLinear(tiled)
        let original = try EXRFile.readSceneLinear(path)
        #expect(back.pixels.samples.map(\.bitPattern) == original.pixels.samples.map(\.bitPattern))
        #expect(back.clipMask == original.clipMask)
        #expect(back.provenance == original.provenance)
        #expect(back.exposure == image.exposure)
    }
}
