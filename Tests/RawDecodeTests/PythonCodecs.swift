import Foundation
import TestSupport

/// Independent encoders and decoders from the Python test environment (imagecodecs, which
/// bundles its own libjxl and libjpeg-turbo builds, and tifffile).
enum PythonCodecs {
    typealias BlockSamples = (patterns: [UInt32], width: Int, rows: Int, spp: Int)

    /// Writes each block's samples as a raw little-endian array (`dtype` "u1", "u2", "f2" or
    /// "f4", floats given as bit patterns) and returns the file paths.
    static func writeBlocks(_ blocks: [BlockSamples], dtype: String, dir: URL) throws -> [String] {
        try blocks.enumerated().map { i, b in
            var bytes: [UInt8] = []
            for p in b.patterns {
                switch dtype {
                case "u1": bytes.append(UInt8(truncatingIfNeeded: p))
                case "f4": bytes += (0..<4).map { UInt8(truncatingIfNeeded: p >> (8 * $0)) }
                default: bytes += [UInt8(truncatingIfNeeded: p), UInt8(truncatingIfNeeded: p >> 8)]
                }
            }
            let url = dir.appendingPathComponent("block\(i).raw")
            try Data(bytes).write(to: url)
            return url.path
        }
    }

    static func json(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value), as: UTF8.self)
    }

    /// JPEG XL streams made by imagecodecs (lossless by default), one per block, and
    /// imagecodecs' own decode of each stream (same dtype, as patterns: integers or half
    /// bit patterns); the running test is skipped without the Python environment. imagecodecs writes 16-bit
    /// images in an ISOBMFF container; `container: false` takes the bare codestream out of
    /// it (the jxlc box, or the jxlp boxes in order).
    static func jpegXL(_ blocks: [BlockSamples], dtype: String, bitsPerSample: Int? = nil, container: Bool = false,
                       distance: Double? = nil, effort: Int? = nil, dir: URL) throws -> (streams: [[UInt8]], decoded: [[UInt32]]) {
        let paths = try writeBlocks(blocks, dtype: dtype, dir: dir)
        let jobs: [[String: Any]] = zip(paths, blocks).map { path, b in
            ["in": path, "out": path + ".jxl", "dec": path + ".dec", "h": b.rows, "w": b.width, "c": b.spp]
        }
        let script = """
            import sys, json, struct, numpy as np, imagecodecs
            jobs = json.loads(sys.argv[1]); dtype = sys.argv[2]; bits = int(sys.argv[3]) or None
            container = sys.argv[4] == '1'; distance = float(sys.argv[5]); effort = int(sys.argv[6]) or None

            def codestream(data):
                if data[:2] == b'\\xff\\x0a':
                    return data
                out, at = b'', 0
                while at + 8 <= len(data):
                    size, kind = struct.unpack('>I4s', data[at:at + 8]); head = 8
                    if size == 1:
                        size = struct.unpack('>Q', data[at + 8:at + 16])[0]; head = 16
                    elif size == 0:
                        size = len(data) - at
                    body = data[at + head:at + size]
                    if kind == b'jxlc':
                        return body
                    if kind == b'jxlp':
                        out += body[4:]
                    at += size
                return out

            for j in jobs:
                shape = (j['h'], j['w'], j['c']) if j['c'] > 1 else (j['h'], j['w'])
                a = np.fromfile(j['in'], dtype='<' + dtype).reshape(shape)
                if distance > 0:
                    data = imagecodecs.jpegxl_encode(a, distance=distance, effort=effort, bitspersample=bits, usecontainer=container)
                else:
                    data = imagecodecs.jpegxl_encode(a, lossless=True, effort=effort, bitspersample=bits, usecontainer=container)
                data = data if container else codestream(data)
                assert data[:2] == b'\\xff\\x0a' or container, data[:12]
                open(j['out'], 'wb').write(data)
                imagecodecs.jpegxl_decode(data).astype('<' + dtype).tofile(j['dec'])
            print(imagecodecs.jpegxl_version())
            """
        let py = try TestData.runPython(script, [try json(jobs), dtype, String(bitsPerSample ?? 0),
                                                       container ? "1" : "0", String(distance ?? 0), String(effort ?? 0)])
        guard py.status == 0 else { throw PythonFailure(stderr: py.stderr) }
        let streams = try jobs.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0["out"] as! String))) }
        let decoded = try jobs.map { job -> [UInt32] in
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: job["dec"] as! String)))
            if dtype == "u1" { return bytes.map(UInt32.init) }
            if dtype == "f4" {
                return stride(from: 0, to: bytes.count, by: 4).map { i in (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[i + $1]) << (8 * $1) } }
            }
            return stride(from: 0, to: bytes.count, by: 2).map { UInt32(bytes[$0]) | UInt32(bytes[$0 + 1]) << 8 }
        }
        return (streams, decoded)
    }

    /// Baseline JPEG streams made by imagecodecs' libjpeg-turbo (or progressive ones made by
    /// Pillow), and their decoded bytes from imagecodecs' libjpeg-turbo; the running test is
    /// skipped without the Python environment.
    static func jpeg(_ blocks: [BlockSamples], quality: Int = 90, progressive: Bool = false,
                     dir: URL) throws -> (streams: [[UInt8]], decoded: [[UInt8]]) {
        let paths = try writeBlocks(blocks, dtype: "u1", dir: dir)
        let jobs: [[String: Any]] = zip(paths, blocks).map { path, b in
            ["in": path, "out": path + ".jpg", "dec": path + ".dec", "h": b.rows, "w": b.width, "c": b.spp]
        }
        let script = """
            import sys, json, numpy as np, imagecodecs
            jobs = json.loads(sys.argv[1]); quality = int(sys.argv[2]); progressive = sys.argv[3] == '1'
            for j in jobs:
                shape = (j['h'], j['w'], j['c']) if j['c'] > 1 else (j['h'], j['w'])
                a = np.fromfile(j['in'], dtype='u1').reshape(shape)
                if progressive:
                    import io
                    from PIL import Image
                    buffer = io.BytesIO()
                    Image.fromarray(a).save(buffer, 'JPEG', quality=quality, progressive=True)
                    data = buffer.getvalue()
                else:
                    data = imagecodecs.jpeg8_encode(a, level=quality)
                open(j['out'], 'wb').write(data)
                imagecodecs.jpeg8_decode(data).astype('u1').tofile(j['dec'])
            print(imagecodecs.jpeg8_version())
            """
        let py = try TestData.runPython(script, [try json(jobs), String(quality), progressive ? "1" : "0"])
        guard py.status == 0 else { throw PythonFailure(stderr: py.stderr) }
        let streams = try jobs.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0["out"] as! String))) }
        let decoded = try jobs.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0["dec"] as! String))) }
        return (streams, decoded)
    }

    struct PythonFailure: Error, CustomStringConvertible {
        let stderr: String
        var description: String { "Python failed: \(stderr)" }
    }
}
