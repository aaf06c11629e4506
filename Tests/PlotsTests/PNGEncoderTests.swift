import Foundation
import Plots
import Testing
import TestSupport

/// The PNG encoder: file structure checked byte by byte here, pixels checked by independent
/// decoders in Python (a standard-library one written for the test, and matplotlib's).
@Suite struct PNGEncoderTests {
    /// CRC-32 (ISO 3309, reflected polynomial 0xEDB88320), computed bit by bit here rather
    /// than with zlib, so chunk checksums are checked independently of the encoder.
    static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func bigEndian(_ b: ArraySlice<UInt8>) -> UInt32 {
        b.reduce(0) { ($0 << 8) | UInt32($1) }
    }

    struct Chunk {
        var type: String
        var data: [UInt8]
        var crcMatches: Bool
    }

    static func chunks(_ png: [UInt8]) -> [Chunk] {
        var out: [Chunk] = []
        var pos = 8
        while pos + 12 <= png.count {
            let length = Int(bigEndian(png[pos..<(pos + 4)]))
            let type = String(decoding: png[(pos + 4)..<(pos + 8)], as: UTF8.self)
            let data = Array(png[(pos + 8)..<(pos + 8 + length)])
            let crc = bigEndian(png[(pos + 8 + length)..<(pos + 12 + length)])
            out.append(Chunk(type: type, data: data, crcMatches: crc == crc32(png[(pos + 4)..<(pos + 8 + length)])))
            pos += 12 + length
        }
        #expect(pos == png.count, "chunks must end exactly at the end of the file")
        return out
    }

    static func randomImage(width: Int, height: Int, channels: Int = 3, seed: UInt64) -> [UInt8] {
        var rng = SeededGenerator(seed: seed)
        return (0..<(width * height * channels)).map { _ in UInt8(truncatingIfNeeded: rng.next() >> 56) }
    }

    /// A smooth image (ramps in x and y) where the predicting filters beat None.
    static func gradientImage(width: Int, height: Int) -> [UInt8] {
        var out: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                out += [UInt8((x * 255) / max(1, width - 1)), UInt8((y * 255) / max(1, height - 1)), UInt8(((x + y) * 3) & 0xFF)]
            }
        }
        return out
    }

    @Test func structureRGB() throws {
        let png = try PNGEncoder.encode(rgb: Self.randomImage(width: 37, height: 23, seed: 1), width: 37, height: 23)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let chunks = Self.chunks(png)
        #expect(chunks.first?.type == "IHDR")
        #expect(chunks.last?.type == "IEND")
        #expect(chunks.last?.data.isEmpty == true)
        #expect(chunks.allSatisfy { $0.crcMatches })
        #expect(chunks.dropFirst().dropLast().allSatisfy { $0.type == "IDAT" })
        let ihdr = chunks[0].data
        #expect(ihdr.count == 13)
        #expect(Self.bigEndian(ihdr[0..<4]) == 37)
        #expect(Self.bigEndian(ihdr[4..<8]) == 23)
        #expect(Array(ihdr[8..<13]) == [8, 2, 0, 0, 0], "bit depth 8, truecolour, deflate, adaptive filtering, no interlace")
        // The zlib stream header: deflate with a 32 KiB window, header checksum valid.
        let idat = chunks.filter { $0.type == "IDAT" }.flatMap(\.data)
        #expect(idat[0] & 0x0F == 8)
        #expect((Int(idat[0]) * 256 + Int(idat[1])) % 31 == 0)
    }

    @Test func structureRGBA() throws {
        let png = try PNGEncoder.encode(rgba: Self.randomImage(width: 5, height: 3, channels: 4, seed: 2), width: 5, height: 3)
        let chunks = Self.chunks(png)
        #expect(chunks.allSatisfy { $0.crcMatches })
        #expect(Array(chunks[0].data[8..<13]) == [8, 6, 0, 0, 0], "colour type 6 = RGBA")
    }

    @Test func largeImagesSplitIntoSeveralDataChunks() throws {
        let width = 700, height = 500
        let png = try PNGEncoder.encode(rgb: Self.randomImage(width: width, height: height, seed: 3), width: width, height: height)
        let idats = Self.chunks(png).filter { $0.type == "IDAT" }
        #expect(idats.count >= 4, "1 MB of noise needs at least four 256 KiB chunks")
        #expect(idats.dropLast().allSatisfy { $0.data.count == 256 * 1024 })
    }

    @Test func sameInputSameBytes() throws {
        let image = Self.gradientImage(width: 120, height: 80)
        #expect(try PNGEncoder.encode(rgb: image, width: 120, height: 80) == PNGEncoder.encode(rgb: image, width: 120, height: 80))
    }

    /// Decodes with Python and compares every pixel; also reports the filter types used.
    @Test func independentDecodersReadTheSamePixels() throws {
        let dir = TestData.temporaryDirectory("png")
        defer { try? FileManager.default.removeItem(at: dir) }
        let cases: [(String, Int, Int, Int, [UInt8])] = [
            ("one", 1, 1, 3, [200, 10, 99]),
            ("noise", 31, 17, 3, Self.randomImage(width: 31, height: 17, seed: 4)),
            ("gradient", 257, 64, 3, Self.gradientImage(width: 257, height: 64)),
            ("flat", 40, 30, 3, [UInt8](repeating: 128, count: 40 * 30 * 3)),
            ("noise-rgba", 19, 11, 4, Self.randomImage(width: 19, height: 11, channels: 4, seed: 5)),
        ]
        for (name, w, h, c, pixels) in cases {
            let png = c == 3 ? try PNGEncoder.encode(rgb: pixels, width: w, height: h) : try PNGEncoder.encode(rgba: pixels, width: w, height: h)
            try Data(png).write(to: dir.appendingPathComponent("\(name).png"))
            try Data(pixels).write(to: dir.appendingPathComponent("\(name).raw"))
        }
        let script = """
            import json, struct, sys, zlib
            def decode(path):
                data = open(path, 'rb').read()
                assert data[:8] == b'\\x89PNG\\r\\n\\x1a\\n'
                pos, idat, filters = 8, b'', set()
                while pos < len(data):
                    (length,) = struct.unpack('>I', data[pos:pos + 4])
                    kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
                    (crc,) = struct.unpack('>I', data[pos + 8 + length:pos + 12 + length])
                    assert zlib.crc32(kind + body) & 0xffffffff == crc, kind
                    if kind == b'IHDR':
                        w, h, depth, colour, _, _, _ = struct.unpack('>IIBBBBB', body)
                    elif kind == b'IDAT':
                        idat += body
                    pos += 12 + length
                bpp = 3 if colour == 2 else 4
                stride, raw = w * bpp, zlib.decompress(idat)
                out, prev = bytearray(), bytearray(w * bpp)
                for y in range(h):
                    f = raw[y * (stride + 1)]
                    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
                    filters.add(f)
                    for i in range(stride):
                        a = line[i - bpp] if i >= bpp else 0
                        b = prev[i]
                        c = prev[i - bpp] if i >= bpp else 0
                        if f == 0: p = 0
                        elif f == 1: p = a
                        elif f == 2: p = b
                        elif f == 3: p = (a + b) // 2
                        else:
                            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                            p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                        line[i] = (line[i] + p) & 255
                    out += line
                    prev = line
                return bytes(out), sorted(filters)
            folder, results = sys.argv[1], {}
            try:
                import matplotlib
                matplotlib.use('Agg')
                from matplotlib import image
            except ImportError:
                image = None
            for name in sys.argv[2:]:
                expected = open(f'{folder}/{name}.raw', 'rb').read()
                pixels, filters = decode(f'{folder}/{name}.png')
                entry = {'stdlib': pixels == expected, 'filters': filters}
                if image is not None:
                    array = image.imread(f'{folder}/{name}.png')
                    entry['matplotlib'] = (array * 255).round().astype('uint8').tobytes() == expected
                results[name] = entry
            print(json.dumps(results))
            """
        let result = try TestData.runPython(script, [dir.path] + cases.map(\.0))
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: [String: Any]])
        for (name, _, _, _, _) in cases {
            let entry = try #require(json[name])
            #expect(entry["stdlib"] as? Bool == true, "standard-library decoder, \(name)")
            if let viaMatplotlib = entry["matplotlib"] as? Bool {
                #expect(viaMatplotlib, "matplotlib, \(name)")
            } else {
                FileHandle.standardError.write(Data("skipped: matplotlib not importable, only the standard-library decoder ran\n".utf8))
            }
        }
        // The adaptive choice: a flat image is Sub on the first row (only its first pixel
        // costs anything) and Up below (all zeros); smooth ramps always use a predictor.
        #expect(json["flat"]?["filters"] as? [Int] == [1, 2])
        let gradientFilters = json["gradient"]?["filters"] as? [Int] ?? []
        #expect(!gradientFilters.isEmpty && !gradientFilters.contains(0))
    }
}

/// The encoder's failures are errors, not traps.
@Suite struct PNGEncoderErrorTests {
    @Test func impossibleSizesThrow() {
        #expect(throws: PNGEncoderError.invalidSize("0×5: PNG dimensions must be 1…2³¹−1")) {
            try PNGEncoder.encode(rgb: [], width: 0, height: 5)
        }
        #expect(throws: PNGEncoderError.invalidSize("2×2×3 needs 12 bytes, got 11")) {
            try PNGEncoder.encode(rgb: Array(repeating: 0, count: 11), width: 2, height: 2)
        }
    }
}
