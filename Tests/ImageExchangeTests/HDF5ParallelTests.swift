import Foundation
import ImageCore
import HDF5Exchange
import Testing
import TestSupport

@Suite("HDF5 parallel compression", .serialized)
struct HDF5ParallelTests {
    /// Prints offset, filter mask and SHA-256 of every stored chunk of /image and
    /// /clip_mask, as h5py reads them without decompressing.
    static let chunkScript = """
    import sys, hashlib, h5py
    with h5py.File(sys.argv[1], "r") as f:
        for name in ("image", "clip_mask"):
            d = f[name]
            for i in range(d.id.get_num_chunks()):
                info = d.id.get_chunk_info(i)
                mask, data = d.id.read_direct_chunk(info.chunk_offset)
                print(name, info.chunk_offset, mask, len(data), hashlib.sha256(data).hexdigest())
    """

    /// With a zlib level, one thread is HDF5's own filter pipeline, so the chunks compressed
    /// on several threads equal what HDF5 writes itself; the default run-length deflate is
    /// always compressed here, and must not depend on the thread count either.
    @Test("chunks compressed on several threads are byte-identical to one thread's (HDF5's own filter pipeline for zlib)",
          arguments: [HDF5Options(), HDF5Options(compression: .deflate(level: 4)),
                      HDF5Options(compression: .deflate(level: 6), shuffle: false, chunkRows: 7)])
    func sameChunks(_ options: HDF5Options) throws {
        let dir = TestData.temporaryDirectory("h5-par")
        defer { try? FileManager.default.removeItem(at: dir) }
        // 203 rows: the last chunk is partial in both option sets.
        let image = Fixture.image(width: 149, height: 203, seed: 11)
        var listings: [String] = []
        for threads in [1, 2, 3] {
            let path = dir.appendingPathComponent("t\(threads).h5").path
            try withThreadCount(threads) { try HDF5File.write(image, to: path, options: options) }
            let back = try HDF5File.readSceneLinear(path)
            #expect(Fixture.matchesHalf(back.pixels.samples.map { Float16($0) }, image.pixels.samples), "threads \(threads)")
            #expect(back.clipMask == image.clipMask)
            let result = try TestData.runPython(Self.chunkScript, [path])
            #expect(result.status == 0, "\(result.stderr)")
            listings.append(result.stdout)
        }
        try #require(listings.count == 3)
        let rows = (203 + (options.chunkRows ?? HDF5File.defaultChunkRows) - 1) / (options.chunkRows ?? HDF5File.defaultChunkRows)
        #expect(listings[0].split(separator: "\n").filter { $0.hasPrefix("image") }.count == rows, "\(listings[0])")
        #expect(listings[1] == listings[0])
        #expect(listings[2] == listings[0])
    }
}
