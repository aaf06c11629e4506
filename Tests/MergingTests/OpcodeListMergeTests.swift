import CaptureSimulation
import DNGWriter
import Foundation
import Opcodes
import SceneLinearKit
import SimulationCheck
import Testing
import TestSupport

/// The merge takes each frame's OpcodeList2 as the conversion applies it — additive opcodes
/// (DeltaPerRow, MapPolynomial with an offset) included — and each sample's noise from its
/// value before the list (docs/merge.md).
@Suite struct OpcodeListMergeTests {
    static func u32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    static func f64(_ v: Double) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v.bitPattern >> UInt64(56 - 8 * $0)) } }

    /// One opcode (ID, version 1.3.0.0, flags 0) with its parameters.
    static func opcode(_ id: UInt32, _ parameters: [UInt8]) -> [UInt8] {
        u32(id) + u32(0x0103_0000) + u32(0) + u32(UInt32(parameters.count)) + parameters
    }

    /// An area of `rows` × `columns` over `planes` planes from plane 0, pitch 1.
    static func area(rows: Int, columns: Int, planes: Int) -> [UInt8] {
        [0, 0, rows, columns, 0, planes, 1, 1].flatMap { u32(UInt32($0)) }
    }

    /// DeltaPerRow (ID 10): `deltas[y]` added to row y of every plane.
    static func deltaPerRow(_ deltas: [Float], columns: Int, planes: Int) -> [UInt8] {
        opcode(10, area(rows: deltas.count, columns: columns, planes: planes) + u32(UInt32(deltas.count))
               + deltas.flatMap { u32($0.bitPattern) })
    }

    /// MapPolynomial (ID 8) with `coefficients` c0, c1, … over the whole image.
    static func polynomial(_ coefficients: [Double], rows: Int, columns: Int, planes: Int) -> [UInt8] {
        opcode(8, area(rows: rows, columns: columns, planes: planes) + u32(UInt32(coefficients.count - 1))
               + coefficients.flatMap(f64))
    }

    static func list(_ opcodes: [[UInt8]]) -> [UInt8] { u32(UInt32(opcodes.count)) + opcodes.flatMap { $0 } }

    /// A LinearRaw capture of the sky-with-sun scene.
    /// - Parameter stop: the exposure relative to the camera's own (one scale for every stop, as
    ///   in a bracket).
    static func capture(width: Int, height: Int, stop: Double, seed: UInt64, shading: Double? = nil) throws -> LinearRawDNG {
        var camera = CameraModel()
        camera.companding = nil  // stored DN: linear values (stored − black) / (white − black)
        camera.lensShading = shading
        camera.quantumScale = camera.effectiveQuantumScale
        camera.seed = seed
        camera.exposureTime *= pow(2, stop)
        let scene = try RenderedScene(BuiltInScene.skySun.description(width: width, height: height))
        return try Simulator.capture(scene, camera: camera).dng
    }

    /// The frame's rows equal the stage-by-stage Stage 2 (the stored samples linearized, then
    /// the whole list applied at once), and the response g · x + b gives each value back from
    /// its value x before the list: for a GainMap with DeltaPerRow and an offset polynomial
    /// (affine: from ones and zeros), and with a second-degree polynomial (the tangent).
    @Test(arguments: [false, true])
    func frameRowsFollowTheStages(secondDegree: Bool) throws {
        let (w, h) = (96, 64)
        var dng = try Self.capture(width: w, height: h, stop: 0, seed: 5, shading: 0.3)
        let shading = try #require(dng.opcodeLists[2])
        let deltas = (0..<h).map { Float($0 % 5) * 130 - 200 }  // 16-bit code units
        let extra = [Self.deltaPerRow(deltas, columns: w, planes: 3),
                     Self.polynomial(secondDegree ? [0.001, 0.9, 0.3] : [0.004, 1.1], rows: h, columns: w, planes: 3)]
        let count = Int(UInt32(shading[0]) << 24 | UInt32(shading[1]) << 16 | UInt32(shading[2]) << 8 | UInt32(shading[3]))
        dng.opcodeLists[2] = Self.u32(UInt32(count + 2)) + Array(shading.dropFirst(4)) + extra.flatMap { $0 }
        let dir = TestData.temporaryDirectory("frame-rows")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("frame.dng").path
        try DNGWriter.write(dng, to: path)

        let frame = try Pipeline.frameStage2(try DNGFile.open(path: path), options: DevelopOptions())
        #expect(frame.hasResponse)
        // The reference: x = (stored − black) / (white − black), then the list on the whole image.
        let black = dng.blackLevel, white = dng.whiteLevel.map(Double.init)
        let x: [Float] = (0..<(w * h * 3)).map { (i: Int) -> Float in
            let p = i % 3
            let stored = Double(dng.samples[i])
            return Float(min((stored - black[p]) / (white[p] - black[p]), 1))
        }
        var whole = ImageBuffer(width: w, height: h, channels: 3, samples: x)
        let list = try OpcodeList.parse(try #require(dng.opcodeLists[2]), list: .list2)
        _ = try OpcodeApplier.apply(list, to: &whole, context: OpcodeContext(wholeImage: whole, clipping: .keepRange))

        var values = [Float](repeating: 0, count: w * 3), slope = values, offset = values
        var clip = [UInt8](repeating: 0, count: w)
        var worstValue: Float = 0, worstResponse: Float = 0
        for y in 0..<h {
            values.withUnsafeMutableBufferPointer { v in
                clip.withUnsafeMutableBufferPointer { c in
                    slope.withUnsafeMutableBufferPointer { s in
                        offset.withUnsafeMutableBufferPointer { o in
                            frame.row(y, values: v.baseAddress!, clip: c.baseAddress!, response: (s.baseAddress!, o.baseAddress!))
                        }
                    }
                }
            }
            for i in 0..<(w * 3) {
                let k = y * w * 3 + i
                worstValue = max(worstValue, abs(values[i] - whole.samples[k]))
                worstResponse = max(worstResponse, abs(slope[i] * x[k] + offset[i] - values[i]))
            }
        }
        #expect(worstValue <= 1e-6, "row values against the stage-by-stage Stage 2: \(worstValue)")
        #expect(worstResponse <= (secondDegree ? 1e-4 : 1e-6), "g · x + b against the value: \(worstResponse)")
        #expect(frame.rowError == nil)
    }

    /// A bracket whose raw rows carry an offset that each frame's OpcodeList2 removes
    /// (DeltaPerRow) merges to the bracket without it: no bias over the image (the mean
    /// difference under 0.05 standard deviations) and no pixel far off (the weights differ a
    /// little: the profile's shot noise is that of the value before the list). The same
    /// frames without their list — the offset left in, as a list taken as a gain (its action
    /// on ones) leaves it — are biased by about a standard deviation in the dark.
    @Test func rowOffsetsRemovedByTheListMergeAway() throws {
        let (w, h) = (128, 96)
        let dir = TestData.temporaryDirectory("merge-delta-rows")
        defer { try? FileManager.default.removeItem(at: dir) }
        var plain: [String] = [], banded: [String] = [], uncorrected: [String] = []
        func write(_ dng: LinearRawDNG, _ name: String, into paths: inout [String]) throws {
            let path = dir.appendingPathComponent(name).path
            try DNGWriter.write(dng, to: path)
            paths.append(path)
        }
        for (i, stop) in [-4.0, 0, 4].enumerated() {
            var dng = try Self.capture(width: w, height: h, stop: stop, seed: 11 + UInt64(i))
            try write(dng, "plain_\(i).dng", into: &plain)
            // Up to 30 DN added to each row (white stays white), then taken off by the list.
            let offsets = (0..<h).map { 6 * (($0 * 7 + i) % 6) }
            var deltas = [Float](repeating: 0, count: h)
            for y in 0..<h {
                for k in (y * w * 3)..<((y + 1) * w * 3) where dng.samples[k] < UInt16(dng.whiteLevel[k % 3]) {
                    dng.samples[k] = UInt16(min(dng.whiteLevel[k % 3], Int(dng.samples[k]) + offsets[y]))
                }
                // Stage 2 deltas of integer data are in 16-bit code units (1/65535 of white).
                deltas[y] = -Float(65535 * Double(offsets[y]) / (Double(dng.whiteLevel[0]) - dng.blackLevel[0]))
            }
            #expect(dng.opcodeLists[2] == nil)
            try write(dng, "uncorrected_\(i).dng", into: &uncorrected)
            dng.opcodeLists[2] = Self.list([Self.deltaPerRow(deltas, columns: w, planes: 3)])
            try write(dng, "banded_\(i).dng", into: &banded)
        }
        let a = try Pipeline.merge(paths: plain)
        /// The mean and the largest |difference| from the plain merge, in its standard deviations.
        func compare(_ b: MergedBracket) -> (mean: Double, worst: Double, count: Int) {
            var sum = 0.0, worst = 0.0, count = 0
            let clipA = a.image.clipMask ?? [], clipB = b.image.clipMask ?? []
            for p in 0..<(a.image.width * a.image.height) where (clipA.isEmpty || clipA[p] == 0) && (clipB.isEmpty || clipB[p] == 0) {
                for c in 0..<3 {
                    let sigma = Double(a.standardDeviation.samples[3 * p + c])
                    guard sigma > 0 else { continue }
                    let z = (Double(b.image.pixels.samples[3 * p + c]) - Double(a.image.pixels.samples[3 * p + c])) / sigma
                    sum += z
                    worst = max(worst, abs(z))
                    count += 1
                }
            }
            return (sum / Double(max(count, 1)), worst, count)
        }
        let corrected = compare(try Pipeline.merge(paths: banded))
        // Frames with the offset left in differ beyond their noise: merged only when allowed.
        var anyway = MergeOptions()
        anyway.maxDisagreement = 1
        let left = compare(try Pipeline.merge(paths: uncorrected, options: anyway))
        #expect(corrected.count > 2 * w * h, "samples compared: \(corrected.count)")
        #expect(abs(corrected.mean) < 0.05, "the list applied: \(corrected)")
        #expect(corrected.worst < 1, "the list applied: \(corrected)")
        #expect(abs(left.mean) > 0.3, "the offset left in: \(left)")
        print("row offsets: with the list \(corrected), without \(left)")
    }
}

/// The merge reads the NoiseProfile as every measurement does: a 4-value profile (neither one
/// pair nor one per colour plane) is refused, naming the file and the count.
@Suite struct MergeNoiseProfileTests {
    @Test func fourValueProfileRefused() throws {
        let dir = TestData.temporaryDirectory("merge-noise-profile")
        defer { try? FileManager.default.removeItem(at: dir) }
        var paths: [String] = []
        for (i, stop) in [-2.0, 0].enumerated() {
            var dng = try OpcodeListMergeTests.capture(width: 64, height: 48, stop: stop, seed: 3 + UInt64(i))
            dng.noiseProfile = [2e-5, 4.5e-7, 2e-5, 4.5e-7]
            let path = dir.appendingPathComponent("f\(i).dng").path
            try DNGWriter.write(dng, to: path)
            paths.append(path)
        }
        do {
            _ = try Pipeline.merge(paths: paths)
            Issue.record("a 4-value NoiseProfile was merged")
        } catch let error as MergeError {
            #expect(error.category == .unsupportedFeature)
            #expect(error.description.contains(paths[0]) && error.description.contains("has 4 values"), "\(error)")
        }
    }
}
