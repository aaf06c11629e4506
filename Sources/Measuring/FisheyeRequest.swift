import Analysis
import Engine
import Foundation

/// Where a fisheye image's circle is, as a command gives it.
public enum FisheyeCircle: Sendable, Equatable {
    /// The circle inscribed in the image, centred.
    case inscribed
    /// The centre and radius in output pixels.
    case given(x: Double, y: Double, radius: Double)
    /// Found in each image from its dark surround (`FisheyeLens.detectCircle`).
    case detected
}

/// A fisheye lens before its image is known: the projection, the field of view and how the
/// image circle is found.
public struct FisheyeLensRequest: Sendable, Equatable {
    public var projection: FisheyeProjection
    /// Degrees across the image circle.
    public var fieldOfView: Double
    public var circle: FisheyeCircle

    public init(projection: FisheyeProjection, fieldOfView: Double = 180, circle: FisheyeCircle = .inscribed) {
        self.projection = projection
        self.fieldOfView = fieldOfView
        self.circle = circle
    }

    /// The lens as the measurements and calibrations take it; nil when the circle is found
    /// in each image.
    public var spec: FisheyeSpec? {
        switch circle {
        case .inscribed: return FisheyeSpec(projection: projection, fieldOfView: fieldOfView)
        case let .given(x, y, radius): return FisheyeSpec(projection: projection, fieldOfView: fieldOfView, circle: [x, y, radius])
        case .detected: return nil
        }
    }

    /// The lens of `image`, read from `path`: the circle given, the inscribed one, or the one
    /// found from the dark surround (`FisheyeLens.detectCircle`: a first estimate from the
    /// pixels above the surround, refined at the half level between the sky just inside the
    /// edge and the surround just outside; the centroid and √(count/π)).
    /// - Throws: `AnalysisError` when no image circle is found.
    public func lens(for image: SceneLinearImage, path: String) throws -> FisheyeLens {
        if let spec { return spec.lens(width: image.width, height: image.height) }
        let width = image.width, height = image.height
        let w = Rec2020.luminanceWeights, px = image.pixels.samples
        let y = (0..<(width * height)).map { i in Float(w.x) * px[3 * i] + Float(w.y) * px[3 * i + 1] + Float(w.z) * px[3 * i + 2] }
        guard let found = FisheyeLens.detectCircle(luminance: y, width: width, height: height) else {
            throw AnalysisError(reason: "\(path): no image circle found (give --circle x,y,r)")
        }
        return FisheyeLens(projection: projection, fieldOfView: fieldOfView, centerX: found.x, centerY: found.y, radius: found.r)
    }
}

/// What `Pipeline.illuminance(_:lens:options:output:)` measured and wrote.
public struct IlluminanceRun: Sendable {
    /// E_v of each image, in the order given.
    public var results: [IlluminanceResult] = []
    /// The lower bounds of the Radiance picture written, when one was.
    public var picture: RadianceLowerBounds?
}

extension Pipeline {
    /// The illuminance of each fisheye image of `files`, in order: DNGs developed with
    /// `options` (in absolute units), EXR and HDF5 files taken in the absolute unit they hold.
    /// The first image is also written to `output` with its geometry: a `.hdr` as
    /// `writeFisheyeRadiance` draws it (`pictureWritten` is then told its lower bounds, before
    /// the next image is measured), or an HDF5 file with the `/fisheye` group (half floats,
    /// or 32-bit floats when a value, a sun, is beyond half's range).
    /// - Throws: what loading, `lens(for:path:)`, `illuminance(_:lens:)` and the writers throw.
    public static func illuminance(_ files: [String], lens request: FisheyeLensRequest, options: DevelopOptions,
                                   output: String? = nil,
                                   pictureWritten: (RadianceLowerBounds) -> Void = { _ in }) throws -> IlluminanceRun {
        var run = IlluminanceRun()
        for (i, file) in files.enumerated() {
            var fileOptions = options
            if ["exr", "h5", "hdf5"].contains(URL(fileURLWithPath: file).pathExtension.lowercased()) { fileOptions.exposure = .none }
            let input = try AnalysisInput.load(file, options: fileOptions)
            let lens = try request.lens(for: input.image, path: file)
            run.results.append(try illuminance(input, lens: lens))
            guard i == 0, let output else { continue }
            if URL(fileURLWithPath: output).pathExtension.lowercased() == "hdr" {
                let bounds = try writeFisheyeRadiance(input.image, lens: lens, to: output)
                run.picture = bounds
                pictureWritten(bounds)
            } else {
                let groups = [fisheyeGroup(lens, width: input.image.width, height: input.image.height)]
                do {
                    try HDF5File.write(input.image, to: output, groups: groups)
                } catch is HalfRangeError {
                    var wide = HDF5Options()
                    wide.sampleType = .float32
                    try HDF5File.write(input.image, to: output, options: wide, groups: groups)
                }
            }
        }
        return run
    }
}
