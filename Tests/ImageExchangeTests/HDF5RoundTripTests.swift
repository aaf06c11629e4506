import Foundation
import ImageCore
import ExchangeCore
import HDF5Exchange
import Testing
import TestSupport

@Suite("HDF5 round trip")
struct HDF5RoundTripTests {
    static let optionSets: [HDF5Options] = [
        HDF5Options(),
        HDF5Options(compression: .none),
        HDF5Options(compression: .deflate(level: 6), shuffle: false, chunkRows: 5),
        HDF5Options(compression: .deflate(level: 9), chunkRows: 1000),
        HDF5Options(compression: .fastDeflate, shuffle: false, chunkRows: 3),
    ]

    @Test("pixels are Float16(value) bit for bit; mask, encoding, exposure and provenance are exact",
          arguments: optionSets.indices)
    func roundTrip(_ which: Int) throws {
        let dir = TestData.temporaryDirectory("h5-rt")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image()
        let path = dir.appendingPathComponent("rt.h5").path
        try HDF5File.write(image, to: path, options: Self.optionSets[which])
        let back = try HDF5File.readSceneLinear(path)
        #expect(back.width == image.width && back.height == image.height)
        #expect(Fixture.matchesHalf(back.pixels.samples.map { Float16($0) }, image.pixels.samples))
        #expect(back.clipMask == image.clipMask)
        #expect(back.encoding == image.encoding)
        #expect(back.exposure == image.exposure)
        #expect(back.provenance == image.provenance)
    }

    @Test("a group's layers on the image grid share /image's y, x and channel dimension scales; another shape is refused")
    func layersOnTheImageGrid() throws {
        let dir = TestData.temporaryDirectory("h5-grid")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image()
        let w = image.width, h = image.height
        let group = HDF5Group(name: "extra/noise", datasets: [
            HDF5Dataset(imageLayer: "std", width: w, height: h, channels: 3, values: .floats([Float](repeating: 0.5, count: w * h * 3))),
            HDF5Dataset(imageLayer: "count", width: w, height: h, values: .bytes([UInt8](repeating: 2, count: w * h))),
            HDF5Dataset(name: "table", shape: [2], values: .doubles([1, 2])),
        ])
        let path = dir.appendingPathComponent("grid.h5").path
        try HDF5File.write(image, to: path, groups: [group])
        #expect(try HDF5File.readSceneLinear(path).width == w)
        let py = try TestData.runPython("""
            import sys, h5py
            f = h5py.File(sys.argv[1], 'r')
            for name in ('image', 'extra/noise/std', 'extra/noise/count', 'extra/noise/table'):
                d = f[name]
                print(name, [[s.name for s in dim.values()] for dim in d.dims])
            """, [path])
        try #require(py.status == 0, "\(py.stderr)")
        #expect(py.stdout.contains("image [['/y'], ['/x'], ['/channel']]"), "\(py.stdout)")
        #expect(py.stdout.contains("extra/noise/std [['/y'], ['/x'], ['/channel']]"), "\(py.stdout)")
        #expect(py.stdout.contains("extra/noise/count [['/y'], ['/x']]"), "\(py.stdout)")
        #expect(py.stdout.contains("extra/noise/table [[]]"), "\(py.stdout)")

        let wrong = HDF5Group(name: "bad", datasets: [
            HDF5Dataset(imageLayer: "std", width: w + 1, height: h, values: .floats([Float](repeating: 0, count: (w + 1) * h))),
        ])
        let refused = dir.appendingPathComponent("refused.h5").path
        #expect(throws: ExchangeError.self) { try HDF5File.write(image, to: refused, groups: [wrong]) }
        #expect(!FileManager.default.fileExists(atPath: refused))
    }

    @Test("attributes of /, /image and /dng have the documented names, types and values")
    func attributes() throws {
        let dir = TestData.temporaryDirectory("h5-attr")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image()
        let path = dir.appendingPathComponent("a.h5").path
        try HDF5File.write(image, to: path)
        let root = try HDF5File.readAttributes(path, object: "/")
        #expect(root["format"] == .text("SceneLinear"))
        #expect(root["format_version"] == .integer(2))
        #expect(root["source_sha256"] == .text(image.provenance.sourceSHA256))
        #expect(root["source_ifd"] == .text("IFD0/SubIFD0"))
        guard case .text(let created)? = root["created"] else { Issue.record("no created attribute"); return }
        #expect(ISO8601DateFormatter().date(from: created) != nil, "\(created)")

        let attrs = try HDF5File.readAttributes(path, object: "/image")
        #expect(attrs["CLASS"] == .text("IMAGE"))
        #expect(attrs["IMAGE_SUBCLASS"] == .text("IMAGE_TRUECOLOR"))
        #expect(attrs["INTERLACE_MODE"] == .text("INTERLACE_PIXEL"))
        #expect(attrs["color_space"] == .text("lin_rec2020_scene"))
        #expect(attrs["color_space_name"] == .text("Linear Rec.2020"))
        #expect(attrs["primaries"] == .numbers([0.708, 0.292, 0.170, 0.797, 0.131, 0.046]))
        #expect(attrs["white_point"] == .numbers([0.3127, 0.3290]))
        #expect(attrs["luminance_weights"] == .numbers([0.2627, 0.6780, 0.0593]))
        #expect(attrs["channel_names"] == .text("R,G,B"))
        #expect(attrs["exposure_factor"] == .number(0.8408964152537145))
        #expect(attrs["camera_to_output"] == .numbers(image.provenance.cameraToOutput))

        let dng = try HDF5File.readAttributes(path, object: "/dng")
        #expect(dng["imageNumber"] == .integer(3_000_000_000))
        #expect(dng["noiseProfile"] == .numbers([2.5e-5, 1.25e-7]))
        #expect(dng["model"] == .text("Model ✓ 1"))
        let mask = try HDF5File.readAttributes(path, object: "/clip_mask")
        #expect(mask["description"] == .text("bit c set: camera channel c was at or above its white level (value is a lower bound)"))
    }

    @Test("camera-native images have no primaries; no clip mask means no /clip_mask")
    func cameraNative() throws {
        let dir = TestData.temporaryDirectory("h5-native")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image(encoding: .cameraNative, exposure: .none, clipMask: false, provenance: .synthetic("s"))
        let path = dir.appendingPathComponent("n.h5").path
        try HDF5File.write(image, to: path)
        let attrs = try HDF5File.readAttributes(path, object: "/image")
        #expect(attrs["primaries"] == nil && attrs["white_point"] == nil && attrs["luminance_weights"] == nil)
        #expect(attrs["white_xy"] == .numbers([]))
        #expect(throws: ExchangeError.self) { try HDF5File.readAttributes(path, object: "/clip_mask") }
        let back = try HDF5File.readSceneLinear(path)
        #expect(back.clipMask == nil)
        #expect(back.encoding == .cameraNative)
        #expect(back.exposure == .none)
        #expect(back.provenance == image.provenance)
        #expect(Fixture.matchesHalf(back.pixels.samples.map { Float16($0) }, image.pixels.samples))
    }
}
