import Foundation
import Testing
import ImageCore
import EXRExchange
import HDF5Exchange
import TestSupport

/// The whole-image writers never store infinity: a value half precision cannot hold is a
/// `HalfRangeError` naming the file, and nothing is left behind; 32-bit float stores it.
@Suite struct HalfRangeWriterTests {
    @Test func writersRefuseValuesBeyondHalf() throws {
        let dir = TestData.temporaryDirectory("half-range-writers")
        defer { try? FileManager.default.removeItem(at: dir) }
        var image = Fixture.image(width: 16, height: 8)
        image.pixels.samples[7] = 1e6
        image.pixels.samples[20] = -.infinity
        let exr = dir.appendingPathComponent("x.exr").path, h5 = dir.appendingPathComponent("x.h5").path
        #expect(throws: HalfRangeError(what: exr, count: 2)) { try EXRFile.write(image, to: exr) }
        #expect(throws: HalfRangeError(what: h5, count: 2)) { try HDF5File.write(image, to: h5) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
        try EXRFile.write(image, to: exr, options: EXROptions(pixelType: .float))
        #expect(try EXRFile.read(exr).channels["G"]?[2] == 1e6)
    }
}
