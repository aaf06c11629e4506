import Foundation
import ImageCore
import EXRExchange
import Testing
import TestSupport

@Suite("EXR read by other programs")
struct EXRExternalReaderTests {
    @Test("exrheader (the C++ library) shows Rec.2020 chromaticities, colorInteropID and the provenance")
    func exrheader() throws {
        let tool = try TestData.tool("exrheader")
        let dir = TestData.temporaryDirectory("exrheader")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("h.exr").path
        try EXRFile.write(Fixture.image(), to: path, options: EXROptions(compression: .zip, includeClipMask: true))
        let result = try TestData.run(tool, [path])
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout
        #expect(out.contains("red   (0.708 0.292)"), "\(out)")
        #expect(out.contains("green (0.17 0.797)"))
        #expect(out.contains("blue  (0.131 0.046)"))
        #expect(out.contains("white (0.3127 0.329)"))
        #expect(out.contains("colorInteropID (type string): \"lin_rec2020_scene\""))
        #expect(out.contains("compression (type compression): zip, multi-scanline blocks"))
        #expect(out.contains("dataWindow (type box2i): (0 0) - (60 36)"))
        #expect(out.contains("displayWindow (type box2i): (0 0) - (60 36)"))
        #expect(out.contains("R, 16-bit floating-point, sampling 1 1"))
        #expect(out.contains("mask_clipped, 16-bit floating-point, sampling 1 1"))
        #expect(out.contains("sceneLinear:sourceFile (type string): \"IMG_0042.dng\""))
        #expect(out.contains("capDate (type string): \"2024:05:17 14:03:22\""))
    }
}
