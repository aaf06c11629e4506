import Foundation
import ImageCore
import Opcodes
import Testing
import TestSupport

/// FixVignetteRadial, MapTable, MapPolynomial and the per-row/column opcodes against their
/// formulas computed here in Double.
@Suite struct ValueOpcodeTests {
    /// g = 1 + k0 r² + … + k4 r¹⁰, r normalised to the farthest corner.
    @Test func vignetteFollowsTheRadialPolynomial() throws {
        // 64 × 32 with the optical centre on the centre of pixel (16, 32): relative
        // (32.5 / 64, 16.5 / 32), both exact in binary.
        let k = [0.3, -0.05, 0.02, 0.01, -0.004]
        let op = FixVignetteRadial(coefficients: k, centerX: 32.5 / 64, centerY: 16.5 / 32)
        let original = randomImage(width: 64, height: 32, channels: 3, seed: 21, range: 0.1...0.5)
        var image = original
        try applyList([.fixVignetteRadial(op)], to: &image)
        let farthest2 = 32.5 * 32.5 + 16.5 * 16.5
        func gain(_ r: Int, _ c: Int) -> Double {
            let dx = Double(c) + 0.5 - 32.5, dy = Double(r) + 0.5 - 16.5
            let r2 = (dx * dx + dy * dy) / farthest2
            return 1 + k[0] * r2 + k[1] * pow(r2, 2) + k[2] * pow(r2, 3) + k[3] * pow(r2, 4) + k[4] * pow(r2, 5)
        }
        #expect(gain(16, 32) == 1)
        for p in 0..<3 { #expect(image[16, 32, p] == original[16, 32, p], "no change at the optical centre") }
        // The top-left corner pixel: r² = (32² + 16²) / farthest².
        let r2 = (32.0 * 32 + 16 * 16) / farthest2
        #expect(abs(gain(0, 0) - (1 + 0.3 * r2 - 0.05 * r2 * r2 + 0.02 * pow(r2, 3) + 0.01 * pow(r2, 4) - 0.004 * pow(r2, 5))) < 1e-15)
        for r in 0..<32 {
            for c in 0..<64 {
                for p in 0..<3 {
                    let expected = Double(original[r, c, p]) * gain(r, c)
                    #expect(abs(Double(image[r, c, p]) - expected) <= Tolerance.float * expected, "\(r),\(c),\(p)")
                }
            }
        }
    }

    /// Stage 1: stored values index the table directly; beyond the table, its last entry.
    /// Only the area (rows on the pitch grid, the chosen plane) changes.
    @Test func mapTableStage1() throws {
        var rng = SeededGenerator(seed: 31)
        let table = (0..<600).map { _ in UInt16.random(in: 0...65535, using: &rng) }
        let area = OpcodeArea(top: 2, left: 1, bottom: 11, right: 10, plane: 1, planes: 1, rowPitch: 2, colPitch: 3)
        var original = ImageBuffer<Float>(width: 12, height: 12, channels: 3, repeating: 0)
        for i in original.samples.indices { original.samples[i] = Float(UInt16.random(in: 0...1000, using: &rng)) }
        var image = original
        let report = try applyList([.mapTable(MapTable(area: area, table: table))], list: .list1, to: &image)
        #expect(report.applied[0].samples == 5 * 3)
        for r in 0..<12 {
            for c in 0..<12 {
                for p in 0..<3 {
                    let x = Int(original[r, c, p])
                    let inArea = [2, 4, 6, 8, 10].contains(r) && [1, 4, 7].contains(c) && p == 1
                    let expected = inArea ? Float(table[min(x, 599)]) : Float(x)
                    #expect(image[r, c, p] == expected, "\(r),\(c),\(p)")
                }
            }
        }
    }

    /// Stages 2/3: the index is the 16-bit code round(x · 65535) of x clamped to 0 … 1, the
    /// result entry / 65535.
    @Test func mapTableStage2UsesSixteenBitCodes() throws {
        let table = (0..<65536).map { UInt16(65535 - $0) }   // inversion
        let values: [Float] = [0, 1 / 65535, 0.5, 0.25 + 0.3 / 65535, 1, 1.7, -0.2, 0.999_99]
        var image = ImageBuffer(width: values.count, height: 1, channels: 1, samples: values)
        try applyList([.mapTable(MapTable(area: OpcodeArea(top: 0, left: 0, bottom: 1, right: values.count), table: table))],
                      to: &image, context: OpcodeContext(imageBounds: PixelRect(width: values.count, height: 1), clipping: .keepRange))
        for (i, x) in values.enumerated() {
            let code = Int((Double(min(max(x, 0), 1)) * 65535).rounded())
            #expect(image.samples[i] == Float(65535 - code) / 65535, "x = \(x)")
        }
    }

    /// y = Σ c_k x^k on an area, in stored units at Stage 1 and in linear units later.
    @Test func mapPolynomialExactValues() throws {
        let c = [100.0, 0.5, 0.0078125]   // exact in binary, so both evaluation orders agree exactly
        let op = MapPolynomial(area: OpcodeArea(top: 0, left: 0, bottom: 4, right: 4, plane: 0, planes: 2), coefficients: c)
        var rng = SeededGenerator(seed: 41)
        let original = ImageBuffer(width: 6, height: 6, channels: 2,
                                   samples: (0..<72).map { _ in Float(Int.random(in: 0...1000, using: &rng)) })
        var image = original
        try applyList([.mapPolynomial(op)], list: .list1, to: &image)
        for r in 0..<6 {
            for col in 0..<6 {
                for p in 0..<2 {
                    let x = Double(original[r, col, p])
                    let expected = r < 4 && col < 4 ? Float(c[0] + c[1] * x + c[2] * x * x) : Float(x)
                    #expect(image[r, col, p] == expected, "\(r),\(col),\(p)")
                }
            }
        }
        // Stage 2: x² on linear values.
        var linear = ImageBuffer<Float>(width: 2, height: 1, channels: 1, samples: [0.5, 0.75])
        try applyList([.mapPolynomial(MapPolynomial(area: OpcodeArea(top: 0, left: 0, bottom: 1, right: 2), coefficients: [0, 0, 1]))],
                      to: &linear)
        #expect(linear.samples == [0.25, 0.5625])
    }

    /// Deltas and scales per sampled row and column; value k belongs to the area's k-th
    /// sampled row (column). Stage 1 deltas are stored units.
    @Test func perRowAndColumnOpcodesStage1() throws {
        let area = OpcodeArea(top: 1, left: 2, bottom: 9, right: 11, plane: 0, planes: 1, rowPitch: 3, colPitch: 4)
        // Rows 1, 4, 7; columns 2, 6, 10.
        let original = ImageBuffer(width: 12, height: 10, channels: 1, samples: (0..<120).map { Float($0 * 10) })
        let cases: [(Opcode, (Float, Int, Int) -> Float)] = [
            (.deltaPerRow(AreaValues(area: area, values: [5, -7, 100])), { x, k, _ in x + [5, -7, 100][k] }),
            (.deltaPerColumn(AreaValues(area: area, values: [1, 2, 3])), { x, _, j in x + [1, 2, 3][j] }),
            (.scalePerRow(AreaValues(area: area, values: [2, 0.5, 3])), { x, k, _ in x * [2, 0.5, 3][k] }),
            (.scalePerColumn(AreaValues(area: area, values: [0.25, 4, 1.5])), { x, _, j in x * [0.25, 4, 1.5][j] }),
        ]
        for (op, formula) in cases {
            var image = original
            try applyList([op], list: .list1, to: &image)
            for r in 0..<10 {
                for c in 0..<12 {
                    let k = [1, 4, 7].firstIndex(of: r), j = [2, 6, 10].firstIndex(of: c)
                    let expected: Float
                    if let k, let j { expected = max(formula(original[r, c, 0], k, j), 0) } else { expected = original[r, c, 0] }
                    #expect(image[r, c, 0] == expected, "\(op.name) at \(r),\(c)")
                }
            }
        }
    }

    /// At Stages 2/3 deltas are 16-bit codes for integer sources (as the DNG SDK holds those
    /// stages), linear units for floating-point sources.
    @Test func stage2DeltaUnits() throws {
        let op = Opcode.deltaPerRow(AreaValues(area: OpcodeArea(top: 0, left: 0, bottom: 1, right: 1), values: [655.35]))
        var image = ImageBuffer<Float>(width: 1, height: 1, channels: 1, samples: [0.5])
        try applyList([op], to: &image)
        #expect(abs(image.samples[0] - 0.51) < Float(Tolerance.float))
        var floatSource = ImageBuffer<Float>(width: 1, height: 1, channels: 1, samples: [0.5])
        let op2 = Opcode.deltaPerRow(AreaValues(area: OpcodeArea(top: 0, left: 0, bottom: 1, right: 1), values: [0.25]))
        try applyList([op2], to: &floatSource,
                      context: OpcodeContext(imageBounds: PixelRect(width: 1, height: 1), integerSource: false))
        #expect(floatSource.samples[0] == 0.75)
    }

    /// `.dngClip` clips the whole image to the logical range before the first opcode that
    /// changes values and every written value after; `.keepRange` keeps them, and both
    /// count what is outside.
    @Test func clippingPolicies() throws {
        let values: [Float] = [-0.1, 0.2, 0.6, 1.3]
        let op = Opcode.scalePerRow(AreaValues(area: OpcodeArea(top: 0, left: 0, bottom: 1, right: 2), values: [2]))
        var clipped = ImageBuffer(width: 4, height: 1, channels: 1, samples: values)
        let r1 = try applyList([op], to: &clipped)
        #expect(clipped.samples == [0, 0.4, 0.6, 1])
        #expect(r1.inputOutOfRange == 2 && r1.applied[0].outOfRange == 0)

        var kept = ImageBuffer(width: 4, height: 1, channels: 1, samples: values)
        let r2 = try applyList([op], to: &kept, context: OpcodeContext(imageBounds: PixelRect(width: 4, height: 1), clipping: .keepRange))
        #expect(kept.samples == [-0.2, 0.4, 0.6, 1.3])
        #expect(r2.inputOutOfRange == 0 && r2.applied[0].outOfRange == 1)

        // A gain pushing a value above white: clipped to 1, or kept and counted.
        let gain = Opcode.gainMap(GainMap(area: OpcodeArea(top: 0, left: 0, bottom: 1, right: 4), pointsV: 1, pointsH: 1,
                                          spacingV: 1, spacingH: 1, originV: 0, originH: 0, mapPlanes: 1, gains: [1.5]))
        var a = ImageBuffer<Float>(width: 4, height: 1, channels: 1, samples: [0.25, 0.5, 0.75, 0.875])
        let ra = try applyList([gain], to: &a)
        #expect(a.samples == [0.375, 0.75, 1, 1] && ra.applied[0].outOfRange == 2)
        var b = ImageBuffer<Float>(width: 4, height: 1, channels: 1, samples: [0.25, 0.5, 0.75, 0.875])
        let rb = try applyList([gain], to: &b, context: OpcodeContext(imageBounds: PixelRect(width: 4, height: 1), clipping: .keepRange))
        #expect(b.samples == [0.375, 0.75, 1.125, 1.3125] && rb.applied[0].outOfRange == 2)

        // Stage 1 range is 0 … 65535.
        var raw = ImageBuffer<Float>(width: 2, height: 1, channels: 1, samples: [40000, 100])
        let scale = Opcode.scalePerRow(AreaValues(area: OpcodeArea(top: 0, left: 0, bottom: 1, right: 2), values: [2]))
        try applyList([scale], list: .list1, to: &raw)
        #expect(raw.samples == [65535, 200])
    }

    /// An empty list, or one with only warps, leaves the image (negatives included) alone
    /// even under `.dngClip`.
    @Test func nothingToApplyChangesNothing() throws {
        let values: [Float] = [-0.5, 2]
        var image = ImageBuffer(width: 2, height: 1, channels: 1, samples: values)
        let report = try applyList([Samples.every()[0]], to: &image)
        #expect(image.samples == values)
        #expect(report.applied.isEmpty && report.skipped == [.init(index: 0, id: 1, reason: .geometric)])
        #expect(report.pendingWarps == [0])
    }
}
