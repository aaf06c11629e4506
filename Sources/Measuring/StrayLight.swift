import Analysis
import Engine
import Foundation

/// Stray light as stated for a fisheye measurement (docs/lens.md#stray-light): the lens
/// spreads a share `fraction` of the light of every direction over the directions within
/// `angle` of it (its point-spread function, reduced to that). Pixels at least `threshold`
/// times the image circle's median luminance (the mean of its lit pixels when the median is 0)
/// are very bright sources; the pixels within `angle` of one are flagged.
public struct StrayLightRequest: Sendable, Equatable, Codable {
    /// The share of a direction's light the lens spreads about it (0 ≤ f < 1).
    public var fraction: Double
    /// Degrees: how far the spread reaches, and the flagged zone about a source.
    public var angle: Double
    /// A source's least luminance, as a multiple of the circle's median luminance.
    public var threshold: Double

    public static let defaultAngle = 10.0, defaultThreshold = 1000.0

    public init(fraction: Double, angle: Double = Self.defaultAngle, threshold: Double = Self.defaultThreshold) {
        self.fraction = fraction
        self.angle = angle
        self.threshold = threshold
    }

    /// What is wrong with the values, or nil.
    public var problem: String? {
        guard fraction >= 0, fraction < 1 else { return "the stray-light fraction must be 0 ≤ f < 1 (a share of the light, e.g. 0.02 for 2 %)" }
        guard angle > 0, angle <= 90 else { return "the stray-light angle must be above 0 and at most 90 degrees" }
        guard threshold > 1, threshold.isFinite else { return "the bright-source threshold must be a finite multiple of the median luminance above 1" }
        return nil
    }
}

/// The pixels of an image circle that are very bright sources (mark 1), and those within the
/// stated angle of one (mark 2), from the image's luminance.
struct StrayLightZone: Sendable {
    let request: StrayLightRequest
    /// Per pixel, row-major: 0 clear, 1 a source, 2 within the angle of a source.
    let marks: [UInt8]
    /// The luminance (the image's units) a source reaches at least.
    let threshold: Double
    /// Connected groups of source pixels, and how many of them the zone was drawn about (the
    /// brightest `maximumSources`).
    let sources: Int, zonedSources: Int
    /// Those the zone was drawn about: the mean direction of their pixels, the cosine of the
    /// zone's angular radius about it (the angle plus the largest angle of a member from it),
    /// and their pixels. A direction d lies in the zone when d · direction ≥ cosine.
    let zoned: [(direction: SIMD3<Double>, cosine: Double, members: [Int])]

    static let maximumSources = 64

    init(luminance: [Float], width: Int, height: Int, lens: FisheyeLens, request: StrayLightRequest) {
        self.request = request
        // Directions are worked out where needed, not held (24 bytes a pixel).
        func direction(_ i: Int) -> SIMD3<Double>? { lens.direction(x: Double(i % width) + 0.5, y: Double(i / width) + 0.5) }
        var inside: [Float] = []
        for i in 0..<(width * height) where luminance[i].isFinite && direction(i) != nil { inside.append(luminance[i]) }
        inside.sort()
        // The level sources are measured against: the circle's median luminance, or where most of
        // the circle is black (a median of 0) the mean of its lit pixels; nothing is a source in
        // a circle without light.
        let median = inside.isEmpty ? 0 : Double(inside[inside.count / 2])
        let lit = inside.filter { $0 > 0 }
        let base = median > 0 ? median : lit.isEmpty ? Double.infinity : lit.reduce(0) { $0 + Double($1) } / Double(lit.count)
        threshold = request.threshold * base
        let level = threshold
        var marks = [UInt8](repeating: 0, count: width * height)
        for i in marks.indices where Double(luminance[i]) >= level && direction(i) != nil { marks[i] = 1 }
        // Connected groups of sources: their centre's direction, reach (largest angle of a
        // member from it) and light (Σ luminance, for choosing the brightest).
        var seen = [Bool](repeating: false, count: width * height)
        var groups: [(direction: SIMD3<Double>, reach: Double, light: Double, members: [Int])] = []
        for start in marks.indices where marks[start] == 1 && !seen[start] {
            seen[start] = true
            var stack = [start], members: [Int] = []
            while let i = stack.popLast() {
                members.append(i)
                let x = i % width, y = i / width
                for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] where nx >= 0 && ny >= 0 && nx < width && ny < height {
                    let j = ny * width + nx
                    if marks[j] == 1 && !seen[j] {
                        seen[j] = true
                        stack.append(j)
                    }
                }
            }
            let unit = members.map { direction($0)! }
            let sum = unit.reduce(SIMD3<Double>(), +)
            let centre = sum / (sum * sum).sum().squareRoot()
            let reach = unit.map { acos(min(1, ($0 * centre).sum())) }.max() ?? 0
            groups.append((centre, reach, members.reduce(0) { $0 + Double(luminance[$1]) }, members))
        }
        sources = groups.count
        let alpha = request.angle * .pi / 180
        let zoned = groups.sorted { $0.light > $1.light }.prefix(Self.maximumSources)
            .map { (direction: $0.direction, cosine: cos(min(.pi, alpha + $0.reach)), members: $0.members) }
        zonedSources = zoned.count
        self.zoned = zoned
        for i in marks.indices where marks[i] == 0 && !zoned.isEmpty {
            guard let d = direction(i) else { continue }
            if zoned.contains(where: { ($0.direction * d).sum() >= $0.cosine }) { marks[i] = 2 }
        }
        self.marks = marks
    }
}

/// E_v's sums over the zone (`StrayLightZone`): the sources' and the flagged pixels' parts of
/// Σ Y · w, their pixel counts, and Σ Y · ω over the whole circle (the light the spread moves).
struct StrayLightSums: Sendable, Equatable {
    var sourceSum = 0.0, zoneSum = 0.0, flux = 0.0
    var sourcePixels = 0, zonePixels = 0

    static func += (a: inout StrayLightSums, b: StrayLightSums) {
        a.sourceSum += b.sourceSum
        a.zoneSum += b.zoneSum
        a.flux += b.flux
        a.sourcePixels += b.sourcePixels
        a.zonePixels += b.zonePixels
    }

    @inline(__always)
    mutating func add(mark: UInt8, luminance: Double, weight: Double, omega: Double) {
        flux += luminance * omega
        if mark == 1 {
            sourceSum += luminance * weight
            sourcePixels += 1
        } else if mark == 2 {
            zoneSum += luminance * weight
            zonePixels += 1
        }
    }
}

/// What E_v's result says of stray light (docs/lens.md#stray-light).
public struct StrayLightSummary: Codable, Sendable, Equatable {
    /// The stated spread: its share, angle (degrees) and the sources' threshold (× the median).
    public var fraction: Double, angle: Double, threshold: Double
    /// The sources' least luminance, cd/m².
    public var sourceLuminance: Double
    /// Groups of source pixels, and how many the zone was drawn about (the brightest 64).
    public var sources: Int, zonedSources: Int
    public var sourcePixels: Int, flaggedPixels: Int
    /// The parts of E_v that the sources and the flagged pixels about them give.
    public var sourceShare: Double, flaggedShare: Double
    /// The most the stated spread can move E_v, lux: f · α · Σ L ω over the circle (light moved
    /// by at most α changes its cos θ by at most α). The 95 % interval is widened by it on
    /// both sides.
    public var bound: Double
}

/// A region's part of the stated stray light (docs/lens.md#stray-light): its pixels that are
/// sources or lie within the angle of one, their parts of the region's Σ w · Y, and the bound on
/// the veiling light the nearby sources can add to its mean.
public struct RegionStrayLight: Codable, Sendable, Equatable {
    public var sourcePixels: Int, flaggedPixels: Int
    /// The parts of the region's weighted luminance sum in those pixels.
    public var sourceShare: Double, flaggedShare: Double
    /// Σ L · ω (cd/m² · sr) of the sources within the angle of the region's pixels.
    public var nearbySourceLight: Double
    /// The most the stray light can lift the region's mean, relative: f · (nearby sources'
    /// Σ L ω) / (Ω_α · the region's mean luminance), Ω_α = 2π (1 − cos α) — the share f of
    /// their light spread evenly over the directions within α. The budgets' 95 % lower ends
    /// are lowered by it.
    public var bound: Double
}

extension Pipeline {
    /// Each region's part of the stray light stated in `request` (`RegionStrayLight`; nil for a
    /// region given by a semantic mask): a further pass reads the file's luminance, the zone
    /// is drawn as for E_v, and each region's pixels (weighted by their solid angle) are summed
    /// against it.
    /// - Throws: the passes' errors.
    static func regionStrayLight(_ path: String, request: AnalysisRequest) throws -> [String: RegionStrayLight] {
        guard request.strayLight != nil, request.fisheye != nil else { return [:] }
        var develop = request.develop
        develop.includeMasks = false
        let source = try IlluminanceSource.of(path, options: develop)
        let plane = LuminancePlane()
        try source.passes.pass({ width, height in plane.prepare(width: width, height: height) }, { plane.add($0) })
        let (width, height, luminance) = plane.take()
        return try regionStrayLight(luminance: luminance, width: width, height: height,
                                    radiance: source.known.image?.exposure.mode == .radiance, request: request)
    }

    /// The same over an image held: its luminance.
    static func regionStrayLight(_ image: SceneLinearImage, request: AnalysisRequest) throws -> [String: RegionStrayLight] {
        guard request.strayLight != nil, request.fisheye != nil else { return [:] }
        let px = image.pixels.samples
        let luminance = (0..<(image.width * image.height)).map { FisheyeLensRequest.luminance(px[3 * $0], px[3 * $0 + 1], px[3 * $0 + 2]) }
        return try regionStrayLight(luminance: luminance, width: image.width, height: image.height, radiance: image.exposure.mode == .radiance,
                                    request: request)
    }

    /// Each region's part against the zone drawn in `luminance` (`radiance`: values × 179 are
    /// luminance).
    static func regionStrayLight(luminance: [Float], width: Int, height: Int, radiance: Bool,
                                 request: AnalysisRequest) throws -> [String: RegionStrayLight] {
        guard let stray = request.strayLight, let fisheye = request.fisheye else { return [:] }
        let lens = fisheye.lens(width: width, height: height)
        let zone = StrayLightZone(luminance: luminance, width: width, height: height, lens: lens, request: stray)
        let omega = FisheyeGeometry(lens: lens, width: width, height: height).arrays.solidAngle
        // Luminance in cd/m² (a radiance image's values × 179).
        let toLuminance = radiance ? Photometric.radianceEfficacy : 1
        let alpha = stray.angle * .pi / 180, coneSolidAngle = 2 * .pi * (1 - cos(alpha))
        let sourceLight = zone.zoned.map { $0.members.reduce(0) { $0 + Double(luminance[$1]) * omega[$1] } * toLuminance }
        var out: [String: RegionStrayLight] = [:]
        let regions = request.regions.isEmpty ? [wholeImage(width: width, height: height)] : request.regions
        for region in regions where !region.isMask {
            let selection = try region.selection(width: width, height: height)
            var total = 0.0, flagged = 0.0, sources = 0.0, flaggedPixels = 0, sourcePixels = 0, weight = 0.0
            var near = [Bool](repeating: false, count: zone.zoned.count)
            let b = selection.bounds
            for y in b.top..<b.bottom {
                for x in b.left..<b.right {
                    let i = y * width + x
                    let w = Double(selection.weights?[i] ?? 1) * omega[i]
                    let v = Double(luminance[i])
                    guard w > 0, v.isFinite else { continue }
                    total += w * v
                    weight += w
                    switch zone.marks[i] {
                    case 1: sources += w * v; sourcePixels += 1
                    case 2: flagged += w * v; flaggedPixels += 1
                    default: break
                    }
                    guard zone.marks[i] != 0, let d = lens.direction(x: Double(x) + 0.5, y: Double(y) + 0.5) else { continue }
                    for k in zone.zoned.indices where !near[k] && (zone.zoned[k].direction * d).sum() >= zone.zoned[k].cosine {
                        near[k] = true
                    }
                }
            }
            let nearby = zip(near, sourceLight).reduce(0) { $0 + ($1.0 ? $1.1 : 0) }
            let mean = weight > 0 ? total / weight * toLuminance : 0
            out[region.name] = RegionStrayLight(sourcePixels: sourcePixels, flaggedPixels: flaggedPixels,
                                                sourceShare: total > 0 ? sources / total : 0, flaggedShare: total > 0 ? flagged / total : 0,
                                                nearbySourceLight: nearby,
                                                bound: mean > 0 ? stray.fraction * nearby / (coneSolidAngle * mean) : 0)
        }
        return out
    }
}
