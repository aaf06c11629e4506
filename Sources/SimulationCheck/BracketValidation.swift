import SceneLinearKit
import CaptureSimulation
import Foundation

/// Pass/fail limits of a bracket's validation (docs/validation.md).
public struct BracketThresholds: Codable, Sendable, Equatable {
    /// Per-patch mean bias against the truth: ≤ 0.2 %, or ≤ 4 standard errors of the patch
    /// mean where the noise makes 0.2 % unmeasurable (below the noise floor). Four, not three:
    /// a bracket has some 75 patch channels, and at 3 standard errors one would fail by
    /// chance in about one bracket in six.
    public var meanBias = 0.002
    public var biasStandardErrors = 4.0
    /// Measured variance within 5 % of the mean predicted one (the merge's standard
    /// deviations squared), or 4 standard errors of a variance estimate (√(2/(n − 1))), for
    /// patches of at least 500 pixels: a bracket has some 75 patch channels, and at 3
    /// standard errors one of them would fail by chance in about one bracket in five.
    public var varianceRelative = 0.05
    public var varianceStandardErrors = 4.0
    public var varianceMinimumPixels = 500
    /// The per-pixel 95 % intervals (± 1.96 σ) must cover the truth this often, over every
    /// patch pixel that is not a lower bound.
    public var coverageLow = 0.93
    public var coverageHigh = 0.97

    public init() {}
}

/// One patch of a merged bracket against its truth.
public struct BracketPatchValidation: Codable, Sendable {
    public var name: String
    public var pixels: Int
    /// log₂(1 / true Y) in the units of the reference frame.
    public var stopsBelowWhite: Double
    public var truth: [Double]
    public var measured: [Double]
    public var relativeBias: [Double]
    /// Measured spread / √n.
    public var standardError: [Double]
    public var measuredVariance: [Double]
    /// The mean of the merge's per-pixel variances (std layer squared).
    public var predictedVariance: [Double]
    public var varianceRatio: [Double]
    /// The smallest variance of one frame's own pixels (in the reference's units) over the
    /// frames where the patch is not clipped; nil when it is clipped in every frame.
    public var bestFrameVariance: [Double]?
    /// Per-pixel coverage of the truth by ± 1.96 σ (pixels that are not lower bounds).
    public var coverage: Double?
    /// Fraction of the pixels flagged as lower bounds.
    public var lowerBoundFraction: Double
    /// For a patch clipped in every frame: every pixel flagged and its luminance at most the true one.
    public var lowerBoundHolds: Bool?
    public var biasPassed: Bool?
    public var variancePassed: Bool?
    /// Merged variance no larger than the best single frame's (within the sampling error).
    public var beatsBestFrame: Bool?
}

/// A merged simulated bracket against its ground truth (`validate` with several frames).
public struct BracketValidationReport: Codable, Sendable {
    public var schema = "scenelinear.validation-bracket/1"
    public var frames: [String]
    public var scene: String
    public var layout: String
    public var demosaic: String
    public var thresholds: BracketThresholds
    public var merge: MergeReport
    public var patches: [BracketPatchValidation]
    /// Per-pixel 95 % coverage over every patch pixel and channel that is not a lower bound.
    public var coverage: Double
    public var coverageSamples: Int
    /// Patches clipped in every frame.
    public var lowerBoundPatches: [String]
    public var passed: Bool
}

extension Pipeline {
    /// Merges the simulated bracket `frames` (superpixel for CFA, no crop, sensor orientation,
    /// linear Rec.2020, relative units, reference = the 0 EV frame when there is one) and
    /// compares the result with the truth of `record` (written by `simulateBracket`): bias,
    /// noise against the merge's own standard deviations and against the best single frame,
    /// per-pixel coverage of the 95 % intervals, lower bounds.
    /// - Parameter align: merge with `MergeOptions.align` (frames photographed with the camera moved).
    public static func validateBracket(frames: [String], record: SimulationRecord, thresholds: BracketThresholds = BracketThresholds(),
                                       align: Bool = false) throws -> BracketValidationReport {
        guard let bracket = record.bracket else {
            throw AnalysisError(reason: "the record is not a bracket's (no \"bracket\" list): validate one DNG at a time with it")
        }
        // Each frame's exposure offset, from its name in the record.
        let stops: [Double] = try frames.map { path in
            let name = URL(fileURLWithPath: path).lastPathComponent
            guard let frame = bracket.first(where: { $0.file == name }) else {
                throw AnalysisError(reason: "\(path) is not one of the record's frames (\(bracket.map(\.file).joined(separator: ", ")))")
            }
            return frame.ev
        }
        let options = validationMergeOptions(frames: frames, bracket: bracket, reference: stops.firstIndex(of: 0), align: align)
        let merged = try merge(paths: frames, options: options)
        let image = merged.image
        let width = image.width, height = image.height
        let referenceScale = pow(2, stops[merged.report.reference])
        let scene = try RenderedScene(record.scene)
        let binning = record.camera.layout == "cfa" ? 2 : 1
        let zero = try Simulator.capture(scene, camera: { var c = record.camera; c.noise = false; return c }())
        let truth = zero.groundTruthAtDecodeSize
        guard truth.width == width, truth.height == height else {
            throw AnalysisError(reason: "merged \(width)×\(height), the record gives \(truth.width)×\(truth.height)")
        }
        // Each frame alone, in the reference's units, for the best single frame's noise.
        var singles: [(values: [Float], clip: [UInt8])] = []
        for (i, path) in frames.enumerated() {
            var o = options.develop
            o.includeMasks = false
            let d = try develop(path: path, options: o).image
            let e = merged.report.frames[i].exposure
            singles.append((d.pixels.samples.map { $0 / Float(e) }, d.clipMask ?? []))
        }
        let clip = image.clipMask ?? [UInt8](repeating: 0, count: width * height)
        let std = merged.standardDeviation.samples
        var patches: [BracketPatchValidation] = []
        var covered = 0, counted = 0
        var lowerBoundPatches: [String] = []
        for patch in record.patches {
            let weights = ownedPixels(patch, scene: scene, binning: binning, width: width, height: height)
            let pixels = weights.indices.filter { weights[$0] > 0 }
            guard pixels.count >= 2 else { continue }
            let t = patch.rgb.map { $0 * record.radianceToOutput * referenceScale }
            let flagged = pixels.filter { clip[$0] != 0 }
            let free = pixels.filter { clip[$0] == 0 }
            let lowerFraction = Double(flagged.count) / Double(pixels.count)
            let lum = Rec2020.luminanceWeights
            let truthY = (SIMD3(t[0], t[1], t[2]) * lum).sum()
            if free.count < pixels.count / 2 {
                // Clipped in every frame: a lower bound, never a value.
                lowerBoundPatches.append(patch.name)
                let (m, _) = moments(image.pixels.samples, pixels)
                let y = (SIMD3(m[0], m[1], m[2]) * lum).sum()
                patches.append(BracketPatchValidation(
                    name: patch.name, pixels: pixels.count, stopsBelowWhite: log2(1 / truthY), truth: t, measured: m,
                    relativeBias: zip(m, t).map { $0 / $1 - 1 }, standardError: [0, 0, 0], measuredVariance: [0, 0, 0],
                    predictedVariance: [0, 0, 0], varianceRatio: [0, 0, 0], bestFrameVariance: nil, coverage: nil,
                    lowerBoundFraction: lowerFraction, lowerBoundHolds: flagged.count == pixels.count && y <= truthY * 1.001,
                    biasPassed: nil, variancePassed: nil, beatsBestFrame: nil))
                continue
            }
            let (m, variance) = moments(image.pixels.samples, free)
            let n = Double(free.count)
            var predicted = [0.0, 0, 0]
            var inside = 0
            for i in free {
                for c in 0..<3 {
                    let s = Double(std[3 * i + c])
                    predicted[c] += s * s
                    if abs(Double(image.pixels.samples[3 * i + c]) - Double(truth.samples[3 * i + c]) * referenceScale) <= 1.96 * s {
                        inside += 1
                    }
                }
            }
            predicted = predicted.map { $0 / n }
            covered += inside
            counted += 3 * free.count
            var best: [Double]?
            for single in singles {
                guard !single.clip.isEmpty, free.allSatisfy({ single.clip[$0] == 0 }) else { continue }
                let v = moments(single.values, free).variance
                best = best.map { b in zip(b, v).map { min($0, $1) } } ?? v
            }
            let se = variance.map { ($0 / n).squareRoot() }
            let bias = zip(m, t).map { $1 != 0 ? $0 / $1 - 1 : 0 }
            let ratios = zip(variance, predicted).map { $1 > 0 ? $0 / $1 : .nan }
            let sampling = thresholds.varianceStandardErrors * (2 / max(1, n - 1)).squareRoot()
            let biasPassed = (0..<3).allSatisfy { c in
                abs(bias[c]) <= thresholds.meanBias || abs(m[c] - t[c]) <= thresholds.biasStandardErrors * se[c]
            }
            let variancePassed: Bool? = free.count >= thresholds.varianceMinimumPixels
                ? ratios.allSatisfy { abs($0 - 1) <= max(thresholds.varianceRelative, sampling) } : nil
            let beats = best.map { b in (0..<3).allSatisfy { variance[$0] <= b[$0] * (1 + sampling) } }
            patches.append(BracketPatchValidation(
                name: patch.name, pixels: free.count, stopsBelowWhite: log2(1 / truthY), truth: t, measured: m, relativeBias: bias,
                standardError: se, measuredVariance: variance, predictedVariance: predicted, varianceRatio: ratios,
                bestFrameVariance: best, coverage: Double(inside) / Double(3 * free.count), lowerBoundFraction: lowerFraction,
                lowerBoundHolds: nil, biasPassed: biasPassed, variancePassed: variancePassed, beatsBestFrame: beats))
        }
        let coverage = counted > 0 ? Double(covered) / Double(counted) : .nan
        let passed = patches.allSatisfy { $0.biasPassed != false && $0.variancePassed != false && $0.beatsBestFrame != false
            && $0.lowerBoundHolds != false }
            && (thresholds.coverageLow...thresholds.coverageHigh).contains(coverage)
        return BracketValidationReport(frames: frames.map { URL(fileURLWithPath: $0).lastPathComponent }, scene: record.scene.name,
                                       layout: record.camera.layout, demosaic: binning == 2 ? "superpixel" : "none (LinearRaw)",
                                       thresholds: thresholds, merge: merged.report, patches: patches, coverage: coverage,
                                       coverageSamples: counted, lowerBoundPatches: lowerBoundPatches, passed: passed)
    }

    /// The merge `validateBracket` checks: superpixel for CFA, no crop, sensor orientation,
    /// frames photographed through a filter merged with its exact transmittance.
    private static func validationMergeOptions(frames: [String], bracket: [BracketFrameRecord], reference: Int?,
                                               align: Bool) -> MergeOptions {
        var options = MergeOptions()
        options.develop.crop = .none
        options.develop.applyOrientation = false
        options.develop.demosaic = .superpixel
        options.reference = reference
        options.align = align
        for (i, path) in frames.enumerated() {
            let name = URL(fileURLWithPath: path).lastPathComponent
            if let t = bracket.first(where: { $0.file == name })?.filterTransmittance {
                options.frameFilters[i] = FilterFactor(transmittance: t, relativeUncertainty: 0, stated: true, text: String(t))
            }
        }
        return options
    }
}

/// The mean and sample variance of each of three channels over the pixels `set`.
private func moments(_ values: [Float], _ set: [Int]) -> (mean: [Double], variance: [Double]) {
    var mean = [0.0, 0, 0], m2 = [0.0, 0, 0]
    for i in set { for c in 0..<3 { mean[c] += Double(values[3 * i + c]) } }
    mean = mean.map { $0 / Double(set.count) }
    for i in set { for c in 0..<3 { let d = Double(values[3 * i + c]) - mean[c]; m2[c] += d * d } }
    return (mean, m2.map { $0 / Double(max(set.count - 1, 1)) })
}

extension BracketValidationReport {
    /// The report as pretty-printed JSON (infinite values as strings).
    public func json() throws -> String {
        try ReportJSON.encode(self)
    }

    /// A readable table.
    public var text: String {
        var lines: [String] = []
        lines.append("bracket \(frames.joined(separator: ", ")): scene \(scene), \(layout), demosaic \(demosaic), reference frame \(merge.reference + 1)")
        for (i, f) in merge.frames.enumerated() {
            let measured = f.measuredExposure.map { String(format: "measured %.6g (%@)", $0, f.exposureSource) } ?? "reference"
            lines.append(String(format: "  frame %d: exposure %.6g, metadata %.6g, %@", i + 1, f.exposure, f.nominalExposure, measured))
        }
        lines.append("patch                      pixels  stops   truth Y     bias R     bias G     bias B   var/pred R  G      B   best/merged  cover  result")
        for p in patches {
            let truthY = (SIMD3(p.truth[0], p.truth[1], p.truth[2]) * Rec2020.luminanceWeights).sum()
            let result: String
            if let holds = p.lowerBoundHolds {
                result = holds ? "lower bound (all pixels flagged, ≤ truth): pass" : "lower bound: FAIL"
            } else {
                result = p.biasPassed == true && p.variancePassed != false && p.beatsBestFrame != false ? "pass" : "FAIL"
            }
            let gain = p.bestFrameVariance.map { b in String(format: "%6.2f", (0..<3).map { b[$0] / max(p.measuredVariance[$0], 1e-300) }.min()!) } ?? "     -"
            lines.append(String(format: "%@ %7d %6.2f %10.4g %+9.4f%% %+9.4f%% %+9.4f%%  %6.3f %6.3f %6.3f  %@  %@  %@",
                                p.name.padding(toLength: 24, withPad: " ", startingAt: 0), p.pixels, p.stopsBelowWhite, truthY,
                                100 * p.relativeBias[0], 100 * p.relativeBias[1], 100 * p.relativeBias[2],
                                p.varianceRatio[0], p.varianceRatio[1], p.varianceRatio[2], gain,
                                p.coverage.map { String(format: "%5.1f%%", 100 * $0) } ?? "    -", result))
        }
        lines.append(String(format: "per-pixel 95 %% coverage: %.2f %% of %d values (%.0f–%.0f %% required)", 100 * coverage, coverageSamples,
                            100 * thresholds.coverageLow, 100 * thresholds.coverageHigh))
        lines.append("lower-bound patches: \(lowerBoundPatches.isEmpty ? "none" : lowerBoundPatches.joined(separator: ", "))")
        lines.append("result: \(passed ? "PASS" : "FAIL")")
        return lines.joined(separator: "\n")
    }
}
