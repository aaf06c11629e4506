import SceneLinearKit
import Analysis
import CaptureSimulation
import Foundation

/// Pass/fail limits of `validate`.
public struct ValidationThresholds: Codable, Sendable, Equatable {
    /// The decode must equal the exact decode of the stored codes to half-float rounding:
    /// relative error ≤ 2⁻¹⁰ where the value exceeds 2⁻¹² of white, absolute ≤ 2⁻²² below.
    public var decodeRelative = 1.0 / 1024
    public var decodeFloor = 1.0 / 4096
    /// Per-patch mean bias against the true radiance (noise on): ≤ 0.1 %, or ≤ 3 standard
    /// errors of the patch mean where noise makes 0.1 % unmeasurable.
    public var meanBias = 0.001
    public var biasStandardErrors = 3.0
    /// Measured variance within 5 % of the NoiseProfile prediction (or 3 standard errors of
    /// a variance estimate, √(2/(n−1)), for small patches), for patches of at least 500 pixels.
    public var varianceRelative = 0.05
    public var varianceMinimumPixels = 500

    public init() {}
}

/// One patch of known radiance, measured.
public struct PatchValidation: Codable, Sendable {
    public var name: String
    public var pixels: Int
    /// log₂(1 / true Y): how many stops below white the patch is.
    public var stopsBelowWhite: Double
    public var truth: [Double]
    public var measured: [Double]
    public var relativeBias: [Double]
    /// Standard error of the measured mean (measured spread / √n), per channel.
    public var standardError: [Double]
    public var clippedFraction: Double
    public var measuredVariance: [Double]
    public var predictedVariance: [Double]?
    public var varianceRatio: [Double]?
    /// nil when not checked (clipped, noise off, too few pixels).
    public var biasPassed: Bool?
    public var variancePassed: Bool?
}

/// A radiance ratio recovered against its true value.
public struct RatioValidation: Codable, Sendable {
    public var trueRatio: Double
    public var measured: RadianceRatio
    /// Whether the 95 % interval contains the true ratio.
    public var covered: Bool
}

/// The comparison of a decoded simulated capture with its truth.
public struct ValidationReport: Codable, Sendable {
    public var schema = "scenelinear.validation/1"
    public var capture: String
    public var scene: String
    public var layout: String
    public var noise: Bool
    public var demosaic: String
    public var thresholds: ValidationThresholds
    /// Decode against the exact decode of the stored codes.
    public var exactDecode: ExactDecode
    public var patches: [PatchValidation]
    public var ratios: [RatioValidation]
    /// Absolute units: the camera constant (from the calibration given, or the estimate from
    /// the exposure metadata) against the simulation's true one, and each patch's luminance;
    /// nil for records without photometry.
    public var absolute: AbsoluteValidation?
    public var passed: Bool

    public struct ExactDecode: Codable, Sendable {
        public var values: Int
        public var failures: Int
        public var maxRelativeError: Double
        public var maxAbsoluteErrorBelowFloor: Double
        public var clipMasksEqual: Bool
        public var passed: Bool
    }
}

extension Pipeline {
    /// Decodes the simulated capture `dngPath` and compares it with its `record`.
    ///
    /// - Parameter ratios: pairs of patch names (numerator, denominator) whose luminance ratio
    ///   is recovered with its 95 % interval; by default "sky"/"sun" when both exist.
    /// - Throws: the pipeline's errors, or `AnalysisError` when the record does not fit the capture.
    public static func validate(dngPath: String, record: SimulationRecord, ratios: [(String, String)]? = nil,
                                thresholds: ValidationThresholds = ValidationThresholds(),
                                calibration: CameraCalibration? = nil, lens: LensCalibration? = nil) throws -> ValidationReport {
        var options = DevelopOptions()
        options.crop = .none
        options.applyOrientation = false
        options.demosaic = .superpixel
        options.lens = lens
        let developed = try develop(path: dngPath, options: options)
        let image = developed.image
        // Rebuild the truth from the record: scene → radiance, camera → stored codes.
        let scene = try RenderedScene(record.scene)
        let capture = try Simulator.capture(scene, camera: record.camera)
        let raw = developed.rawIFD
        guard capture.dng.samples.count == raw.width * raw.height * raw.samplesPerPixel else {
            throw AnalysisError(reason: "\(dngPath) does not have the size of the simulation in its record")
        }
        var (exact, exactMask) = capture.decode(cameraToOutput: developed.color.matrix)
        guard exact.width == image.width, exact.height == image.height else {
            throw AnalysisError(reason: "decoded \(image.width)×\(image.height), the record gives \(exact.width)×\(exact.height)")
        }
        // With a lens calibration, the exact decode corrected as the pipeline corrects: in
        // camera RGB, each channel divided by the calibration's V_c at the pixel.
        if let resolved = try options.lens?.forCapture(developed.dng.metadata, path: dngPath, allowOther: false) {
            exact = Self.dividedByFalloff(exact, lens: resolved, cameraToOutput: developed.color.matrix)
        }
        var failures = 0, worstRelative = 0.0, worstAbsolute = 0.0
        for (a, e) in zip(image.pixels.samples, exact.samples) {
            let d = abs(Double(Float16(a)) - e)
            if abs(e) > thresholds.decodeFloor {
                let r = d / abs(e)
                worstRelative = max(worstRelative, r)
                if r > thresholds.decodeRelative { failures += 1 }
            } else {
                worstAbsolute = max(worstAbsolute, d)
                if d > thresholds.decodeFloor * thresholds.decodeRelative { failures += 1 }
            }
        }
        let masksEqual = image.clipMask == exactMask
        let exactDecode = ValidationReport.ExactDecode(values: exact.samples.count, failures: failures,
                                                       maxRelativeError: worstRelative, maxAbsoluteErrorBelowFloor: worstAbsolute,
                                                       clipMasksEqual: masksEqual, passed: failures == 0 && masksEqual)

        let binning = capture.dng.cfaPattern == nil ? 1 : 2
        var noise = NoiseModel(noiseProfile: record.noiseProfile, cameraToOutput: developed.color.matrix.e, exposureFactor: 1,
                               planeVarianceScale: binning == 2 ? [1, 0.5, 1] : [1, 1, 1])
        if let gains = capture.pixelGains {
            // Lens shading: the gain of each output pixel (the mean of a superpixel's four sites).
            noise?.pixelGains = binning == 1 ? gains : (0..<(image.width * image.height)).map { i in
                let y = i / image.width, x = i % image.width, w = capture.dng.width
                return (gains[2 * y * w + 2 * x] + gains[2 * y * w + 2 * x + 1] + gains[(2 * y + 1) * w + 2 * x] + gains[(2 * y + 1) * w + 2 * x + 1]) / 4
            }
        }
        var patches: [PatchValidation] = []
        var measurements: [String: RegionMeasurement] = [:]
        for patch in record.patches {
            let weights = ownedPixels(patch, scene: scene, binning: binning, width: image.width, height: image.height)
            guard weights.contains(where: { $0 > 0 }) else { continue }
            let m = try RegionStatistics.measure(image, region: Region(name: patch.name, shape: .weights(weights)), noise: noise)
            measurements[patch.name] = m
            patches.append(validatePatch(patch, m, scale: capture.radianceToOutput, noise: record.camera.noise, thresholds: thresholds,
                                         checkVariance: lens == nil))
        }
        var ratioReports: [RatioValidation] = []
        let pairs = ratios ?? (measurements["sky"] != nil && measurements["sun"] != nil ? [("sky", "sun")] : [])
        for (n, d) in pairs {
            guard let a = measurements[n], let b = measurements[d],
                  let pa = record.patches.first(where: { $0.name == n }), let pb = record.patches.first(where: { $0.name == d }) else {
                throw AnalysisError(reason: "no patches named \(n) and \(d) in the record")
            }
            let measured = try RadianceRatio.between(a, b)
            let lum = Rec2020.luminanceWeights
            let truth = (SIMD3(pa.rgb[0], pa.rgb[1], pa.rgb[2]) * lum).sum() / (SIMD3(pb.rgb[0], pb.rgb[1], pb.rgb[2]) * lum).sum()
            let covered = measured.low95.map { $0 <= truth } == true && measured.high95.map { truth <= $0 } == true
            ratioReports.append(RatioValidation(trueRatio: truth, measured: measured, covered: covered))
        }
        let patchesPassed = patches.allSatisfy { $0.biasPassed != false && $0.variancePassed != false }
        let ratiosPassed = ratioReports.allSatisfy { $0.covered || !record.camera.noise }
        var absolute: AbsoluteValidation?
        if let truth = record.photometry {
            let scale = try Photometry.luminanceScale(developed.dng.metadata, path: dngPath, calibration: calibration)
            absolute = AbsoluteValidation(scale: scale, exposure: try Photometry.Settings.of(developed.dng.metadata, path: dngPath),
                                          truth: truth, measurements: measurements, order: record.patches.map(\.name))
        }
        return ValidationReport(capture: URL(fileURLWithPath: dngPath).lastPathComponent, scene: record.scene.name,
                                layout: record.camera.layout, noise: record.camera.noise,
                                demosaic: binning == 2 ? "superpixel" : "none (LinearRaw)", thresholds: thresholds,
                                exactDecode: exactDecode, patches: patches, ratios: ratioReports, absolute: absolute,
                                passed: exactDecode.passed && patchesPassed && ratiosPassed && absolute?.passed != false)
    }

    /// Weights (0/1) of the output pixels that show only the patch's radiance, 2 full-resolution
    /// pixels clear of its edges (whole 2×2 cells for superpixel output).
    static func ownedPixels(_ patch: Patch, scene: RenderedScene, binning: Int, width: Int, height: Int) -> [Float] {
        var weights = [Float](repeating: 0, count: width * height)
        let r = scene.radiance
        func owned(_ y: Int, _ x: Int) -> Bool {
            guard patch.contains(row: y, column: x, inset: 2) else { return false }
            return r[y, x, 0] == patch.rgb[0] && r[y, x, 1] == patch.rgb[1] && r[y, x, 2] == patch.rgb[2]
        }
        let top = max(0, patch.rect.top / binning), bottom = min(height, (patch.rect.bottom + binning - 1) / binning)
        let left = max(0, patch.rect.left / binning), right = min(width, (patch.rect.right + binning - 1) / binning)
        guard top < bottom, left < right else { return weights }
        for y in top..<bottom {
            for x in left..<right {
                var all = true
                for dy in 0..<binning { for dx in 0..<binning where !owned(y * binning + dy, x * binning + dx) { all = false } }
                if all { weights[y * width + x] = 1 }
            }
        }
        return weights
    }

    /// `exact` (output RGB, `cameraToOutput` M) with each camera channel divided by the lens's
    /// V_c at the pixel: M · diag(1 / V(r)) · M⁻¹ · value.
    static func dividedByFalloff(_ exact: ImageBuffer<Double>, lens: LensCalibration, cameraToOutput m: Matrix3) -> ImageBuffer<Double> {
        guard let inverse = m.inverse else { return exact }
        var out = exact
        for y in 0..<exact.height {
            for x in 0..<exact.width {
                let i = 3 * (y * exact.width + x)
                let r = lens.falloff.radius(x: x, y: y, width: exact.width, height: exact.height)
                var camera = inverse * SIMD3(exact.samples[i], exact.samples[i + 1], exact.samples[i + 2])
                for c in 0..<3 { camera[c] /= lens.falloff.transmission(channel: c, r: r) }
                let value = m * camera
                for c in 0..<3 { out.samples[i + c] = value[c] }
            }
        }
        return out
    }

    /// A patch's bias against the truth and its noise against the model. `checkVariance`
    /// false (a lens correction: its per-channel gains are not in the noise model) reports the
    /// variance ratio without a verdict.
    static func validatePatch(_ patch: Patch, _ m: RegionMeasurement, scale: Double, noise: Bool,
                              thresholds: ValidationThresholds, checkVariance: Bool = true) -> PatchValidation {
        let channels = ["R", "G", "B"]
        let truth = patch.rgb.map { $0 * scale }
        let measured = channels.map { m.channels[$0]!.mean }
        let n = Double(m.pixels)
        let se = channels.map { m.channels[$0]!.standardDeviation / n.squareRoot() }
        let bias = zip(measured, truth).map { t in t.1 != 0 ? t.0 / t.1 - 1 : 0 }
        let measuredVariance = channels.map { pow(m.channels[$0]!.standardDeviation, 2) * n / max(1, n - 1) }
        var predicted: [Double]?
        if let errors = channels.map({ m.channels[$0]!.meanStandardError }) as? [Double] {
            predicted = errors.map { $0 * $0 * n } // SE² = σ²/n for equal weights
        }
        let truthY = (SIMD3(truth[0], truth[1], truth[2]) * Rec2020.luminanceWeights).sum()
        // A DNG's clip mask is always known; a file without one counts as clipped (not trusted).
        let clipped = (m.clippedPixels ?? 1) > 0
        var biasPassed: Bool?
        var variancePassed: Bool?
        var ratios: [Double]?
        if let predicted { ratios = zip(measuredVariance, predicted).map { $0.1 > 0 ? $0.0 / $0.1 : .nan } }
        if noise && !clipped {
            biasPassed = (0..<3).allSatisfy { c in
                abs(bias[c]) <= thresholds.meanBias || abs(measured[c] - truth[c]) <= thresholds.biasStandardErrors * se[c]
            }
            if let ratios, checkVariance, m.pixels >= thresholds.varianceMinimumPixels {
                let sampling = thresholds.biasStandardErrors * (2 / max(1, n - 1)).squareRoot()
                variancePassed = ratios.allSatisfy { abs($0 - 1) <= max(thresholds.varianceRelative, sampling) }
            }
        }
        return PatchValidation(name: patch.name, pixels: m.pixels, stopsBelowWhite: truthY > 0 ? log2(1 / truthY) : .infinity,
                               truth: truth, measured: measured, relativeBias: bias, standardError: se,
                               clippedFraction: m.clippedFraction ?? 1, measuredVariance: measuredVariance,
                               predictedVariance: predicted, varianceRatio: ratios, biasPassed: biasPassed,
                               variancePassed: variancePassed)
    }
}

extension ValidationReport {
    /// The report as pretty-printed JSON (infinite values as strings).
    public func json() throws -> String {
        try ReportJSON.encode(self)
    }

    /// A readable table.
    public var text: String {
        var lines: [String] = []
        lines.append("\(capture): scene \(scene), \(layout), noise \(noise ? "on" : "off"), demosaic \(demosaic)")
        lines.append(String(format: "exact decode: %d values, %d outside half-float rounding (max relative error %.2e, max absolute below 2^-12 %.2e), clip masks %@ — %@",
                            exactDecode.values, exactDecode.failures, exactDecode.maxRelativeError, exactDecode.maxAbsoluteErrorBelowFloor,
                            exactDecode.clipMasksEqual ? "equal" : "DIFFER", exactDecode.passed ? "pass" : "FAIL"))
        lines.append("patch                      pixels  stops   truth Y     bias R     bias G     bias B   var/pred R  G      B     result")
        for p in patches {
            let truthY = (SIMD3(p.truth[0], p.truth[1], p.truth[2]) * Rec2020.luminanceWeights).sum()
            let v = p.varianceRatio.map { $0.map { String(format: "%6.3f", $0) }.joined(separator: " ") } ?? "     -      -      -"
            let result: String
            if p.clippedFraction > 0 { result = String(format: "clipped (%.0f %%)", 100 * p.clippedFraction) }
            else if p.biasPassed == nil { result = "-" }
            else { result = (p.biasPassed == true && p.variancePassed != false) ? "pass" : "FAIL" }
            lines.append(String(format: "%@ %7d %6.2f %10.4g %+9.4f%% %+9.4f%% %+9.4f%%  %@  %@",
                                p.name.padding(toLength: 24, withPad: " ", startingAt: 0), p.pixels, p.stopsBelowWhite, truthY,
                                100 * p.relativeBias[0], 100 * p.relativeBias[1], 100 * p.relativeBias[2], v, result))
        }
        for r in ratios {
            let m = r.measured
            lines.append(String(format: "ratio %@/%@ (Y, mean): measured %.5f, 95 %% interval [%.5f, %.5f], true %.5f — %@ (%@)",
                                m.numerator, m.denominator, m.ratio, m.low95 ?? .nan, m.high95 ?? .nan, r.trueRatio,
                                r.covered ? "covered" : "NOT covered", m.kind.rawValue))
        }
        if let a = absolute {
            lines.append(String(format: "absolute: K = %.6g (%@), true K = %.6g: %+.2f %%, 95 %% interval [%.6g, %.6g] %@",
                                a.constant, a.source, a.trueConstant, 100 * a.relativeError, a.low95, a.high95,
                                a.passed ? "holds it: pass" : "does NOT hold it: FAIL"))
            for p in a.patches {
                lines.append(String(format: "  %@: %.6g cd/m² (truth %.6g, %+.2f %%)", p.name, p.measured, p.truth, 100 * (p.measured / p.truth - 1)))
            }
        }
        lines.append("result: \(passed ? "PASS" : "FAIL")")
        return lines.joined(separator: "\n")
    }
}

/// The absolute scale of a simulated capture against its truth: the constant K in use (a
/// calibration's, or the exposure-metadata estimate) must hold the true K inside its 95 %
/// interval, K · exp(±1.96 u); each unclipped patch's luminance is listed against its truth.
public struct AbsoluteValidation: Codable, Sendable {
    public struct PatchLuminance: Codable, Sendable {
        public var name: String
        public var truth: Double
        public var measured: Double
    }
    public var source: String
    public var constant: Double
    public var trueConstant: Double
    public var relativeUncertainty: Double
    public var low95: Double
    public var high95: Double
    /// K / K_true − 1.
    public var relativeError: Double
    public var patches: [PatchLuminance]
    public var passed: Bool

    init(scale: ExposureScaling, exposure: Photometry.Settings, truth: SimulatedPhotometry, measurements: [String: RegionMeasurement],
         order: [String]) {
        source = scale.source ?? ""
        constant = scale.factor / exposure.exposureFactor
        trueConstant = truth.cameraConstant
        relativeUncertainty = scale.relativeUncertainty ?? 0
        low95 = constant * exp(-1.96 * relativeUncertainty)
        high95 = constant * exp(1.96 * relativeUncertainty)
        relativeError = constant / trueConstant - 1
        patches = order.compactMap { name in
            guard let l = truth.patchLuminance[name], let m = measurements[name], m.clippedPixels == 0, let y = m.channels["Y"] else { return nil }
            return PatchLuminance(name: name, truth: l, measured: y.mean * scale.factor)
        }
        passed = low95 <= trueConstant && trueConstant <= high95
    }
}
