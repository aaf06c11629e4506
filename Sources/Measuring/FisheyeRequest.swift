import Analysis
import Engine
import Foundation
import Synchronization

/// Where a fisheye image's circle is, as a command gives it.
public enum FisheyeCircle: Sendable, Equatable {
    /// The circle inscribed in the image, centred.
    case inscribed
    /// The centre and radius in output pixels.
    case given(x: Double, y: Double, radius: Double)
    /// Found in each image from its dark surround (`FisheyeLens.detectCircle`).
    case detected

    /// `x,y,r` (finite numbers, r > 0) or `auto`, as `--circle` and a request's `circle`
    /// give it; nil for anything else.
    public init?(parsing text: String) {
        if text == "auto" { self = .detected; return }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 3, let x = parts[0], let y = parts[1], let r = parts[2], x.isFinite, y.isFinite, r.isFinite, r > 0 else {
            return nil
        }
        self = .given(x: x, y: y, radius: r)
    }
}

/// A fisheye lens before its image is known: the projection, the field of view and how the
/// image circle is found.
public struct FisheyeLensRequest: Sendable, Equatable {
    public var projection: FisheyeProjection
    /// Degrees across the image circle.
    public var fieldOfView: Double
    public var circle: FisheyeCircle
    /// The lens's stray light as stated: E_v then flags the pixels about very bright sources
    /// and widens its interval by the bound (`StrayLightRequest`). Nil: not considered.
    public var strayLight: StrayLightRequest?

    public init(projection: FisheyeProjection, fieldOfView: Double = 180, circle: FisheyeCircle = .inscribed,
                strayLight: StrayLightRequest? = nil) {
        self.projection = projection
        self.fieldOfView = fieldOfView
        self.circle = circle
        self.strayLight = strayLight
    }

    /// The lens as given: its projection, field of view and circle.
    public init(_ lens: FisheyeLens) {
        self.init(projection: lens.projection, fieldOfView: lens.fieldOfView,
                  circle: .given(x: lens.centerX, y: lens.centerY, radius: lens.radius))
    }

    /// A lens of a calibration or a measurement: its circle given, or inscribed.
    public init(_ spec: FisheyeSpec) {
        let c = spec.circle
        self.init(projection: spec.projection, fieldOfView: spec.fieldOfView,
                  circle: c.map { $0.count == 3 ? .given(x: $0[0], y: $0[1], radius: $0[2]) : .inscribed } ?? .inscribed)
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
    /// found from the dark surround (`lens(width:height:path:luminance:)`).
    /// - Throws: `AnalysisError` when no image circle is found.
    public func lens(for image: SceneLinearImage, path: String) throws -> FisheyeLens {
        try lens(width: image.width, height: image.height, path: path) {
            let px = image.pixels.samples
            return (0..<(image.width * image.height)).map { i in Self.luminance(px[3 * i], px[3 * i + 1], px[3 * i + 2]) }
        }
    }

    /// The lens of a `width` × `height` image: the circle given, the inscribed one, or the one
    /// found from the dark surround in the image's `luminance` (`Self.luminance` of each pixel,
    /// row-major; asked for only then) by `FisheyeLens.detectCircle`: a first estimate from the
    /// pixels above the surround, refined at the half level between the sky just inside the
    /// edge and the surround just outside; the centroid and √(count/π).
    /// - Throws: `AnalysisError` when no image circle is found.
    public func lens(width: Int, height: Int, path: String, luminance: () throws -> [Float]) throws -> FisheyeLens {
        if let spec { return spec.lens(width: width, height: height) }
        guard let found = FisheyeLens.detectCircle(luminance: try luminance(), width: width, height: height) else {
            throw AnalysisError(reason: "\(path): no image circle found (give --circle x,y,r)")
        }
        return FisheyeLens(projection: projection, fieldOfView: fieldOfView, centerX: found.x, centerY: found.y, radius: found.r)
    }

    /// The luminance the circle is found in: Rec.2020's weights, in `Float`.
    @inline(__always) static func luminance(_ r: Float, _ g: Float, _ b: Float) -> Float {
        let w = Rec2020.luminanceWeights
        return Float(w.x) * r + Float(w.y) * g + Float(w.z) * b
    }
}

/// The luminance of every pixel of an image (`FisheyeLensRequest.luminance`, 4 bytes a
/// pixel), gathered from a pass's patches on any thread: what `--circle auto` finds the
/// circle in when the image is not held.
final class LuminancePlane: Sendable {
    private struct Plane {
        var width = 0, height = 0
        var values: [Float] = []
    }
    private let plane = Mutex(Plane())

    func prepare(width: Int, height: Int) {
        plane.withLock { $0 = Plane(width: width, height: height, values: [Float](repeating: 0, count: width * height)) }
    }

    /// Takes the luminance of `patch`'s pixels (computed outside the lock, copied under it).
    func add(_ patch: ImagePatch) {
        let r = patch.rect, n = r.width
        var y = [Float](repeating: 0, count: n * r.height)
        for row in 0..<r.height {
            let p = patch.values + 3 * row * patch.rowStride
            for x in 0..<n { y[row * n + x] = FisheyeLensRequest.luminance(p[3 * x], p[3 * x + 1], p[3 * x + 2]) }
        }
        plane.withLock { plane in
            let width = plane.width
            plane.values.withUnsafeMutableBufferPointer { out in
                y.withUnsafeBufferPointer { y in
                    for row in 0..<r.height {
                        (out.baseAddress! + (r.top + row) * width + r.left).update(from: y.baseAddress! + row * n, count: n)
                    }
                }
            }
        }
    }

    /// The plane's size and values (the plane is left empty).
    func take() -> (width: Int, height: Int, values: [Float]) {
        plane.withLock { plane in
            defer { plane = Plane() }
            return (plane.width, plane.height, plane.values)
        }
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
    /// `options` (in absolute units), EXR and HDF5 files taken in the absolute unit they hold,
    /// each measured without holding its image where it can be (`illuminance(_:lens:options:)`).
    /// The first image is also written to `output` with its geometry (so it is held whole): a
    /// `.hdr` as `writeFisheyeRadiance` draws it (`pictureWritten` is then told its lower
    /// bounds, before the next image is measured), or an HDF5 file with the `/fisheye` group
    /// (half floats, or 32-bit floats when a value, a sun, is beyond half's range), whose
    /// arrays the measurement reads.
    /// - Throws: what loading, `lens(for:path:)`, `illuminance(_:geometry:)` and the writers throw.
    public static func illuminance(_ files: [String], lens request: FisheyeLensRequest, options: DevelopOptions,
                                   output: String? = nil,
                                   pictureWritten: (RadianceLowerBounds) -> Void = { _ in }) throws -> IlluminanceRun {
        var run = IlluminanceRun()
        for (i, file) in files.enumerated() {
            var fileOptions = options
            if ["exr", "h5", "hdf5"].contains(URL(fileURLWithPath: file).pathExtension.lowercased()) { fileOptions.exposure = .none }
            guard i == 0, let output else {
                run.results.append(try illuminance(file, lens: request, options: fileOptions))
                continue
            }
            let input = try AnalysisInput.load(file, options: fileOptions)
            let image = input.image
            let geometry = FisheyeGeometry(lens: try request.lens(for: image, path: file), width: image.width, height: image.height)
            if URL(fileURLWithPath: output).pathExtension.lowercased() == "hdr" {
                run.results.append(try illuminance(input, geometry: geometry))
                let bounds = try writeFisheyeRadiance(image, lens: geometry.lens, to: output)
                run.picture = bounds
                pictureWritten(bounds)
            } else {
                // The arrays made once, for the sums and the file's /fisheye group (a lens
                // that cannot be used is refused by the measurement first).
                let held = geometry.lens.problem == nil ? geometry.whole() : geometry
                run.results.append(try illuminance(input, geometry: held))
                let groups = [fisheyeGroup(held)]
                do {
                    try HDF5File.write(image, to: output, groups: groups)
                } catch is HalfRangeError {
                    var wide = HDF5Options()
                    wide.sampleType = .float32
                    try HDF5File.write(image, to: output, options: wide, groups: groups)
                }
            }
        }
        return run
    }
}

/// The document `illuminance --json` prints (schema scenelinear.illuminance/1).
public struct IlluminanceDocument: Codable {
    public var schema = "scenelinear.illuminance/1"
    public var results: [IlluminanceResult]
    /// -o: the file written (of the first image).
    public var output: String?
    /// The .hdr's lower bounds (and its mask).
    public var lowerBounds: RadianceLowerBounds?

    public init(results: [IlluminanceResult], output: String?, lowerBounds: RadianceLowerBounds?) {
        self.results = results
        self.output = output
        self.lowerBounds = lowerBounds
    }
}
