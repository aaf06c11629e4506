import Foundation
import ImageCore
import EXRExchange
import Testing
import TestSupport

/// Runs `body` with `n` threads for the parallel loops it starts (no environment change).
func withThreadCount<T>(_ n: Int, _ body: () throws -> T) rethrows -> T {
    try Parallel.withThreadCount(n, body)
}

@Suite("EXR parallel encoding", .serialized)
struct EXRParallelTests {
    @Test("2 and 5 threads write the same bytes as 1 thread", arguments: [EXRCompression.zip, .piz, .none, .zips])
    func byteIdentical(_ compression: EXRCompression) throws {
        let dir = TestData.temporaryDirectory("exr-par")
        defer { try? FileManager.default.removeItem(at: dir) }
        // 80 ZIP chunks / 40 PIZ chunks, uneven last chunk.
        let image = Fixture.image(width: 331, height: 1273, seed: 21)
        let options = EXROptions(compression: compression, includeClipMask: true)
        var files: [Data] = []
        for threads in [1, 2, 5] {
            let path = dir.appendingPathComponent("t\(threads).exr").path
            try withThreadCount(threads) { try EXRFile.write(image, to: path, options: options) }
            files.append(Fixture.bytes(path))
        }
        #expect(files[0].count > 1000)
        #expect(files[1] == files[0])
        #expect(files[2] == files[0])
        let back = try EXRFile.read(dir.appendingPathComponent("t5.exr").path)
        let red = stride(from: 0, to: image.pixels.samples.count, by: 3).map { image.pixels.samples[$0] }
        #expect(Fixture.matchesHalf(try #require(back.halfChannels["R"]), red))
    }

    @Test("reading with 1 and 2 threads gives the same pixels")
    func parallelRead() throws {
        let dir = TestData.temporaryDirectory("exr-par-read")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("r.exr").path
        try EXRFile.write(Fixture.image(width: 257, height: 611, seed: 5), to: path, options: EXROptions(compression: .piz))
        let one = try withThreadCount(1) { try EXRFile.read(path) }
        let two = try withThreadCount(2) { try EXRFile.read(path) }
        #expect(one.halfChannels == two.halfChannels)
    }
}
