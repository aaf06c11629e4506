import Foundation
import Testing
@testable import DNGContainer
import ImageCore
@testable import Linearize
import RawDecode
import TestSupport

/// Stage 2 for 32-bit integer and floating-point stored samples, against the DNG chapter 5
/// formulas computed here in Double: the LinearizationTable applies to integers only (past
/// its end: the last entry); floats are already linear; black, white, ActiveArea and the
/// clip rule are the same for every type.
@Suite struct SampleTypeTests {
    static func ifd(width: Int, height: Int, planes: Int, bits: Int, sampleFormat: Int, table: [UInt16]?, repeatDim: [Int],
                    black: [Double], deltaH: [Double]? = nil, deltaV: [Double]? = nil, white: [Double],
                    area: PixelRect? = nil) -> ImageIFD {
        ImageIFD(path: "IFD0", newSubFileType: 0, role: .mainImage, width: width, height: height, samplesPerPixel: planes,
                 bitsPerSample: Array(repeating: bits, count: planes), sampleFormat: sampleFormat, compression: 8, photometric: 34892,
                 planarConfiguration: 1, predictor: 1, fillOrder: 1, layout: nil, linearizationTable: table,
                 blackLevelRepeatDim: repeatDim, blackLevel: black, blackLevelDeltaH: deltaH, blackLevelDeltaV: deltaV,
                 whiteLevel: white, activeArea: area ?? PixelRect(width: width, height: height), maskedAreas: [],
                 linearResponseLimit: nil, defaultCropOrigin: nil, defaultCropSize: nil, defaultScale: nil,
                 defaultUserCrop: nil, cfa: nil, noiseProfile: nil, opcodeListSizes: [:], semanticName: nil,
                 semanticInstanceID: nil, maskSubArea: nil, profileGainTableMap: nil)
    }

    /// Checks every sample of `linear` against chapter 5 with `lin(v)` as step 1.
    static func expectChapter5(_ linear: LinearImage, stored: StoredImage, ifd: ImageIFD, lin: (Double) -> Double,
                               tolerance: Double) {
        let area = ifd.activeArea, planes = ifd.samplesPerPixel
        let (rr, rc) = (ifd.blackLevelRepeatDim[0], ifd.blackLevelRepeatDim[1])
        let dH = ifd.blackLevelDeltaH ?? Array(repeating: 0, count: area.width)
        let dV = ifd.blackLevelDeltaV ?? Array(repeating: 0, count: area.height)
        var failures = 0
        for p in 0..<planes {
            var maxBlack = -Double.infinity
            for i in stride(from: p, to: ifd.blackLevel.count, by: planes) { maxBlack = max(maxBlack, ifd.blackLevel[i]) }
            maxBlack += dH.max()! + dV.max()!
            if abs(linear.mapping.maxBlack[p] - maxBlack) > 1e-9 { failures += 1 }
            for r in 0..<area.height {
                for c in 0..<area.width {
                    let v = stored.samples[r + area.top, c + area.left, p]
                    let l = lin(v)
                    let b = ifd.blackLevel[(r % rr) * rc * planes + (c % rc) * planes + p] + dH[c] + dV[r]
                    let expected = min((l - b) / (ifd.whiteLevel[p] - maxBlack), 1)
                    let got = Double(linear.values[r, c, p])
                    let clipped = linear.clipMask[r * area.width + c] & (1 << UInt8(p)) != 0
                    if abs(got - expected) > tolerance * max(1, abs(expected)) || clipped != (l >= ifd.whiteLevel[p]) {
                        failures += 1
                    }
                }
            }
        }
        #expect(failures == 0)
    }

    @Test func floatSamplesIgnoreTheTable() throws {
        let (w, h, planes) = (23, 17, 3)
        let area = PixelRect(top: 1, left: 2, bottom: 16, right: 21)
        var rng = SeededGenerator(seed: 11)
        let black = (0..<(2 * 2 * planes)).map { _ in Double.random(in: 0.001...0.02, using: &rng) }
        let dH = (0..<area.width).map { _ in Double.random(in: -0.002...0.002, using: &rng) }
        let dV = (0..<area.height).map { _ in Double.random(in: 0...0.003, using: &rng) }
        // A table that would change every value, were it applied.
        let ifd = Self.ifd(width: w, height: h, planes: planes, bits: 32, sampleFormat: 3, table: [0, 100, 200], repeatDim: [2, 2],
                           black: black, deltaH: dH, deltaV: dV, white: [1, 1, 0.9], area: area)
        let samples = (0..<(w * h * planes)).map { _ in Float.random(in: -0.05...1.3, using: &rng) }
        let stored = StoredImage(ifd: ifd, samples: .float32(ImageBuffer(width: w, height: h, channels: planes, samples: samples)))
        let linear = try Linearizer.linearize(stored, path: "t")
        #expect(linear.width == area.width && linear.height == area.height)
        #expect(linear.mapping.tableEntries == 0, "the table does not apply to floats")
        Self.expectChapter5(linear, stored: stored, ifd: ifd, lin: { $0 }, tolerance: Tolerance.float)
        #expect(linear.values.samples.contains { $0 < 0 } && linear.values.samples.max() == 1)
        #expect(linear.clipMask.contains { $0 != 0 })
    }

    /// Half floats (exactly representable in Float) and the special values: +∞ clips to 1
    /// and is flagged; −∞ and values below black stay negative; NaN stays NaN, unflagged.
    @Test func halfFloatsAndSpecialValues() throws {
        let values: [Float] = [0, 0.5, 1, 1.5, -0.25, .infinity, -.infinity, .nan,
                               Float(Float16(bitPattern: 0x0001)), Float(Float16(bitPattern: 0x7BFF))]
        let ifd = Self.ifd(width: values.count, height: 1, planes: 1, bits: 16, sampleFormat: 3, table: nil, repeatDim: [1, 1],
                           black: [0.25], white: [1])
        let stored = StoredImage(ifd: ifd, samples: .float32(ImageBuffer(width: values.count, height: 1, channels: 1, samples: values)))
        let linear = try Linearizer.linearize(stored, path: "t")
        let v = linear.values.samples
        let scale: Float = 1 / 0.75
        #expect(v[0] == -0.25 * scale && v[1] == 0.25 * scale && v[2] == 1 && v[3] == 1 && v[4] == -0.5 * scale)
        #expect(v[5] == 1 && v[6] == -.infinity && v[7].isNaN)
        #expect(abs(v[8] - (0x1p-24 - 0.25) * scale) < 1e-7 && v[9] == 1)
        #expect(linear.clipMask == [0, 0, 1, 1, 0, 1, 0, 0, 0, 1])
    }

    /// Floating-point samples by rectangle (`LinearizationPlan.linearize`, what a block
    /// developed on its own goes through) give the bits of `apply` over the whole image on
    /// the same pixels — values, clip mask, NaN, ±∞, subnormals, values below black and above
    /// white — with a black pattern and deltas taken from the rectangle's position, and with
    /// uniform black; without a mask as with one.
    @Test func floatRectanglesEqualWholeImage() throws {
        let (w, h, planes) = (23, 17, 3)
        let area = PixelRect(top: 2, left: 3, bottom: 15, right: 21)
        var rng = SeededGenerator(seed: 13)
        let black = (0..<(2 * 3 * planes)).map { _ in Double.random(in: 0.001...0.02, using: &rng) }
        let dH = (0..<area.width).map { _ in Double.random(in: -0.002...0.002, using: &rng) }
        let dV = (0..<area.height).map { _ in Double.random(in: 0...0.003, using: &rng) }
        let general = Self.ifd(width: w, height: h, planes: planes, bits: 32, sampleFormat: 3, table: nil, repeatDim: [2, 3],
                               black: black, deltaH: dH, deltaV: dV, white: [1, 0.95, 0.9], area: area)
        let uniform = Self.ifd(width: w, height: h, planes: planes, bits: 16, sampleFormat: 3, table: [0, 100], repeatDim: [1, 1],
                               black: [0.01, 0.02, 0.015], white: [1, 1, 32768], area: area)
        let special: [Float] = [.nan, .infinity, -.infinity, Float(Float16(bitPattern: 0x0001)), -0.0, 1, 0.95, 0.9, 40000,
                                .greatestFiniteMagnitude, -.greatestFiniteMagnitude]
        for ifd in [general, uniform] {
            let plan = try LinearizationPlan(ifd: ifd, path: "t")
            var samples = (0..<(w * h * planes)).map { _ in Float.random(in: -0.05...1.3, using: &rng) }
            for (i, v) in special.enumerated() { samples[(area.top + 1 + i) * w * planes + (area.left + i) * planes + i % planes] = v }
            let stored = StoredImage(ifd: ifd, samples: .float32(ImageBuffer(width: w, height: h, channels: planes, samples: samples)))
            let whole = plan.apply(to: stored)
            #expect(whole.values.samples.contains { $0.isNaN } && whole.values.samples.contains { $0 == -.infinity })
            let rowStride = w * planes
            for (rows, columns) in [(0..<13, 0..<18), (3..<8, 5..<18), (1..<2, 7..<8), (9..<13, 0..<4)] {
                for withMask in [true, false] {
                    var values = [Float](repeating: 0x1p100, count: rows.count * columns.count * planes)
                    var mask = [UInt8](repeating: 0xFF, count: rows.count * columns.count)
                    samples.withUnsafeBufferPointer { src in
                        let first = src.baseAddress! + (rows.lowerBound + area.top) * rowStride + (columns.lowerBound + area.left) * planes
                        values.withUnsafeMutableBufferPointer { v in
                            mask.withUnsafeMutableBufferPointer { m in
                                plan.linearize(BlockSamples.float32(first), rowStride: rowStride, rows: rows, columns: columns,
                                               into: v.baseAddress!, mask: withMask ? m.baseAddress! : nil)
                            }
                        }
                    }
                    var differing = 0
                    for (i, r) in rows.enumerated() {
                        for (j, c) in columns.enumerated() {
                            for p in 0..<planes where values[(i * columns.count + j) * planes + p].bitPattern != whole.values[r, c, p].bitPattern {
                                differing += 1
                            }
                            if withMask && mask[i * columns.count + j] != whole.clipMask[r * area.width + c] { differing += 1 }
                        }
                    }
                    #expect(differing == 0, "\(rows) \(columns), mask \(withMask)")
                }
            }
        }
    }

    /// 32-bit integers through a LinearizationTable: values past its end take the last
    /// entry (DNG 1.7.1 chapter 5).
    @Test func uint32ThroughATable() throws {
        let (w, h) = (40, 30)
        let table: [UInt16] = (0..<1000).map { UInt16($0 * 65) }
        var rng = SeededGenerator(seed: 12)
        let samples: [UInt32] = (0..<(w * h)).map { i in i % 3 == 0 ? UInt32.random(in: 0...UInt32.max, using: &rng)
                                                                    : UInt32.random(in: 0...1200, using: &rng) }
        let ifd = Self.ifd(width: w, height: h, planes: 1, bits: 32, sampleFormat: 1, table: table, repeatDim: [1, 2],
                           black: [1000, 1300], deltaV: (0..<h).map { Double($0) }, white: [60000])
        let stored = StoredImage(ifd: ifd, samples: .uint32(ImageBuffer(width: w, height: h, channels: 1, samples: samples)))
        let linear = try Linearizer.linearize(stored, path: "t")
        #expect(linear.mapping.tableEntries == 1000)
        Self.expectChapter5(linear, stored: stored, ifd: ifd, lin: { Double($0 < 1000 ? table[Int($0)] : table[999]) }, tolerance: Tolerance.float)
        // 999 × 65 = 64935 ≥ 60000: every value past the table's end is clipped.
        #expect(zip(samples, linear.clipMask).allSatisfy { $0 < 1000 || $1 == 1 })
    }

    /// 32-bit integers without a table use their own value, in Double (Float could not hold
    /// them): the full 32-bit range with the default WhiteLevel 2^32 − 1.
    @Test func uint32WithoutATable() throws {
        let samples: [UInt32] = [0, 1_000_000, 1_000_001, 2_147_483_648, 4_294_967_294, 4_294_967_295, 123_456_789, 3_000_000_000]
        let ifd = Self.ifd(width: 4, height: 2, planes: 1, bits: 32, sampleFormat: 1, table: nil, repeatDim: [1, 1],
                           black: [1_000_000], white: [4_294_967_295])
        let stored = StoredImage(ifd: ifd, samples: .uint32(ImageBuffer(width: 4, height: 2, channels: 1, samples: samples)))
        let linear = try Linearizer.linearize(stored, path: "t")
        Self.expectChapter5(linear, stored: stored, ifd: ifd, lin: { $0 }, tolerance: 1e-7)
        #expect(linear.clipMask == [0, 0, 0, 0, 0, 1, 0, 0])
        #expect(linear.values.samples[1] == 0 && linear.values.samples[5] == 1)
        #expect(Double(linear.values.samples[2]) == Double(Float(1 / 4_293_967_295.0)))
    }
}
