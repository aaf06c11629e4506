import Foundation
import Opcodes
import Synchronization

/// One raw frame's Stage 2, as a merge of frames takes it: the ActiveArea's linear reference
/// values with OpcodeList1 and OpcodeList2 applied as a conversion applies them (OpcodeList2
/// with its values' range kept, whatever the clipping policy), and the clip
/// mask, row by row (`row`). Frames stored in 16-bit samples keep them (2 bytes per sample);
/// each row is linearized and goes through OpcodeList2 when it is read, as a strip of the
/// conversion does. A list with opcodes that read their neighbours (FixBadPixels) runs on the
/// whole frame, linearized first (4 bytes per sample).
///
/// Beside the values, a row can give OpcodeList2's *response* at each sample: the list maps a
/// linear value x to v ≈ g · x + b, with g and b per sample (exact for gains, scales and
/// deltas; for MapTable and polynomials of degree 2 and more, the tangent at the sample's own
/// value). The merge takes each sample's noise and saturation from x = (v − b) / g
/// (docs/merge.md).
public struct FrameStage2: Sendable {
    enum Storage: Sendable {
        /// The decoded 16-bit samples (OpcodeList1 applied), read through the plan.
        case stored(ImageBuffer<UInt16>, LinearizationPlan)
        case linear(LinearImage)
    }
    let storage: Storage
    /// OpcodeList2 when it runs row by row (every opcode acts on a pixel by its value and
    /// position); nil without a list or when it ran on the whole frame.
    let rowList: OpcodeList?
    /// The opcodes of OpcodeList2 that act on values, and how they do; nil without a list.
    let response: OpcodeResponse?
    let opcodes: Pipeline.StreamingOpcodes
    /// The first error of a list applied to a row (a list that ran on row 0 and the last row
    /// when the frame was made does not fail on the rows between; kept for safety).
    let failure: FailureSlot
    /// The frame's raw-data digest check: "verified", "absent", "not checked", "mismatch, ignored".
    public var digest = "not checked"
    public let raw: ImageIFD
    public let mapping: LinearizationMapping
    public let width: Int, height: Int, planes: Int

    /// Whether rows come with OpcodeList2's response (`row`'s `slope` and `offset`).
    public var hasResponse: Bool { response != nil }

    /// An error a list met on a row after the frame was made (nil: none).
    public var rowError: (any Error)? { failure.error }

    /// Writes ActiveArea row `y`: `width × planes` values (OpcodeList2 applied) and `width`
    /// clip-mask bytes; with `response`, the list's slope g and offset b per sample (1 and 0
    /// without a list).
    public func row(_ y: Int, values: UnsafeMutablePointer<Float>, clip: UnsafeMutablePointer<UInt8>,
                    response out: (slope: UnsafeMutablePointer<Float>, offset: UnsafeMutablePointer<Float>)? = nil) {
        let count = width * planes
        readLinear(y, values: values, clip: clip)
        let linear = response?.kind == .general && out != nil ? Array(UnsafeBufferPointer(start: values, count: count)) : nil
        do {
            if let rowList { try apply(rowList, row: y, to: values, reports: opcodes) }
            if let out { try fillResponse(y, values: values, linear: linear, slope: out.slope, offset: out.offset) }
        } catch {
            // Never merged: every plane marked clipped, and the error kept for the merge to report.
            failure.record(error)
            clip.update(repeating: UInt8(truncatingIfNeeded: (1 << planes) - 1), count: width)
        }
    }

    /// Row `y` of the linear values and clip mask, before OpcodeList2 (for stored samples).
    private func readLinear(_ y: Int, values: UnsafeMutablePointer<Float>, clip: UnsafeMutablePointer<UInt8>) {
        switch storage {
        case .stored(let samples, let plan):
            let area = mapping.activeArea, spp = samples.channels
            samples.samples.withUnsafeBufferPointer { s in
                let first = s.baseAddress! + ((y + area.top) * samples.width + area.left) * spp
                plan.linearize(first, rowStride: samples.width * spp, rows: y..<(y + 1), columns: 0..<width, into: values, mask: clip)
            }
        case .linear(let image):
            image.values.samples.withUnsafeBufferPointer { v in
                values.update(from: v.baseAddress! + y * width * planes, count: width * planes)
            }
            image.clipMask.withUnsafeBufferPointer { c in clip.update(from: c.baseAddress! + y * width, count: width) }
        }
    }

    /// `list` on one row of `width × planes` values at ActiveArea row `y`, in place, as a strip
    /// of the conversion is.
    private func apply(_ list: OpcodeList, row y: Int, to values: UnsafeMutablePointer<Float>,
                       reports: Pipeline.StreamingOpcodes) throws {
        let count = width * planes
        var buffer = ImageBuffer(width: width, height: 1, channels: planes,
                                 samples: Array(UnsafeBufferPointer(start: values, count: count)))
        try Pipeline.applyOpcodes(list, number: 2, to: &buffer, bounds: PixelRect(width: width, height: height), row: y, column: 0,
                                  context: reports)
        buffer.samples.withUnsafeBufferPointer { values.update(from: $0.baseAddress!, count: count) }
    }

    /// The response of the value-acting opcodes at row `y`: from the list applied to ones and
    /// zeros (affine lists), or its tangent at the row's `linear` values (other lists).
    private func fillResponse(_ y: Int, values: UnsafePointer<Float>, linear: [Float]?, slope: UnsafeMutablePointer<Float>,
                              offset: UnsafeMutablePointer<Float>) throws {
        let count = width * planes
        guard let response else {
            slope.update(repeating: 1, count: count)
            offset.update(repeating: 0, count: count)
            return
        }
        let scratch = Pipeline.StreamingOpcodes(path: opcodes.path, clipping: .keepRange, bayerPhase: opcodes.bayerPhase,
                                                reports: SharedStore())
        switch response.kind {
        case .scale, .affine:
            slope.update(repeating: 1, count: count)
            try apply(response.list, row: y, to: slope, reports: scratch)
            offset.update(repeating: 0, count: count)
            if response.kind == .affine {
                try apply(response.list, row: y, to: offset, reports: scratch)
                for i in 0..<count { slope[i] -= offset[i] }
            }
        case .general:
            // The tangent: f(x + h) − f(x) over h, with f(x) the row's values, h 2⁻¹⁰ of white.
            let h: Float = 1.0 / 1024
            guard let linear else { preconditionFailure("the row's linear values are kept for a general response") }
            for i in 0..<count { slope[i] = linear[i] + h }
            try apply(response.list, row: y, to: slope, reports: scratch)
            for i in 0..<count {
                let g = (slope[i] - values[i]) / h
                slope[i] = g
                offset[i] = values[i] - g * linear[i]
            }
        }
    }
}

/// The opcodes of an OpcodeList2 that act on a pixel's value, and the form of their combined
/// action: v = g · x (`scale`: gains, scales, vignetting), v = g · x + b (`affine`: deltas,
/// first-degree polynomials with an offset), or neither (`general`: tables, polynomials of
/// higher degree).
struct OpcodeResponse: Sendable {
    enum Kind: Int, Sendable, Comparable {
        case scale, affine, general
        static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }
    }
    let list: OpcodeList
    let kind: Kind

    /// Nil when no opcode of `list` acts on values.
    init?(_ list: OpcodeList) {
        let acting = list.entries.filter { Self.kind(of: $0.opcode) != nil }
        guard !acting.isEmpty else { return nil }
        self.list = OpcodeList(list: list.list, entries: acting)
        kind = acting.compactMap { Self.kind(of: $0.opcode) }.max()!
    }

    /// How one opcode acts on a value; nil for those that do not (bad-pixel fixes, which take
    /// their neighbours' values, crops, warps, unknown optional opcodes).
    static func kind(of opcode: Opcode) -> Kind? {
        switch opcode {
        case .gainMap, .scalePerRow, .scalePerColumn, .fixVignetteRadial: return .scale
        case .deltaPerRow, .deltaPerColumn: return .affine
        case .mapPolynomial(let p):
            if p.coefficients.dropFirst(2).contains(where: { $0 != 0 }) { return .general }
            return p.coefficients.first.map { $0 != 0 } == true ? .affine : .scale
        case .mapTable: return .general
        case .fixBadPixelsConstant, .fixBadPixelsList, .trimBounds, .warpRectilinear, .warpFisheye, .warpRectilinear2, .unknown:
            return nil
        }
    }
}

/// The first error recorded by any thread.
final class FailureSlot: Sendable {
    private let state = Mutex<(any Error)?>(nil)

    func record(_ error: any Error) {
        state.withLock { if $0 == nil { $0 = error } }
    }

    var error: (any Error)? { state.withLock { $0 } }
}

extension Pipeline {
    /// The Stage 2 of `dng`'s raw image (see `FrameStage2`), under `options.limits`.
    /// - Throws: the decoder's errors; the opcode lists' (a list that cannot run on the frame's
    ///   first or last row); `RawDecodeError.unsupported` for an OpcodeList2 that crops
    ///   (TrimBounds), which frames merged pixel by pixel cannot have.
    public static func frameStage2(_ dng: DNGFile, options: DevelopOptions) throws -> FrameStage2 {
        let raw = try dng.mainRawImage()
        try checkLimits(raw, path: dng.path, options: options)
        var notes: [MetadataItem] = []
        // The raw-data digest is checked as in a conversion: a damaged frame is refused (exit 13).
        let expectation = try digestExpectation(dng, raw: raw, main: raw, options: options)
        let digester = try expectation?.makeDigester(dng)
        var stored = try RawDecoder.decode(dng, ifd: raw, limits: options.limits, digester: digester)
        let digestItems = try checkDigests(dng, raw: raw, main: raw, expectation: expectation, imageDigest: digester?.finish(),
                                           options: options)
        try dng.file.checkIntact()
        // The compressed blocks are read: their pages leave the process (a bracket's files are
        // held open for the whole merge).
        dng.file.releaseResidentPages()
        try applyOpcodeList1(dng: dng, raw: raw, to: &stored, clipping: options.opcodeClipping, notes: &notes)
        let plan = try LinearizationPlan(ifd: raw, path: dng.path)
        let area = raw.activeArea
        let list2 = try parseOpcodeList(2, dng: dng, raw: raw)
        let perRow = SourceLayout.reach(list2) != .whole
        let storage: FrameStage2.Storage
        if let samples = stored.uint16, perRow {
            storage = .stored(samples, plan)
        } else {
            var linear = try Linearizer.linearize(stored, path: dng.path)
            if !perRow, try applyOpcodeList(2, dng: dng, raw: raw, to: &linear, clipping: .keepRange, notes: &notes) != nil {
                throw RawDecodeError.unsupported(path: dng.path, ifd: raw.path,
                                                 reason: "OpcodeList2 crops the image (TrimBounds): frames merged pixel by pixel must keep their ActiveArea")
            }
            storage = .linear(linear)
        }
        let response = list2.flatMap(OpcodeResponse.init)
        if !perRow && response?.kind == .general {
            // The tangent needs each sample's value before the list, which a list run on the whole frame replaced.
            throw RawDecodeError.unsupported(path: dng.path, ifd: raw.path, reason: "OpcodeList2 fixes bad pixels and maps values "
                                             + "through a table or a polynomial of degree 2 or more: frames with both cannot be merged")
        }
        // OpcodeList2 keeps its values' range in a merge: a gain's values above white are what
        // the estimator weighs (clipping is the clip mask's and the saturation test's).
        let opcodes = StreamingOpcodes(path: dng.path, clipping: .keepRange,
                                       bayerPhase: raw.samplesPerPixel == 1 ? activeAreaBayerPhase(raw) : nil, reports: SharedStore())
        var frame = FrameStage2(storage: storage, rowList: perRow ? list2 : nil, response: response,
                                opcodes: opcodes, failure: FailureSlot(), raw: raw, mapping: plan.mapping, width: area.width,
                                height: area.height, planes: raw.samplesPerPixel)
        frame.digest = digestItems.first { $0.key == "digest" }.map { "\($0.value)" } ?? "absent"
        try frame.checkRows()
        return frame
    }
}

extension FrameStage2 {
    /// Runs the lists on the first and last rows, so that a list that cannot run on this
    /// frame is refused before the merge.
    func checkRows() throws {
        guard rowList != nil || response != nil, height > 0 else { return }
        let count = width * planes
        var values = [Float](repeating: 0, count: count), slope = values, offset = values
        var clip = [UInt8](repeating: 0, count: width)
        for y in Set([0, height - 1]) {
            values.withUnsafeMutableBufferPointer { v in
                clip.withUnsafeMutableBufferPointer { c in
                    slope.withUnsafeMutableBufferPointer { s in
                        offset.withUnsafeMutableBufferPointer { o in
                            row(y, values: v.baseAddress!, clip: c.baseAddress!, response: (s.baseAddress!, o.baseAddress!))
                        }
                    }
                }
            }
            if let error = failure.error { throw error }
        }
    }
}
