import Engine
import Foundation
import ImageCore

/// The temporal noise of one camera plane of one frame (DNG NoiseProfile): a Stage 2 value
/// x has variance `S · x + O`; after a gain g (OpcodeList2) the value v = g · x has
/// variance `g · S · v + g² · O`.
public struct PlaneNoise: Sendable, Equatable, Codable {
    public var scale: Double
    public var offset: Double

    public init(scale: Double, offset: Double) {
        self.scale = scale
        self.offset = offset
    }

    /// The variance of a value `v` (≥ 0 taken for the shot term) that a gain `g` multiplied.
    @inline(__always)
    func variance(_ v: Double, gain g: Double) -> Double {
        g * scale * max(v, 0) + g * g * offset
    }
}

/// One frame's Stage 2 as the estimator reads it: row by row.
public struct BracketSamples: Sendable {
    /// Writes ActiveArea row y: `width × planes` values (OpcodeList2's gains applied) and
    /// `width` clip-mask bytes (bit p: plane p at or above the white level).
    public var row: @Sendable (_ y: Int, _ values: UnsafeMutablePointer<Float>, _ clip: UnsafeMutablePointer<UInt8>) -> Void
    /// Per sample, OpcodeList2's gain (nil: 1).
    public var gains: [Float]?
    /// The frame's exposure relative to the reference frame's (its values ÷ this are in the
    /// reference's units).
    public var exposure: Double
    /// The NoiseProfile pairs by plane or CFA colour (`NoiseColours`).
    public var noise: [PlaneNoise]

    public init(frame: FrameStage2, exposure: Double, noise: [PlaneNoise]) {
        row = { y, values, clip in frame.row(y, values: values, clip: clip) }
        gains = frame.gains
        self.exposure = exposure
        self.noise = noise
    }

    /// Samples held in arrays (`width` pixels per row, `planes` interleaved).
    public init(values: [Float], clipMask: [UInt8], gains: [Float]?, exposure: Double, noise: [PlaneNoise], width: Int, planes: Int) {
        row = { y, out, clip in
            values.withUnsafeBufferPointer { out.update(from: $0.baseAddress! + y * width * planes, count: width * planes) }
            clipMask.withUnsafeBufferPointer { clip.update(from: $0.baseAddress! + y * width, count: width) }
        }
        self.gains = gains
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
        var out = [Float](repeating: 0, count: deviation.count)
        deviation.withUnsafeBufferPointer { d in out.withUnsafeMutableBufferPointer { HalfConversion.convert(d, to: $0) } }
        deviation = []
        out.withUnsafeMutableBufferPointer { p in
            nonisolated(unsafe) let p = p
            Parallel.forEachChunk(count: p.count, minimumChunk: 1 << 16) { range in for i in range { p[i] *= p[i] } }
        }
        variance = out
    }
}

/// The noise-optimal merge of raw frames of one scene (docs/merge.md): for each sample, with
/// exposures e_i (relative to the reference) and values v_i,
/// Φ̂ = Σ w_i · v_i / e_i ÷ Σ w_i, w_i = e_i² / σ_i²(e_i · Φ̂), Var Φ̂ = 1 / Σ w_i,
/// the variances taken from the NoiseProfile at the *predicted* value e_i · Φ̂ (not the
/// observed one, whose noise would bias the weights), iterated from the longest valid
/// frame's value. A sample is left out when it is clipped (clip mask), when its value
/// reaches `saturation` (of the white level, before OpcodeList2's gain), or when its
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
        let count = width * height * planes
        precondition(!frames.isEmpty && frames.count <= 64)
        precondition(frames.allSatisfy { ($0.gains?.count ?? count) == count })
        var values = [Float](repeating: 0, count: count)
        var variance = [Float](repeating: 0, count: compact ? 0 : count)
        var deviation = [Float16](repeating: 0, count: compact ? count : 0)
        // Rows with a standard deviation beyond half's range (compact only).
        var overflowRows = [UInt8](repeating: 0, count: compact ? height : 0)
        var used = [UInt8](repeating: 0, count: count), lowerBound = [UInt8](repeating: 0, count: width * height)
        // Longest exposure first: the first valid sample in this order starts the iteration.
        let order = frames.indices.sorted { frames[$0].exposure > frames[$1].exposure }
        let sorted = order.map { frames[$0] }
        let sat = saturation, passes = max(1, iterations)
        let n = frames.count
        let exposures = sorted.map(\.exposure)
        // The noise of frame j for colour c at [j * 3 + c].
        let noiseScale = sorted.flatMap { f in (0..<3).map { f.noise[min($0, f.noise.count - 1)].scale } }
        let noiseOffset = sorted.flatMap { f in (0..<3).map { f.noise[min($0, f.noise.count - 1)].offset } }
        let hasGains = sorted.map { $0.gains != nil }
        let rowLength = width * planes
        withPointers(sorted.map { $0.gains ?? [] }) { framesGains in
        values.withUnsafeMutableBufferPointer { vOut in
        variance.withUnsafeMutableBufferPointer { varOut in
        deviation.withUnsafeMutableBufferPointer { devOut in
        overflowRows.withUnsafeMutableBufferPointer { overflowOut in
        used.withUnsafeMutableBufferPointer { usedOut in
        lowerBound.withUnsafeMutableBufferPointer { lbOut in
            nonisolated(unsafe) let vOut = vOut, varOut = varOut, devOut = devOut, usedOut = usedOut, lbOut = lbOut
            nonisolated(unsafe) let overflowOut = overflowOut
            nonisolated(unsafe) let framesGains = framesGains
            Parallel.forEachChunk(count: height, minimumChunk: 8) { rows in
                // Each frame's row, linearized here: the frames stay in their stored form.
                let rowValues = UnsafeMutablePointer<Float>.allocate(capacity: n * rowLength)
                let rowClip = UnsafeMutablePointer<UInt8>.allocate(capacity: n * width)
                // A row of standard deviations, converted to half floats at once (F16C) when compact.
                let rowDeviation = UnsafeMutablePointer<Float>.allocate(capacity: rowLength)
                defer { rowValues.deallocate(); rowClip.deallocate(); rowDeviation.deallocate() }
                withUnsafeTemporaryAllocation(of: Double.self, capacity: 12 * n) { scratch in
                    let v = scratch.baseAddress!, g = v + n, s = v + 2 * n, o = v + 3 * n, valid = v + 4 * n
                    // Per frame: e, then S and O of each colour.
                    let e = v + 5 * n, noiseS = v + 6 * n, noiseO = v + 9 * n
                    for j in 0..<n {
                        e[j] = exposures[j]
                        for c in 0..<3 {
                            noiseS[3 * j + c] = noiseScale[3 * j + c]
                            noiseO[3 * j + c] = noiseOffset[3 * j + c]
                        }
                    }
                    let linearRaw = colours.isPlanes
                    for y in rows {
                        for j in 0..<n { sorted[j].row(y, rowValues + j * rowLength, rowClip + j * width) }
                        for x in 0..<width {
                            let pixel = y * width + x
                            var bound: UInt8 = 0
                            for p in 0..<planes {
                                let k = pixel * planes + p, r = x * planes + p
                                let bit = UInt8(1) << UInt8(p)
                                let c = linearRaw ? min(p, 2) : colours.colour(row: y, column: x, plane: p)
                                var validCount = 0
                                for j in 0..<n {
                                    v[j] = Double(rowValues[j * rowLength + r])
                                    g[j] = hasGains[j] ? Double(framesGains[j][k]) : 1
                                    s[j] = noiseS[j * 3 + c]
                                    o[j] = noiseO[j * 3 + c]
                                    let ok = rowClip[j * width + x] & bit == 0 && v[j] < sat * g[j]
                                    valid[j] = ok ? 1 : 0
                                    if ok { validCount += 1 }
                                }
                                var phi = 0.0, den = 0.0, frameCount = 0
                                if validCount > 0 {
                                    for j in 0..<n where valid[j] != 0 { phi = v[j] / e[j]; break }
                                    // One valid frame: one pass (its near-saturation test); more: until
                                    // the weights at the predicted value settle.
                                    for pass in 0..<(validCount == 1 ? 1 : passes) {
                                        var num = 0.0
                                        den = 0
                                        frameCount = 0
                                        for j in 0..<n where valid[j] != 0 {
                                            let predicted = max(e[j] * phi, 0)
                                            let s2 = max(g[j] * s[j] * predicted + g[j] * g[j] * o[j], 1e-30)
                                            // Left out within 3 σ of saturation: predicted + 3σ ≥ sat · g.
                                            let room = sat * g[j] - predicted
                                            if room <= 0 || 9 * s2 >= room * room { continue }
                                            // w = e² / σ², w · v / e = e · v / σ².
                                            let inverse = 1 / s2
                                            num += e[j] * v[j] * inverse
                                            den += e[j] * e[j] * inverse
                                            frameCount += 1
                                        }
                                        if den == 0 { break }
                                        let next = num / den
                                        let settled = pass > 0 && abs(next - phi) <= 1e-7 * abs(next)
                                        phi = next
                                        if settled { break }
                                    }
                                }
                                guard den > 0 else {
                                    // Every sample is clipped, saturated or within 3 σ of
                                    // saturation: not trusted as a value, a lower bound.
                                    var lower = -Double.infinity
                                    for j in 0..<n { lower = max(lower, v[j] / e[j]) }
                                    vOut[k] = Float(lower)
                                    if compact { rowDeviation[r] = 0 } else { varOut[k] = 0 }
                                    usedOut[k] = 0
                                    bound |= bit
                                    continue
                                }
                                vOut[k] = Float(phi)
                                if compact { rowDeviation[r] = Float((1 / den).squareRoot()) } else { varOut[k] = Float(1 / den) }
                                usedOut[k] = UInt8(frameCount)
                            }
                            lbOut[pixel] = bound
                        }
                        if compact {
                            let beyond = HalfConversion.convert(UnsafeBufferPointer(start: rowDeviation, count: rowLength),
                                                                to: UnsafeMutableBufferPointer(rebasing: devOut[(y * rowLength)..<((y + 1) * rowLength)]))
                            if beyond > 0 { overflowOut[y] = 1 }
                        }
                    }
                }
            }
        }
        }
        }
        }
        }
        }
        }
        return MergedSamples(values: values, variance: variance, deviation: deviation, frames: used, lowerBound: lowerBound,
                             deviationOverflows: overflowRows.contains(1))
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

/// Runs `body` with a pointer to each array's elements (valid inside `body` only).
func withPointers<T, R>(_ arrays: [[T]], _ body: ([UnsafePointer<T>]) -> R) -> R {
    func nest(_ i: Int, _ collected: [UnsafePointer<T>]) -> R {
        guard i < arrays.count else { return body(collected) }
        return arrays[i].withUnsafeBufferPointer { buffer in
            // An empty array has no elements to point to: a pointer it is never read through.
            nest(i + 1, collected + [buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!])
        }
    }
    return nest(0, [])
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
        // Rows y − step, y, y + step of each frame.
        var rowsA = [Float](repeating: 0, count: 3 * rowLength), rowsB = rowsA
        var clipA = [UInt8](repeating: 0, count: 3 * width), clipB = clipA
        var y = step
        while y < height - step {
            defer { y += rowStep }
            rowsA.withUnsafeMutableBufferPointer { ra in clipA.withUnsafeMutableBufferPointer { ca in
                for (i, yy) in [y - step, y, y + step].enumerated() { a.row(yy, ra.baseAddress! + i * rowLength, ca.baseAddress! + i * width) }
            } }
            rowsB.withUnsafeMutableBufferPointer { rb in clipB.withUnsafeMutableBufferPointer { cb in
                for (i, yy) in [y - step, y, y + step].enumerated() { b.row(yy, rb.baseAddress! + i * rowLength, cb.baseAddress! + i * width) }
            } }
            func neighbourMean(_ r: [Float], _ x: Int, _ p: Int) -> Double {
                let d = step
                let sum = Double(r[x * planes + p]) + Double(r[2 * rowLength + x * planes + p])
                    + Double(r[rowLength + (x - d) * planes + p]) + Double(r[rowLength + (x + d) * planes + p])
                return sum / 4
            }
            for x in step..<(width - step) {
                let pixel = y * width + x
                for p in 0..<planes {
                    let bit = UInt8(1) << UInt8(p)
                    guard clipA[width + x] & bit == 0, clipB[width + x] & bit == 0 else { continue }
                    let k = pixel * planes + p
                    let ni = colours.colour(row: y, column: x, plane: p)
                    let ga = a.gains.map { Double($0[k]) } ?? 1, gb = b.gains.map { Double($0[k]) } ?? 1
                    let na = a.noise[ni], nb = b.noise[ni]
                    let ma = neighbourMean(rowsA, x, p), mb = neighbourMean(rowsB, x, p)
                    guard ma < limit * ga, mb < limit * gb, ma > 10 * ga * na.offset.squareRoot(),
                          mb > 10 * gb * nb.offset.squareRoot() else { continue }
                    let w = 1 / (na.variance(ma, gain: ga) + nominal * nominal * nb.variance(mb, gain: gb))
                    guard w.isFinite, w > 0 else { continue }
                    let sa = Double(rowsA[rowLength + x * planes + p]), sb = Double(rowsB[rowLength + x * planes + p])
                    let da = sa - ma, db = sb - mb
                    smooth.append(da * da <= 16 * na.variance(ma, gain: ga) && db * db <= 16 * nb.variance(mb, gain: gb))
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
