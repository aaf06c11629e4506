import Foundation
import ImageCore
import Opcodes
import Testing
import TestSupport

/// Rules that concern the list as a whole: order, TrimBounds, the warp skip rule, and
/// buffers that are only part of the stage image.
@Suite struct ListBehaviourTests {
    /// TrimBounds is reported, and the opcodes after it see the trimmed image: GainMap's
    /// relative positions refer to it and pixels outside it are left alone.
    @Test func trimBoundsChangesTheBoundsOfLaterOpcodes() throws {
        let trim = PixelRect(top: 4, left: 8, bottom: 20, right: 24)
        let map = GainMap(area: OpcodeArea(top: 0, left: 0, bottom: 0, right: 0), pointsV: 2, pointsH: 2, spacingV: 1, spacingH: 1,
                          originV: 0, originH: 0, mapPlanes: 1, gains: [1, 2, 3, 4])
        let original = randomImage(width: 32, height: 24, channels: 1, seed: 71)
        var image = original
        let report = try applyList([.trimBounds(trim), .gainMap(map)], to: &image)
        #expect(report.trimBounds == trim)
        #expect(report.applied.map(\.index) == [0, 1])
        #expect(report.applied[1].samples == trim.width * trim.height)
        for r in 0..<24 {
            for c in 0..<32 {
                if trim.contains(PixelRect(top: r, left: c, bottom: r + 1, right: c + 1)) {
                    let expected = min(Double(original[r, c, 0]) * referenceGain(map, row: r, column: c, mapPlane: 0, bounds: trim), 1)
                    #expect(abs(Double(image[r, c, 0]) - expected) < Tolerance.float, "\(r),\(c)")
                } else {
                    #expect(image[r, c, 0] == original[r, c, 0], "outside the trim \(r),\(c)")
                }
            }
        }
        // Trimming to a rectangle outside the image is refused (optional: skipped).
        let outside = PixelRect(top: 0, left: 0, bottom: 30, right: 10)
        let error = try #require(throws: OpcodeError.self) { try applyList([.trimBounds(outside)], to: &image) }
        #expect(error.kind == .notApplicable && error.opcodeID == 6)
        let skipped = try applyList([.trimBounds(outside)], flags: 1, to: &image)
        #expect(skipped.trimBounds == nil && skipped.skipped.count == 1)
    }

    /// An optional WarpRectilinear2 immediately followed by WarpRectilinear or WarpFisheye
    /// replaces it; a required one, or one not immediately before, does not.
    @Test func warpRectilinear2SkipRule() throws {
        let all = Samples.every()
        let (wr, fisheye, wr2, gain) = (all[0], all[1], all[13], all[8])
        var image = ImageBuffer<Float>(width: 8, height: 8, channels: 3, repeating: 0.5)

        var b = OpcodeListBuilder()
        b.add(wr2, flags: 1); b.add(wr); b.add(gain); b.add(fisheye); b.add(wr2, flags: 1); b.add(fisheye)
        var report = try OpcodeApplier.apply(try OpcodeList.parse(b.bytes, list: .list3), to: &image,
                                             context: OpcodeContext(wholeImage: image))
        #expect(report.skipped.map(\.reason) == [.geometric, .replacedByWarpRectilinear2, .geometric, .geometric,
                                                  .replacedByWarpRectilinear2])
        #expect(report.skipped.map(\.index) == [0, 1, 3, 4, 5])
        #expect(report.pendingWarps == [0, 3, 4])
        #expect(report.applied.map(\.index) == [2])

        var required = OpcodeListBuilder()
        required.add(wr2); required.add(wr)
        report = try OpcodeApplier.apply(try OpcodeList.parse(required.bytes, list: .list3), to: &image,
                                         context: OpcodeContext(wholeImage: image))
        #expect(report.skipped.map(\.reason) == [.geometric, .geometric])
    }

    /// A buffer holding only part of the stage image, placed with its origin, gets exactly
    /// the values the whole image gets there.
    @Test func partialBufferMatchesWholeImage() throws {
        let (width, height) = (40, 30)
        var rng = SeededGenerator(seed: 81)
        let ops: [Opcode] = [
            .gainMap(GainMap(area: OpcodeArea(top: 1, left: 0, bottom: 30, right: 40, plane: 0, planes: 3, rowPitch: 1, colPitch: 2),
                             pointsV: 4, pointsH: 5, spacingV: 0.3, spacingH: 0.25, originV: 0.05, originH: 0, mapPlanes: 3,
                             gains: (0..<60).map { _ in Float.random(in: 0.7...1.4, using: &rng) })),
            .fixVignetteRadial(FixVignetteRadial(coefficients: [0.2, 0.05, 0, 0, 0], centerX: 0.45, centerY: 0.55)),
            .deltaPerRow(AreaValues(area: OpcodeArea(top: 3, left: 5, bottom: 28, right: 33, plane: 1, planes: 1, rowPitch: 2, colPitch: 1),
                                    values: (0..<13).map { _ in Float.random(in: -900...900, using: &rng) })),
            .scalePerColumn(AreaValues(area: OpcodeArea(top: 0, left: 3, bottom: 30, right: 37, plane: 0, planes: 2, rowPitch: 1, colPitch: 3),
                                       values: (0..<12).map { _ in Float.random(in: 0.9...1.1, using: &rng) })),
        ]
        let whole = randomImage(width: width, height: height, channels: 3, seed: 82)
        var expected = whole
        try applyList(ops, to: &expected, context: OpcodeContext(imageBounds: PixelRect(width: width, height: height), clipping: .keepRange))
        let crop = PixelRect(top: 7, left: 11, bottom: 26, right: 34)
        var part = ImageBuffer<Float>(width: crop.width, height: crop.height, channels: 3, repeating: 0)
        for r in 0..<crop.height { for c in 0..<crop.width { for p in 0..<3 { part[r, c, p] = whole[r + crop.top, c + crop.left, p] } } }
        try applyList(ops, to: &part, context: OpcodeContext(imageBounds: PixelRect(width: width, height: height),
                                                             originRow: crop.top, originColumn: crop.left, clipping: .keepRange))
        for r in 0..<crop.height {
            for c in 0..<crop.width {
                for p in 0..<3 { #expect(part[r, c, p] == expected[r + crop.top, c + crop.left, p], "\(r),\(c),\(p)") }
            }
        }
    }

    /// An area entirely outside the image changes nothing and says so.
    @Test func areaOutsideTheImage() throws {
        let op = Opcode.scalePerRow(AreaValues(area: OpcodeArea(top: 100, left: 0, bottom: 101, right: 4), values: [3]))
        var image = ImageBuffer<Float>(width: 4, height: 4, channels: 1, repeating: 0.5)
        let report = try applyList([op], to: &image)
        #expect(image.samples.allSatisfy { $0 == 0.5 })
        #expect(report.applied == [.init(index: 0, id: 12, samples: 0, outOfRange: 0)])
        #expect(report.warnings.count == 1 && report.warnings[0].contains("do not overlap"))
    }

    /// Opcodes run in list order: a scale then a delta is not a delta then a scale.
    @Test func listOrderMatters() throws {
        let area = OpcodeArea(top: 0, left: 0, bottom: 1, right: 1)
        let scale = Opcode.scalePerRow(AreaValues(area: area, values: [2]))
        let delta = Opcode.deltaPerRow(AreaValues(area: area, values: [10]))
        var a = ImageBuffer<Float>(width: 1, height: 1, channels: 1, samples: [100])
        var b = a
        try applyList([scale, delta], list: .list1, to: &a)
        try applyList([delta, scale], list: .list1, to: &b)
        #expect(a.samples == [210] && b.samples == [220])
    }
}
