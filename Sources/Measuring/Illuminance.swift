import Analysis
import Engine
import Foundation

/// The illuminance at a fisheye camera's entrance pupil, on the plane facing its axis
/// (vertical illuminance for a horizontal camera): E_v = Σ L · cos θ · ω over the pixels of
/// the image circle (docs/fisheye.md), with its 95 % interval.
public struct IlluminanceResult: Codable, Sendable, Equatable {
    public var file: String
    public var lens: FisheyeLens
    /// lux.
    public var illuminance: Double
    /// Standard uncertainty (lux): √(noise² + (E · scale uncertainty)²).
    public var standardUncertainty: Double
    /// What `illuminance` is (`ResultKind`): a lower bound whenever a clipped pixel adds to it
    /// (its true luminance is higher, by an unknown amount), with only `low95` then.
    public var kind: ResultKind
    public var low95: Double?
    public var high95: Double?
    /// "normal" (noise dominates) or "log-normal" (the scale's uncertainty does).
    public var intervalKind: String
    /// From the pixels' noise (NoiseProfile or the file's standard deviation layer), lux; nil
    /// when the file's noise is not known.
    public var noiseUncertainty: Double?
    /// From the CFA's sampling of sources smaller than its 2×2 pattern (a sun of a pixel or
    /// two), lux (`SiteLayout.samplingUncertainty`); nil for an image not on a CFA grid.
    public var samplingUncertainty: Double?
    /// The absolute scale's relative standard uncertainty and where the scale came from.
    public var scaleRelativeUncertainty: Double
    public var scaleSource: String
    /// Σ ω over the image circle (sr) and the field of view's own 2π (1 − cos(FOV/2)).
    public var solidAngle: Double
    public var expectedSolidAngle: Double
    public var pixels: Int
    /// Pixels of the circle with a clipped channel: E_v is then a lower bound.
    public var lowerBoundPixels: Int
    /// The part of E_v those pixels give as recorded (their true part is larger, by an
    /// unknown amount: a clipped sun can carry most of E_v however small this is).
    public var lowerBoundShare: Double
    /// Pixels of the circle whose value is not a finite number (NaN or infinity, from
    /// another program's file): left out of E_v, which then misses their part.
    public var nonFinitePixels = 0
    public var isLowerBound: Bool { lowerBoundPixels > 0 }
}

extension Pipeline {
    /// E_v of a fisheye image: a DNG (developed with `options`, in absolute units) or an EXR
    /// or HDF5 file in luminance or radiance units; `lens` gives the projection and image circle.
    /// - Throws: `PhotometryError` for relative units; `AnalysisError` for a lens that does not fit;
    ///   the readers' errors.
    public static func illuminance(_ path: String, lens: FisheyeLens, options: DevelopOptions) throws -> IlluminanceResult {
        let input = try AnalysisInput.load(path, options: options)
        return try illuminance(input, lens: lens)
    }

    /// E_v of a loaded image (see `illuminance(_:lens:options:)`).
    public static func illuminance(_ input: AnalysisInput, lens: FisheyeLens) throws -> IlluminanceResult {
        let image = input.image
        guard image.exposure.mode.isAbsolute else {
            throw PhotometryError(path: input.path, reason: "illuminance needs absolute values: a DNG with --units luminance (the default here), or a file converted or merged with --units luminance or radiance")
        }
        if let problem = lens.problem { throw AnalysisError(reason: "\(input.path): \(problem)", category: .usage) }
        let toLuminance = image.exposure.mode == .radiance ? Photometric.radianceEfficacy : 1
        let sums = illuminanceSums(input, lens: lens)
        guard sums.pixels > sums.nonFinitePixels else {
            throw AnalysisError(reason: "\(input.path): " + (sums.pixels == 0
                ? "the image circle (centre \(lens.centerX), \(lens.centerY), radius \(lens.radius) px) has no pixel inside the \(image.width)×\(image.height) image"
                : "every pixel of the image circle is NaN or infinite"), category: sums.pixels == 0 ? .usage : .corruptData)
        }
        let e = sums.sum * toLuminance, bound = sums.clippedSum * toLuminance
        let variance = sums.noiseVariance.map { $0 * toLuminance * toLuminance }
        let scaleU = image.exposure.relativeUncertainty ?? 0
        let noiseU = variance.map { $0.squareRoot() }
        let samplingU = sums.sampling.map { $0 * toLuminance }
        let random = (noiseU ?? 0) * (noiseU ?? 0) + (samplingU ?? 0) * (samplingU ?? 0)
        let combined = (random + e * e * scaleU * scaleU).squareRoot()
        let logNormal = e > 0 && e * scaleU >= random.squareRoot()
        let low = logNormal ? e * exp(-1.96 * combined / e) : e - 1.96 * combined
        let high = logNormal ? e * exp(1.96 * combined / e) : e + 1.96 * combined
        let kind: ResultKind = image.clipMask == nil ? .clippingUnknown
            : sums.clippedPixels == 0 ? .value : ClipDirection.kinds(cameraToOutput: image.provenance.cameraToOutput)["Y"]!
        return IlluminanceResult(file: input.path, lens: lens, illuminance: e, standardUncertainty: combined, kind: kind,
                                 low95: kind == .upperBound || kind == .undetermined ? nil : low,
                                 high95: kind == .lowerBound || kind == .undetermined ? nil : high,
                                 intervalKind: logNormal ? "log-normal" : "normal", noiseUncertainty: noiseU, samplingUncertainty: samplingU,
                                 scaleRelativeUncertainty: scaleU, scaleSource: image.exposure.source ?? "unknown",
                                 solidAngle: sums.solidAngle, expectedSolidAngle: 2 * .pi * (1 - cos(lens.maximumAngle)),
                                 pixels: sums.pixels, lowerBoundPixels: sums.clippedPixels, lowerBoundShare: e > 0 ? bound / e : 0,
                                 nonFinitePixels: sums.nonFinitePixels)
    }

    /// Σ Y · cos θ · ω over the image circle in the image's own units (Y with Rec.2020's
    /// weights), its noise variance (from the NoiseProfile per pixel, or the file's standard
    /// deviation layer as a region sum, `DeviationLayer`; nil without either), the CFA sampling
    /// uncertainty (same units; nil off a CFA grid), the part and count of
    /// clipped pixels, Σ ω and the pixels counted.
    static func illuminanceSums(_ input: AnalysisInput, lens: FisheyeLens)
        -> (sum: Double, noiseVariance: Double?, clippedSum: Double, clippedPixels: Int, solidAngle: Double, pixels: Int,
            nonFinitePixels: Int, sampling: Double?) {
        let image = input.image
        let w = image.width, h = image.height
        let (theta, omega) = lens.geometry(width: w, height: h)
        let weights = Rec2020.luminanceWeights
        let kernel = input.noise.map { NoiseModel.Kernel($0, luminance: weights) }
        var e = 0.0, bound = 0.0, solid = 0.0, pixels = 0, boundPixels = 0, nonFinite = 0
        var squares = SIMD3<Double>(), weightedOutputs = SIMD3<Double>(), weightedGains = 0.0
        var parity = ParitySums()
        let clip = image.clipMask
        let px = image.pixels.samples
        for i in 0..<(w * h) where omega[i] > 0 {
            let rgb = SIMD3(Double(px[3 * i]), Double(px[3 * i + 1]), Double(px[3 * i + 2]))
            let y = (rgb * weights).sum()
            let weight = Double(cos(theta[i])) * omega[i]
            pixels += 1
            guard rgb.x.isFinite, rgb.y.isFinite, rgb.z.isFinite else {
                nonFinite += 1
                continue
            }
            e += y * weight
            let position = ((i / w) & 1) * 2 + ((i % w) & 1)
            parity.sums[position] += SIMD4<Double>(rgb.x, rgb.y, rgb.z, 1) * weight
            solid += omega[i]
            if kernel != nil {
                // Σ w² g · rgb and Σ w² g²: the model's region variance (demosaic correlation included).
                let gain = input.noise?.pixelGains.map { Double($0[i]) } ?? 1
                weightedOutputs += rgb * (gain * weight * weight)
                weightedGains += gain * gain * weight * weight
            } else if let layer = input.deviation {
                let d = SIMD3(Double(layer.deviation[3 * i]), Double(layer.deviation[3 * i + 1]), Double(layer.deviation[3 * i + 2]))
                squares += d * d * (weight * weight)
            }
            if let clip, clip[i] != 0 {
                boundPixels += 1
                bound += y * weight
            }
        }
        let variance = kernel.map { $0.regionVariance(weightedOutputs: weightedOutputs, weightedGains: weightedGains).y }
            ?? input.deviation.map { $0.regionVariance(squares).w }
        // A CFA image: E_v over its raw sites, which the demosaic cannot bias, and the CFA's
        // sampling of sources smaller than its pattern (`SiteLayout`); a one-position green
        // estimate has about 4× the variance of the whole sum's noise.
        var sampling: Double?
        if let layout = SiteLayout.of(image), layout.covers(parity) {
            e = (layout.outputSums(parity) * weights).sum()
            sampling = layout.samplingUncertainty(parity, noise: e > 0 ? 2 * (variance ?? 0).squareRoot() / e : 0)
        }
        return (e, variance, bound, boundPixels, solid, pixels, nonFinite, sampling)
    }

    /// The picture Radiance's tools read for a fisheye image: the square around the image
    /// circle (padded with black where the circle leaves the image), remapped to the
    /// equidistant projection when the lens is equisolid, with the lens's `VIEW=` line. Its
    /// clip mask goes through the same mapping (a picture pixel that draws on a lower bound is
    /// one), and the lower bounds' share is of the picture's solid angle (`RadianceFile.write`).
    @discardableResult
    public static func writeFisheyeRadiance(_ image: SceneLinearImage, lens: FisheyeLens, to path: String) throws -> RadianceLowerBounds {
        let side = lens.squareAroundCircle.side
        // The picture is the square around the circle: a circle far larger than the image would
        // make a picture of almost nothing but padding (and could exhaust memory).
        guard side <= 4 * max(image.width, image.height) else {
            throw OutputError(path: path, reason: "the square around the image circle (radius \(lens.radius) px) would be \(side)×\(side) pixels for a \(image.width)×\(image.height) image: give the circle of the lens (--circle)",
                              category: .usage)
        }
        let values = lens.radianceSquare(image.pixels.samples, width: image.width, height: image.height, channels: 3)
        let clip = image.clipMask.map { mask in
            lens.radianceSquare(mask.map { $0 != 0 ? 1 : 0 }, width: image.width, height: image.height, channels: 1).map { $0 > 0 ? UInt8(1) : 0 }
        }
        let square = lens.radianceSquareLens
        let picture = SceneLinearImage(pixels: ImageBuffer(width: side, height: side, channels: 3, samples: values), clipMask: clip,
                                       encoding: image.encoding, exposure: image.exposure, provenance: image.provenance)
        return try RadianceFile.write(picture, to: path, view: square.radianceView,
                                      solidAngles: square.geometry(width: side, height: side).solidAngle)
    }

    /// The fisheye geometry as an HDF5 group: `theta` (radians from the axis), `azimuth`
    /// (radians, counter-clockwise from the image's +x) and `solid_angle` (sr), float32 [H, W],
    /// 0 outside the image circle.
    public static func fisheyeGroup(_ lens: FisheyeLens, width: Int, height: Int) -> HDF5Group {
        let (theta, omega) = lens.geometry(width: width, height: height)
        var azimuth = [Float](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width where omega[y * width + x] > 0 {
                azimuth[y * width + x] = Float(atan2(lens.centerY - (Double(y) + 0.5), Double(x) + 0.5 - lens.centerX))
            }
        }
        return HDF5Group(name: "fisheye", attributes: [
            MetadataItem("projection", .text(lens.projection.rawValue)),
            MetadataItem("field_of_view_degrees", .number(lens.fieldOfView)),
            MetadataItem("circle_center_xy", .numbers([lens.centerX, lens.centerY])),
            MetadataItem("circle_radius", .number(lens.radius)),
            MetadataItem("focal_length_pixels", .number(lens.focalLength)),
        ], datasets: [
            HDF5Dataset(imageLayer: "theta", width: width, height: height, values: .floats(theta),
                        attributes: [MetadataItem("units", .text("radian")), MetadataItem("description", .text("angle from the optical axis of the pixel's centre"))]),
            HDF5Dataset(imageLayer: "azimuth", width: width, height: height, values: .floats(azimuth),
                        attributes: [MetadataItem("units", .text("radian")), MetadataItem("description", .text("counter-clockwise from the image's +x axis"))]),
            HDF5Dataset(imageLayer: "solid_angle", width: width, height: height, values: .floats(omega.map { Float($0) }),
                        attributes: [MetadataItem("units", .text("sr")), MetadataItem("description", .text("solid angle of the pixel (its corners' spherical quadrilateral)"))]),
        ])
    }
}
