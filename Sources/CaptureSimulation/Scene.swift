import Foundation
import ImageCore
import Fisheye

/// A scene with known radiance, described in a small JSON format so users can write their own.
///
/// Radiance is linear Rec.2020 RGB (D65 white) in the scene's `unit`: `relative` values
/// (1.0 = a neutral that the default exposure puts just at the sensor's white level) or
/// `absolute` luminance-scaled values in cd/m² (the Y of a neutral of value L is L cd/m²).
///
/// ```json
/// { "name": "example", "width": 800, "height": 600, "unit": "relative",
///   "background": [0.18, 0.18, 0.18],
///   "elements": [
///     { "type": "rect", "name": "sky", "rect": [0, 0, 0.4, 1], "rgb": [0.10, 0.14, 0.22] },
///     { "type": "disk", "name": "sun", "center": [0.7, 0.2], "radius": 0.05, "rgb": [0.9, 0.85, 0.7] },
///     { "type": "ramp", "name": "grey", "rect": [0.4, 0, 0.6, 1], "steps": 16, "top": 0.95, "rgb": [1, 1, 1] },
///     { "type": "gradient", "rect": [0.6, 0, 1, 1], "from": [0.01, 0.01, 0.01], "to": [0.5, 0.5, 0.5], "log": true }
///   ] }
/// ```
/// Rectangles are `[top, left, bottom, right]`, centres `[x, y]` and radii as fractions of
/// the image (height for y and radius). Later elements paint over earlier ones. Every
/// `rect`, `disk` and ramp step becomes a named patch of known radiance for validation
/// (ramp steps are named `<name>/<step>`; gradients are not patches).
public struct SceneDescription: Codable, Sendable, Equatable {
    public enum Unit: String, Codable, Sendable { case relative, absolute }

    public struct Element: Codable, Sendable, Equatable {
        /// "rect", "disk", "ramp" (equal steps one stop apart, darkest on the left) or "gradient".
        public var type: String
        public var name: String?
        public var rect: [Double]?
        public var center: [Double]?
        public var radius: Double?
        public var rgb: [Double]?
        /// Ramp: number of steps (one stop apart) and the value of the brightest step.
        public var steps: Int?
        public var top: Double?
        /// Gradient: left and right colours; `log` interpolates in log space.
        public var from: [Double]?
        public var to: [Double]?
        public var log: Bool?
        /// Sky: a sky dome seen by a fisheye camera looking at the zenith, filling the circle
        /// inscribed in the image: its `projection` (equidistant, equisolid, orthographic,
        /// stereographic) and full field of view `fov` (degrees); `rgb` is the zenith's
        /// radiance, `model` "uniform" or "cie-overcast" (L(θ) = L_z (1 + 2 cos θ) / 3);
        /// `sun` [zenith angle, azimuth, angular radius] in degrees (azimuth counter-clockwise
        /// from the image's +x) with radiance `sunRGB`. Below the horizon: the background.
        public var projection: String?
        public var fov: Double?
        public var model: String?
        public var sun: [Double]?
        public var sunRGB: [Double]?

        public init(type: String, name: String? = nil, rect: [Double]? = nil, center: [Double]? = nil, radius: Double? = nil,
                    rgb: [Double]? = nil, steps: Int? = nil, top: Double? = nil, from: [Double]? = nil, to: [Double]? = nil,
                    log: Bool? = nil, projection: String? = nil, fov: Double? = nil, model: String? = nil, sun: [Double]? = nil,
                    sunRGB: [Double]? = nil) {
            self.projection = projection
            self.fov = fov
            self.model = model
            self.sun = sun
            self.sunRGB = sunRGB
            self.type = type
            self.name = name
            self.rect = rect
            self.center = center
            self.radius = radius
            self.rgb = rgb
            self.steps = steps
            self.top = top
            self.from = from
            self.to = to
            self.log = log
        }
    }

    public var name: String
    public var width: Int
    public var height: Int
    public var unit: Unit
    public var background: [Double]
    public var elements: [Element]

    enum CodingKeys: String, CodingKey { case name, width, height, unit, background, elements }

    /// Decodes a scene; `unit` defaults to relative, `background` to black.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        width = try c.decode(Int.self, forKey: .width)
        height = try c.decode(Int.self, forKey: .height)
        unit = try c.decodeIfPresent(Unit.self, forKey: .unit) ?? .relative
        background = try c.decodeIfPresent([Double].self, forKey: .background) ?? [0, 0, 0]
        elements = try c.decodeIfPresent([Element].self, forKey: .elements) ?? []
    }

    public init(name: String, width: Int, height: Int, unit: Unit = .relative, background: [Double], elements: [Element]) {
        self.name = name
        self.width = width
        self.height = height
        self.unit = unit
        self.background = background
        self.elements = elements
    }
}

/// A region of a rendered scene with one known radiance.
public struct Patch: Codable, Sendable, Equatable {
    public var name: String
    /// Pixel rectangle for rectangles and ramp steps; the bounding box for disks.
    public var rect: PixelRect
    /// True for disks: only pixels within `radius` of the centre belong to the patch.
    public var disk: Bool
    public var rgb: [Double]

    /// Whether pixel (row, column) belongs to the patch; `inset` pixels are kept clear of
    /// the edges (for measurements unaffected by demosaicing or resampling at the border).
    public func contains(row: Int, column: Int, inset: Int = 0) -> Bool {
        guard row >= rect.top + inset, row < rect.bottom - inset, column >= rect.left + inset, column < rect.right - inset else {
            return false
        }
        guard disk else { return true }
        let cx = Double(rect.left + rect.right) / 2, cy = Double(rect.top + rect.bottom) / 2
        let r = Double(rect.width) / 2 - Double(inset)
        let dx = Double(column) + 0.5 - cx, dy = Double(row) + 0.5 - cy
        return dx * dx + dy * dy <= r * r
    }
}

/// Why a scene could not be built.
public struct SceneError: SceneLinearFailure, Equatable {
    public let reason: String
    /// Corrupt data (a malformed description) unless the scene is too large (`.limitExceeded`).
    public let category: FailureCategory
    public init(reason: String, category: FailureCategory = .corruptData) {
        self.reason = reason
        self.category = category
    }
    public var description: String { "invalid scene: \(reason)" }
}

/// How large a scene `SceneLayout` accepts: checked from the description's size before any
/// pixel is allocated, so a small description cannot make `simulate` ask for more memory
/// than the machine has.
public struct SceneLimits: Sendable, Equatable {
    /// Largest estimated peak memory of simulating the scene, in bytes (default three
    /// quarters of the allocation's memory, like `--max-memory`).
    public var maxBytes: Int

    /// The peak memory of `simulate` per scene pixel, an upper estimate: the radiance
    /// (24 bytes), the stored codes, the ground truth and the expected decode in `Double`
    /// and `Float`, the clip mask and the DNG being written. Measured: about 115 bytes per
    /// pixel for a LinearRaw capture (2048 × 1536: 409 MB), 60 for CFA.
    public static let simulationBytesPerPixel = 128

    public init(maxBytes: Int? = nil) {
        self.maxBytes = maxBytes ?? Allocation.current.memoryBytes / 4 * 3
    }
}

/// A scene description checked and laid out in pixels, before anything is painted: every
/// element's pixel rectangle and colour, and the patches. Building one allocates nothing
/// in proportion to the image; `render()` paints the radiance.
///
/// Refused, with a `SceneError` naming the element: a size outside 16…20000 per side or
/// over `SceneLimits` (`.limitExceeded`), colours that are not three finite numbers of
/// magnitude at most 10¹⁵, rectangles that are not `top < bottom`, `left < right` or cover
/// no pixel, disk centres and radii that are not finite or beyond 1000 image sizes, ramps
/// without 1…40 steps and a positive top, elements that together paint more than 64 times
/// the image's area (each element costs its area; more repaints nothing new).
public struct SceneLayout: Sendable {
    public let width: Int
    public let height: Int
    public let background: SIMD3<Double>
    /// The named patches of known radiance, in element order.
    public let patches: [Patch]

    /// What one element paints, in order.
    enum Paint: Sendable {
        case fill(PixelRect, SIMD3<Double>)
        /// The pixels of `patch`'s disk inside `box` (the bounding box clipped to the image).
        case disk(box: PixelRect, patch: Patch, rgb: SIMD3<Double>)
        case gradient(PixelRect, from: SIMD3<Double>, to: SIMD3<Double>, logarithmic: Bool)
        case sky(SkyDome)
    }
    let paints: [Paint]
    /// For a scene with a sky element: the illuminance its sky gives on the plane facing the
    /// camera, ∫ Y cos θ dω (Y with Rec.2020's weights, in the scene's radiance units).
    public let skyIlluminance: Double?

    /// The largest magnitude of a radiance value (the sun's disk is about 1.6 · 10⁹ cd/m²).
    public static let maxRadiance = 1e15
    /// Largest disk centre coordinate and radius, as fractions of the image.
    public static let maxDiskExtent = 1000.0
    /// The elements may paint at most this many times the image's area together.
    public static let maxPaintedAreaFactor = 64

    /// Checks `description` and lays it out.
    /// - Throws: `SceneError` for a size over the limits (`.limitExceeded`) and for missing
    ///   or malformed element fields.
    public init(_ description: SceneDescription, limits: SceneLimits = SceneLimits()) throws {
        let w = description.width, h = description.height
        guard (16...20000).contains(w), (16...20000).contains(h) else {
            throw SceneError(reason: "size \(w)×\(h) (16...20000 per side)")
        }
        let estimate = w * h * SceneLimits.simulationBytesPerPixel
        guard estimate <= limits.maxBytes else {
            throw SceneError(reason: "size \(w)×\(h): simulating it needs about \(estimate) bytes, more than the limit of \(limits.maxBytes) bytes",
                             category: .limitExceeded)
        }
        let rgb = Self.rgb
        func rect(_ v: [Double]?, _ what: String) throws -> PixelRect {
            guard let v, v.count == 4, v.allSatisfy(\.isFinite), v[0] < v[2], v[1] < v[3] else {
                throw SceneError(reason: "\(what) needs rect [top, left, bottom, right] with top < bottom, left < right")
            }
            // Fractions (all ≤ 1) or pixels. Coordinates are clamped to just outside the image
            // before they become integers (the rectangle is clipped to the image anyway).
            func pixel(_ value: Double, _ size: Int) -> Int { Int(min(max(value, -1), Double(size + 1))) }
            let fractional = v.allSatisfy { $0 <= 1 }
            let r = fractional
                ? PixelRect(top: pixel((v[0] * Double(h)).rounded(), h), left: pixel((v[1] * Double(w)).rounded(), w),
                            bottom: pixel((v[2] * Double(h)).rounded(), h), right: pixel((v[3] * Double(w)).rounded(), w))
                : PixelRect(top: pixel(v[0], h), left: pixel(v[1], w), bottom: pixel(v[2], h), right: pixel(v[3], w))
            let clamped = PixelRect(top: max(0, r.top), left: max(0, r.left), bottom: min(h, r.bottom), right: min(w, r.right))
            guard !clamped.isEmpty else { throw SceneError(reason: "\(what) covers no pixels") }
            return clamped
        }
        let background = try rgb(description.background, "background")
        var paints: [Paint] = []
        var patches: [Patch] = []
        var sky: Double?
        var painted = 0
        let paintLimit = Self.maxPaintedAreaFactor * w * h
        func paint(_ p: Paint, area: Int, _ what: String) throws {
            painted += area
            guard painted <= paintLimit else {
                throw SceneError(reason: "at \(what), the elements paint more than \(Self.maxPaintedAreaFactor) times the image's \(w)×\(h) pixels")
            }
            paints.append(p)
        }
        for (index, e) in description.elements.enumerated() {
            let label = e.name ?? "\(e.type)\(index)"
            switch e.type {
            case "rect":
                let r = try rect(e.rect, label)
                let v = try rgb(e.rgb, label)
                try paint(.fill(r, v), area: r.width * r.height, label)
                patches.append(Patch(name: label, rect: r, disk: false, rgb: [v.x, v.y, v.z]))
            case "disk":
                guard let c = e.center, c.count == 2, let radius = e.radius, radius > 0 else {
                    throw SceneError(reason: "\(label) needs center [x, y] and radius")
                }
                guard c.allSatisfy({ $0.isFinite && abs($0) <= Self.maxDiskExtent }), radius <= Self.maxDiskExtent else {
                    throw SceneError(reason: "\(label): center and radius must be finite, at most 1000 image widths or heights")
                }
                let v = try rgb(e.rgb, label)
                let cx = c[0] * Double(w), cy = c[1] * Double(h), rr = radius * Double(h)
                let box = PixelRect(top: max(0, Int((cy - rr).rounded(.down))), left: max(0, Int((cx - rr).rounded(.down))),
                                    bottom: min(h, Int((cy + rr).rounded(.up))), right: min(w, Int((cx + rr).rounded(.up))))
                guard !box.isEmpty else { throw SceneError(reason: "\(label) lies outside the image") }
                let patch = Patch(name: label, rect: PixelRect(top: Int((cy - rr).rounded()), left: Int((cx - rr).rounded()),
                                                               bottom: Int((cy + rr).rounded()), right: Int((cx + rr).rounded())),
                                  disk: true, rgb: [v.x, v.y, v.z])
                try paint(.disk(box: box, patch: patch, rgb: v), area: box.width * box.height, label)
                patches.append(patch)
            case "ramp":
                let r = try rect(e.rect, label)
                let v = try rgb(e.rgb, label)
                guard let steps = e.steps, (1...40).contains(steps), let top = e.top, top > 0 else {
                    throw SceneError(reason: "\(label) needs steps (1...40) and top > 0")
                }
                _ = try rgb([v.x * top, v.y * top, v.z * top], "\(label) (rgb × top)")
                for s in 0..<steps {
                    let left = r.left + r.width * s / steps, right = r.left + r.width * (s + 1) / steps
                    guard right > left else { continue }
                    let value = v * (top * pow(2, Double(s - steps + 1)))
                    let step = PixelRect(top: r.top, left: left, bottom: r.bottom, right: right)
                    try paint(.fill(step, value), area: step.width * step.height, label)
                    patches.append(Patch(name: "\(label)/\(s)", rect: step, disk: false, rgb: [value.x, value.y, value.z]))
                }
            case "gradient":
                let r = try rect(e.rect, label)
                let a = try rgb(e.from, label + " from"), b = try rgb(e.to, label + " to")
                let logarithmic = e.log ?? false
                if logarithmic && (a.min() <= 0 || b.min() <= 0) {
                    throw SceneError(reason: "\(label): a log gradient needs positive colours")
                }
                try paint(.gradient(r, from: a, to: b, logarithmic: logarithmic), area: r.width * r.height, label)
            case "sky":
                let dome = try Self.skyDome(e, label: label, width: w, height: h)
                try paint(.sky(dome), area: w * h, label)
                sky = (sky ?? 0) + dome.illuminance
            default:
                throw SceneError(reason: "unknown element type \"\(e.type)\" (rect, disk, ramp, gradient, sky)")
            }
        }
        width = w
        height = h
        self.background = background
        self.patches = patches
        self.paints = paints
        skyIlluminance = sky
    }

    /// An rgb triple of an element: three finite values of magnitude at most `maxRadiance`.
    private static func rgb(_ v: [Double]?, _ what: String) throws -> SIMD3<Double> {
        guard let v, v.count == 3, v.allSatisfy({ $0.isFinite && abs($0) <= Self.maxRadiance }) else {
            throw SceneError(reason: "\(what) needs rgb [r, g, b] (finite, magnitude at most 1e15)")
        }
        return SIMD3(v[0], v[1], v[2])
    }

    /// A sky element: its zenith colour, fisheye projection, sky model and optional sun.
    private static func skyDome(_ e: SceneDescription.Element, label: String, width: Int, height: Int) throws -> SkyDome {
        let zenith = try rgb(e.rgb, label)
        guard let name = e.projection, let projection = FisheyeProjection(rawValue: name) else {
            throw SceneError(reason: "\(label) needs projection: equidistant, equisolid, orthographic or stereographic")
        }
        let lens = FisheyeLens(projection: projection, fieldOfView: e.fov ?? 180, width: width, height: height)
        if let problem = lens.problem { throw SceneError(reason: "\(label): \(problem)") }
        let model = e.model ?? "uniform"
        guard model == "uniform" || model == "cie-overcast" else {
            throw SceneError(reason: "\(label): model must be uniform or cie-overcast")
        }
        var sun: SkyDome.Sun?
        if let spec = e.sun {
            guard spec.count == 3, spec.allSatisfy(\.isFinite), (0...90).contains(spec[0]), spec[2] > 0, spec[2] <= 10 else {
                throw SceneError(reason: "\(label): sun must be [zenith angle 0…90, azimuth, angular radius (0, 10]] in degrees")
            }
            sun = SkyDome.Sun(zenithAngle: spec[0] * .pi / 180, azimuth: spec[1] * .pi / 180, angularRadius: spec[2] * .pi / 180,
                              rgb: try rgb(e.sunRGB, label + " sunRGB"))
        }
        return SkyDome(lens: lens, zenith: zenith, overcast: model == "cie-overcast", sun: sun)
    }

    /// The radiance: the background, then every element in order (later ones paint over
    /// earlier ones). RGB interleaved, `Double`.
    public func render() -> ImageBuffer<Double> {
        let w = width
        var pixels = [Double](repeating: 0, count: w * height * 3)
        for i in 0..<(w * height) {
            pixels[3 * i] = background.x
            pixels[3 * i + 1] = background.y
            pixels[3 * i + 2] = background.z
        }
        func fill(_ r: PixelRect, _ value: (Int, Int) -> SIMD3<Double>?) {
            for y in r.top..<r.bottom {
                for x in r.left..<r.right {
                    guard let v = value(y, x) else { continue }
                    pixels[3 * (y * w + x)] = v.x
                    pixels[3 * (y * w + x) + 1] = v.y
                    pixels[3 * (y * w + x) + 2] = v.z
                }
            }
        }
        for p in paints {
            switch p {
            case .fill(let r, let v):
                fill(r) { _, _ in v }
            case .disk(let box, let patch, let v):
                fill(box) { y, x in patch.contains(row: y, column: x) ? v : nil }
            case .gradient(let r, let a, let b, let logarithmic):
                fill(r) { _, x in
                    let t = r.width > 1 ? Double(x - r.left) / Double(r.width - 1) : 0
                    if logarithmic {
                        return SIMD3(exp(Foundation.log(a.x) * (1 - t) + Foundation.log(b.x) * t),
                                     exp(Foundation.log(a.y) * (1 - t) + Foundation.log(b.y) * t),
                                     exp(Foundation.log(a.z) * (1 - t) + Foundation.log(b.z) * t))
                    }
                    return a * (1 - t) + b * t
                }
            case .sky(let dome):
                fill(PixelRect(width: w, height: height)) { y, x in dome.radiance(column: x, row: y) }
            }
        }
        return ImageBuffer(width: w, height: height, channels: 3, samples: pixels)
    }
}

/// A scene rendered to pixels: linear Rec.2020 radiance per pixel and its patches.
public struct RenderedScene: Sendable {
    public var description: SceneDescription
    /// Radiance, RGB interleaved, `Double`.
    public var radiance: ImageBuffer<Double>
    public var patches: [Patch]
    /// The sky's illuminance on the plane facing the camera (`SceneLayout.skyIlluminance`).
    public var skyIlluminance: Double?

    /// Checks and lays out `description` (`SceneLayout`), then renders it.
    /// - Throws: `SceneError` for a size over `limits` and for missing or malformed element fields.
    public init(_ description: SceneDescription, limits: SceneLimits = SceneLimits()) throws {
        let layout = try SceneLayout(description, limits: limits)
        self.description = description
        radiance = layout.render()
        patches = layout.patches
        skyIlluminance = layout.skyIlluminance
    }

    /// A scene from a radiance map (linear Rec.2020 values), e.g. read from an EXR or HDF5.
    public init(name: String, radiance: ImageBuffer<Double>, unit: SceneDescription.Unit = .relative) {
        description = SceneDescription(name: name, width: radiance.width, height: radiance.height, unit: unit,
                                       background: [0, 0, 0], elements: [])
        self.radiance = radiance
        patches = []
    }
}

/// A sky dome photographed by a fisheye camera pointing at the zenith (the `sky` element).
struct SkyDome: Sendable {
    struct Sun: Sendable {
        var zenithAngle: Double, azimuth: Double, angularRadius: Double
        var rgb: SIMD3<Double>
        var direction: SIMD3<Double> {
            SIMD3(sin(zenithAngle) * cos(azimuth), sin(zenithAngle) * sin(azimuth), cos(zenithAngle))
        }
    }
    var lens: FisheyeLens
    var zenith: SIMD3<Double>
    var overcast: Bool
    var sun: Sun?

    /// The sky's radiance at angle θ from the zenith.
    func sky(_ theta: Double) -> SIMD3<Double> { overcast ? zenith * ((1 + 2 * cos(theta)) / 3) : zenith }

    /// A pixel's radiance: the sky at its centre's direction (nil beyond the horizon or the
    /// image circle: the background stays), the sun by the fraction of 64 × 64 points of the
    /// pixel inside its disc.
    func radiance(column x: Int, row y: Int) -> SIMD3<Double>? {
        guard let theta = lens.angle(column: x, row: y), theta <= min(lens.maximumAngle, .pi / 2) else { return nil }
        var value = sky(theta)
        guard let sun else { return value }
        let centre = lens.direction(x: Double(x) + 0.5, y: Double(y) + 0.5)!
        let axis = sun.direction
        // Far from the sun (more than its radius plus a pixel's span): the sky alone.
        let span = 2 * lens.maximumAngle / lens.radius * 3
        guard acos(min(1, (centre * axis).sum())) <= sun.angularRadius + span else { return value }
        let n = 64, cosRadius = cos(sun.angularRadius)
        var inside = 0
        for j in 0..<n {
            for i in 0..<n {
                guard let d = lens.direction(x: Double(x) + (Double(i) + 0.5) / Double(n), y: Double(y) + (Double(j) + 0.5) / Double(n)) else { continue }
                if (d * axis).sum() >= cosRadius { inside += 1 }
            }
        }
        let f = Double(inside) / Double(n * n)
        value = value * (1 - f) + sun.rgb * f
        return value
    }

    /// ∫ Y cos θ dω over the dome (the plane facing the zenith): π Y_z for a uniform sky,
    /// 7π/9 Y_z for CIE overcast; the sun's disc adds (Y_sun − Y_sky(θ_s)) π sin²δ cos θ_s.
    var illuminance: Double {
        let w = Rec2020.luminanceWeights
        let yz = (zenith * w).sum()
        var e = overcast ? 7 * .pi / 9 * yz : .pi * yz
        if let sun {
            let cap = Double.pi * pow(sin(sun.angularRadius), 2) * cos(sun.zenithAngle)
            e += ((sun.rgb * w).sum() - (sky(sun.zenithAngle) * w).sum()) * cap
        }
        return e
    }
}
