import Foundation

/// What a Radiance picture records of its lower bounds: pixels whose value is only a lower
/// bound (a channel clipped in the frame or, for a merge, in every frame), so that anything
/// computed from them — a luminance, an illuminance, a glare probability — is at least what
/// it says. Written into the picture's header (`headerLines`) and reported by the commands
/// (their JSON, and a warning on stderr: `warning(for:)`).
public struct RadianceLowerBounds: Sendable, Equatable, Codable {
    public enum Status: String, Sendable, Codable {
        /// The image has a clip mask and no pixel of it is flagged.
        case none
        /// Some pixels are lower bounds.
        case present = "lower bounds"
        /// The image records no clip mask: any value may be clipped.
        case unknown
    }

    /// What `share` is a share of.
    public enum ShareBasis: String, Sendable, Codable {
        /// The picture's solid angle (a fisheye picture, each pixel weighted by its ω).
        case solidAngle = "solid angle"
        /// The picture's pixels (a picture without a lens: pixel count over all pixels).
        case pixels
    }

    public var status: Status
    /// Lower-bound pixels; nil when unknown.
    public var pixels: Int?
    /// Their share of the picture's solid angle or pixels (`shareOf`), 0…1; nil when unknown.
    public var share: Double?
    public var shareOf: ShareBasis
    /// The mask picture written next to the picture (only when there are lower bounds).
    public var mask: String?

    /// Counts the non-zero pixels of `clipMask` (nil: unknown) and their share, weighted by
    /// `solidAngles` (sr per pixel) when given, else by pixel.
    public init(clipMask: [UInt8]?, solidAngles: [Double]? = nil) {
        shareOf = solidAngles == nil ? .pixels : .solidAngle
        guard let clipMask else {
            status = .unknown
            return
        }
        precondition(solidAngles == nil || solidAngles?.count == clipMask.count, "one solid angle per pixel")
        var count = 0, flagged = 0.0, total = 0.0
        for (i, v) in clipMask.enumerated() {
            let weight = solidAngles?[i] ?? 1
            total += weight
            if v != 0 {
                count += 1
                flagged += weight
            }
        }
        status = count > 0 ? .present : .none
        pixels = count
        share = total > 0 ? flagged / total : 0
    }

    /// The header variables, each line ending in a line break:
    ///
    ///     SCENELINEAR_LOWER_BOUND_PIXELS=<count>                     (or "unknown (…)")
    ///     SCENELINEAR_LOWER_BOUND_SOLID_ANGLE_SHARE=<0…1>            (a fisheye picture), or
    ///     SCENELINEAR_LOWER_BOUND_PIXEL_SHARE=<0…1>                  (any other)
    ///     SCENELINEAR_LOWER_BOUND_MASK=<file name of the mask>       (with `namingMask`, when written)
    public func headerLines(namingMask: Bool = true) -> String {
        guard let pixels, let share else {
            return "SCENELINEAR_LOWER_BOUND_PIXELS=unknown (no clip mask recorded: any value may be clipped)\n"
        }
        var lines = "SCENELINEAR_LOWER_BOUND_PIXELS=\(pixels)\n"
        lines += String(format: "SCENELINEAR_LOWER_BOUND_%@_SHARE=%.6g\n", shareOf == .solidAngle ? "SOLID_ANGLE" : "PIXEL", share)
        if namingMask, let mask { lines += "SCENELINEAR_LOWER_BOUND_MASK=\(URL(fileURLWithPath: mask).lastPathComponent)\n" }
        return lines
    }

    /// The share as text: "2.5 % of its solid angle" or "2.5 % of its pixels".
    public var shareText: String {
        String(format: "%.3g %% of its %@", 100 * (share ?? 0), shareOf == .solidAngle ? "solid angle" : "pixels")
    }

    /// The warning for the picture at `path` when it holds lower bounds, else nil.
    public func warning(for path: String) -> String? {
        guard status == .present, let pixels else { return nil }
        var text = "\(path) holds \(pixels) lower-bound pixels (clipped), \(shareText): their values, and anything computed from them "
            + "(luminance, illuminance, glare), are only at least what they say"
        if let mask { text += "; they are marked in \(mask)" }
        return text + ". Merge a bracket that adds a shorter exposure (scenelinear merge) to measure them."
    }
}
