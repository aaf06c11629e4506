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
    /// With stated stray light (`FisheyeLensRequest.strayLight`): the sources, the pixels
    /// flagged about them and their parts of E_v, and the bound the interval was widened by.
    public var strayLight: StrayLightSummary?
    public var isLowerBound: Bool { lowerBoundPixels > 0 }
}

extension Pipeline {
    /// E_v of a fisheye image: a DNG (developed with `options`, in absolute units) or an EXR
    /// or HDF5 file in luminance or radiance units; `lens` gives the projection and image circle.
    /// The image is not held where it need not be (`illuminance(_:lens:options:)` with a
    /// `FisheyeLensRequest`).
    /// - Throws: `PhotometryError` for relative units; `AnalysisError` for a lens that does not fit;
    ///   the readers' errors.
    public static func illuminance(_ path: String, lens: FisheyeLens, options: DevelopOptions) throws -> IlluminanceResult {
        try illuminance(path, lens: FisheyeLensRequest(lens), options: options)
    }

    /// E_v of the file at `path` under the lens `request` gives for its image, measured
    /// without holding the image where it can be (`IlluminanceSource.of`): a DNG developed
    /// patch by patch (`Pipeline.scan`), our EXR or HDF5 file in its stored samples; with
    /// `--circle auto` a first pass gathers the luminance the circle is found in.
    /// - Throws: as `illuminance(_:lens:options:)`; `AnalysisError` when no circle is found.
    public static func illuminance(_ path: String, lens request: FisheyeLensRequest, options: DevelopOptions) throws -> IlluminanceResult {
        let source = try IlluminanceSource.of(path, options: options)
        // A relative file is refused before its pixels are read (a DNG's units are the options').
        try requireAbsolute(source.known.image?.exposure.mode ?? options.exposure, path: path)
        return try illuminanceResult(try measureIlluminance(source, path: path, lens: request), path: path)
    }

    /// E_v of a loaded image (see `illuminance(_:lens:options:)`).
    public static func illuminance(_ input: AnalysisInput, lens: FisheyeLens) throws -> IlluminanceResult {
        try illuminance(input, geometry: FisheyeGeometry(lens: lens, width: input.image.width, height: input.image.height))
    }

    /// E_v of a loaded image under `geometry` (its lens on the image's size): the sums read
    /// its arrays when it holds them (`FisheyeGeometry.whole`), else compute them band by band.
    public static func illuminance(_ input: AnalysisInput, geometry: FisheyeGeometry) throws -> IlluminanceResult {
        try requireAbsolute(input.image.exposure.mode, path: input.path)
        let measured = try measureIlluminance(IlluminanceSource(input), path: input.path) { _, _ in geometry }
        return try illuminanceResult(measured, path: input.path)
    }

    /// Refuses relative units: E_v needs luminance or radiance.
    public static func requireAbsolute(_ mode: ExposureMode, path: String) throws {
        guard !mode.isAbsolute else { return }
        throw PhotometryError(path: path, reason: "illuminance needs absolute values: a DNG with --units luminance (the default here), or a file converted or merged with --units luminance or radiance")
    }

    /// The result of E_v's measurement: lux, its uncertainty and interval, what it is.
    /// - Throws: `AnalysisError` when the circle holds no pixel or no finite one.
    static func illuminanceResult(_ m: IlluminanceMeasurement, path: String) throws -> IlluminanceResult {
        let image = m.image, lens = m.lens, sums = m.sums
        try requireAbsolute(image.exposure.mode, path: path)
        let toLuminance = image.exposure.mode == .radiance ? Photometric.radianceEfficacy : 1
        guard sums.pixels > sums.nonFinitePixels else {
            throw AnalysisError(reason: "\(path): " + (sums.pixels == 0
                ? "the image circle (centre \(lens.centerX), \(lens.centerY), radius \(lens.radius) px) has no pixel inside the \(m.width)×\(m.height) image"
                : "every pixel of the image circle is NaN or infinite"), category: sums.pixels == 0 ? .usage : .corruptData)
        }
        let e = m.sum * toLuminance, bound = sums.clippedSum * toLuminance
        let variance = m.noiseVariance.map { $0 * toLuminance * toLuminance }
        let scaleU = Self.scaleUncertainty(m)
        let noiseU = variance.map { $0.squareRoot() }
        let samplingU = m.sampling.map { $0 * toLuminance }
        let random = (noiseU ?? 0) * (noiseU ?? 0) + (samplingU ?? 0) * (samplingU ?? 0)
        let combined = (random + e * e * scaleU * scaleU).squareRoot()
        let logNormal = e > 0 && e * scaleU >= random.squareRoot()
        let low = logNormal ? e * exp(-1.96 * combined / e) : e - 1.96 * combined
        let high = logNormal ? e * exp(1.96 * combined / e) : e + 1.96 * combined
        let kind: ResultKind = !m.clippingKnown ? .clippingUnknown
            : sums.clippedPixels == 0 ? .value : ClipDirection.kinds(cameraToOutput: image.provenance.cameraToOutput)["Y"]!
        let stray = m.strayLight.map { Self.strayLightSummary($0, sums: sums.stray, total: m.sums.sum, toLuminance: toLuminance) }
        let widen = stray?.bound ?? 0
        var result = IlluminanceResult(file: path, lens: lens, illuminance: e, standardUncertainty: combined, kind: kind,
                                 low95: kind == .upperBound || kind == .undetermined ? nil : low - widen,
                                 high95: kind == .lowerBound || kind == .undetermined ? nil : high + widen,
                                 intervalKind: logNormal ? "log-normal" : "normal", noiseUncertainty: noiseU, samplingUncertainty: samplingU,
                                 scaleRelativeUncertainty: scaleU, scaleSource: image.exposure.source ?? "unknown",
                                 solidAngle: sums.solidAngle, expectedSolidAngle: 2 * .pi * (1 - cos(lens.maximumAngle)),
                                 pixels: sums.pixels, lowerBoundPixels: sums.clippedPixels, lowerBoundShare: e > 0 ? bound / e : 0,
                                 nonFinitePixels: sums.nonFinitePixels)
        result.strayLight = stray
        return result
    }

    /// What E_v's result says of the stray light stated for it: the bound f · α · Σ L ω, and
    /// the parts of E_v the sources and the flagged pixels give (of the pixel sum `total`).
    static func strayLightSummary(_ zone: StrayLightZone, sums: StrayLightSums, total: Double, toLuminance: Double) -> StrayLightSummary {
        let r = zone.request
        return StrayLightSummary(fraction: r.fraction, angle: r.angle, threshold: r.threshold, sourceLuminance: zone.threshold * toLuminance,
                                 sources: zone.sources, zonedSources: zone.zonedSources, sourcePixels: sums.sourcePixels, flaggedPixels: sums.zonePixels,
                                 sourceShare: total > 0 ? sums.sourceSum / total : 0, flaggedShare: total > 0 ? sums.zoneSum / total : 0,
                                 bound: r.fraction * (r.angle * .pi / 180) * sums.flux * toLuminance)
    }

    /// The relative uncertainty of E_v's scale: the image's, with a lens calibration's bound
    /// for the whole image (the item `vignetting`) replaced by E_v's own term — each pixel's
    /// correction weighted by its share of E_v (`LensSums`).
    static func scaleUncertainty(_ m: IlluminanceMeasurement) -> Double {
        let exposure = m.image.exposure
        guard let lens = m.vignetting,
              let own = m.sums.lens.relativeUncertainty(cameraToOutput: m.image.provenance.cameraToOutput, lens: lens, total: m.sums.sum)
        else { return exposure.relativeUncertainty ?? 0 }
        return exposure.replacing("vignetting", relative: own, note: "E_v's own").relativeUncertainty ?? 0
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
                                      solidAngles: FisheyeGeometry(lens: square, width: side, height: side).arrays.solidAngle)
    }

    /// The fisheye geometry as an HDF5 group: `theta` (radians from the axis), `azimuth`
    /// (radians, counter-clockwise from the image's +x) and `solid_angle` (sr), float32 [H, W],
    /// 0 outside the image circle: `geometry`'s arrays (held, or computed now).
    public static func fisheyeGroup(_ geometry: FisheyeGeometry) -> HDF5Group {
        let lens = geometry.lens, width = geometry.width, height = geometry.height
        let values = geometry.arrays
        let theta = values.theta, omega = values.solidAngle
        let azimuth = geometry.azimuths(solidAngle: omega)
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
