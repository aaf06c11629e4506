import Testing
import DNGContainer
import ImageCore
@testable import RawDecode

/// The decoded blocks a first pass keeps for the passes after it (`DecodedBlockCache`).
struct DecodedBlockCacheTests {
    /// 37 × 23 pixels, three samples, 16 × 16 tiles: six blocks, three of them cut by an edge;
    /// 16-bit integers, or floats of `floatBits`.
    static func file(seed: UInt64, floatBits: Int? = nil) throws -> DNGFile {
        var spec = IFDSpec(image: TestImage.random(width: 37, height: 23, spp: 3, bits: floatBits ?? 16, isFloat: floatBits != nil,
                                                   seed: seed))
        spec.photometric = 34892
        return try TestDNG.open(TestDNG.build([spec]))
    }

    struct Seen: Equatable, Sendable {
        var region: PixelRect
        /// The pixels inside the image (a tile's padding is not defined): integers, or the
        /// bit patterns of `Float` samples.
        var samples: [UInt32]
    }

    /// What one pass hands to its body, block by block (keyed by the region's corner).
    static func pass(_ dng: DNGFile, cache: DecodedBlockCache?, rows: Bool = false,
                     failAt: PixelRect? = nil) throws -> [Int: Seen] {
        struct Failure: Error {}
        let seen = SharedStore<Int, Seen>()
        let body: @Sendable (PixelRect, BlockSamples, Int, Bool) throws -> Void = { region, samples, rowStride, _ in
            if region == failAt { throw Failure() }
            let visible: [UInt32] = (0..<region.height).flatMap { r -> [UInt32] in
                switch samples {
                case .uint16(let p): return UnsafeBufferPointer(start: p + r * rowStride, count: region.width * 3).map(UInt32.init)
                case .float32(let p): return UnsafeBufferPointer(start: p + r * rowStride, count: region.width * 3).map(\.bitPattern)
                }
            }
            seen[region.top * 1000 + region.left] = Seen(region: region, samples: visible)
        }
        let raw = try dng.mainRawImage()
        let handled = rows ? try RawDecoder.forEachBlockRow(dng, ifd: raw, cache: cache, body, rowsDone: { _ in })
            : try RawDecoder.forEachBlock(dng, ifd: raw, cache: cache, body)
        #expect(handled)
        var out: [Int: Seen] = [:]
        for key in seen.keys { out[key] = seen[key] }
        return out
    }

    /// A complete recording is replayed, block for block, without decoding: replayed over a
    /// different file of the same layout, the first file's samples come back.
    @Test(arguments: [false, true])
    func recordsThenReplaysWithoutDecoding(byRows: Bool) throws {
        let first = try Self.file(seed: 1), other = try Self.file(seed: 2)
        let direct = try Self.pass(first, cache: nil, rows: byRows)
        #expect(direct.count == 6)
        #expect(direct != (try Self.pass(other, cache: nil, rows: byRows)))

        let cache = DecodedBlockCache(capacity: 1 << 20)
        #expect(try Self.pass(first, cache: cache, rows: byRows) == direct)
        #expect(cache.isComplete)
        #expect(cache.byteCount == 6 * 16 * 16 * 3 * 2)  // whole stored tiles, edges included
        #expect(try Self.pass(other, cache: cache, rows: byRows) == direct)
        #expect(try Self.pass(first, cache: cache, rows: byRows) == direct)
    }

    /// Floating-point blocks (`Float` samples) are recorded and replayed the same way, at
    /// four bytes a sample.
    @Test(arguments: [16, 32])
    func recordsFloatBlocks(bits: Int) throws {
        let first = try Self.file(seed: 6, floatBits: bits), other = try Self.file(seed: 7, floatBits: bits)
        let direct = try Self.pass(first, cache: nil)
        #expect(direct.count == 6)
        #expect(direct != (try Self.pass(other, cache: nil)))
        let cache = DecodedBlockCache(capacity: 1 << 20)
        #expect(try Self.pass(first, cache: cache, rows: true) == direct)
        #expect(cache.isComplete && cache.byteCount == 6 * 16 * 16 * 3 * 4)
        #expect(try Self.pass(other, cache: cache) == direct)
    }

    /// A pass that fails part way leaves nothing to replay; the next pass records afresh.
    @Test func failedPassIsNotReplayed() throws {
        let dng = try Self.file(seed: 3)
        let cache = DecodedBlockCache(capacity: 1 << 20)
        #expect(throws: (any Error).self) {
            try Self.pass(dng, cache: cache, failAt: PixelRect(top: 16, left: 16, bottom: 23, right: 32))
        }
        #expect(!cache.isComplete)
        #expect(cache.byteCount == 0)
        let direct = try Self.pass(dng, cache: nil)
        #expect(try Self.pass(dng, cache: cache) == direct)
        #expect(cache.isComplete)
    }

    /// Samples over the capacity are not recorded: every pass decodes.
    @Test func overCapacityRecordsNothing() throws {
        let first = try Self.file(seed: 4), other = try Self.file(seed: 5)
        let cache = DecodedBlockCache(capacity: 6 * 16 * 16 * 3 * 2 - 1)
        #expect(try Self.pass(first, cache: cache) == (try Self.pass(first, cache: nil)))
        #expect(!cache.isComplete)
        #expect(cache.byteCount == 0)
        #expect(try Self.pass(other, cache: cache) == (try Self.pass(other, cache: nil)))
        #expect(cache.byteCount == 0)
    }
}
