import DNGWriter
import Foundation
import Testing
@testable import Engine
import Measuring
import Reporting
@testable import RawDecode
import TestSupport

/// The raw-data digests (NewRawImageDigest, RawImageDigest): verified against files Adobe's
/// own writer made, against digests computed independently here and in Python, through both
/// conversion paths, and through the command line.
@Suite struct DigestTests {
    static let adobeSamples = [
        "01_jxl_linear_raw_integer.dng", "02_jxl_linear_raw_float.dng", "03_jxl_bayer_raw_integer.dng",
        "04_PGTM2_per_profile.dng", "05_PGTM2_unsigned8.dng", "06_PGTM2_unsigned16.dng", "07_PGTM2_float16.dng",
        "08_PGTM2_float32.dng", "09_ImageSequenceInfo_1_of_3.dng", "10_ImageSequenceInfo_2_of_3.dng",
        "11_ImageSequenceInfo_3_of_3.dng", "12_ImageStats_WeightedAverage.dng", "13_ImageStats_Several.dng",
        "14_hdr_sdr_profiles.dng",
    ]

    /// A 16-bit LinearRaw file in 96 × 80 lossless-JPEG tiles (which do not line up with
    /// the 256 × 256 digest tiles), 300 × 280 pixels.
    static func tiledFile(_ directory: URL, name: String = "tiled.dng", seed: UInt64 = 7) throws -> (URL, LinearRawDNG) {
        var rng = SeededGenerator(seed: seed)
        let width = 300, height = 280
        var spec = LinearRawDNG(width: width, height: height,
                                samples: (0..<(width * height * 3)).map { _ in UInt16.random(in: 0...60000, using: &rng) })
        spec.compression = .losslessJPEG(predictor: 1)
        spec.tileSize = (96, 80)
        let url = directory.appendingPathComponent(name)
        try DNGWriter.write(spec, to: url.path)
        return (url, spec)
    }

    /// The definition of NewRawImageDigest written out plainly, one tile at a time.
    static func referenceDigest(_ samples: [UInt16], width: Int, height: Int, spp: Int) -> [UInt8] {
        var tileDigests: [UInt8] = []
        let cw = min(256, width), ch = min(256, height)
        for ty in stride(from: 0, to: height, by: ch) {
            for tx in stride(from: 0, to: width, by: cw) {
                var bytes: [UInt8] = []
                for p in 0..<spp {
                    for y in ty..<min(height, ty + ch) {
                        for x in tx..<min(width, tx + cw) {
                            let v = samples[(y * width + x) * spp + p]
                            bytes += [UInt8(v & 0xFF), UInt8(v >> 8)]
                        }
                    }
                }
                tileDigests += MD5Digest.of(bytes)
            }
        }
        return MD5Digest.of(tileDigests)
    }

    /// The digest does not depend on how the image arrives: whole, or in blocks of any
    /// size in any order (the decoding threads), and equals the plain definition.
    @Test func digestIsIndependentOfTheBlocks() throws {
        var rng = SeededGenerator(seed: 11)
        let width = 300, height = 280, spp = 3
        let samples = (0..<(width * height * spp)).map { _ in UInt16.random(in: 0...65535, using: &rng) }
        let expected = Self.referenceDigest(samples, width: width, height: height, spp: spp)
        let whole = ImageDigester(width: width, height: height, samplesPerPixel: spp, sampleBytes: 2, sequential: false)
        whole.add(ImageBuffer(width: width, height: height, channels: spp, samples: samples))
        #expect(whole.finish() == expected)
        for (bw, bh) in [(96, 80), (300, 1), (17, 300), (256, 256), (512, 512)] {
            var blocks: [PixelRect] = []
            for y in stride(from: 0, to: height, by: bh) {
                for x in stride(from: 0, to: width, by: bw) {
                    blocks.append(PixelRect(top: y, left: x, bottom: min(height, y + bh), right: min(width, x + bw)))
                }
            }
            blocks.shuffle(using: &rng)
            let digester = ImageDigester(width: width, height: height, samplesPerPixel: spp, sampleBytes: 2, sequential: false)
            samples.withUnsafeBufferPointer { all in
                for b in blocks {
                    digester.add(b, samples: all.baseAddress! + (b.top * width + b.left) * spp, rowStride: width * spp)
                }
            }
            #expect(digester.finish() == expected, "blocks \(bw)×\(bh)")
        }
    }

    /// Every Adobe DNG SDK 1.7.1 sample verifies, and one byte changed inside the image
    /// data of each (first, middle and last block) is found: a digest mismatch, or the
    /// decoder's own corrupt-data error — both exit code 13 — unless it changes no sample
    /// of the image (in 12_ and 13_ the middle byte of the last lossless-JPEG tile only
    /// changes padding beyond the image's edge).
    @Test(.enabled(if: Self.adobeSamplesPresent, "the Adobe DNG SDK sample files are not fetched (scripts/fetch-dng-sdk-samples.sh)"))
    func adobeSamplesVerifyAndDetectDamage() throws {
        let directory = TestData.temporaryDirectory("digest-adobe")
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in Self.adobeSamples {
            let url = TestData.dngSDKSamples.appendingPathComponent(name)
            let dng = try DNGFile.open(path: url.path)
            guard case .verified(let tag, _) = try Pipeline.digestState(dng, verify: true) else {
                Issue.record("\(name): digest not verified")
                continue
            }
            #expect(tag == .newRawImageDigest)
            let recorded = try #require(try RawImageDigest.expectation(dng, raw: try dng.mainRawImage())).stored
            let layout = try #require(try dng.mainRawImage().layout)
            var bytes = try Data(contentsOf: url)
            for block in [0, layout.offsets.count / 2, layout.offsets.count - 1] {
                let at = layout.offsets[block] + layout.byteCounts[block] / 2
                var damaged = bytes
                damaged[at] ^= 0x10
                let path = directory.appendingPathComponent(name).path
                try damaged.write(to: URL(fileURLWithPath: path))
                do {
                    let state = try Pipeline.digestState(try DNGFile.open(path: path), verify: true)
                    guard case .mismatch(_, let stored, let computed) = state else {
                        // Accepted only when the change reaches no sample of the image: a
                        // bit of an edge tile's padding, which the digest does not cover.
                        #expect(try Self.storedSamplesEqual(url.path, path), "\(name): a byte changed in block \(block) was not found (\(state.name))")
                        continue
                    }
                    #expect(stored == MD5Digest.hex(recorded))
                    #expect(stored != computed)
                } catch let error as any SceneLinearFailure {
                    #expect(error.category == .corruptData, "\(name) block \(block): \(error)")
                }
            }
            bytes.removeAll()
        }
    }

    /// Whether two DNGs' main raw images decode to the same samples.
    static func storedSamplesEqual(_ a: String, _ b: String) throws -> Bool {
        func samples(_ path: String) throws -> [UInt16] {
            let dng = try DNGFile.open(path: path)
            guard case .uint16(let buffer) = try RawDecoder.decode(dng, ifd: try dng.mainRawImage()).samples else { return [] }
            return buffer.samples
        }
        let first = try samples(a), second = try samples(b)
        return !first.isEmpty && first == second
    }

    static var adobeSamplesPresent: Bool {
        adobeSamples.allSatisfy { FileManager.default.fileExists(atPath: TestData.dngSDKSamples.appendingPathComponent($0).path) }
    }

    /// The writer's NewRawImageDigest is the definition's, and the conversion verifies it; a changed sample is refused with the digest error (both digests named) unless
    /// ignored, which the output records.
    @Test func writtenDigestVerifiesAndMismatchIsRefused() throws {
        let directory = TestData.temporaryDirectory("digest-written")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (url, spec) = try Self.tiledFile(directory)
        let dng = try DNGFile.open(path: url.path)
        let stored = try #require(try RawImageDigest.expectation(dng, raw: try dng.mainRawImage())).stored
        #expect(stored == Self.referenceDigest(spec.samples, width: spec.width, height: spec.height, spp: 3))
        do {
            let options = DevelopOptions()
            let image = try ConvertedImage(try Pipeline.developHalf(path: url.path, options: options, keepClipMask: false))
            #expect(image.description.provenance.processing.first { $0.key == "digest" }?.value == .text("verified"))
        }

        // The same file with one different sample: written without a digest of its own,
        // the first file's digest put in its place.
        var changed = spec
        changed.samples[150 * 300 * 3 + 7] ^= 1
        let changedURL = directory.appendingPathComponent("changed.dng")
        try DNGWriter.write(changed, to: changedURL.path)
        var bytes = try Data(contentsOf: changedURL)
        let changedDNG = try DNGFile.open(path: changedURL.path)
        let entry = try #require(changedDNG.structure.ifds[0].entry(51111))
        bytes.replaceSubrange(entry.valueOffset..<(entry.valueOffset + 16), with: stored)
        try bytes.write(to: changedURL)
        do {
            var options = DevelopOptions()
            #expect {
                _ = try ConvertedImage(try Pipeline.developHalf(path: changedURL.path, options: options, keepClipMask: false))
            } throws: { error in
                guard let e = error as? RawDigestError, case .mismatch(let path, _, _, _, let s, let c) = e else { return false }
                return path == changedURL.path && s == MD5Digest.hex(stored) && c != s && e.category == .corruptData
                    && e.description.contains("raw image digest mismatch")
            }
            options.digest = .ignoreMismatch
            let ignored = try ConvertedImage(try Pipeline.developHalf(path: changedURL.path, options: options, keepClipMask: false))
            let items = ignored.description.provenance.processing
            #expect(items.first { $0.key == "digest" }?.value == .text("mismatch, ignored"))
            #expect(items.first { $0.key == "digestStored" }?.value == .text(MD5Digest.hex(stored)))
            // The measurements, which develop the file once per pass, check it in their first.
            var request = AnalysisRequest()
            #expect(throws: RawDigestError.self) { _ = try Pipeline.analyze(changedURL.path, request: request) }
            request.develop.digest = .ignoreMismatch
            let measured = try Pipeline.analyze(changedURL.path, request: request)
            #expect(measured.width > 0 && measured.regions[0].measurement.pixels == measured.width * measured.height)
        }
    }

    /// RawImageDigest (the older tag): one MD5 over the whole image, pixels interleaved,
    /// row after row, checked here from tiles that cut across the rows.
    /// An all-zero NewRawImageDigest (as some writers record) is no digest: the file converts,
    /// and `info` says the digest is absent and why.
    @Test func allZeroDigestIsAbsent() throws {
        let directory = TestData.temporaryDirectory("digest-zero")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (url, _) = try Self.tiledFile(directory)
        var bytes = try Data(contentsOf: url)
        let entry = try #require(try DNGFile.open(path: url.path).structure.ifds[0].entry(51111))
        bytes.replaceSubrange(entry.valueOffset..<(entry.valueOffset + 16), with: [UInt8](repeating: 0, count: 16))
        try bytes.write(to: url)
        let dng = try DNGFile.open(path: url.path)
        #expect(try RawImageDigest.expectation(dng, raw: try dng.mainRawImage()) == nil)
        #expect(RawImageDigest.allZeroTags(dng) == ["NewRawImageDigest (51111)"])
        let converted = try ConvertedImage(try Pipeline.developHalf(path: url.path, options: DevelopOptions(), keepClipMask: false))
        #expect(converted.description.provenance.processing.first { $0.key == "digest" }?.value == .text("absent"))
        let info = InfoReport(dng: dng, includeTags: false)
        #expect(info.digest.state == "absent" && info.digest.note?.contains("sixteen zero bytes") == true)
        #expect(info.text.contains("absent: NewRawImageDigest (51111) recorded as sixteen zero bytes"), "\(info.text)")
    }

    @Test func legacyRawImageDigest() throws {
        let directory = TestData.temporaryDirectory("digest-legacy")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (url, spec) = try Self.tiledFile(directory, seed: 3)
        let legacy = spec.samples.withUnsafeBytes { MD5Digest.of($0) }  // little-endian host
        var bytes = try Data(contentsOf: url)
        let entry = try #require(try DNGFile.open(path: url.path).structure.ifds[0].entry(51111))
        // Turn the NewRawImageDigest entry into a RawImageDigest entry holding the old digest.
        let entryStart = try #require(Self.entryOffset(of: 51111, in: bytes))
        bytes[entryStart] = UInt8(50972 & 0xFF)
        bytes[entryStart + 1] = UInt8(50972 >> 8)
        bytes.replaceSubrange(entry.valueOffset..<(entry.valueOffset + 16), with: legacy)
        try bytes.write(to: url)
        do {
            let options = DevelopOptions()
            let image = try ConvertedImage(try Pipeline.developHalf(path: url.path, options: options, keepClipMask: false))
            let items = image.description.provenance.processing
            #expect(items.first { $0.key == "digest" }?.value == .text("verified"))
            #expect(items.first { $0.key == "digestTag" }?.value == .text("RawImageDigest (50972)"))
        }
        // One old writer damaged the first four bytes of this tag: still accepted.
        bytes.replaceSubrange(entry.valueOffset..<(entry.valueOffset + 4), with: [1, 2, 3, 4])
        try bytes.write(to: url)
        #expect(try Pipeline.digestState(try DNGFile.open(path: url.path), verify: true).name == "verified")
        bytes.replaceSubrange((entry.valueOffset + 8)..<(entry.valueOffset + 9), with: [legacy[8] ^ 1])
        try bytes.write(to: url)
        #expect(try Pipeline.digestState(try DNGFile.open(path: url.path), verify: true).name == "mismatch")
    }

    /// The byte offset of the IFD entry for `tag` in a little-endian classic TIFF's IFD 0.
    static func entryOffset(of tag: UInt16, in bytes: Data) -> Int? {
        let b = [UInt8](bytes)
        func u16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        let ifd = u16(4) | u16(6) << 16
        for k in 0..<u16(ifd) where u16(ifd + 2 + 12 * k) == Int(tag) { return ifd + 2 + 12 * k }
        return nil
    }

    /// A seeded mutation storm over a tiled file with a digest: every changed byte inside
    /// the tile data either fails with a file error (never an internal one) or — when the
    /// change does not reach a covered sample, e.g. tile padding — gives exactly the
    /// original image.
    @Test func seededMutationStorm() throws {
        let directory = TestData.temporaryDirectory("digest-storm")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (url, _) = try Self.tiledFile(directory)
        let original = try Data(contentsOf: url)
        let reference = try #require(try ConvertedImage(try Pipeline.developHalf(path: url.path, keepClipMask: false)).image)
        let layout = try #require(try DNGFile.open(path: url.path).mainRawImage().layout)
        var rng = SeededGenerator(seed: 2026)
        var refused = 0, identical = 0
        for i in 0..<40 {
            var bytes = original
            let block = Int.random(in: 0..<layout.offsets.count, using: &rng)
            let at = layout.offsets[block] + Int.random(in: 0..<layout.byteCounts[block], using: &rng)
            bytes[at] ^= UInt8.random(in: 1...255, using: &rng)
            let path = directory.appendingPathComponent("m\(i).dng").path
            try bytes.write(to: URL(fileURLWithPath: path))
            do {
                let image = try #require(try ConvertedImage(try Pipeline.developHalf(path: path, keepClipMask: false)).image)
                #expect(Self.samesPixels(image, reference), "mutation \(i) at byte \(at) converted into a different image")
                identical += 1
            } catch let error as any SceneLinearFailure {
                #expect(error.category != .internalError && error.description.contains(path), "\(error)")
                refused += 1
            }
        }
        #expect(refused + identical == 40)
        #expect(refused >= 36, "\(refused) of 40 refused")
    }

    static func samesPixels(_ a: any SceneLinearRaster, _ b: any SceneLinearRaster) -> Bool {
        guard let x = try? a.halfPixels(for: "a"), let y = try? b.halfPixels(for: "b") else { return false }
        return a.width == b.width && a.height == b.height && x.map(\.bitPattern) == y.map(\.bitPattern)
    }
}
