import Foundation
import ImageCore
import Opcodes
import SceneLinearKit
import Testing

/// A merged bracket's variances and counts are developed through the reference's OpcodeList3
/// as such planes must be (`Stage2Replacement.Matrix.list3`, docs/merge.md): a gain g as g²
/// for variances and not at all for counts, offsets left out of both, geometry kept; a value
/// map refused for them.
@Suite struct ReplacedListTests {
    static let area = OpcodeArea(top: 0, left: 0, bottom: 6, right: 8, plane: 0, planes: 3, rowPitch: 1, colPitch: 1)

    static func entry(_ index: Int, _ opcode: Opcode) -> OpcodeEntry {
        OpcodeEntry(index: index, header: OpcodeHeader(id: opcode.id, version: 0x0103_0000, flags: 0), opcode: opcode)
    }

    static let gain = Opcode.gainMap(GainMap(area: area, pointsV: 2, pointsH: 2, spacingV: 1, spacingH: 1, originV: 0, originH: 0,
                                             mapPlanes: 1, gains: [1.5, 2, 2.5, 3]))
    static let delta = Opcode.deltaPerRow(AreaValues(area: area, values: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]))
    static let scale = Opcode.scalePerColumn(AreaValues(area: area, values: [1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7]))
    static let trim = Opcode.trimBounds(PixelRect(top: 0, left: 0, bottom: 6, right: 8))

    static var list: OpcodeList {
        OpcodeList(list: .list3, entries: [Self.gain, Self.delta, Self.scale, Self.trim].enumerated().map { entry($0.offset, $0.element) })
    }

    @Test func gainsSquaredForVariancesDroppedForCounts() throws {
        #expect(try Stage2Replacement.Matrix.color.list3(Self.list, path: "f.dng") == Self.list)
        let squared = try #require(try Stage2Replacement.Matrix.squared.list3(Self.list, path: "f.dng"))
        #expect(squared.opcodes == [Self.gain, Self.gain, Self.scale, Self.scale, Self.trim])
        #expect(squared.entries.map(\.index) == [0, 1, 2, 3, 4])
        let counts = try #require(try Stage2Replacement.Matrix.identity.list3(Self.list, path: "f.dng"))
        #expect(counts.opcodes == [Self.trim])
        // Applied: the variance list multiplies each variance by the square of the image's gain.
        let ones = ImageBuffer<Float>(width: 8, height: 6, channels: 3, samples: [Float](repeating: 1, count: 144))
        var image = ones, variance = ones
        let withoutOffsets = OpcodeList(list: .list3, entries: [Self.gain, Self.scale].enumerated().map { Self.entry($0.offset, $0.element) })
        _ = try OpcodeApplier.apply(withoutOffsets, to: &image, context: OpcodeContext(wholeImage: image, clipping: .keepRange))
        _ = try OpcodeApplier.apply(squared, to: &variance, context: OpcodeContext(wholeImage: variance, clipping: .keepRange))
        for (g, v) in zip(image.samples, variance.samples) { #expect(abs(v - g * g) <= 1e-5 * g * g, "\(v) against \(g)²") }
    }

    @Test func valueMapRefusedForVariancesAndCounts() throws {
        let map = Opcode.mapPolynomial(MapPolynomial(area: Self.area, coefficients: [0, 1, 0.1]))
        let list = OpcodeList(list: .list3, entries: [Self.entry(0, map)])
        #expect(try Stage2Replacement.Matrix.color.list3(list, path: "f.dng") == list)
        for matrix in [Stage2Replacement.Matrix.squared, .identity] {
            #expect { try matrix.list3(list, path: "f.dng") } throws: { error in
                guard let e = error as? PhotometryError else { return false }
                return e.category == .unsupportedFeature && e.description.contains("f.dng") && e.description.contains("MapPolynomial")
            }
        }
    }
}
