import DNGWriter
import Foundation
import Testing
@testable import Engine
import SceneLinearKit
import TestSupport

/// A TrimBounds in OpcodeList3 crops Stage 3, and the semantic masks follow it: the trimmed
/// image and its masks are, pixel for pixel, the untrimmed ones shifted by the trim's origin.
@Suite struct TrimBoundsMaskTests {
    /// OpcodeList3 holding one TrimBounds (ID 6) to `top, left, bottom, right`.
    static func trimBounds(_ r: [UInt32]) -> [UInt8] {
        func u32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        return u32(1) + u32(6) + u32(0x0103_0000) + u32(0) + u32(16) + r.flatMap(u32)
    }

    @Test func masksFollowTheTrim() throws {
        let dir = TestData.temporaryDirectory("trim-masks")
        defer { try? FileManager.default.removeItem(at: dir) }
        var dng = MaskFixtures.linearRaw()
        var options = DevelopOptions()
        options.crop = .none
        options.applyOrientation = false
        let plain = dir.appendingPathComponent("plain.dng").path
        try DNGWriter.write(dng, to: plain)
        dng.opcodeLists[3] = Self.trimBounds([2, 4, 50, 80])
        let trimmed = dir.appendingPathComponent("trimmed.dng").path
        try DNGWriter.write(dng, to: trimmed)
        let a = try Pipeline.develop(path: plain, options: options).image
        let b = try Pipeline.develop(path: trimmed, options: options).image
        #expect(b.width == 76 && b.height == 48 && a.width == 88 && a.height == 60)
        #expect(b.provenance.processingValue("trimBounds3") == .integers([2, 4, 50, 80]))
        try #require(a.masks.count == b.masks.count && !a.masks.isEmpty)
        for y in 0..<b.height {
            for x in 0..<b.width {
                let i = y * b.width + x, j = (y + 2) * a.width + x + 4
                for c in 0..<3 { #expect(b.pixels.samples[3 * i + c] == a.pixels.samples[3 * j + c]) }
                for (m, n) in zip(b.masks, a.masks) {
                    #expect(m.values.samples[i] == n.values.samples[j], "\(m.name) at (\(x), \(y))")
                }
            }
        }
    }
}
