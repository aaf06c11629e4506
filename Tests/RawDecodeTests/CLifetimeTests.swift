import CTIFF
import Foundation
import Testing
@testable import DNGWriter
import TestSupport

/// The error callbacks at the C boundary report through state their owner keeps alive:
/// libtiff's error handler writes into the heap buffer of `TIFFFile`, on open and on every
/// later call, and the message reaches the thrown error.
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
}
