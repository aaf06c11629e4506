import Engine
import Analysis
import Foundation

/// One reference of a calibration: a region of a photo and its known luminance.
public struct CalibrationReference: Sendable {
    public var photo: String
    public var region: Region
    /// cd/m², and its relative standard uncertainty (k = 1) per reading.
    public var luminance: Double
    public var relativeUncertainty: Double
    /// "spot meter" or "grey card ρ = …, E = … lx".
    public var method: String
    /// A fisheye photo whose illuminance at the camera was measured: the reference is then
    /// the whole image circle, `luminance` the meter's E_v / π and the measured value
    /// Σ Y · cos θ · ω / π (so K = E_v / (Σ Y cos θ ω · 2^BE · N²/(t·S))); `region` is unused.
    public var fisheye: FisheyeSpec?

    public init(photo: String, region: Region, luminance: Double, relativeUncertainty: Double, method: String,
                fisheye: FisheyeSpec? = nil) {
        self.photo = photo
        self.region = region
        self.luminance = luminance
        self.relativeUncertainty = relativeUncertainty
        self.method = method
        self.fisheye = fisheye
    }
}

extension Pipeline {
    /// Fits a camera calibration to `references`: each region's mean linear reference value
    /// of Y (exposure none, standard error from the NoiseProfile) against its luminance, at
    /// the photo's settings (`Photometry.Settings`), by `CameraCalibration.fit`.
    /// - Parameters:
    ///   - develop: how the photos are developed (demosaicing, limits); the exposure mode is
    ///     set to none.
    ///   - meterRelativeUncertainty: the reference meter's shared calibration uncertainty.
    /// - Throws: the photos' errors; `PhotometryError` for photos of different cameras, a
    ///   region with clipped pixels (its mean is a lower bound) or a value that is not positive.
    public static func calibrate(_ references: [CalibrationReference], develop: DevelopOptions,
                                 meterRelativeUncertainty: Double) throws -> CameraCalibration {
        var camera: CameraIdentity?
        var fitted: [CameraCalibration.Reference] = []
        var photos: [String] = []
        for r in references where !photos.contains(r.photo) { photos.append(r.photo) }
        for photo in photos {
            let dng = try DNGFile.open(path: photo)
            let identity = CameraIdentity(dng.metadata)
            if let camera, let why = camera.mismatch(identity) {
                throw PhotometryError(path: photo, reason: "all photos of a calibration must come from one camera: \(why)",
                                      category: .calibrationMismatch)
            }
            camera = camera ?? identity
            let settings = try Photometry.Settings.of(dng.metadata, path: photo)
            for r in references where r.photo == photo {
                guard let spec = r.fisheye else { continue }
                var options = develop
                options.exposure = .none
                options.includeMasks = false
                // E_v's sums as `illuminance` takes them, without holding the image.
                let measured = try measureIlluminance(try IlluminanceSource.of(photo, options: options), path: photo,
                                                      lens: FisheyeLensRequest(spec))
                let lens = measured.lens, sums = measured.sums
                if sums.nonFinitePixels > 0 {
                    throw PhotometryError(path: photo, reason: "\(sums.nonFinitePixels) pixels of the image circle are NaN or infinite: it cannot calibrate")
                }
                if sums.clippedPixels > 0 {
                    throw PhotometryError(path: photo, reason: "\(sums.clippedPixels) pixels of the image circle are clipped: its illuminance is only a lower bound, so it cannot calibrate (merge a bracket first)")
                }
                guard measured.sum > 0 else { throw PhotometryError(path: photo, reason: "the image circle gives no illuminance to calibrate against") }
                fitted.append(CameraCalibration.Reference(
                    file: photo, region: "fisheye \(lens.projection.rawValue) \(lens.fieldOfView)° (E_v / π)", method: r.method,
                    luminance: r.luminance, luminanceRelativeUncertainty: r.relativeUncertainty, measured: measured.sum / Double.pi,
                    measuredRelativeUncertainty: (measured.noiseVariance ?? 0).squareRoot() / measured.sum, settings: settings))
            }
            let mine = references.filter { $0.photo == photo && $0.fisheye == nil }
            guard !mine.isEmpty else { continue }
            var request = AnalysisRequest()
            request.regions = mine.map(\.region)
            request.percentiles = []
            request.develop = develop
            request.develop.exposure = .none
            request.develop.includeMasks = mine.contains { $0.region.isMask }
            let result = try analyze(photo, request: request)
            for (r, region) in zip(mine, result.regions) {
                let m = region.measurement
                guard let y = m.channels["Y"] else { continue }
                if let clipped = m.clippedPixels, clipped > 0 {
                    throw PhotometryError(path: photo, reason: "region \(r.region.name) has \(clipped) clipped pixels: its mean is only a lower bound, so it cannot calibrate")
                }
                guard y.mean > 0 else {
                    throw PhotometryError(path: photo, reason: "region \(r.region.name) has a mean Y of \(y.mean): nothing to calibrate against")
                }
                fitted.append(CameraCalibration.Reference(
                    file: photo, region: r.region.name, method: r.method, luminance: r.luminance,
                    luminanceRelativeUncertainty: r.relativeUncertainty, measured: y.mean,
                    measuredRelativeUncertainty: (y.meanStandardError ?? 0) / y.mean, settings: settings))
            }
        }
        let formatter = ISO8601DateFormatter()
        return try CameraCalibration.fit(fitted, camera: camera ?? CameraIdentity(), meterRelativeUncertainty: meterRelativeUncertainty,
                                         created: formatter.string(from: Date()))
    }
}
