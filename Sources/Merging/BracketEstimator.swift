import Engine
import Foundation
import ImageCore

/// The temporal noise of one camera plane of one frame (DNG NoiseProfile): a Stage 2 value
/// x has variance `S · x + O`; after OpcodeList2's response v = g · x + b (a gain g, an
/// offset b) the value v has variance `g · S · (v − b) + g² · O`.
public struct PlaneNoise: Sendable, Equatable, Codable {
    public var scale: Double
    public var offset: Double

    public init(scale: Double, offset: Double) {
        self.scale = scale
        self.offset = offset
    }

    /// The variance of a value `v` that a gain `g` multiplied and an offset `b` moved (the
    /// shot term of x = (v − b) / g taken at ≥ 0).
    @inline(__always)
    func variance(_ v: Double, gain g: Double, offset b: Double = 0) -> Double {
        g * scale * max(v - b, 0) + g * g * offset
    }
}

/// One frame's Stage 2 as the estimator reads it: row by row.
public struct BracketSamples: Sendable {
    /// Where a row's OpcodeList2 response goes: per sample the slope g and offset b of
    /// v = g · x + b.
    public typealias Response = (slope: UnsafeMutablePointer<Float>, offset: UnsafeMutablePointer<Float>)
    /// Writes ActiveArea row y: `width × planes` values (OpcodeList2 applied), `width`
    /// clip-mask bytes (bit p: plane p at or above the white level) and, when asked and
    /// `hasResponse`, the list's response.
    public var row: @Sendable (_ y: Int, _ values: UnsafeMutablePointer<Float>, _ clip: UnsafeMutablePointer<UInt8>,
                               _ response: Response?) -> Void
    /// Whether the rows have a response other than g = 1, b = 0.
    public var hasResponse: Bool
    /// The frame's exposure relative to the reference frame's (its values ÷ this are in the
    /// reference's units).
    public var exposure: Double
    /// The NoiseProfile pairs by plane or CFA colour (`NoiseColours`).
    public var noise: [PlaneNoise]

    public init(frame: FrameStage2, exposure: Double, noise: [PlaneNoise]) {
        row = { y, values, clip, response in frame.row(y, values: values, clip: clip, response: response) }
        hasResponse = frame.hasResponse
        self.exposure = exposure
        self.noise = noise
    }

    /// Samples held in arrays (`width` pixels per row, `planes` interleaved), with per-sample
    /// gains (no offsets) or none.
    public init(values: [Float], clipMask: [UInt8], gains: [Float]?, exposure: Double, noise: [PlaneNoise], width: Int, planes: Int) {
        let n = width * planes
        row = { y, out, clip, response in
            values.withUnsafeBufferPointer { out.update(from: $0.baseAddress! + y * n, count: n) }
            clipMask.withUnsafeBufferPointer { clip.update(from: $0.baseAddress! + y * width, count: width) }
            guard let response else { return }
            if let gains {
                gains.withUnsafeBufferPointer { response.slope.update(from: $0.baseAddress! + y * n, count: n) }
            } else {
                response.slope.update(repeating: 1, count: n)
            }
            response.offset.update(repeating: 0, count: n)
        }
        hasResponse = gains != nil
        self.exposure = exposure
        self.noise = noise
    }
}

/// The merged Stage 2: per sample the estimate in the reference frame's units, its variance
/// (as `Float` variances, or — `compact` — as half-float standard deviations, 2 bytes a
/// sample instead of 4: 0.05 % steps, up to 65504), the frames it used, and per pixel the
/// planes clipped in every frame (a lower bound).
public struct MergedSamples: Sendable {
    public var values: [Float]
    public var variance: [Float]
    public var deviation: [Float16]
    public var frames: [UInt8]
    /// Bit p set: plane p was clipped or saturated in every frame; its value is the largest
    /// lower bound the frames give.
    public var lowerBound: [UInt8]

    /// Whether a compact standard deviation went beyond half's range.
    public var deviationOverflows = false

    /// The variances, from the compact standard deviations when those were kept.
    public mutating func expandVariance() {
        guard variance.isEmpty, !deviation.isEmpty else { return }
        variance = LargeBuffer.make(Float.self, count: deviation.count, reading: deviation) { range, d, first in
            let out = UnsafeMutableBufferPointer(start: first + range.lowerBound, count: range.count)
            HalfConversion.convert(UnsafeBufferPointer(rebasing: d[range]), to: out)
            for i in out.indices { out[i] *= out[i] }
        }
        deviation = []
    }

    /// For superpixel output, which averages the two greens of a cell: the variance of their
    /// mean is half the mean of their variances, which is what the demosaicing computes from
    /// the variances halved here (a CFA mosaic of one plane, colours by `colours`).
    public mutating func halveGreenVariances(colours: NoiseColours, width: Int, height: Int) {
        for y in 0..<height {
            for x in 0..<width where colours.colour(row: y, column: x, plane: 0) == 1 { variance[y * width + x] *= 0.5 }
        }
    }

    /// Arrays for `count` samples of `width × height` pixels, not cleared: the estimator
    /// writes every element (`RowMerger.merge` writes each sample's value, variance or
    /// deviation and frame count, and each pixel's lower-bound bits), so their pages are
    /// first touched by the rows that fill them.
    init(count: Int, pixels: Int, compact: Bool) {
        values = LargeBuffer.uninitialized(Float.self, count: count)
        variance = LargeBuffer.uninitialized(Float.self, count: compact ? 0 : count)
        deviation = LargeBuffer.uninitialized(Float16.self, count: compact ? count : 0)
        frames = LargeBuffer.uninitialized(UInt8.self, count: count)
        lowerBound = LargeBuffer.uninitialized(UInt8.self, count: pixels)
    }

    /// Where the estimator writes: the arrays as images (`width × height` pixels of `planes`
    /// samples; the lower bounds one byte a pixel), each row written by one thread
    /// (`PixelView`'s rule).
    struct Pointers: Sendable {
        let values: PixelView<Float>, variance: PixelView<Float>, deviation: PixelView<Float16>
        let frames: PixelView<UInt8>, lowerBound: PixelView<UInt8>
    }

    /// Runs `body` with views of the arrays (valid inside `body` only; an array not kept,
    /// such as `variance` when compact, gives an empty view that is never written).
    mutating func withPointers<R>(width: Int, height: Int, planes: Int, _ body: (Pointers) -> R) -> R {
        values.withUnsafeMutableBufferPointer { v in
            variance.withUnsafeMutableBufferPointer { s in
                deviation.withUnsafeMutableBufferPointer { d in
                    frames.withUnsafeMutableBufferPointer { f in
                        lowerBound.withUnsafeMutableBufferPointer { l in
                            body(Pointers(values: PixelView(v, width: width, height: height, channels: planes),
                                          variance: PixelView(s, width: width, height: height, channels: planes),
                                          deviation: PixelView(d, width: width, height: height, channels: planes),
                                          frames: PixelView(f, width: width, height: height, channels: planes),
                                          lowerBound: PixelView(l, width: width, height: height)))
                        }
                    }
                }
            }
        }
    }
}

/// The noise-optimal merge of raw frames of one scene (docs/merge.md): for each sample, with
/// exposures e_i (relative to the reference) and values v_i,
/// Φ̂ = Σ w_i · v_i / e_i ÷ Σ w_i, w_i = e_i² / σ_i²(e_i · Φ̂), Var Φ̂ = 1 / Σ w_i,
/// the variances taken from the NoiseProfile at the *predicted* value e_i · Φ̂ (not the
/// observed one, whose noise would bias the weights), iterated from the longest valid
/// frame's value. A sample is left out when it is clipped (clip mask), when its linear value
/// before OpcodeList2 (x = (v − b) / g) reaches `saturation` (of the white level), or when its
/// predicted value plus three standard deviations does; a sample no frame measured so is a
/// lower bound: the largest v_i / e_i, flagged.
public struct BracketEstimator: Sendable {
    /// Where a sample counts as saturated, as a fraction of the white level.
    public var saturation: Double
    /// Passes of the weights at the predicted value.
    public var iterations: Int

    public init(saturation: Double = 0.98, iterations: Int = 3) {
        self.saturation = saturation
        self.iterations = iterations
    }

    /// Merges `frames` (all of `planes` planes, `width` × `height` pixels); `colours` gives,
    /// for a sample's row, column and plane, the index into each frame's `noise`.
    /// - Parameter compact: keep the standard deviations in half floats (`deviation`) rather
    ///   than the variances in `Float` (`variance`); one beyond half's range is infinite there
    ///   (`deviationOverflows`).
    public func merge(_ frames: [BracketSamples], width: Int, height: Int, planes: Int, colours: NoiseColours,
                      compact: Bool = false) -> MergedSamples {
        precondition(!frames.isEmpty && frames.count <= 64)
        var merged = MergedSamples(count: width * height * planes, pixels: width * height, compact: compact)
        // Rows with a standard deviation beyond half's range (compact only).
        let overflowRows = SharedCount()
        // Longest exposure first: the first valid sample in this order starts the iteration.
        let sorted = frames.indices.sorted { frames[$0].exposure > frames[$1].exposure }.map { frames[$0] }
        let rows = RowMerger(frames: sorted, width: width, planes: planes, colours: colours, saturation: saturation,
                             passes: max(1, iterations), compact: compact)
        merged.withPointers(width: width, height: height, planes: planes) { out in
            Parallel.forEachChunk(count: height, minimumChunk: 8) { range in
                let buffers = RowMerger.Buffers(frames: sorted.count, rowLength: width * planes, width: width,
                                                colourCycle: colours.repeatColumns)
                defer { buffers.deallocate() }
                for y in range where rows.merge(row: y, buffers: buffers, into: out) { overflowRows.add(1) }
            }
        }
        merged.deviationOverflows = overflowRows.value > 0
        return merged
    }
}

/// One row of the merge: each frame's row read, then every sample estimated.
struct RowMerger: Sendable {
    let frames: [BracketSamples]
    let width: Int, planes: Int
    let colours: NoiseColours
    let saturation: Double
    let passes: Int
    let compact: Bool
    /// Per frame: e, then S and O of each colour at [3 j + c].
    let exposures: [Double], noiseScale: [Double], noiseOffset: [Double]

    init(frames: [BracketSamples], width: Int, planes: Int, colours: NoiseColours, saturation: Double, passes: Int, compact: Bool) {
        self.frames = frames
        self.width = width
        self.planes = planes
        self.colours = colours
        self.saturation = saturation
        self.passes = passes
        self.compact = compact
        exposures = frames.map(\.exposure)
        noiseScale = frames.flatMap { f in (0..<3).map { f.noise[min($0, f.noise.count - 1)].scale } }
        noiseOffset = frames.flatMap { f in (0..<3).map { f.noise[min($0, f.noise.count - 1)].offset } }
    }

    /// A thread's row buffers: each frame's values, clip mask and response, and a row of
    /// standard deviations converted to half floats at once (F16C) when compact.
    struct Buffers {
        let values: UnsafeMutablePointer<Float>, clip: UnsafeMutablePointer<UInt8>
        let slope: UnsafeMutablePointer<Float>, offset: UnsafeMutablePointer<Float>
        let deviation: UnsafeMutablePointer<Float>
        let scratch: UnsafeMutablePointer<Double>
        /// A row's CFA colours, one period of the pattern from column 0.
        let colourCycle: UnsafeMutablePointer<Int>

        init(frames n: Int, rowLength: Int, width: Int, colourCycle: Int) {
            values = .allocate(capacity: n * rowLength)
            clip = .allocate(capacity: n * width)
            slope = .allocate(capacity: n * rowLength)
            offset = .allocate(capacity: n * rowLength)
            deviation = .allocate(capacity: rowLength)
            scratch = .allocate(capacity: 4 * n)
            self.colourCycle = .allocate(capacity: max(1, colourCycle))
        }

        func deallocate() {
            values.deallocate(); clip.deallocate(); slope.deallocate(); offset.deallocate(); deviation.deallocate()
            scratch.deallocate(); colourCycle.deallocate()
        }
    }

    /// Merges row `y` into `out`; true when a standard deviation went beyond half's range.
    func merge(row y: Int, buffers b: Buffers, into out: MergedSamples.Pointers) -> Bool {
        let n = frames.count, rowLength = width * planes
        for j in 0..<n {
            let response = frames[j].hasResponse ? (b.slope + j * rowLength, b.offset + j * rowLength) : nil
            frames[j].row(y, b.values + j * rowLength, b.clip + j * width, response)
            if response == nil {
                (b.slope + j * rowLength).update(repeating: 1, count: rowLength)
                (b.offset + j * rowLength).update(repeating: 0, count: rowLength)
            }
        }
        let v = b.scratch, g = v + n, o = v + 2 * n, valid = v + 3 * n
        // A CFA row's colours repeat every `period` columns (no division per sample).
        let period = colours.isPlanes ? 1 : colours.repeatColumns
        if !colours.isPlanes { for i in 0..<period { b.colourCycle[i] = colours.colour(row: y, column: i, plane: 0) } }
        var phase = 0
        for x in 0..<width {
            defer { phase = phase + 1 == period ? 0 : phase + 1 }
            let pixel = y * width + x
            var bound: UInt8 = 0
            for p in 0..<planes {
                let k = pixel * planes + p, r = x * planes + p
                let bit = UInt8(1) << UInt8(p)
                let c = colours.isPlanes ? min(p, 2) : b.colourCycle[phase]
                var validCount = 0
                for j in 0..<n {
                    v[j] = Double(b.values[j * rowLength + r])
                    g[j] = Double(b.slope[j * rowLength + r])
                    o[j] = Double(b.offset[j * rowLength + r])
                    let ok = b.clip[j * width + x] & bit == 0 && v[j] - o[j] < saturation * g[j]
                    valid[j] = ok ? 1 : 0
                    if ok { validCount += 1 }
                }
                let estimate = validCount > 0 ? self.estimate(v: v, gain: g, offset: o, valid: valid, colour: c,
                                                              passes: validCount == 1 ? 1 : passes) : nil
                if let estimate {
                    out.values[k] = Float(estimate.value)
                    if compact { b.deviation[r] = Float(estimate.variance.squareRoot()) } else { out.variance[k] = Float(estimate.variance) }
                    out.frames[k] = UInt8(estimate.frames)
                } else {
                    // Every sample is clipped, saturated or within 3 σ of saturation: not
                    // trusted as a value, a lower bound.
                    var lower = -Double.infinity
                    for j in 0..<n { lower = max(lower, v[j] / exposures[j]) }
                    out.values[k] = Float(lower)
                    if compact { b.deviation[r] = 0 } else { out.variance[k] = 0 }
                    out.frames[k] = 0
                    bound |= bit
                }
            }
            out.lowerBound[pixel] = bound
        }
        guard compact else { return false }
        let beyond = HalfConversion.convert(UnsafeBufferPointer(start: b.deviation, count: rowLength),
                                            to: UnsafeMutableBufferPointer(start: out.deviation.row(y), count: rowLength))
        return beyond > 0
    }

    /// The estimate of one sample from the frames' values `v`, responses (`gain`, `offset`)
    /// and validity, for noise colour `colour`: one pass for one valid frame (its
    /// near-saturation test), else until the weights at the predicted value settle; nil when
    /// every valid sample is within 3 σ of saturation.
    ///
    /// The sums Σ e·v/σ² and Σ e²/σ² are kept over a common factor, the product P of the
    /// counted frames' σ² (`num` = P·Σ e·v/σ², `den` = P·Σ e²/σ²): one division per pass
    /// instead of one per frame; P is rescaled before it could underflow.
    @inline(__always)
    func estimate(v: UnsafePointer<Double>, gain g: UnsafePointer<Double>, offset b: UnsafePointer<Double>,
                  valid: UnsafePointer<Double>, colour c: Int, passes: Int) -> (value: Double, variance: Double, frames: Int)? {
        let n = frames.count
        var phi = 0.0, num = 0.0, den = 0.0, product = 1.0, frameCount = 0
        for j in 0..<n where valid[j] != 0 { phi = v[j] / exposures[j]; break }
        for pass in 0..<passes {
            num = 0
            den = 0
            product = 1
            frameCount = 0
            for j in 0..<n where valid[j] != 0 {
                let e = exposures[j]
                // The predicted value less the list's offset: g times the predicted x.
                let predicted = max(e * phi - b[j], 0)
                let s2 = max(g[j] * noiseScale[3 * j + c] * predicted + g[j] * g[j] * noiseOffset[3 * j + c], 1e-30)
                // Left out within 3 σ of saturation: predicted + 3σ ≥ sat · g.
                let room = saturation * g[j] - predicted
                if room <= 0 || 9 * s2 >= room * room { continue }
                // w = e² / σ², w · v / e = e · v / σ²; each sum times σ² of this frame.
                num = num * s2 + e * v[j] * product
                den = den * s2 + e * e * product
                product *= s2
                if product < 1e-150 {
                    num *= 1e150
                    den *= 1e150
                    product *= 1e150
                }
                frameCount += 1
            }
            if den == 0 { break }
            let next = num / den
            let settled = pass > 0 && abs(next - phi) <= 1e-7 * abs(next)
            phi = next
            if settled { break }
        }
        return den > 0 ? (phi, product / den, frameCount) : nil
    }
}

/// Which NoiseProfile pair a sample takes: its plane (LinearRaw), or the colour of its CFA
/// site (the pattern repeated from the raw image's origin, read in ActiveArea coordinates).
public struct NoiseColours: Sendable {
    let pattern: [Int]
    let repeatRows: Int, repeatColumns: Int
    let top: Int, left: Int

    /// LinearRaw: the plane.
    public static let planes = NoiseColours(pattern: [], repeatRows: 1, repeatColumns: 1, top: 0, left: 0)

    /// Whether the colour is the plane (LinearRaw).
    public var isPlanes: Bool { pattern.isEmpty }

    /// A CFA pattern (colour indices, row-major `repeatRows` × `repeatColumns`) and the
    /// ActiveArea's top-left corner.
    public init(pattern: [Int], repeatRows: Int, repeatColumns: Int, top: Int, left: Int) {
        self.pattern = pattern
        self.repeatRows = repeatRows
        self.repeatColumns = repeatColumns
        self.top = top
        self.left = left
    }

    @inline(__always)
    public func colour(row: Int, column: Int, plane: Int) -> Int {
        guard !pattern.isEmpty else { return min(plane, 2) }
        return min(max(pattern[((row + top) % repeatRows) * repeatColumns + (column + left) % repeatColumns], 0), 2)
    }
}

/// The exposure ratio of two frames measured on their pixels (docs/merge.md):
/// r̂ = Σ w · v_a ÷ Σ w · v_b over samples valid in both, each chosen and weighted by the
/// mean of its four nearest samples of the same plane or CFA colour (`step` apart) — not by
/// its own value, whose noise would then bias the choice (a sample kept for being above the
/// noise floor is likely a high draw; one kept for being below saturation a low one). A
/// sample counts when its neighbours' means lie above 10 √O and below 0.9 of the saturation
/// level in both frames and neither sample is clipped; w = 1 / (σ_a² + r² σ_b²) at those
/// means; samples farther than 5 σ (√(1/w)) from the median ratio are left out (moving
/// objects, flicker), a test that, like the weights, does not depend on how the sample's own
/// noise fell. The standard uncertainty of
/// ln r̂ is √(Σ w² (v_a − r̂ v_b)²) ÷ Σ w v_a.
public struct ExposureRatioFit: Sendable, Equatable, Codable {
    /// v_a / v_b.
    public var ratio: Double
    /// Standard uncertainty of ln(ratio).
    public var logUncertainty: Double
    /// Samples the fit used.
    public var samples: Int
    /// Smooth samples (within 4 standard deviations of their neighbours' mean in both frames)
    /// valid in both frames, and how many of them differ from the fitted ratio by more than 5
    /// standard deviations of their expected spread and more than 5 % (motion, another
    /// scene). Edges, where a sub-pixel shift between the frames is large against the noise,
    /// are not counted.
    public var smoothSamples = 0
    public var disagreeing = 0

    /// The share of the smooth samples valid in both frames that disagree beyond their noise.
    public var disagreeingShare: Double { Double(disagreeing) / Double(max(1, smoothSamples)) }

    /// Fewer samples than this valid in both frames: no fit.
    public static let minimumSamples = 100

    /// The fit of `a` against `b` (`planes` interleaved planes, `width` × `height` pixels,
    /// neighbours `step` pixels away: 1, or 2 for a Bayer mosaic), or nil when fewer than
    /// `minimumSamples` samples are valid in both. At most about `maxSamples` samples are
    /// read (evenly spaced rows, each linearized with its neighbours above and below).
    public static func fit(_ a: BracketSamples, _ b: BracketSamples, width: Int, height: Int, planes: Int, step: Int,
                           saturation: Double, colours: NoiseColours, maxSamples: Int = 2_000_000) -> ExposureRatioFit? {
        guard width > 2 * step, height > 2 * step else { return nil }
        let rowStep = max(1, (width * height * planes) / maxSamples)
        let limit = 0.9 * saturation
        let nominal: Double = a.exposure / b.exposure
        var ratios: [Double] = [], va: [Double] = [], vb: [Double] = [], weights: [Double] = [], smooth: [Bool] = []
        let rowLength = width * planes
        // Rows y − step, y, y + step of each frame, and the middle row's response.
        let rowsA = FitRows(width: width, rowLength: rowLength), rowsB = FitRows(width: width, rowLength: rowLength)
        defer { rowsA.deallocate(); rowsB.deallocate() }
        var y = step
        while y < height - step {
            defer { y += rowStep }
            rowsA.read(a, rows: [y - step, y, y + step])
            rowsB.read(b, rows: [y - step, y, y + step])
            for x in step..<(width - step) {
                for p in 0..<planes {
                    let bit = UInt8(1) << UInt8(p)
                    guard rowsA.clip[width + x] & bit == 0, rowsB.clip[width + x] & bit == 0 else { continue }
                    let r = x * planes + p
                    let ni = colours.colour(row: y, column: x, plane: p)
                    let ga = Double(rowsA.slope[r]), gb = Double(rowsB.slope[r])
                    let ba = Double(rowsA.offset[r]), bb = Double(rowsB.offset[r])
                    let na = a.noise[ni], nb = b.noise[ni]
                    let ma = rowsA.neighbourMean(x, p, step: step, planes: planes)
                    let mb = rowsB.neighbourMean(x, p, step: step, planes: planes)
                    guard ma - ba < limit * ga, mb - bb < limit * gb, ma - ba > 10 * ga * na.offset.squareRoot(),
                          mb - bb > 10 * gb * nb.offset.squareRoot() else { continue }
                    let varianceA = na.variance(ma, gain: ga, offset: ba), varianceB = nb.variance(mb, gain: gb, offset: bb)
                    let w = 1 / (varianceA + nominal * nominal * varianceB)
                    guard w.isFinite, w > 0 else { continue }
                    let sa = Double(rowsA.values[rowLength + r]), sb = Double(rowsB.values[rowLength + r])
                    let da = sa - ma, db = sb - mb
                    smooth.append(da * da <= 16 * varianceA && db * db <= 16 * varianceB)
                    va.append(sa)
                    vb.append(sb)
                    weights.append(w)
                    ratios.append(sa > 0 && sb > 0 ? log(sa / sb) : .nan)
                }
            }
        }
        let finite = ratios.filter { $0.isFinite }.sorted()
        guard finite.count >= minimumSamples else { return nil }
        // Outliers by each sample's own expected spread (from its neighbours, so not by its noise):
        // |v_a − r_median · v_b| > 5 σ.
        let median = exp(finite[finite.count / 2])
        var swa = 0.0, swb = 0.0, kept = 0
        var keep = [Bool](repeating: false, count: va.count)
        for i in va.indices where abs(va[i] - median * vb[i]) <= 5 / weights[i].squareRoot() {
            keep[i] = true
            swa += weights[i] * va[i]
            swb += weights[i] * vb[i]
            kept += 1
        }
        guard kept >= minimumSamples, swa > 0, swb > 0 else { return nil }
        let r = swa / swb
        var s2 = 0.0
        for i in ratios.indices where keep[i] {
            let d = va[i] - r * vb[i]
            s2 += weights[i] * weights[i] * d * d
        }
        // Disagreeing: beyond 5 σ and beyond 5 % — a few percent between frames of one scene
        // (residual sub-pixel shift, lens shading moved with an aligned frame) is not another scene.
        var smoothCount = 0, disagreeing = 0
        for i in va.indices where smooth[i] {
            smoothCount += 1
            let d = abs(va[i] - r * vb[i])
            if d > 5 / weights[i].squareRoot() && d > 0.05 * abs(va[i]) { disagreeing += 1 }
        }
        return ExposureRatioFit(ratio: r, logUncertainty: s2.squareRoot() / swa, samples: kept, smoothSamples: smoothCount,
                                disagreeing: disagreeing)
    }
}

/// Three rows of a frame (values and clip masks) and the middle one's response, as the
/// exposure-ratio fit reads them.
struct FitRows {
    let values: UnsafeMutablePointer<Float>, clip: UnsafeMutablePointer<UInt8>
    let slope: UnsafeMutablePointer<Float>, offset: UnsafeMutablePointer<Float>
    let width: Int, rowLength: Int

    init(width: Int, rowLength: Int) {
        self.width = width
        self.rowLength = rowLength
        values = .allocate(capacity: 3 * rowLength)
        clip = .allocate(capacity: 3 * width)
        slope = .allocate(capacity: rowLength)
        offset = .allocate(capacity: rowLength)
    }

    func deallocate() {
        values.deallocate(); clip.deallocate(); slope.deallocate(); offset.deallocate()
    }

    /// Reads `rows` (three) of `frame`; the response of the middle one (1 and 0 without).
    func read(_ frame: BracketSamples, rows: [Int]) {
        for (i, y) in rows.enumerated() {
            let response = i == 1 && frame.hasResponse ? (slope, offset) : nil
            frame.row(y, values + i * rowLength, clip + i * width, response)
        }
        if !frame.hasResponse {
            slope.update(repeating: 1, count: rowLength)
            offset.update(repeating: 0, count: rowLength)
        }
    }

    /// The mean of sample (x, p)'s four neighbours `step` away in the middle row's frame.
    func neighbourMean(_ x: Int, _ p: Int, step d: Int, planes: Int) -> Double {
        let sum = Double(values[x * planes + p]) + Double(values[2 * rowLength + x * planes + p])
            + Double(values[rowLength + (x - d) * planes + p]) + Double(values[rowLength + (x + d) * planes + p])
        return sum / 4
    }
}
