import Measuring
import Analysis
import Foundation
import ImageCore
import Synchronization

/// The glare metrics' intervals, by Monte Carlo (docs/glare.md#intervals): detection is a
/// threshold, so no sensitivity holds once a pixel crosses it. Each draw scales the whole image
/// by one factor K = exp(u · z) (the absolute scale is shared by every pixel), adds to each
/// candidate pixel its own noise (σ from the standard deviation layer or the noise profile)
/// and to the rest of E_v the noise of its sum, detects the sources again and recomputes the
/// metrics. The 95 % interval is the hull of the basic bootstrap's (the draws' 2.5 % and 97.5 %
/// points reflected about the value) and the percentile one (`result`). Draw d uses its own
/// stream of the seed, so the result does not depend on the number of threads.
extension GlareEvaluation {
    func result(path: String, request: GlareRequest, scaleU: Double) -> GlareResult {
        let absolute = request.threshold > 100
        let threshold = absolute ? request.threshold : request.threshold * meanLuminance
        let (nominal, sources) = numbers(luminance: candidates.luminance, illuminance: illuminance, threshold: threshold, request: request)
        let draws = self.draws(request: request, scaleU: scaleU, absolute: absolute)
        let clippedInSources = sources.reduce(0) { $0 + $1.clippedPixels }
        let outside = clippedPixels - clippedInSources
        let kind: ResultKind = !clippingKnown ? .clippingUnknown : clippedPixels == 0 ? .value : outside == 0 ? .lowerBound : .undetermined
        let eKind: ResultKind = !clippingKnown ? .clippingUnknown : clippedPixels == 0 ? .value : .lowerBound
        // The hull of the basic (reflected) bootstrap interval [2v − q97.5, 2v − q2.5] and the
        // percentile one [q2.5, q97.5]. Where the draws scatter about the value as the value
        // scatters about the truth, the reflected interval removes their bias (noise adds to L²
        // and lifts pixels over the threshold) and the two nearly agree; where a flat part of
        // the map lies at the threshold, the draws split between two detections, the value may
        // fall on either side, and the hull covers both.
        func metric(_ value: Double, _ kind: ResultKind, most: Double = .infinity, _ pick: (Numbers) -> Double?) -> GlareMetric {
            let values = draws.compactMap(pick).sorted()
            let mean = values.reduce(0, +) / Double(max(1, values.count))
            let u = (values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(max(1, values.count - 1))).squareRoot()
            let (q1, q2) = (Self.quantile(values, 0.025), Self.quantile(values, 0.975))
            let low = q1.flatMap { a in q2.map { b in min(most, a, 2 * value - b, value) } }
            let high = q1.flatMap { a in q2.map { b in min(most, max(b, 2 * value - a, value)) } }
            return GlareMetric(value: value, kind: kind, standardUncertainty: u,
                               low95: kind == .value || kind == .lowerBound || kind == .clippingUnknown ? low : nil,
                               high95: kind == .value || kind == .clippingUnknown ? high : nil)
        }
        var notes: [String] = []
        if nominal.dgp < 0.2 { notes.append("DGP below 0.2 lies outside the range of the study it was fitted to") }
        if lens.fieldOfView < 179.5 { notes.append("the view covers less than the hemisphere: light from outside it is missing from every metric") }
        if noiseSource == "none" { notes.append("pixel noise is not known for this file: the intervals carry the scale's uncertainty only") }
        if outside > 0 { notes.append("\(outside) clipped pixels lie outside every glare source: the metrics may move either way") }
        return GlareResult(
            file: path, lens: lens, request: request, threshold: threshold, meanLuminance: meanLuminance,
            illuminance: metric(illuminance, eKind) { $0.illuminance },
            backgroundLuminance: nominal.background,
            daylightGlareProbability: metric(nominal.dgp, kind, most: 1) { $0.dgp },
            daylightGlareIndex: metric(nominal.dgi, kind) { $0.dgi },
            unifiedGlareRating: nominal.ugr.map { ugr in metric(ugr, kind) { $0.ugr } },
            sources: sources.map { s in
                let (p, sigma, tau) = Self.positionIndex(lens, at: s.centre)
                return GlareSourceResult(luminance: s.luminance, solidAngle: s.omega, illuminance: s.illuminance, x: s.centre.x, y: s.centre.y,
                                         sigma: sigma, tau: tau, positionIndex: p, pixels: s.pixels, clippedPixels: s.clippedPixels)
            },
            scaleRelativeUncertainty: scaleU, noiseSource: noiseSource, clippedPixels: clippedPixels, clippedOutsideSources: outside, notes: notes)
    }

    /// The metrics of every draw, in draw order.
    func draws(request: GlareRequest, scaleU: Double, absolute: Bool) -> [Numbers] {
        let out = Mutex([Numbers?](repeating: nil, count: request.draws))
        let chunks = min(request.draws, 8 * Parallel.threadCount)
        Parallel.forEach(chunks) { c in
            for d in stride(from: c, to: request.draws, by: chunks) {
                let n = draw(d, request: request, scaleU: scaleU, absolute: absolute)
                out.withLock { $0[d] = n }
            }
        }
        return out.withLock { $0.compactMap { $0 } }
    }

    /// Draw `d`: one scale factor, each candidate's noise, the rest of E_v's noise.
    func draw(_ d: Int, request: GlareRequest, scaleU: Double, absolute: Bool) -> Numbers {
        var random = GlareRandom(seed: request.seed, stream: UInt64(d))
        let k = exp(scaleU * random.normal())
        var luminance = candidates.luminance
        var e = restIlluminance + restVariance.squareRoot() * random.normal()
        for i in 0..<luminance.count {
            let l = candidates.luminance[i] + candidates.deviation[i] * random.normal()
            e += l * candidates.weight[i]
            luminance[i] = k * l
        }
        let threshold = absolute ? request.threshold : request.threshold * k * meanLuminance
        return numbers(luminance: luminance, illuminance: k * e, threshold: threshold, request: request).0
    }

    /// The p-quantile of sorted values (linear between order statistics); nil when empty.
    static func quantile(_ sorted: [Double], _ p: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let h = p * Double(sorted.count - 1), i = Int(h.rounded(.down)), f = h - Double(i)
        return i + 1 < sorted.count ? sorted[i] + f * (sorted[i + 1] - sorted[i]) : sorted[i]
    }
}

/// The draws' normal deviates: one `SeededRandom` stream per draw of the seed.
struct GlareRandom {
    private var generator: SeededRandom

    init(seed: UInt64, stream: UInt64) {
        generator = SeededRandom(state: seed &* 0x9E37_79B9_7F4A_7C15 ^ (stream &+ 1) &* 0xBF58_476D_1CE4_E5B9)
    }

    mutating func normal() -> Double { generator.normal() }
}
