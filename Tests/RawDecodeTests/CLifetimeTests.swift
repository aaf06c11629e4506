import CTIFF
import DNGContainer
@testable import RawDecode
import Foundation
import Testing
@testable import DNGWriter
import TestSupport

/// The error callbacks at the C boundary report through state their owner keeps alive:
/// libtiff's error handler writes into the heap buffer of `TIFFFile`, on open and on every
/// later call, and the message reaches the thrown error. The decoders' libraries are made to
/// fail the same way, each through its own error route: libjxl's error status with its
/// decoder (and thread pool) released on the way out, libjpeg's `error_exit` (a `longjmp`
/// out of the library) and libdeflate's result code. The suite runs under AddressSanitizer
/// in `make test-asan`.
@Suite struct CLifetimeTests {
    /// libtiff's error handler runs inside TIFFOpen (a missing directory, a file that is
    /// not TIFF) and its text reaches the error.
    @Test func libtiffErrorHandlerReportsOpenFailures() throws {
        let directory = TestData.temporaryDirectory("clifetime")
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("no-such-directory/out.dng").path
        #expect {
            _ = try TIFFFile(path: missing, mode: "w", reportedPath: "out.dng")
        } throws: { error in
            let text = "\(error)"
            return text.contains("out.dng") && text.contains("TIFFOpen failed") && text.contains("no-such-directory")
        }
        let notTIFF = directory.appendingPathComponent("text.dng")
        try Data("this is not a TIFF file at all".utf8).write(to: notTIFF)
        #expect {
            _ = try TIFFFile(path: notTIFF.path, mode: "r", reportedPath: "text.dng")
        } throws: { error in
            "\(error)".contains("TIFFOpen failed") && "\(error)".lowercased().contains("tiff")
        }
    }

    /// An error libtiff reports after the open (strips asked of a tiled image) is
    /// written into the same buffer, still alive, and read back by the owner.
    @Test func libtiffErrorHandlerReportsLaterFailures() throws {
        let directory = TestData.temporaryDirectory("clifetime")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("small.dng")
        try DNGWriter.write(LinearRawDNG(width: 8, height: 8, samples: Array(repeating: 100, count: 8 * 8 * 3)), to: url.path)
        let file = try TIFFFile(path: url.path, mode: "r", reportedPath: "small.dng")
        #expect(file.message.isEmpty)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        #expect(TIFFReadEncodedStrip(file.handle, 0, &buffer, tmsize_t(buffer.count)) == -1)
        #expect(file.message.contains("tiled"), "libtiff's message: \(file.message)")
        #expect(file.close() != nil)
    }

    /// One tile of 16 × 16 samples holding `stream` (JPEG XL, lossy JPEG or Deflate), decoded.
    static func decodeError(_ streams: [[UInt8]], compression: Int, bits: Int = 16, blocks: [[UInt8]]? = nil) throws -> RawDecodeError {
        var spec = IFDSpec(image: TestImage.random(width: 16 * streams.count, height: 16, spp: 1, bits: bits, seed: 5))
        spec.compression = compression
        spec.encode = { _, _, _, _, index in streams[index] }
        let dng = try TestDNG.open(TestDNG.build([spec]))
        return try #require(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: dng.mainRawImage()) }
    }

    /// A JPEG XL codestream whose header survives but whose body is garbage: libjxl returns
    /// JXL_DEC_ERROR from inside the decode loop, the input is released and the decoder
    /// destroyed (with its thread pool: a one-tile image decodes on libjxl's own threads).
    @Test func libjxlErrorStatusIsACorruptStream() throws {
        let dir = TestData.temporaryDirectory("clifetime-jxl")
        defer { try? FileManager.default.removeItem(at: dir) }
        let tile = TestImage.random(width: 16, height: 16, spp: 1, bits: 16, seed: 2)
        let good = try #require(try PythonCodecs.jpegXL([(tile.patterns, 16, 16, 1)], dtype: "u2", dir: dir).streams.first)
        #expect(good.starts(with: [0xFF, 0x0A]))
        var garbled = good
        var rng = SeededGenerator(seed: 1)
        for i in 16..<garbled.count { garbled[i] = UInt8(truncatingIfNeeded: rng.next()) }
        let error = try Self.decodeError([garbled], compression: 52546)
        #expect(error == .corruptStream(path: "t.dng", ifd: "IFD0", block: "tile 0", codec: "JPEG XL",
                                        reason: "libjxl could not decode the stream"))
        #expect(error.category == .corruptData)
        #expect(error.description == "t.dng: corrupt JPEG XL tile 0 in IFD0: libjxl could not decode the stream")
        // The same decoder code path still decodes the intact stream beside it.
        let mixed = try Self.decodeError([good, garbled], compression: 52546)
        #expect(mixed == .corruptStream(path: "t.dng", ifd: "IFD0", block: "tile 1", codec: "JPEG XL",
                                        reason: "libjxl could not decode the stream"))
    }

    /// A lossy-JPEG tile whose Huffman table is damaged (its 16 code counts add up to 4080,
    /// more than the 256 symbols a table can hold): libjpeg calls `error_exit` while reading
    /// the header, the error manager jumps back out with the library's own message.
    @Test func libjpegErrorExitReportsTheMessage() throws {
        let dir = TestData.temporaryDirectory("clifetime-jpeg")
        defer { try? FileManager.default.removeItem(at: dir) }
        let tile = LossyJPEGTests.content(width: 16, height: 16, spp: 1, seed: 1)
        let good = try PythonCodecs.jpeg([(tile.patterns, 16, 16, 1)], dir: dir).streams[0]
        let dht = try #require((0..<(good.count - 1)).first { good[$0] == 0xFF && good[$0 + 1] == 0xC4 })
        var damaged = good
        for i in 0..<16 { damaged[dht + 5 + i] = 0xFF }  // marker, length (2), class/id, then the 16 counts
        let error = try Self.decodeError([good, damaged], compression: 34892, bits: 8)
        #expect(error == .corruptStream(path: "t.dng", ifd: "IFD0", block: "tile 1", codec: "lossy JPEG",
                                        reason: "libjpeg: Bogus Huffman table definition"))
        #expect(error.category == .corruptData)
        #expect(error.description == "t.dng: corrupt lossy JPEG tile 1 in IFD0: libjpeg: Bogus Huffman table definition")
    }

    /// A Deflate tile whose Adler-32 checksum is off by one bit: libdeflate's result code.
    @Test func libdeflateBadChecksumIsACorruptStream() throws {
        var spec = IFDSpec(image: TestImage.random(width: 32, height: 16, spp: 1, bits: 16, seed: 4))
        spec.compression = 8
        var blocks = spec.encodedBlocks(bigEndian: false)
        #expect(blocks.count == 2)
        blocks[1][blocks[1].count - 1] ^= 0x01
        let dng = try TestDNG.open(TestDNG.build([spec], blocks: [blocks]))
        let error = try #require(throws: RawDecodeError.self) { try RawDecoder.decode(dng, ifd: dng.mainRawImage()) }
        #expect(error == .corruptStream(path: "t.dng", ifd: "IFD0", block: "tile 1", codec: "Deflate",
                                        reason: "invalid zlib/Deflate data (bad header, block, code or Adler-32 checksum, or the stream ends early)"))
        #expect(error.category == .corruptData)
        // Undamaged, the same blocks decode.
        blocks[1][blocks[1].count - 1] ^= 0x01
        let intact = try TestDNG.open(TestDNG.build([spec], blocks: [blocks]))
        #expect(spec.image.matches(try RawDecoder.decode(intact, ifd: intact.mainRawImage())))
    }
}
