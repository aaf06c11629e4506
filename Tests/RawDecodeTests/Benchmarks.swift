import CDeflate
import CZlib
import Dispatch
import DNGContainer
import DNGWriter
import Foundation
import ImageCore
@testable import RawDecode
import Testing
import TestSupport

/// Stage 1 throughput, printed only: run with `SCENELINEAR_BENCHMARK=1 swift test -c release
/// -Xswiftc -enable-testing --filter RawDecodeTests.Benchmarks` (and `SCENELINEAR_THREADS=1`
/// for one thread). Nothing here is asserted on time.
@Suite("Stage 1 benchmarks (SCENELINEAR_BENCHMARK=1)",
       .enabled(if: ProcessInfo.processInfo.environment["SCENELINEAR_BENCHMARK"] == "1"), .serialized)
struct Benchmarks {
    static let (width, height) = (4032, 3024)

    /// A 12 MP three-plane image like a ProRAW capture: 12-bit, a smooth scene plus noise of
    /// a few codes (about 4–6 bits/sample after lossless JPEG).
    static func noisySamples(bits: Int = 12) -> [UInt16] {
        var rng = SeededGenerator(seed: 42)
        let top = Double((1 << bits) - 1)
        var out = [UInt16](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let base = 0.05 + 0.6 * Double(x) / Double(width) * Double(y) / Double(height)
                for p in 0..<3 {
                    let v = base * top * (0.7 + 0.15 * Double(p)) + Double(Int.random(in: -12...12, using: &rng))
                    out[(y * width + x) * 3 + p] = UInt16(max(0, min(top, v)))
                }
            }
        }
        return out
    }

    static func report(_ label: String, file: Data, seconds: Double, samples: Int = width * height * 3) {
        print(String(format: "Stage 1, %@ (%.2f bits/sample, %d threads): %.1f ms, %.0f Msamples/s",
                     label, Double(file.count * 8) / Double(samples), Parallel.threadCount, seconds * 1e3,
                     Double(samples) / seconds / 1e6))
    }

    static func time(_ label: String, _ data: Data, repeats: Int = 7) throws {
        let dng = try TestDNG.open(data)
        let raw = try dng.mainRawImage()
        _ = try RawDecoder.decode(dng, ifd: raw)
        let seconds = try bestTime(repeats) { _ = try RawDecoder.decode(dng, ifd: raw) }
        report(label, file: data, seconds: seconds)
    }

    @Test("12 MP lossless-JPEG LinearRaw decode")
    func losslessJPEG12MP() throws {
        let dir = TestData.temporaryDirectory("bench")
        defer { try? FileManager.default.removeItem(at: dir) }
        var spec = LinearRawDNG(width: Self.width, height: Self.height, samples: Self.noisySamples())
        spec.bitsPerSample = 12
        spec.whiteLevel = [4095, 4095, 4095]
        spec.compression = .losslessJPEG(predictor: 1)
        spec.tileSize = (512, 384)
        let path = dir.appendingPathComponent("lj92.dng").path
        try DNGWriter.write(spec, to: path)
        try Self.time("12 MP LJ92", try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test("12 MP uncompressed LinearRaw decode (16-bit and packed 14-bit)", arguments: [16, 14])
    func uncompressed12MP(bits: Int) throws {
        let dir = TestData.temporaryDirectory("bench")
        defer { try? FileManager.default.removeItem(at: dir) }
        var spec = LinearRawDNG(width: Self.width, height: Self.height, samples: Self.noisySamples(bits: bits))
        spec.bitsPerSample = bits
        spec.whiteLevel = Array(repeating: (1 << bits) - 1, count: 3)
        spec.tileSize = (512, 384)
        let path = dir.appendingPathComponent("plain.dng").path
        try DNGWriter.write(spec, to: path)
        try Self.time("12 MP uncompressed \(bits)-bit", try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func image12MP(bits: Int = 12, isFloat: Bool = false) -> TestImage {
        let samples = noisySamples()
        let patterns: [UInt32] = isFloat ? samples.map { UInt32(Float16(Float($0) / 4095).bitPattern) } : samples.map(UInt32.init)
        return TestImage(width: width, height: height, spp: 3, bits: bits, isFloat: isFloat, patterns: patterns)
    }

    @Test("12 MP Deflate decode (integer and float predictors), and inflating with zlib vs libdeflate")
    func deflate12MP() throws {
        var ints = IFDSpec(image: Self.image12MP(bits: 16))
        ints.compression = 8
        ints.predictor = .horizontal(factor: 1)
        ints.tile = (512, 384)
        let intFile = TestDNG.build([ints])
        try Self.time("12 MP Deflate u16 predictor 2", intFile)
        var floats = IFDSpec(image: Self.image12MP(bits: 16, isFloat: true))
        floats.compression = 8
        floats.predictor = .floatingPoint(factor: 1)
        floats.tile = (512, 384)
        try Self.time("12 MP Deflate f16 predictor 3", TestDNG.build([floats]))

        // The inflate step alone, one thread: zlib's uncompress against libdeflate.
        let streams = ints.encodedBlocks(bigEndian: false)
        let size = 512 * 384 * 3 * 2
        var out = [UInt8](repeating: 0, count: size)
        let zlibTime = bestTime(5) {
            for s in streams {
                var length = uLongf(size)
                _ = out.withUnsafeMutableBufferPointer { o in s.withUnsafeBufferPointer { uncompress(o.baseAddress, &length, $0.baseAddress, uLong(s.count)) } }
            }
        }
        let deflateTime = bestTime(5) {
            for s in streams {
                _ = out.withUnsafeMutableBytes { o in s.withUnsafeBytes { BlockPlan.inflate($0, into: o) } }
            }
        }
        let mb = Double(streams.count * size) / 1e6
        print(String(format: "inflate %.0f MB (64 tiles, 1 thread): zlib %.1f ms (%.0f MB/s), libdeflate %.1f ms (%.0f MB/s), %.2f× faster",
                     mb, zlibTime * 1e3, mb / zlibTime, deflateTime * 1e3, mb / deflateTime, zlibTime / deflateTime))
    }

    @Test("12 MP JPEG XL decode: 64 tiles, and one strip (libjxl's thread pool)")
    func jpegXL12MP() throws {
        let dir = TestData.temporaryDirectory("bench-jxl")
        defer { try? FileManager.default.removeItem(at: dir) }
        // 16-bit codestreams in a 16-bit IFD, as the Adobe DNG SDK writes them (12-bit content).
        var tiled = IFDSpec(image: Self.image12MP(bits: 16))
        tiled.compression = 52546
        tiled.tile = (512, 384)
        let streams = try PythonCodecs.jpegXL(tiled.blockPatterns(), dtype: "u2", bitsPerSample: 16, effort: 3,
                                                     dir: dir).streams
        tiled.encode = { _, _, _, _, i in streams[i] }
        try Self.time("12 MP JPEG XL lossless, 64 tiles", TestDNG.build([tiled]), repeats: 3)
        var strip = tiled
        strip.tile = nil
        strip.rowsPerStrip = Self.height
        let one = try PythonCodecs.jpegXL(strip.blockPatterns(), dtype: "u2", bitsPerSample: 16, effort: 3,
                                                 dir: dir).streams
        strip.encode = { _, _, _, _, _ in one[0] }
        try Self.time("12 MP JPEG XL lossless, 1 strip", TestDNG.build([strip]), repeats: 3)
        // The same strip with its progress told as libjxl renders it (its image-out callback).
        let dng = try TestDNG.open(TestDNG.build([strip]))
        let raw = try dng.mainRawImage()
        let counted = SharedCount()
        let seconds = try bestTime(3) { _ = try RawDecoder.decode(dng, ifd: raw, decodeProgress: { counted.add($0) }) }
        print(String(format: "12 MP JPEG XL lossless, 1 strip, with its progress: %.1f ms (%d pixels reported over 3 decodes)",
                     seconds * 1e3, counted.value))
    }

    @Test("12 MP lossy JPEG decode")
    func lossyJPEG12MP() throws {
        let dir = TestData.temporaryDirectory("bench-jpeg")
        defer { try? FileManager.default.removeItem(at: dir) }
        var image = Self.image12MP(bits: 8)
        image.patterns = image.patterns.map { $0 >> 4 }
        var spec = IFDSpec(image: image)
        spec.compression = 34892
        spec.tile = (512, 384)
        let streams = try PythonCodecs.jpeg(spec.blockPatterns(), dir: dir).streams
        spec.encode = { _, _, _, _, i in streams[i] }
        try Self.time("12 MP lossy JPEG 8-bit", TestDNG.build([spec]))
    }
}
