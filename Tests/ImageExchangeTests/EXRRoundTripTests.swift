import Foundation
import ImageCore
import ExchangeCore
import EXRExchange
import Testing
import TestSupport

@Suite("EXR round trip")
struct EXRRoundTripTests {
    @Test("pixels, attributes and provenance survive every lossless compression", arguments: EXRCompression.allCases.filter(\.isLossless))
    func roundTrip(_ compression: EXRCompression) throws {
        let dir = TestData.temporaryDirectory("exr-rt")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image()
        let path = dir.appendingPathComponent("rt.exr").path
        try EXRFile.write(image, to: path, options: EXROptions(compression: compression, includeClipMask: true))

        let contents = try EXRFile.read(path)
        #expect(contents.width == image.width && contents.height == image.height)
        #expect(contents.compression == compression)
        #expect(Set(contents.channels.keys) == ["R", "G", "B", EXRFile.clipMaskChannel])
        for (c, name) in ["R", "G", "B"].enumerated() {
            let expected = stride(from: c, to: image.pixels.samples.count, by: 3).map { image.pixels.samples[$0] }
            #expect(Fixture.matchesHalf(try #require(contents.halfChannels[name]), expected), "channel \(name)")
        }
        let mask = try #require(contents.halfChannels[EXRFile.clipMaskChannel])
        #expect(mask == image.clipMask!.map { $0 != 0 ? Float16(1) : 0 })
        #expect(contents.attributes["colorInteropID"] == .string("lin_rec2020_scene"))
        #expect(contents.attributes["chromaticities"] == .chromaticities([0.708, 0.292, 0.170, 0.797, 0.131, 0.046, 0.3127, 0.3290]))
        #expect(contents.attributes["sceneLinear:exposureFactor"] == .double(0.8408964152537145))
        #expect(contents.attributes["sceneLinear:cameraToOutput"] == .m33d(image.provenance.cameraToOutput))
        #expect(contents.attributes["dng:make"] == .string("Test Camera Co."))
        #expect(contents.attributes["dng:iso"] == .int(400))
        #expect(contents.attributes["expTime"] == .float(0.004))
        #expect(contents.attributes["aperture"] == .float(5.6))
        #expect(contents.attributes["isoSpeed"] == .float(400))
        #expect(contents.attributes["capDate"] == .string("2024:05:17 14:03:22"))

        let back = try EXRFile.readSceneLinear(path)
        #expect(back.encoding == .linearRec2020)
        #expect(back.exposure == image.exposure)
        #expect(Fixture.matchesHalf(back.pixels.samples.map { Float16($0) }, image.pixels.samples))
        #expect(back.clipMask == image.clipMask!.map { $0 != 0 ? 1 : 0 })
        // Arrays of numbers are stored as 32-bit floats (EXR has no double vector).
        var expected = image.provenance
        expected.dng = expected.dng.map { item in
            if case .numbers(let a) = item.value { return MetadataItem(item.key, .numbers(a.map { Double(Float($0)) })) }
            return item
        }
        #expect(back.provenance == expected)
    }

    /// Chunks the deflate cannot shrink (every half a random finite bit pattern, so both
    /// byte planes are noise) are stored packed, as the format prescribes, and every reader
    /// gets the pixels back; the packing of ZIP and ZIPS chunks straight from the image
    /// (`EXRZipCompressor.compressRows`) is exercised on this stored path too.
    @Test("incompressible ZIP and ZIPS chunks are stored packed", arguments: [EXRCompression.zip, .zips])
    func incompressibleChunks(_ compression: EXRCompression) throws {
        let dir = TestData.temporaryDirectory("exr-stored")
        defer { try? FileManager.default.removeItem(at: dir) }
        var rng = SeededGenerator(seed: 21)
        let (width, height) = (67, 35)
        let samples: [Float] = (0..<(width * height * 3)).map { _ in
            let bits = UInt16(truncatingIfNeeded: rng.next())
            let finite = bits & 0x7C00 == 0x7C00 ? bits & ~0x4000 : bits  // no Inf / NaN exponents
            return Float(Float16(bitPattern: finite))
        }
        let image = SceneLinearImage(pixels: ImageBuffer(width: width, height: height, channels: 3, samples: samples),
                                     clipMask: nil, encoding: .linearRec2020,
                                     exposure: .none, provenance: Fixture.provenance())
        let path = dir.appendingPathComponent("noise.exr").path
        try EXRFile.write(image, to: path, options: EXROptions(compression: compression))
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        #expect(size > width * height * 3 * 2, "stored chunks: the file holds at least the raw halves (\(size) bytes)")
        let contents = try EXRFile.read(path)
        for (c, name) in ["R", "G", "B"].enumerated() {
            let expected = stride(from: c, to: samples.count, by: 3).map { samples[$0] }
            #expect(Fixture.matchesHalf(try #require(contents.halfChannels[name]), expected), "channel \(name)")
        }
    }

    @Test("camera-native encoding has no chromaticities and no clip mask unless asked")
    func cameraNative() throws {
        let dir = TestData.temporaryDirectory("exr-native")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image(encoding: .cameraNative, exposure: .none, clipMask: false,
                                  provenance: .synthetic("synthetic"))
        let path = dir.appendingPathComponent("native.exr").path
        try EXRFile.write(image, to: path)
        let contents = try EXRFile.read(path)
        #expect(contents.attributes["chromaticities"] == nil)
        #expect(contents.attributes["colorInteropID"] == .string("unknown"))
        #expect(contents.attributes["sceneLinear:colorSpace"] == .string("camera_native_white_balanced"))
        #expect(contents.channels[EXRFile.clipMaskChannel] == nil)
        let back = try EXRFile.readSceneLinear(path)
        #expect(back.encoding == .cameraNative)
        #expect(back.exposure == .none)
        #expect(back.clipMask == nil)
        #expect(back.provenance == image.provenance)
    }
}

/// The compositor options: FLOAT channels, tiles, mip-maps, lossy codecs.
@Suite struct EXRCompositorOptionTests {
    @Test("float channels hold the Float pixels exactly; tiled and mip-mapped files read back level 0")
    func floatTiledMipmapped() throws {
        let dir = TestData.temporaryDirectory("exr-options")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image(width: 203, height: 71)
        let plain = dir.appendingPathComponent("float.exr").path
        try EXRFile.write(image, to: plain, options: EXROptions(compression: .zip, pixelType: .float))
        let f = try EXRFile.read(plain)
        #expect(f.halfChannels["R"] == nil)
        #expect((0..<image.width * image.height).allSatisfy { f.channels["G"]![$0] == image.pixels.samples[3 * $0 + 1] })
        for (tiling, type) in [(EXRTiling(tileSize: 32), EXRPixelType.half), (EXRTiling(tileSize: 16, mipmaps: true), .float)] {
            let path = dir.appendingPathComponent("tiled-\(tiling.mipmaps)-\(type).exr").path
            try EXRFile.write(image, to: path, options: EXROptions(compression: .piz, includeClipMask: true, pixelType: type, tiling: tiling))
            let t = try EXRFile.read(path)
            let expected: [Float] = type == .half ? (try image.halfPixels(for: path)).map(Float.init) : image.pixels.samples
            #expect((0..<image.width * image.height).allSatisfy { t.channels["B"]![$0] == expected[3 * $0 + 2] }, "\(path)")
            #expect(t.channels[EXRFile.clipMaskChannel]?.filter { $0 == 1 }.count == image.clipMask!.filter { $0 != 0 }.count)
            do { let exrheader = try TestData.tool("exrheader")
                let header = try TestData.run(exrheader, [path]).stdout
                #expect(header.contains(tiling.mipmaps ? "    mip-map" : "    single level"), "\(header)")
            }
        }
    }

    /// Every mip-map level as OpenImageIO reads it equals the 2×2 means of the level above
    /// (ROUND_DOWN), tiles at the right and bottom edges of each level included (OpenEXRCore
    /// 3.1 sizes those as whole tiles unless told their size), and writing twice gives the
    /// same bytes.
    @Test func mipmapLevelsReadBackByOpenImageIO() throws {
        let oiiotool = try TestData.tool("oiiotool")
        let dir = TestData.temporaryDirectory("exr-mipmaps")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image(width: 203, height: 71)
        let path = dir.appendingPathComponent("mip.exr").path, again = dir.appendingPathComponent("again.exr").path
        let options = EXROptions(compression: .zip, includeClipMask: false, pixelType: .float, tiling: EXRTiling(tileSize: 16, mipmaps: true))
        try EXRFile.write(image, to: path, options: options)
        try EXRFile.write(image, to: again, options: options)
        #expect(FileManager.default.contents(atPath: path) == FileManager.default.contents(atPath: again), "two writes differ")
        var level = image.pixels.samples, width = image.width, height = image.height
        for k in 1...4 {
            // The next level, as the writer makes it.
            let w2 = max(1, width / 2), h2 = max(1, height / 2)
            var next = [Float](repeating: 0, count: w2 * h2 * 3)
            for y in 0..<h2 {
                for x in 0..<w2 {
                    for c in 0..<3 {
                        var sum: Float = 0
                        for dy in 0..<2 { for dx in 0..<2 { sum += level[((2 * y + dy) * width + 2 * x + dx) * 3 + c] } }
                        next[(y * w2 + x) * 3 + c] = sum / 4
                    }
                }
            }
            (level, width, height) = (next, w2, h2)
            let out = dir.appendingPathComponent("level\(k).exr").path
            let r = try TestData.run(oiiotool, [path, "--selectmip", "\(k)", "-d", "float", "-o", out])
            try #require(r.status == 0, "oiiotool: \(r.stderr)")
            let read = try EXRFile.read(out)
            #expect(read.width == width && read.height == height, "level \(k): \(read.width)×\(read.height)")
            let red = try #require(read.channels["R"])
            let wrong = (0..<(width * height)).filter { red[$0] != level[3 * $0] }
            #expect(wrong.isEmpty, "level \(k): \(wrong.count) pixels differ, first at \(wrong.first.map { ($0 % width, $0 / width) }.debugDescription)")
        }
    }

    @Test("B44 and B44A files are read back within B44's error (lossy)", arguments: [EXRCompression.b44, .b44a])
    func lossyCodecs(_ compression: EXRCompression) throws {
        let dir = TestData.temporaryDirectory("exr-lossy")
        defer { try? FileManager.default.removeItem(at: dir) }
        // A smooth image (B44's 4×4 blocks are coded relative to their maximum).
        let w = 96, h = 64
        var samples = [Float](repeating: 0, count: w * h * 3)
        for y in 0..<h { for x in 0..<w { for c in 0..<3 { samples[(y * w + x) * 3 + c] = Float(1 + x + 2 * y + c) / 256 } } }
        let image = SceneLinearImage(pixels: ImageBuffer(width: w, height: h, channels: 3, samples: samples), clipMask: nil,
                                     encoding: .linearRec2020, exposure: .none, provenance: Fixture.provenance())
        let path = dir.appendingPathComponent("\(compression).exr").path
        try EXRFile.write(image, to: path, options: EXROptions(compression: compression))
        let c = try EXRFile.read(path)
        #expect(c.compression == compression)
        #expect(!compression.isLossless)
        let r = try #require(c.channels["R"])
        var worst: Float = 0
        for i in 0..<(w * h) { worst = max(worst, abs(r[i] - samples[3 * i]) / samples[3 * i]) }
        #expect(r.count == w * h && worst < 0.01, "worst relative error \(worst)")
    }

    /// DWAA and DWAB (written through the OpenEXR C++ library): the header says so (our reader
    /// and exrheader), the attributes survive the rewrite, R, G, B come back within DWA's
    /// error at level 45 on smooth data, and the mask channels exactly (DWA keeps channels
    /// other than R, G, B lossless). A tiled DWA file is refused, and nothing is left behind.
    @Test(arguments: [EXRCompression.dwaa, .dwab])
    func dwaCodecs(_ compression: EXRCompression) throws {
        let dir = TestData.temporaryDirectory("exr-dwa")
        defer { try? FileManager.default.removeItem(at: dir) }
        let w = 300, h = 200
        var samples = [Float](repeating: 0, count: w * h * 3)
        for y in 0..<h { for x in 0..<w { for c in 0..<3 { samples[(y * w + x) * 3 + c] = Float(64 + x + 2 * y + 16 * c) / 1024 } } }
        let clip = (0..<(w * h)).map { UInt8($0 % 7 == 0 ? 1 : 0) }
        let image = SceneLinearImage(pixels: ImageBuffer(width: w, height: h, channels: 3, samples: samples), clipMask: clip,
                                     encoding: .linearRec2020, exposure: .none, provenance: Fixture.provenance())
        let path = dir.appendingPathComponent("\(compression).exr").path
        try EXRFile.write(image, to: path, options: EXROptions(compression: compression, includeClipMask: true))
        let c = try EXRFile.read(path)
        #expect(c.compression == compression && !compression.isLossless)
        #expect(c.attributes["colorInteropID"] == .string("lin_rec2020_scene"), "attributes survive the rewrite")
        var worst: Float = 0
        for (k, name) in ["R", "G", "B"].enumerated() {
            let v = try #require(c.channels[name])
            for i in 0..<(w * h) { worst = max(worst, abs(v[i] - samples[3 * i + k]) / samples[3 * i + k]) }
        }
        #expect(worst > 0 && worst < 0.01, "worst relative error \(worst) (lossy, under 1 %)")
        #expect(c.channels[EXRFile.clipMaskChannel] == clip.map { Float($0) }, "the clip mask is lossless")
        do { let exrheader = try TestData.tool("exrheader")
            let header = try TestData.run(exrheader, [path]).stdout
            #expect(header.contains(compression == .dwaa ? "dwa, small scanline blocks" : "dwa, medium scanline blocks"), "\(header)")
        }
        let tiled = dir.appendingPathComponent("tiled.exr").path
        #expect(throws: ExchangeError.self) {
            try EXRFile.write(image, to: tiled, options: EXROptions(compression: compression, tiling: EXRTiling(tileSize: 64, mipmaps: false)))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["\(compression).exr"])
    }
}
