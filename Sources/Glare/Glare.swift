import Measuring
import Analysis
import Engine
import Foundation
import ImageCore
import Photometry

/// How glare is evaluated (docs/glare.md): evalglare's defaults unless changed.
public struct GlareRequest: Sendable, Equatable, Codable {
    /// Above 100: the luminance (cd/m²) a pixel must exceed to be part of a glare source;
    /// 100 or less: a factor on the mean luminance of the image circle (evalglare's -b).
    public var threshold = 2000.0
    /// Pixels at or above this luminance leave their source for sources of their own
    /// (evalglare's -y/-Y); nil: no split.
    public var peakLimit: Double? = 50_000
    /// Candidate pixels closer than this angle (radians) belong to one source (evalglare's -r
    /// 0.2 compares twice the angle).
    public var mergeAngle = 0.1
    /// Monte Carlo draws for the intervals, and their seed.
    public var draws = 200
    public var seed: UInt64 = 1

    public init() {}

    /// What is wrong with the request, if anything.
    public var problem: String? {
        if !(threshold > 0) || !threshold.isFinite { return "the glare-source threshold must be a positive number (got \(threshold))" }
        if let p = peakLimit, !(p > 0) || !p.isFinite { return "the peak limit must be a positive number (got \(p))" }
        if !(mergeAngle >= 0.002 && mergeAngle <= 1) { return "the merge angle must lie between 0.002 and 1 rad (0.11° to 57°; got \(mergeAngle))" }
        if draws < 40 || draws > 100_000 { return "the number of draws must lie between 40 and 100000 (got \(draws))" }
        return nil
    }
}

/// A glare metric with its uncertainty and what it is (`ResultKind`).
public struct GlareMetric: Codable, Sendable, Equatable {
    public var value: Double
    public var kind: ResultKind
    /// The standard deviation of the metric over the draws.
    public var standardUncertainty: Double
    /// The 2.5 % and 97.5 % points of the draws: only the lower end for a lower bound.
    public var low95: Double?
    public var high95: Double?
}

/// One glare source of the nominal evaluation.
public struct GlareSourceResult: Codable, Sendable, Equatable {
    /// Mean luminance (cd/m², ω-weighted), solid angle (sr), its part of E_v (lux).
    public var luminance: Double
    public var solidAngle: Double
    public var illuminance: Double
    /// Its position in the image (pixel coordinates, the pixel centres weighted by L ω), the
    /// angle from the view direction σ and the angle τ of its direction about the axis, from
    /// up (degrees), and the position index P there.
    public var x: Double, y: Double
    public var sigma: Double, tau: Double
    public var positionIndex: Double
    public var pixels: Int
    /// Its pixels with a channel clipped in every frame.
    public var clippedPixels: Int
}

/// DGP, DGI and UGR of a fisheye image, with their intervals and the sources found.
public struct GlareResult: Codable, Sendable, Equatable {
    public var file: String
    public var lens: FisheyeLens
    public var request: GlareRequest
    /// The threshold applied (cd/m²), and the circle's mean luminance it may come from.
    public var threshold: Double
    public var meanLuminance: Double
    /// E_v over the pixels in front of the lens (θ < 90°), lux, as the metrics use it.
    public var illuminance: GlareMetric
    /// L_b = (E_v − E_dir) / π, cd/m² (E_dir: the sources' part of E_v).
    public var backgroundLuminance: Double
    public var daylightGlareProbability: GlareMetric
    public var daylightGlareIndex: GlareMetric
    /// nil when the background luminance is not positive.
    public var unifiedGlareRating: GlareMetric?
    public var sources: [GlareSourceResult]
    /// The scale's relative standard uncertainty each draw applies (one factor per draw).
    public var scaleRelativeUncertainty: Double
    /// Where the pixel noise comes from: "standard deviation layer", "noise profile" or "none".
    public var noiseSource: String
    /// Pixels of the circle clipped in every frame, and of those outside every source.
    public var clippedPixels: Int
    public var clippedOutsideSources: Int
    /// Cautions for the reader (e.g. DGP below 0.2, outside the range of the user study).
    public var notes: [String]
}

/// The document `glare --json` prints (schema scenelinear.glare/1).
public struct GlareDocument: Codable {
    public var schema = "scenelinear.glare/1"
    public var results: [GlareResult]

    public init(results: [GlareResult]) {
        self.results = results
    }
}

extension Pipeline {
    /// The glare of the fisheye image at `path` (a DNG developed with `options` in absolute
    /// units, or an EXR/HDF5 file in luminance or radiance units), held whole: the lens
    /// resolved on it, E_v's scale uncertainty (lens terms included) for the draws.
    public static func glare(_ path: String, lens request: FisheyeLensRequest, options: DevelopOptions,
                             request glare: GlareRequest = GlareRequest()) throws -> GlareResult {
        let input = try AnalysisInput.load(path, options: options)
        let lens = try request.lens(for: input.image, path: path)
        return try Self.glare(input, lens: lens, request: glare)
    }

    /// The glare of an image in memory through `lens`.
    public static func glare(_ input: AnalysisInput, lens: FisheyeLens, request: GlareRequest = GlareRequest()) throws -> GlareResult {
        let geometry = FisheyeGeometry(lens: lens, width: input.image.width, height: input.image.height).whole()
        let e = try illuminance(input, geometry: geometry)
        return try GlareEvaluation.evaluate(input, geometry: geometry, scaleRelativeUncertainty: e.scaleRelativeUncertainty, request: request)
    }
}

/// The glare metrics of one image: its candidate pixels, E_v and what draws perturb.
public struct GlareEvaluation: Sendable {
    static let (c1, c2, c3) = (5.87e-5, 0.092, 0.159)

    let lens: FisheyeLens
    let width: Int
    let candidates: GlareCandidates
    /// The detection over them, the pixels above the threshold in every draw joined once.
    let detection: GlareDetection
    /// E_v (lux), the part of it from pixels that are not candidates and that part's variance.
    let illuminance: Double, restIlluminance: Double, restVariance: Double
    let meanLuminance: Double
    let clippedPixels: Int
    /// Whether the image carries a clip mask (without one, clipping is unknown).
    let clippingKnown: Bool
    let noiseSource: String

    /// Evaluates the glare of `input` (absolute units) through `geometry`, the scale's relative
    /// uncertainty `scaleU` drawn once per draw.
    public static func evaluate(_ input: AnalysisInput, geometry: FisheyeGeometry, scaleRelativeUncertainty scaleU: Double,
                                request: GlareRequest = GlareRequest()) throws -> GlareResult {
        if let problem = request.problem { throw PhotometryError(path: input.path, reason: problem, category: .usage) }
        try Pipeline.requireAbsolute(input.image.exposure.mode, path: input.path)
        let evaluation = GlareEvaluation(input, geometry: geometry, request: request, scaleU: scaleU)
        guard evaluation.illuminance > 0 else {
            throw PhotometryError(path: input.path, reason: "the image circle gives no light (E_v ≤ 0): glare cannot be evaluated", category: .corruptData)
        }
        return evaluation.result(path: input.path, request: request, scaleU: scaleU)
    }

    init(_ input: AnalysisInput, geometry: FisheyeGeometry, request: GlareRequest, scaleU: Double) {
        let image = input.image, lens = geometry.lens, width = image.width
        let toLuminance = image.exposure.mode == .radiance ? Photometric.radianceEfficacy : 1
        let weights = Rec2020.luminanceWeights * toLuminance
        let kernel = input.noise.map { NoiseModel.Kernel($0) }
        var e = 0.0, lumOmega = 0.0, omegaSum = 0.0, clipped = 0
        var found = GlareCandidates(), restE = 0.0, restV = 0.0
        let samples = image.pixels.samples, mask = image.clipMask, deviation = input.deviation
        func luminance(_ i: Int) -> (rgb: SIMD3<Double>, y: Double) {
            let rgb = SIMD3(Double(samples[3 * i]), Double(samples[3 * i + 1]), Double(samples[3 * i + 2]))
            return (rgb, (rgb * weights).sum())
        }
        // A candidate can exceed the threshold in some draw: within 5 σ of it, at a scale 5 u up.
        func sort(_ i: Int, _ theta: Double, _ omega: Double, _ rgb: SIMD3<Double>, _ y: Double, reach: Double) {
            let w = cos(theta) * omega
            let variance: Double
            if let deviation {
                variance = deviation.luminanceVariance(pixel: i) * toLuminance * toLuminance
            } else if let kernel {
                let g = kernel.pixelGains.map { Double($0[i]) } ?? 1
                variance = kernel.regionVariance(weightedOutputs: rgb * g, weightedGains: g * g).y * toLuminance * toLuminance
            } else {
                variance = 0
            }
            let sigma = max(0, variance).squareRoot()
            if y + 5 * sigma > reach {
                let u = lens.direction(x: Double(i % width) + 0.5, y: Double(i / width) + 0.5) ?? SIMD3(0, 0, 1)
                found.append(pixel: i, luminance: y, deviation: sigma, weight: w, omega: omega, clipped: mask?[i] ?? 0 != 0, direction: u)
            } else {
                restE += y * w
                restV += variance * w * w
            }
        }
        // One pass for E_v, the mean luminance and, with an absolute threshold, the candidates;
        // a threshold relative to the mean sorts the pixels in a second pass.
        let absolute = request.threshold > 100
        Self.scan(image, geometry: geometry) { i, theta, omega in
            let (rgb, y) = luminance(i)
            guard y.isFinite, theta < .pi / 2 else { return }
            e += y * cos(theta) * omega
            lumOmega += y * omega
            omegaSum += omega
            if mask?[i] ?? 0 != 0 { clipped += 1 }
            if absolute { sort(i, theta, omega, rgb, y, reach: request.threshold * exp(-5 * scaleU)) }
        }
        let mean = omegaSum > 0 ? lumOmega / omegaSum : 0
        if !absolute {
            Self.scan(image, geometry: geometry) { i, theta, omega in
                let (rgb, y) = luminance(i)
                guard y.isFinite, theta < .pi / 2 else { return }
                sort(i, theta, omega, rgb, y, reach: request.threshold * mean)
            }
        }
        meanLuminance = mean
        found.link(width: width, height: image.height, mergeAngle: request.mergeAngle)
        self.lens = lens
        self.width = width
        candidates = found
        // Above the threshold in every draw: 5 σ below and at a scale 5 u down, still above it.
        let sureAbove = absolute ? request.threshold * exp(5 * scaleU) : request.threshold * mean
        var detection = GlareDetection(candidates: found, mergeAngle: request.mergeAngle, imageWidth: width)
        detection.prepare(sure: found.luminance.indices.map { found.luminance[$0] - 5 * found.deviation[$0] > sureAbove })
        self.detection = detection
        illuminance = e
        restIlluminance = restE
        restVariance = restV
        clippedPixels = clipped
        clippingKnown = image.clipMask != nil
        noiseSource = input.deviation != nil ? "standard deviation layer" : kernel != nil ? "noise profile" : "none"
    }

    /// Calls `body` with the index, θ and ω of every pixel of the image circle, band by band.
    static func scan(_ image: SceneLinearImage, geometry: FisheyeGeometry, _ body: (Int, Double, Double) -> Void) {
        let b = geometry.bounds, width = image.width
        guard b.bottom > b.top, b.right > b.left else { return }
        var top = b.top
        while top < b.bottom {
            let band = PixelRect(top: top, left: b.left, bottom: min(b.bottom, top + 64), right: b.right)
            geometry.withValues(in: band) { theta, omega, stride in
                for y in band.top..<band.bottom {
                    for x in band.left..<band.right {
                        let k = (y - band.top) * stride + (x - band.left)
                        if omega[k] > 0 { body(y * width + x, Double(theta[k]), omega[k]) }
                    }
                }
            }
            top = band.bottom
        }
    }

    /// The metrics of one evaluation: luminances of the candidates and E_v as they are in it.
    struct Numbers: Sendable {
        var illuminance = 0.0, direct = 0.0
        var dgp = 0.0, dgi = 0.0
        var ugr: Double?
        var background: Double { (illuminance - direct) / .pi }
    }

    /// Detects the sources among the candidates at `luminance` and computes the metrics.
    func numbers(luminance: [Double], illuminance ev: Double, threshold: Double, request: GlareRequest) -> (Numbers, [GlareSourceSums]) {
        let sources = detection.sources(luminance: luminance, threshold: threshold, peakLimit: request.peakLimit).sources
        var n = Numbers(illuminance: ev, direct: sources.reduce(0) { $0 + $1.illuminance })
        let lb = n.background
        // Σ L² ω / P² (DGP's and UGR's sum) and DGI's sum, P once per source.
        var squares = 0.0, dgiSum = 0.0
        for s in sources {
            let p = Self.positionIndex(lens, at: s.centre).index, l = s.luminance, w = s.omega
            squares += l * l * w / (p * p)
            dgiSum += 0.478 * pow(l, 1.6) * pow(w / (p * p), 0.8) / (lb + 0.07 * w.squareRoot() * l)
        }
        n.dgp = min(1, Self.c1 * ev + Self.c3 + Self.c2 * log10(1 + squares / pow(ev, 1.87)))
        n.dgi = sources.isEmpty ? 0 : 10 * log10(dgiSum)
        n.ugr = sources.isEmpty ? 0 : lb > 0 ? 8 * log10(0.25 / lb * squares) : nil
        return (n, sources)
    }

    /// Guth's position index at image point `centre` (evalglare's form of it): from the
    /// IES handbook's equation above the line of sight, Iwata and Osterhaus's below it; at
    /// most 16. Also σ and τ, degrees.
    public static func positionIndex(_ lens: FisheyeLens, at centre: SIMD2<Double>) -> (index: Double, sigma: Double, tau: Double) {
        let d = lens.direction(x: centre.x, y: centre.y) ?? SIMD3(0, 0, 1)
        let deg = 180 / Double.pi
        let sigma = acos(min(1, max(-1, d.z))) * deg
        let planar = (d.x * d.x + d.y * d.y).squareRoot()
        let tau = planar > 0 ? acos(min(1, max(-1, d.y / planar))) * deg : 0
        var p: Double
        if d.y < 0 {
            let beta = atan(tan(sigma / deg) * (1 + 0.3225 * pow(cos(tau / deg), 2)).squareRoot()) * deg
            p = exp(6.49e-3 * beta + 21e-5 * beta * beta)
        } else {
            p = exp((35.2 - 0.31889 * tau - 1.22 * exp(-2 * tau / 9)) * 1e-3 * sigma + (21 + 0.26667 * tau - 0.002963 * tau * tau) * 1e-5 * sigma * sigma)
        }
        p = min(p, 16)
        return (p, sigma, tau)
    }
}
