import Foundation
import ImageCore
import Synchronization
import Testing
import TestSupport
import RawDecode

/// A JPEG XL image of one block tells its progress while libjxl decodes it (the rows libjxl
/// renders, as it renders them), before the block is handed on: a one-tile 60 MP image
/// would otherwise leave a progress bar standing for its whole decode. The pixels come out
/// as the plain decode's.
@Suite struct JPEGXLProgressTests {
    final class Counts: Sendable {
        let state = Mutex<(pixels: Int, calls: Int, atHandOver: [Int])>((0, 0, []))
    }

    @Test(.enabled(if: TestData.python != nil || TestRequirement.toolsRequired, "needs the Python test environment (imagecodecs)"))
    func oneBlockReportsWhileItDecodes() throws {
        let dir = TestData.temporaryDirectory("jxl-progress")
        defer { try? FileManager.default.removeItem(at: dir) }
        // 600 × 520 pixels: libjxl's 256-pixel groups, 3 × 3 of them, rendered row by row.
        let image = TestImage.random(width: 600, height: 520, spp: 3, bits: 16, seed: 77)
        var spec = IFDSpec(image: image)
        spec.compression = 52546
        spec.tile = nil
        spec.rowsPerStrip = image.height  // one strip: the whole image in one codestream
        let (streams, _) = try PythonCodecs.jpegXL(spec.blockPatterns(), dtype: "u2", bitsPerSample: 16, dir: dir)
        #expect(streams.count == 1)
        spec.encode = { _, _, _, _, index in streams[index] }
        let dng = try TestDNG.open(TestDNG.build([spec]))
        let raw = try dng.mainRawImage()
        let pixels = image.width * image.height
        #expect(RawDecoder.decodeProgressPixels(dng, ifd: raw) == pixels)

        let counts = Counts()
        let whole = Mutex<[UInt16]>([])
        let blockwise = try RawDecoder.forEachBlock(dng, ifd: raw, decodeProgress: { n in
            counts.state.withLock { $0.pixels += n; $0.calls += 1 }
        }) { region, samples, rowStride, _ in
            counts.state.withLock { $0.atHandOver.append($0.pixels) }
            guard case .uint16(let p) = samples else { return }
            var out = [UInt16](repeating: 0, count: pixels * 3)
            for y in region.top..<region.bottom {
                for i in 0..<(region.right - region.left) * 3 { out[y * image.width * 3 + i] = p[(y - region.top) * rowStride + i] }
            }
            whole.withLock { $0 = out }
        }
        #expect(blockwise)
        let seen = counts.state.withLock { $0 }
        // Every pixel counted once, in many runs, all before the block was handed on.
        #expect(seen.pixels == pixels && seen.atHandOver == [pixels], "\(seen.pixels) of \(pixels), \(seen.atHandOver)")
        #expect(seen.calls >= image.height, "\(seen.calls) runs of rows")
        let plain = try RawDecoder.decode(dng, ifd: raw)
        let same = whole.withLock { $0 } == plain.uint16?.samples
        #expect(same, "the pixels handed on differ from the plain decode's")
        #expect(image.matches(plain))
        // The whole-image decode (Stage 1 collected) counts them too, with the same pixels.
        let again = Counts()
        let decoded = try RawDecoder.decode(dng, ifd: raw, decodeProgress: { n in again.state.withLock { $0.pixels += n } })
        #expect(again.state.withLock { $0.pixels } == pixels && image.matches(decoded))
    }

    /// Images of many blocks hand each block on as it finishes and report nothing inside one.
    @Test func manyBlocksReportNothingInside() throws {
        var spec = IFDSpec(image: TestImage.random(width: 64, height: 64, spp: 3, bits: 16, seed: 5))
        spec.tile = (16, 16)
        let dng = try TestDNG.open(TestDNG.build([spec]))
        #expect(RawDecoder.decodeProgressPixels(dng, ifd: try dng.mainRawImage()) == 0)
    }
}
