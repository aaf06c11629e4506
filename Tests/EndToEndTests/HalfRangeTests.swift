import Foundation
import Testing
import ImageCore
import EXRExchange
import HDF5Exchange
import TestSupport

/// No output holds infinity: values beyond half precision's ±65504 (here, a 20 µs exposure
/// normalised to ×162,000) make `convert` write 32-bit float channels, single file and batch,
/// with the same values as asking for float outright.
@Suite struct HalfRangeTests {
    @Test func valuesBeyondHalfAreWrittenAsFloat() throws {
        let dir = TestData.temporaryDirectory("half-range")
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = try CLI.run(["simulate", "--scene", "sunset", "--size", "128x96", "--exposure-time", "0.00002", "--seed", "2",
                                "-o", dir.path, "-q"])
        try #require(made.status == 0, "\(made.stderr)")
        let dng = dir.appendingPathComponent("sunset.dng").path
        let exr = dir.appendingPathComponent("auto.exr").path, asked = dir.appendingPathComponent("asked.exr").path
        let r = try CLI.run(["convert", dng, "-o", exr, "--exposure", "normalized"])
        #expect(r.status == 0 && r.stderr.contains("beyond the half-float range"), "\(r.stderr)")
        try #require(try CLI.run(["convert", dng, "-o", asked, "--exposure", "normalized", "--exr-type", "float", "-q"]).status == 0)
        let auto = try EXRFile.read(exr), reference = try EXRFile.read(asked)
        #expect(auto.halfChannels.isEmpty, "every channel is FLOAT")
        let red = try #require(auto.channels["R"])
        #expect(red.allSatisfy(\.isFinite) && red.max()! > 65504, "\(red.max() ?? 0)")
        #expect(auto.channels == reference.channels)

        // HDF5: float32 /image; a batch widens the same way.
        let h5 = dir.appendingPathComponent("auto.h5").path
        try #require(try CLI.run(["convert", dng, "-o", h5, "--exposure", "normalized", "-q"]).status == 0)
        // (Finite values above 65504: float32 samples.)
        let stored = try HDF5File.readSceneLinear(h5).pixels.samples
        #expect(stored == (try EXRFile.readSceneLinear(asked).pixels.samples) && stored.max()! > 65504)
        let inputs = dir.appendingPathComponent("in"), outputs = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: inputs, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: dng, toPath: inputs.appendingPathComponent("a.dng").path)
        let batch = try CLI.run(["convert", inputs.path, "-o", outputs.path + "/", "--exposure", "normalized", "-q"])
        #expect(batch.status == 0, "\(batch.stderr)")
        #expect(try EXRFile.read(outputs.appendingPathComponent("a.exr").path).channels == reference.channels)

        // Without the exposure scaling the same capture stays half.
        let plain = dir.appendingPathComponent("plain.exr").path
        try #require(try CLI.run(["convert", dng, "-o", plain, "-q"]).status == 0)
        #expect(try EXRFile.read(plain).halfChannels["R"] != nil)
    }
}
