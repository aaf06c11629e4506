import Foundation
import ImageCore
import ExchangeCore
@testable import HDF5Exchange
@testable import HDF5Format
import Testing
import TestSupport

/// The HDF5 reader decodes chunked datasets itself — libhdf5 lists the chunks, the reader
/// checks every entry and inflates and unshuffles the stored bytes — because libhdf5 1.10.8's
/// `H5Dread` trusts each chunk's stored size and filter mask (fuzzing made it copy past its
/// buffer, docs/robustness.md). It must read every valid file exactly as libhdf5 does (h5py
/// is the reference here) and refuse every damaged or unsupported one with an error naming
/// the file, the dataset and what is wrong.
@Suite("HDF5 chunk reading")
struct HDF5ChunkReadingTests {
    /// Prints, as JSON, what h5py reads from each file given: for /image, /clip_mask and every
    /// /masks dataset, its dtype, the SHA-256 of the values as stored (`d[()]`) and converted
    /// by HDF5 (to float32, or uint8 for /clip_mask), and for chunked ones the number of
    /// chunks stored.
    static let h5pyListing = """
    import sys, json, hashlib
    import numpy as np, h5py
    def listing(paths):
        result = {}
        for path in paths:
            entry = {}
            with h5py.File(path, "r") as f:
                names = ["image", "clip_mask"] + (["masks/" + k for k in f["masks"]] if "masks" in f else [])
                for name in names:
                    if name not in f:
                        continue
                    d = f[name]
                    target = np.uint8 if name == "clip_mask" else np.float32
                    entry[name] = {"dtype": d.dtype.str,
                                   "stored": hashlib.sha256(np.ascontiguousarray(d[()]).tobytes()).hexdigest(),
                                   "converted": hashlib.sha256(np.ascontiguousarray(d.astype(target)[()]).tobytes()).hexdigest(),
                                   "chunks": d.id.get_num_chunks() if d.chunks else -1}
            result[path.split("/")[-1]] = entry
        print(json.dumps(result))

    """

    typealias Listing = [String: [String: Reading]]

    struct Reading: Decodable, Equatable {
        var dtype: String
        var stored: String
        var converted: String
        var chunks: Int
    }

    static func sha256<T>(_ values: [T]) -> String {
        values.withUnsafeBytes { SHA256Digest.hex(of: $0) }
    }

    /// Checks the image `HDF5File.readSceneLinear` reads from `path` against h5py's reading:
    /// float16 datasets bit for bit as stored, others as HDF5 converts them to float32 (uint8
    /// for the clip mask).
    static func expectSameAsH5py(_ path: String, _ expected: [String: Reading], file: String) throws {
        let image = try HDF5File.readSceneLinear(path)
        var read: [String: String] = [:]
        func record(_ name: String, _ floats: [Float]) {
            guard let dtype = expected[name]?.dtype else { return }
            read[name] = dtype == "<f2" ? sha256(floats.map { Float16($0).bitPattern }) : sha256(floats)
        }
        record("image", image.pixels.samples)
        if let mask = image.clipMask { read["clip_mask"] = sha256(mask) }
        for layer in image.masks { record("masks/\(layer.name)", layer.values.samples) }
        let reference = expected.mapValues { $0.dtype == "<f2" ? $0.stored : $0.converted }
        #expect(read == reference, "\(file)")
    }

    static func listing(_ paths: [String]) throws -> Listing {
        let result = try TestData.runPython(h5pyListing + "listing(sys.argv[1:])\n", paths)
        try #require(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode(Listing.self, from: Data(result.stdout.utf8))
    }

    /// The fixture image with two semantic mask layers.
    static func maskedImage() -> SceneLinearImage {
        var image = Fixture.image()
        image.masks = ["sky", "skin"].enumerated().map { i, name in
            SemanticMaskLayer(name: name, semanticName: "urn:com:apple:photo:2020:aux:semantic\(name)matte", sourceIFD: "IFD0/SubIFD\(i + 1)",
                              values: ImageBuffer(width: image.width, height: image.height, channels: 1,
                                                  samples: Fixture.values(count: image.width * image.height, seed: UInt64(20 + i)).map { abs($0) }))
        }
        return image
    }

    static let writerOptions: [(String, HDF5Options)] = [
        ("default", HDF5Options()),
        ("level0", HDF5Options(compression: .none)),
    ] + (1...9).map { ("level\($0)", HDF5Options(compression: .deflate(level: $0))) } + [
        ("level6-unshuffled-rows5", HDF5Options(compression: .deflate(level: 6), shuffle: false, chunkRows: 5)),
        ("fast-unshuffled-rows3", HDF5Options(compression: .fastDeflate, shuffle: false, chunkRows: 3)),
        ("rows1000", HDF5Options(chunkRows: 1000)),
        ("float32", HDF5Options(sampleType: .float32)),
        ("float32-level0", HDF5Options(compression: .none, sampleType: .float32)),
        ("float32-level4-rows7", HDF5Options(compression: .deflate(level: 4), chunkRows: 7, sampleType: .float32)),
        ("float32-level9-unshuffled", HDF5Options(compression: .deflate(level: 9), shuffle: false, sampleType: .float32)),
    ]

    /// The project's writer in every configuration: float16 and float32, uncompressed (level
    /// 0), the default run-length deflate, zlib levels 1–9, with and without shuffle, chunks of
    /// 3, 5, 7, 16 and all 37 rows (edge chunks of 1 to 5 rows), a clip mask and two mask layers.
    @Test("the project's writer's files read as h5py reads them, and as written")
    func writerFiles() throws {
        let dir = TestData.temporaryDirectory("h5-chunks-writer")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Self.maskedImage()
        var paths: [String] = []
        for (label, options) in Self.writerOptions {
            let path = dir.appendingPathComponent("\(label).h5").path
            try HDF5File.write(image, to: path, options: options)
            paths.append(path)
            let back = try HDF5File.readSceneLinear(path)
            if options.sampleType == .float16 {
                #expect(Fixture.matchesHalf(back.pixels.samples.map { Float16($0) }, image.pixels.samples), "\(label)")
                #expect(back.masks.map { $0.values.samples.map { Float16($0).bitPattern } }
                        == image.masks.map { $0.values.samples.map { Float16($0).bitPattern } }, "\(label)")
            } else {
                #expect(back.pixels.samples == image.pixels.samples, "\(label)")
                #expect(back.masks.map(\.values.samples) == image.masks.map(\.values.samples), "\(label)")
            }
            #expect(back.clipMask == image.clipMask, "\(label)")
        }
        let listing = try Self.listing(paths)
        #expect(listing.count == Self.writerOptions.count)
        for (label, options) in Self.writerOptions {
            let expected = try #require(listing["\(label).h5"])
            #expect(Set(expected.keys) == ["image", "clip_mask", "masks/sky", "masks/skin"], "\(label)")
            let rows = min(options.chunkRows ?? HDF5File.defaultChunkRows, 37)
            #expect(expected["image"]?.chunks == (37 + rows - 1) / rows, "\(label)")
            #expect(expected["image"]?.dtype == (options.sampleType == .float16 ? "<f2" : "<f4"), "\(label)")
            try Self.expectSameAsH5py(dir.appendingPathComponent("\(label).h5").path, expected, file: label)
        }
    }

    /// h5py's files of the layouts and chunk indexes libhdf5 1.10.8 reads: gzip with and
    /// without shuffle, shuffle alone, no filter; chunks that divide no dimension (the
    /// channels split 2 + 1) and 247 chunks (a B-tree of several nodes); fill values with
    /// unwritten chunks (user-defined 0.25 and 3, and the default); float64 and big-endian
    /// data (converted by HDF5); contiguous and compact datasets; user blocks of 512 and
    /// 1024 bytes; the file format 1.10 indexes (fixed array, extensible array, version-2
    /// B-tree, single chunk, implicit); a chunk written directly with its filters skipped;
    /// partial edge chunks stored unfiltered (`H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS`).
    /// Python: a file our reader accepts (`new`: the root attributes) and an /image it
    /// recognises (`tag`: its colour space), for the scripts below (needs `out`, `np`, `h5py`).
    static let h5pyFileHelpers = """
    def new(name, **kw):
        f = h5py.File(os.path.join(out, name + ".h5"), "w", **kw)
        f.attrs["format"] = "SceneLinear"
        f.attrs["format_version"] = np.int32(2)
        return f
    def tag(d):
        d.attrs["color_space"] = "lin_rec2020_scene"
        return d
    """

    static let h5pyWriter = """
    import os, ctypes, glob
    out = sys.argv[1]
    rng = np.random.default_rng(5)
    def pixels(shape, dtype):
        v = rng.standard_normal(shape) * 3
        v.flat[:4] = [0.0, -0.0, 65504.0, 1e-7]
        return v.astype(dtype)
    \(h5pyFileHelpers)
    def image(f, data, **kw):
        return tag(f.create_dataset("image", data=data, **kw))
    def low_level(f, data, file_type, dcpl):
        d = h5py.Dataset(h5py.h5d.create(f.id, b"image", file_type, h5py.h5s.create_simple(data.shape), dcpl=dcpl))
        d[...] = data
        return tag(d)
    lib = ctypes.CDLL(glob.glob(os.path.join(os.path.dirname(h5py.__file__), os.pardir, "h5py.libs", "libhdf5-*.so*"))[0])
    with new("gzip-shuffle") as f:
        image(f, pixels((13, 10, 3), np.float16), chunks=(4, 3, 2), compression="gzip", compression_opts=5, shuffle=True)
        f.create_dataset("clip_mask", data=rng.integers(0, 8, (13, 10), dtype=np.uint8), chunks=(5, 4), compression="gzip")
        m = f.create_group("masks")
        m.create_dataset("sky", data=rng.random((13, 10)).astype(np.float16), chunks=(3, 7), compression="gzip", shuffle=True)
    with new("gzip") as f:
        image(f, pixels((13, 10, 3), np.float32), chunks=(5, 4, 3), compression="gzip", compression_opts=9)
    with new("shuffle-only") as f:
        image(f, pixels((13, 10, 3), np.float16), chunks=(6, 7, 3), shuffle=True)
    with new("unfiltered-chunks") as f:
        image(f, pixels((13, 10, 3), np.float32), chunks=(4, 4, 1))
    with new("many-chunks") as f:
        image(f, pixels((150, 97, 3), np.float16), chunks=(8, 8, 3), compression="gzip", shuffle=True)
    with new("fill-value") as f:
        d = tag(f.create_dataset("image", shape=(10, 7, 3), dtype=np.float32, chunks=(4, 4, 3), fillvalue=0.25))
        d[0:4, 0:4] = pixels((4, 4, 3), np.float32)
        d[4:10, 4:7] = pixels((6, 3, 3), np.float32)
        c = f.create_dataset("clip_mask", shape=(10, 7), dtype=np.uint8, chunks=(4, 4), fillvalue=3, compression="gzip")
        c[0:4, 0:7] = 1
        s = f.create_group("masks").create_dataset("sky", shape=(10, 7), dtype=np.float16, chunks=(4, 4), compression="gzip", shuffle=True)
        s[4:8, 0:4] = 0.5
    with new("fill-default") as f:
        d = tag(f.create_dataset("image", shape=(10, 7, 3), dtype=np.float16, chunks=(4, 4, 3), compression="gzip"))
        d[4:8, 0:4] = pixels((4, 4, 3), np.float16)
    with new("float64") as f:
        image(f, pixels((13, 10, 3), np.float64) * 1e30, chunks=(4, 10, 3), compression="gzip", shuffle=True)
    with new("big-endian") as f:
        image(f, pixels((13, 10, 3), ">f4"), chunks=(4, 10, 3), compression="gzip", shuffle=True)
        f.create_dataset("clip_mask", data=rng.integers(0, 8, (13, 10)).astype(">u2"), chunks=(4, 4), compression="gzip")
    with new("contiguous") as f:
        image(f, pixels((13, 10, 3), np.float16))
        f.create_dataset("clip_mask", data=rng.integers(0, 8, (13, 10), dtype=np.uint8))
    with new("contiguous-userblock", userblock_size=512) as f:
        image(f, pixels((13, 10, 3), np.float32))
    with new("chunked-userblock", userblock_size=1024) as f:
        image(f, pixels((13, 10, 3), np.float16), chunks=(4, 3, 3), compression="gzip", shuffle=True)
    with new("compact") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        low_level(f, pixels((13, 10, 3), np.float16), h5py.h5t.IEEE_F16LE, dcpl)
    for index, kw in [("v110-fixed-array", dict(chunks=(4, 3, 3), compression="gzip")),
                      ("v110-extensible-array", dict(chunks=(4, 3, 3), compression="gzip", shuffle=True, maxshape=(None, 10, 3))),
                      ("v110-btree2", dict(chunks=(4, 3, 3), compression="gzip", maxshape=(None, None, 3))),
                      ("v110-single-chunk", dict(chunks=(13, 10, 3), compression="gzip", shuffle=True))]:
        with new(index, libver=("v110", "v110")) as f:
            image(f, pixels((13, 10, 3), np.float16), **kw)
    with new("v110-implicit", libver=("v110", "v110")) as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((4, 3, 3))
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        low_level(f, pixels((13, 10, 3), np.float32), h5py.h5t.IEEE_F32LE, dcpl)
    with new("direct-chunk-unfiltered") as f:
        data = pixels((13, 10, 3), np.float16)
        d = image(f, data, chunks=(4, 10, 3), compression="gzip", shuffle=True)
        d.id.write_direct_chunk((4, 0, 0), np.ascontiguousarray(data[4:8]).tobytes(), filter_mask=3)
    with new("partial-chunks-unfiltered", libver=("v110", "v110")) as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((4, 4, 3))
        dcpl.set_shuffle()
        dcpl.set_deflate(6)
        assert lib.H5Pset_chunk_opts(ctypes.c_int64(dcpl.id), ctypes.c_uint(2)) >= 0
        low_level(f, pixels((13, 10, 3), np.float16), h5py.h5t.IEEE_F16LE, dcpl)
    listing(sorted(glob.glob(os.path.join(out, "*.h5"))))
    """

    @Test("h5py's files of every chunk index, filter order, fill value, layout and type read as h5py reads them")
    func h5pyFiles() throws {
        let dir = TestData.temporaryDirectory("h5-chunks-h5py")
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try TestData.runPython(Self.h5pyListing + Self.h5pyWriter, [dir.path])
        try #require(result.status == 0, "\(result.stderr)")
        let listing = try JSONDecoder().decode(Listing.self, from: Data(result.stdout.utf8))
        let chunkCounts = listing.mapValues { $0.mapValues(\.chunks) }
        #expect(chunkCounts == [
            "big-endian.h5": ["image": 4, "clip_mask": 12],
            "chunked-userblock.h5": ["image": 16],
            "compact.h5": ["image": -1],
            "contiguous-userblock.h5": ["image": -1],
            "contiguous.h5": ["image": -1, "clip_mask": -1],
            "direct-chunk-unfiltered.h5": ["image": 4],
            "fill-default.h5": ["image": 1],
            "fill-value.h5": ["image": 3, "clip_mask": 2, "masks/sky": 1],
            "float64.h5": ["image": 4],
            "gzip-shuffle.h5": ["image": 32, "clip_mask": 9, "masks/sky": 10],
            "gzip.h5": ["image": 9],
            "many-chunks.h5": ["image": 247],
            "partial-chunks-unfiltered.h5": ["image": 12],
            "shuffle-only.h5": ["image": 6],
            "unfiltered-chunks.h5": ["image": 36],
            "v110-btree2.h5": ["image": 16],
            "v110-extensible-array.h5": ["image": 16],
            "v110-fixed-array.h5": ["image": 16],
            "v110-implicit.h5": ["image": 16],
            "v110-single-chunk.h5": ["image": 1],
        ], "\(chunkCounts)")
        for (name, expected) in listing.sorted(by: { $0.key < $1.key }) {
            try Self.expectSameAsH5py(dir.appendingPathComponent(name).path, expected, file: name)
        }
        // The unwritten chunks read as the fill value: 0.25 in /image, 3 in /clip_mask, 0 in /masks/sky.
        let filled = try HDF5File.readSceneLinear(dir.appendingPathComponent("fill-value.h5").path)
        #expect(filled.pixels.samples[(4 * 7 + 0) * 3] == 0.25 && filled.pixels.samples[(9 * 7 + 3) * 3 + 2] == 0.25)
        #expect(filled.clipMask?[4 * 7] == 3 && filled.clipMask?[0] == 1)
        #expect(filled.masks.first?.values.samples[0] == 0 && filled.masks.first?.values.samples[4 * 7] == 0.5)
    }

    /// The decoded values do not depend on how many threads decode the chunks.
    @Test("one, two and three threads read the same values")
    func threadCounts() throws {
        let dir = TestData.temporaryDirectory("h5-chunks-threads")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image(width: 149, height: 203, seed: 11)
        let path = dir.appendingPathComponent("t.h5").path
        try HDF5File.write(image, to: path, options: HDF5Options(chunkRows: 7))
        let reads = try [1, 2, 3].map { threads in try withThreadCount(threads) { try HDF5File.readSceneLinear(path) } }
        #expect(Fixture.matchesHalf(reads[0].pixels.samples.map { Float16($0) }, image.pixels.samples))
        #expect(reads[0].clipMask == image.clipMask)
        for read in reads.dropFirst() {
            #expect(read.pixels.samples == reads[0].pixels.samples && read.clipMask == reads[0].clipMask)
        }
    }

    // MARK: damaged chunk indexes and chunks

    /// One kind of damage to a chunk index entry (version-1 B-tree, no checksum) or chunk of a
    /// file of the project's writer (61 × 37 pixels, chunks of 16 rows: 3 chunks per dataset,
    /// 5856 bytes for /image, 976 for /clip_mask).
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case clipMaskSkipsDeflate, imageSkipsDeflate, imageSkipsEveryFilter, unfilteredChunkShort, addressPastEnd,
             outsideDataset, listedTwice, offGridRoundsDown, tooFewDeflateBytes, inflatesShort, inflatesLong, notZlib

        var testDescription: String { rawValue }

        /// The writer's options for the file to damage.
        var options: HDF5Options { self == .unfilteredChunkShort ? HDF5Options(compression: .none) : HDF5Options() }

        /// Damages `bytes` through `image` and `clip` (the chunk index entries of /image and
        /// /clip_mask) and returns the operation and message the reader must give.
        func apply(_ bytes: inout [UInt8], image: [HDF5Bytes.ChunkKey], clip: [HDF5Bytes.ChunkKey]) -> (String, String) {
            let put = HDF5Bytes.put
            switch self {
            case .clipMaskSkipsDeflate:
                // What the fuzzer found: a clip mask chunk whose filter mask says deflate was skipped.
                put(1, &bytes, clip[0].filterMaskField, 4)
                return ("chunk index", "/clip_mask: the chunk at [0, 0] is stored in \(clip[0].size) bytes without deflate (filter mask 0x1 skips every filter); a chunk is 976 bytes")
            case .imageSkipsDeflate:
                put(2, &bytes, image[1].filterMaskField, 4)
                return ("chunk index", "/image: the chunk at [16, 0, 0] is stored in \(image[1].size) bytes without deflate (filter mask 0x2 skips deflate); a chunk is 5856 bytes")
            case .imageSkipsEveryFilter:
                put(3, &bytes, image[2].filterMaskField, 4)
                return ("chunk index", "/image: the chunk at [32, 0, 0] is stored in \(image[2].size) bytes without deflate (filter mask 0x3 skips every filter); a chunk is 5856 bytes")
            case .unfilteredChunkShort:
                // Also what the fuzzer found: a chunk of an unfiltered dataset stored short.
                put(5756, &bytes, image[1].sizeField, 4)
                return ("chunk index", "/image: the chunk at [16, 0, 0] is stored in 5756 bytes without deflate (the dataset has no filters); a chunk is 5856 bytes")
            case .addressPastEnd:
                let address = UInt64(bytes.count - 10)
                put(address, &bytes, image[2].addressField, 8)
                return ("chunk index", "/image: the chunk at [32, 0, 0] (\(image[2].size) bytes at address \(address)) runs past the end of the file (\(bytes.count) bytes)")
            case .outsideDataset:
                put(48, &bytes, image[2].offsetField(0), 8)
                return ("chunk index", "/image: the chunk at [48, 0, 0] lies outside the dataset ([37, 61, 3])")
            case .listedTwice:
                put(0, &bytes, clip[1].offsetField(0), 8)
                return ("chunk index", "/clip_mask: the chunk at [0, 0] is listed twice")
            case .offGridRoundsDown:
                // libhdf5 keeps a chunk's offset in chunks (21 / 16 = 1): an offset off the
                // grid comes back rounded down onto it, here onto the next chunk's.
                put(21, &bytes, image[2].offsetField(0), 8)
                return ("chunk index", "/image: the chunk at [16, 0, 0] is listed twice")
            case .tooFewDeflateBytes:
                put(5, &bytes, image[0].sizeField, 4)
                return ("chunk index", "/image: the chunk at [0, 0, 0] has 5 bytes of deflate data, too few for a chunk of 5856 bytes (deflate expands at most 1032-fold)")
            case .inflatesShort, .inflatesLong:
                // A valid zlib stream of 8 bytes less or more than a chunk, appended to the file.
                let stream = HDF5Bytes.storedZlib([UInt8](repeating: 0x3C, count: self == .inflatesShort ? 5848 : 5864))
                put(UInt64(bytes.count), &bytes, image[1].addressField, 8)
                put(UInt64(stream.count), &bytes, image[1].sizeField, 4)
                bytes += stream
                return ("chunk data", self == .inflatesShort ? "/image: the chunk at [16, 0, 0] inflates to 5848 bytes; a chunk is 5856"
                                                             : "/image: the chunk at [16, 0, 0] inflates to more than a chunk (5856 bytes)")
            case .notZlib:
                bytes[Int(clip[2].address)] ^= 0xFF
                return ("chunk data", "/clip_mask: the chunk at [32, 0] is not a valid zlib stream (\(clip[2].size) bytes)")
            }
        }
    }

    @Test("a damaged chunk index entry or chunk is refused, naming the file, the dataset, the chunk and the damage",
          arguments: Damage.allCases)
    func damagedChunks(_ damage: Damage) throws {
        let dir = TestData.temporaryDirectory("h5-chunks-damage")
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("good.h5").path
        try HDF5File.write(Fixture.image(), to: good, options: damage.options)
        var bytes = [UInt8](Fixture.bytes(good))
        let imageLeaves = HDF5Bytes.chunkLeaves(bytes, rank: 3), clipLeaves = HDF5Bytes.chunkLeaves(bytes, rank: 2)
        try #require(imageLeaves.count == 1 && clipLeaves.count == 1, "\(imageLeaves) \(clipLeaves)")
        let image = imageLeaves[0], clip = clipLeaves[0]
        #expect(image.map(\.offsets) == [[0, 0, 0], [16, 0, 0], [32, 0, 0]])
        #expect(clip.map(\.offsets) == [[0, 0], [16, 0], [32, 0]])
        #expect(image.allSatisfy { $0.filterMask == 0 } && clip.allSatisfy { $0.filterMask == 0 })
        if damage == .unfilteredChunkShort {
            #expect(image.allSatisfy { $0.size == 5856 })
        } else {
            #expect(image.allSatisfy { $0.size < 5856 } && clip.allSatisfy { $0.size < 976 })
        }
        let (operation, message) = damage.apply(&bytes, image: image, clip: clip)
        let path = dir.appendingPathComponent("damaged.h5").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: ExchangeError.self) { try HDF5File.readSceneLinear(path) }
        #expect(error == ExchangeError(path: path, operation: operation, message: message, category: .corruptData), "\(error)")
        #expect(error.description == "cannot read \(path): \(operation): \(message)")
        #expect(error.category.exitCode == 13)
        // The undamaged file reads.
        #expect(Fixture.matchesHalf(try HDF5File.readSceneLinear(good).pixels.samples.map { Float16($0) }, Fixture.image().pixels.samples))
    }

    // MARK: unsupported filters and layouts, damaged layouts

    /// h5py's files with what the reader does not read, and damaged contiguous and compact
    /// layouts (h5py's default files have version-1 object headers, without checksums).
    static let h5pyRefusals = """
    import sys, os, ctypes, glob
    import numpy as np, h5py
    out = sys.argv[1]
    lib = ctypes.CDLL(glob.glob(os.path.join(os.path.dirname(h5py.__file__), os.pardir, "h5py.libs", "libhdf5-*.so*"))[0])
    data = np.linspace(-1, 1, 13 * 10 * 3).reshape(13, 10, 3)
    \(h5pyFileHelpers)
    def image(f, values, **kw):
        return tag(f.create_dataset("image", data=values, **kw))
    def low_level(f, values, dcpl):
        d = h5py.Dataset(h5py.h5d.create(f.id, b"image", h5py.h5t.IEEE_F32LE, h5py.h5s.create_simple(values.shape), dcpl=dcpl))
        d[...] = values
        return tag(d)
    def patch(name, old, new):
        path = os.path.join(out, name + ".h5")
        b = bytearray(open(path, "rb").read())
        at = b.find(old)
        assert at > 0 and b.find(old, at + 1) < 0, name
        b[at:at + len(new)] = new
        open(path, "wb").write(b)
    with new("lzf") as f:
        image(f, data.astype(np.float16), chunks=(4, 10, 3), compression="lzf")
    with new("fletcher32") as f:
        image(f, data.astype(np.float16), chunks=(4, 10, 3), compression="gzip", fletcher32=True)
    with new("scaleoffset") as f:
        image(f, data.astype(np.float32), chunks=(4, 10, 3), scaleoffset=3)
    with new("szip") as f:
        image(f, data.astype(np.float32), chunks=(4, 10, 3), compression="szip")
    with new("nbit") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((4, 10, 3))
        assert lib.H5Pset_nbit(ctypes.c_int64(dcpl.id)) >= 0
        low_level(f, data.astype(np.float32), dcpl)
    with new("deflate-twice") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((4, 10, 3))
        dcpl.set_deflate(4)
        dcpl.set_deflate(6)
        low_level(f, data.astype(np.float32), dcpl)
    with new("clip-mask-lzf") as f:
        image(f, data.astype(np.float16), chunks=(4, 10, 3), compression="gzip", shuffle=True)
        f.create_dataset("clip_mask", data=np.zeros((13, 10), np.uint8), chunks=(4, 10), compression="lzf")
    with new("mask-fletcher32") as f:
        image(f, data.astype(np.float16), chunks=(4, 10, 3), compression="gzip", shuffle=True)
        f.create_group("masks").create_dataset("sky", data=np.zeros((13, 10), np.float16), chunks=(4, 10), fletcher32=True)
    with new("unknown-filter") as f:
        image(f, data.astype(np.float16), chunks=(4, 10, 3), compression="gzip")
    # deflate's entry in the pipeline message (id, name length, flags, 1 parameter, name) gets the id 31250
    patch("unknown-filter", bytes([1, 0, 8, 0, 1, 0, 1, 0]) + b"deflate\\0", (31250).to_bytes(2, "little"))
    with new("external") as f:
        d = tag(f.create_dataset("image", shape=(13, 10, 3), dtype=np.float32, external=[(os.path.join(out, "external.raw"), 0, 1560)]))
        d[...] = data.astype(np.float32)
    with new("virtual") as f:
        source = f.create_dataset("source", data=data.astype(np.float32))
        layout = h5py.VirtualLayout(shape=(13, 10, 3), dtype=np.float32)
        layout[...] = h5py.VirtualSource(source)
        tag(f.create_virtual_dataset("image", layout))
    with new("fill-only-chunked") as f:
        tag(f.create_dataset("image", shape=(13, 10, 3), dtype=np.float32, chunks=(4, 10, 3), fillvalue=0.5))
    with new("fill-only-contiguous") as f:
        tag(f.create_dataset("image", shape=(13, 10, 3), dtype=np.float32, fillvalue=0.5))
    # Contiguous: the layout message (version 3, class 1, address, size) of /image.
    for name, address, size in [("contiguous-past-end", None, 1560), ("contiguous-size", 0, 64)]:
        with new(name) as f:
            d = image(f, data.astype(np.float32))
            offset = d.id.get_offset()
        stored = (offset if address is None else address)
        patch(name, bytes([3, 1]) + offset.to_bytes(8, "little") + (1560).to_bytes(8, "little"),
              bytes([3, 1]) + (offset + 1000 if address is None else offset).to_bytes(8, "little") + size.to_bytes(8, "little"))
    # Compact: the layout message (version 3, class 0, size) holds 16 of the 780 bytes.
    with new("compact-short") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        d = h5py.Dataset(h5py.h5d.create(f.id, b"image", h5py.h5t.IEEE_F16LE, h5py.h5s.create_simple(data.shape), dcpl=dcpl))
        d[...] = data.astype(np.float16)
        tag(d)
    patch("compact-short", bytes([3, 0]) + (780).to_bytes(2, "little"), bytes([3, 0]) + (16).to_bytes(2, "little"))
    for name in sorted(glob.glob(os.path.join(out, "*.h5"))):
        print(name.split("/")[-1], os.path.getsize(name))
    """

    @Test("unsupported filters, layouts and storage, and damaged contiguous and compact layouts, are refused by name")
    func refusals() throws {
        let dir = TestData.temporaryDirectory("h5-chunks-refusals")
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try TestData.runPython(Self.h5pyRefusals, [dir.path])
        try #require(result.status == 0, "\(result.stderr)")
        let sizes = Dictionary(uniqueKeysWithValues: result.stdout.split(separator: "\n").map { line -> (String, Int) in
            let fields = line.split(separator: " ")
            return (String(fields[0]), Int(fields[1]) ?? -1)
        })
        let only = "is not read; only shuffle (2) and deflate (1) are"
        let cases: [(String, String, String, FailureCategory)] = [
            ("lzf", "filter pipeline", "/image: filter 32000 (lzf) \(only)", .unsupportedFeature),
            ("fletcher32", "filter pipeline", "/image: filter 3 (fletcher32) \(only)", .unsupportedFeature),
            ("scaleoffset", "filter pipeline", "/image: filter 6 (scaleoffset) \(only)", .unsupportedFeature),
            ("szip", "filter pipeline", "/image: filter 4 (szip) \(only)", .unsupportedFeature),
            ("nbit", "filter pipeline", "/image: filter 5 (nbit) \(only)", .unsupportedFeature),
            ("unknown-filter", "filter pipeline", "/image: filter 31250 (named \"deflate\" in the file) \(only)", .unsupportedFeature),
            ("deflate-twice", "filter pipeline", "/image: the deflate filter appears twice in the pipeline, which is not read", .unsupportedFeature),
            ("clip-mask-lzf", "filter pipeline", "/clip_mask: filter 32000 (lzf) \(only)", .unsupportedFeature),
            ("mask-fletcher32", "filter pipeline", "/masks/sky: filter 3 (fletcher32) \(only)", .unsupportedFeature),
            ("external", "layout", "/image keeps its data in external files, which are not read", .unsupportedFeature),
            ("virtual", "layout", "/image is a virtual dataset, which is not read", .unsupportedFeature),
            ("fill-only-chunked", "fill value", "/image has no chunk stored, only a fill value, which is not read", .unsupportedFeature),
            ("fill-only-contiguous", "fill value", "/image has no data stored, only a fill value, which is not read", .unsupportedFeature),
            ("contiguous-size", "contiguous data", "/image: the layout stores 64 bytes; the dataset is 1560", .corruptData),
            ("compact-short", "compact data", "/image: the layout holds 16 bytes; the dataset is 780", .corruptData),
        ]
        #expect(sizes.count == cases.count + 1, "\(sizes)")
        for (name, operation, message, category) in cases {
            let path = dir.appendingPathComponent("\(name).h5").path
            let error = try #require(throws: ExchangeError.self, "\(name)") { try HDF5File.readSceneLinear(path) }
            #expect(error == ExchangeError(path: path, operation: operation, message: message, category: category), "\(error)")
        }
        // The contiguous data moved 1000 bytes on, past the end of the file.
        let path = dir.appendingPathComponent("contiguous-past-end.h5").path
        let size = try #require(sizes["contiguous-past-end.h5"])
        let error = try #require(throws: ExchangeError.self) { try HDF5File.readSceneLinear(path) }
        #expect(error.operation == "contiguous data" && error.category == .corruptData, "\(error)")
        #expect(error.message.hasPrefix("/image: 1560 bytes at file offset ") && error.message.hasSuffix(" run past the end of the file (\(size) bytes)"),
                "\(error)")
    }

    // MARK: the chunk grid, without libhdf5

    /// Checks `HDF5ChunkedDataset` needs no file for: it is fed the entries a chunk index
    /// could list.
    @Test("chunk index entries off the grid, too many, or with a wrong coordinate count are refused; placing clips edge chunks")
    func chunkGrid() throws {
        let dir = TestData.temporaryDirectory("h5-chunks-grid")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("bytes").path
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0) }).write(to: URL(fileURLWithPath: path))
        let file = try HDF5MappedFile(path: path, base: 0)
        // 5 × 7 elements of 2 bytes in chunks of 2 × 3: a 3 × 3 grid, chunks of 12 bytes.
        let grid = try HDF5ChunkedDataset(dims: [5, 7], chunk: [2, 3], elementSize: 2, pipeline: [])
        #expect(grid.cellCount == 9 && grid.chunkBytes == 12)
        func chunk(_ offset: [UInt64], at address: UInt64 = 0) -> HDF5StoredChunk {
            HDF5StoredChunk(offset: offset, filterMask: 0, address: address, size: 12)
        }
        func refusal(_ chunks: [HDF5StoredChunk]) -> String? {
            do {
                _ = try grid.place(chunks, in: file)
                return nil
            } catch {
                return "\(error.operation): \(error)"
            }
        }
        #expect(refusal([chunk([0, 3]), chunk([2, 4])]) == "chunk index: the chunk at [2, 4] is not on the chunk grid (chunks of [2, 3])")
        #expect(refusal([chunk([1, 0])]) == "chunk index: the chunk at [1, 0] is not on the chunk grid (chunks of [2, 3])")
        #expect(refusal([chunk([0, 7])]) == "chunk index: the chunk at [0, 7] lies outside the dataset ([5, 7])")
        #expect(refusal([chunk([0, 0, 0])]) == "chunk index: the chunk at [0, 0, 0] has 3 coordinates; the dataset has 2 dimensions")
        #expect(refusal(Array(repeating: chunk([0, 0]), count: 10)) == "chunk index: the chunk index lists 10 chunks; a grid of [3, 3] has 9")
        #expect(refusal([chunk([4, 6], at: 4085)]) == "chunk index: the chunk at [4, 6] (12 bytes at address 4085) runs past the end of the file (4096 bytes)")
        #expect(refusal([chunk([4, 6], at: UInt64.max - 4)]) == "chunk index: the chunk at [4, 6] (12 bytes at address 18446744073709551611) runs past the end of the file (4096 bytes)")
        #expect(throws: HDF5ChunkDamage.index("chunk dimensions [2, 0] include 0")) {
            try HDF5ChunkedDataset(dims: [5, 7], chunk: [2, 0], elementSize: 2, pipeline: [])
        }
        #expect(throws: HDF5ChunkDamage.index("a chunk of [65536, 65536] 1-byte elements takes 4 GiB or more, beyond HDF5's limit")) {
            try HDF5ChunkedDataset(dims: [5, 7], chunk: [65536, 65536], elementSize: 1, pipeline: [])
        }
        // Every cell stored at a distinct address: each element comes from its chunk's bytes,
        // the edge chunks (last row of chunks: 1 row; last column: 1 column) clipped.
        let stored: [HDF5StoredChunk] = (0..<9).map { (cell: Int) -> HDF5StoredChunk in
            chunk([UInt64(cell / 3 * 2), UInt64(cell % 3 * 3)], at: UInt64(100 * cell))
        }
        let (placed, missing) = try grid.place(stored.reversed(), in: file)
        #expect(missing.isEmpty)
        #expect(placed.map { $0.cell } == [8, 7, 6, 5, 4, 3, 2, 1, 0])
        var out = [UInt16](repeating: 0xFFFF, count: 35)
        var scratch = HDF5ChunkedDataset.Scratch()
        try out.withUnsafeMutableBytes { raw in
            for p in placed { try grid.decode(p, from: file, into: raw.baseAddress!, scratch: &scratch) }
        }
        var expected: [UInt16] = []
        for y in 0..<5 {
            for x in 0..<7 {
                let cell = y / 2 * 3 + x / 3, within = (y % 2) * 3 + x % 3
                let at = 100 * cell + 2 * within
                expected.append(UInt16(UInt8(truncatingIfNeeded: at)) | UInt16(UInt8(truncatingIfNeeded: at + 1)) << 8)
            }
        }
        #expect(out == expected)
        // Missing cells are reported, in grid order.
        #expect(try grid.place([stored[4]], in: file).missing == [0, 1, 2, 3, 5, 6, 7, 8])
    }

    /// libhdf5's shuffle: byte b of element e at b × n + e; bytes after the last whole element
    /// as they are; one-byte elements and single elements unchanged.
    @Test("unshuffling matches libhdf5's, remainder bytes included")
    func unshuffle() {
        func run(_ source: [UInt8], _ size: Int) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: source.count)
            source.withUnsafeBytes { src in
                out.withUnsafeMutableBytes { dst in
                    HDF5ChunkedDataset.unshuffle(src.baseAddress!, into: dst.baseAddress!, count: source.count, elementSize: size)
                }
            }
            return out
        }
        #expect(run([1, 2, 3, 4, 5, 6], 2) == [1, 4, 2, 5, 3, 6])
        #expect(run([1, 2, 3, 4, 5, 6, 7, 8], 4) == [1, 3, 5, 7, 2, 4, 6, 8])
        #expect(run([1, 2, 3, 4, 5, 6, 7], 3) == [1, 3, 5, 2, 4, 6, 7])
        #expect(run([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], 4) == [1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12, 13])
        #expect(run([9, 8, 7], 1) == [9, 8, 7])
        #expect(run([9, 8, 7], 2) == [9, 8, 7])
        #expect(run([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], 3) == [1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12])
    }
}

/// A file cut while it is mapped for reading reads zeros where its pages were, not SIGBUS,
/// and `checkWhole` reports it truncated.
struct HDF5MappedFileCutTests {
    @Test func cutWhileMappedIsTruncatedNotACrash() throws {
        let dir = TestData.temporaryDirectory("hdf5-mapped-cut")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("cut.h5").path
        try Data(repeating: 0xA5, count: 3 * 65_536).write(to: URL(fileURLWithPath: path))
        let file = try HDF5MappedFile(path: path, base: 0)
        try file.checkWhole()
        #expect(file.bytes[100] == 0xA5 && !file.shrank)
        #expect(truncate(path, 4096) == 0)
        #expect(file.bytes[2 * 65_536] == 0, "a page past the new end reads as zero")
        #expect(file.shrank)
        #expect { try file.checkWhole() } throws: { error in
            guard let e = error as? ExchangeError else { return false }
            return e.category == .truncated && e.path == path
        }
    }
}
