import Foundation
import Testing
@testable import DNGContainer
import ImageCore
@testable import Linearize
import RawDecode
import TestSupport

/// Stage 2 against the DNG chapter 5 formulas, computed here directly in Double.
@Suite struct LinearizationTests {
    /// An ImageIFD with the given Stage 2 tags (other fields irrelevant to Stage 2).
    static func ifd(width: Int, height: Int, planes: Int, table: [UInt16]?, repeatDim: [Int], black: [Double],
                    deltaH: [Double]? = nil, deltaV: [Double]? = nil, white: [Double], area: PixelRect? = nil) -> ImageIFD {
        SampleTypeTests.ifd(width: width, height: height, planes: planes, bits: 16, sampleFormat: 1, table: table,
                            repeatDim: repeatDim, black: black, deltaH: deltaH, deltaV: deltaV, white: white, area: area)
    }

    static func stored(_ ifd: ImageIFD, seed: UInt64, max: UInt16 = 65535) -> StoredImage {
        var rng = SeededGenerator(seed: seed)
        let n = ifd.width * ifd.height * ifd.samplesPerPixel
        return StoredImage(ifd: ifd, samples: ImageBuffer(width: ifd.width, height: ifd.height, channels: ifd.samplesPerPixel,
                                                           samples: (0..<n).map { _ in UInt16.random(in: 0...max, using: &rng) }))
    }

    /// The general path: a 2×2 black pattern per plane, DeltaH and DeltaV, a short table
    /// (values beyond it take its last entry), an ActiveArea with an offset.
    @Test func blackPatternAndDeltasFollowChapter5() throws {
        let (w, h, planes) = (23, 17, 3)
        let area = PixelRect(top: 2, left: 3, bottom: 15, right: 21)
        let table: [UInt16] = (0..<1000).map { UInt16($0 * 60) }
        var rng = SeededGenerator(seed: 5)
        let black = (0..<(2 * 2 * planes)).map { _ in Double.random(in: 100...900, using: &rng).rounded() / 2 }
        let dH = (0..<area.width).map { _ in Double.random(in: -20...20, using: &rng) }
        let dV = (0..<area.height).map { _ in Double.random(in: -10...30, using: &rng) }
        let white = [50000.0, 52000, 54000]
        let ifd = Self.ifd(width: w, height: h, planes: planes, table: table, repeatDim: [2, 2], black: black,
                           deltaH: dH, deltaV: dV, white: white, area: area)
        let stored = Self.stored(ifd, seed: 9, max: 1100) // around the table's end and below black
        let linear = try Linearizer.linearize(stored, path: "t")
        #expect(linear.width == area.width && linear.height == area.height)
        for p in 0..<planes {
            var maxBlack = -Double.infinity
            for i in stride(from: p, to: black.count, by: planes) { maxBlack = max(maxBlack, black[i]) }
            maxBlack += dH.max()! + dV.max()!
            #expect(abs(linear.mapping.maxBlack[p] - maxBlack) < Tolerance.double)
            for r in 0..<area.height {
                for c in 0..<area.width {
                    let v = Int(stored.samples[r + area.top, c + area.left, p])
                    let lin = Double(v < table.count ? table[v] : table[table.count - 1])
                    let b = black[(r % 2) * 2 * planes + (c % 2) * planes + p] + dH[c] + dV[r]
                    let expected = min((lin - b) / (white[p] - maxBlack), 1)
                    let got = Double(linear.values[r, c, p])
                    #expect(abs(got - expected) <= 2e-6 * max(1, abs(expected)), "plane \(p) at \(r),\(c)")
                    let clipped = linear.clipMask[r * area.width + c] & (1 << UInt8(p)) != 0
                    #expect(clipped == (lin >= white[p]))
                }
            }
        }
        #expect(linear.values.samples.contains { $0 < 0 }, "negative values are kept")
        #expect(linear.values.samples.max() == 1, "values above white clip to 1")
    }

    /// The uniform-black fast path (one folded table per plane) agrees with the general path.
    @Test func uniformFastPathEqualsGeneralPath() throws {
        let table = TestTables.companding
        let uniform = Self.ifd(width: 40, height: 30, planes: 3, table: table, repeatDim: [1, 1], black: [800, 900, 1000],
                               white: [64800, 64800, 60000])
        // The same mapping through the general path: a 1×1 pattern plus all-zero deltas.
        let general = Self.ifd(width: 40, height: 30, planes: 3, table: table, repeatDim: [1, 1], black: [800, 900, 1000],
                               deltaH: Array(repeating: 0, count: 40), deltaV: Array(repeating: 0, count: 30),
                               white: [64800, 64800, 60000])
        let stored = Self.stored(uniform, seed: 4)
        let a = try LinearizationPlan(ifd: uniform, path: "t")
        let b = try LinearizationPlan(ifd: general, path: "t")
        #expect(a.isUniformBlack && !b.isUniformBlack)
        let la = a.apply(to: stored)
        let lb = b.apply(to: StoredImage(ifd: general, samples: stored.samples))
        #expect(la.values.samples == lb.values.samples)
        #expect(la.clipMask == lb.clipMask)
    }

    /// `linearize` on rectangles (what the streaming conversion runs on each tile) gives
    /// exactly what `apply` gives on the same pixels, on the general path (black pattern,
    /// per-column and per-row deltas, ActiveArea offset) and on the uniform fast path.
    @Test func rectanglesEqualWholeImage() throws {
        let (w, h, planes) = (23, 17, 3)
        let area = PixelRect(top: 2, left: 3, bottom: 15, right: 21)
        var rng = SeededGenerator(seed: 11)
        let black = (0..<(2 * 2 * planes)).map { _ in Double.random(in: 100...900, using: &rng).rounded() }
        let dH = (0..<area.width).map { _ in Double.random(in: -20...20, using: &rng) }
        let dV = (0..<area.height).map { _ in Double.random(in: -10...30, using: &rng) }
        let general = Self.ifd(width: w, height: h, planes: planes, table: TestTables.companding, repeatDim: [2, 2],
                               black: black, deltaH: dH, deltaV: dV, white: [60000, 62000, 64000], area: area)
        let uniform = Self.ifd(width: w, height: h, planes: planes, table: TestTables.companding, repeatDim: [1, 1],
                               black: [800, 900, 1000], white: [60000, 62000, 64000], area: area)
        for ifd in [general, uniform] {
            let plan = try LinearizationPlan(ifd: ifd, path: "t")
            let stored = Self.stored(ifd, seed: 12)
            let whole = plan.apply(to: stored)
            // Rectangles with odd origins, so that the pattern phase and the deltas are
            // taken from the rectangle's position.
            for (rows, columns) in [(0..<13, 0..<18), (3..<8, 5..<18), (1..<2, 7..<8), (9..<13, 0..<4)] {
                var values = [Float](repeating: .nan, count: rows.count * columns.count * planes)
                var mask = [UInt8](repeating: 0xFF, count: rows.count * columns.count)
                let rowStride = w * planes
                guard case .uint16(let buffer) = stored.samples else { Issue.record("not 16-bit"); return }
                buffer.samples.withUnsafeBufferPointer { src in
                    let first = src.baseAddress! + (rows.lowerBound + area.top) * rowStride + (columns.lowerBound + area.left) * planes
                    values.withUnsafeMutableBufferPointer { v in
                        mask.withUnsafeMutableBufferPointer { m in
                            plan.linearize(first, rowStride: rowStride, rows: rows, columns: columns,
                                           into: v.baseAddress!, mask: m.baseAddress!)
                        }
                    }
                }
                for (i, r) in rows.enumerated() {
                    for (j, c) in columns.enumerated() {
                        for p in 0..<planes {
                            let got = values[(i * columns.count + j) * planes + p]
                            #expect(got.bitPattern == whole.values[r, c, p].bitPattern, "\(rows) \(columns): \(r),\(c),\(p)")
                        }
                        #expect(mask[i * columns.count + j] == whole.clipMask[r * area.width + c])
                    }
                }
            }
        }
    }

    /// Every 16-bit stored value through the folded table equals the formula (exhaustive).
    @Test func everyStoredValueOfOnePlane() throws {
        let ifd = Self.ifd(width: 256, height: 256, planes: 1, table: nil, repeatDim: [1, 1], black: [4000], white: [64800])
        let samples = (0..<65536).map { UInt16($0) }
        let stored = StoredImage(ifd: ifd, samples: ImageBuffer(width: 256, height: 256, channels: 1, samples: samples))
        let linear = try Linearizer.linearize(stored, path: "t")
        for v in 0..<65536 {
            let expected = min((Double(v) - 4000) / 60800, 1)
            #expect(abs(Double(linear.values.samples[v]) - expected) <= Tolerance.float * max(1, abs(expected)))
            #expect((linear.clipMask[v] != 0) == (v >= 64800))
        }
    }

    @Test(arguments: [
        ("BlackLevel has 2 values", [2, 2], [1.0, 2.0], nil as [Double]?, [65535.0]),
        ("BlackLevelDeltaH has 3 values", [1, 1], [0.0], [1.0, 2, 3], [65535.0]),
        ("WhiteLevel 100 of plane 0 is not above", [1, 1], [200.0], nil, [100.0]),
        ("WhiteLevel has 2 values", [1, 1], [0.0], nil, [1.0, 2.0]),
        ("BlackLevelRepeatDim 0×1", [0, 1], [0.0], nil, [65535.0]),
    ])
    func inconsistentTagsAreSpecificErrors(message: String, repeatDim: [Int], black: [Double], deltaH: [Double]?, white: [Double]) {
        let ifd = Self.ifd(width: 8, height: 8, planes: 1, table: nil, repeatDim: repeatDim, black: black, deltaH: deltaH, white: white)
        do {
            _ = try LinearizationPlan(ifd: ifd, path: "bad.dng")
            Issue.record("expected an error containing \(message)")
        } catch {
            #expect(error.description.contains(message), "\(error)")
            #expect(error.description.hasPrefix("bad.dng: invalid linearization tags in IFD0"))
            #expect(error.category == .corruptData)
        }
    }

    @Test func activeAreaOutsideTheImageIsAnError() {
        let ifd = Self.ifd(width: 8, height: 8, planes: 1, table: nil, repeatDim: [1, 1], black: [0], white: [65535],
                           area: PixelRect(top: 0, left: 0, bottom: 9, right: 8))
        #expect(throws: LinearizeError.self) { try LinearizationPlan(ifd: ifd, path: "x") }
    }
}

enum TestTables {
    /// A monotonic 4096-entry table reaching 65535, with flat stretches.
    static let companding: [UInt16] = (0..<4096).map { UInt16(min(65535, Int(pow(Double($0) / 4095, 2.2) * 70000))) }
}
