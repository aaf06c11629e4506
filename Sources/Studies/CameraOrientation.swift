import Foundation

/// Where a camera looks: its optical axis (azimuth east of north, elevation above the
/// horizon, degrees) and its roll. The image's up is the direction of rising elevation along
/// the axis's azimuth, the camera turned clockwise about its axis (seen from behind) by
/// `roll` (so the scene turns the other way in the image); for an axis at the zenith that
/// points away from the azimuth given, so `--view 180,90` has north at the top of the image
/// (and east on its left, as the sky is seen from below). Directions in the camera's frame are
/// (right, up, forward), as `FisheyeLens.direction` gives them.
public struct CameraOrientation: Sendable, Equatable, Codable {
    public var azimuth: Double
    public var elevation: Double
    public var roll: Double

    public init(azimuth: Double, elevation: Double, roll: Double = 0) {
        self.azimuth = azimuth
        self.elevation = elevation
        self.roll = roll
    }

    /// "azimuth,elevation[,roll]" in degrees, or the reason it is not one.
    public static func parse(_ text: String) -> Result<CameraOrientation, StudyInputError> {
        guard let parts = StudyInputError.numbers(text, count: 2...3) else {
            return .failure(StudyInputError("'\(text)' is not a view: give azimuth,elevation[,roll] in degrees (the axis east of north and above the horizon)"))
        }
        let view = CameraOrientation(azimuth: parts[0], elevation: parts[1], roll: parts.count == 3 ? parts[2] : 0)
        guard (-90...90).contains(view.elevation), (-360...360).contains(view.azimuth), (-180...180).contains(view.roll) else {
            return .failure(StudyInputError("view '\(text)': elevation must lie in −90…90°, azimuth in −360…360°, roll in −180…180°"))
        }
        return .success(view)
    }

    /// The unit vector (east, north, up) of the direction at `azimuth`, `elevation` (degrees).
    public static func world(azimuth: Double, elevation: Double) -> SIMD3<Double> {
        let a = azimuth * .pi / 180, e = elevation * .pi / 180
        return SIMD3(cos(e) * sin(a), cos(e) * cos(a), sin(e))
    }

    /// The camera's axes in the world (east, north, up): right, up, forward.
    public var axes: (right: SIMD3<Double>, up: SIMD3<Double>, forward: SIMD3<Double>) {
        let a = azimuth * .pi / 180, e = elevation * .pi / 180, r = roll * .pi / 180
        let forward = Self.world(azimuth: azimuth, elevation: elevation)
        let rising = SIMD3(-sin(e) * sin(a), -sin(e) * cos(a), cos(e))
        let across = SIMD3(forward.y * rising.z - forward.z * rising.y, forward.z * rising.x - forward.x * rising.z,
                           forward.x * rising.y - forward.y * rising.x)
        // The camera turned clockwise by r: its up moves towards its former right.
        let up = rising * cos(r) + across * sin(r)
        let right = SIMD3(forward.y * up.z - forward.z * up.y, forward.z * up.x - forward.x * up.z, forward.x * up.y - forward.y * up.x)
        return (right, up, forward)
    }

    /// A world direction (azimuth, elevation in degrees) in the camera's frame.
    public func cameraDirection(azimuth: Double, elevation: Double) -> SIMD3<Double> {
        let d = Self.world(azimuth: azimuth, elevation: elevation), (r, u, f) = axes
        return SIMD3((d * r).sum(), (d * u).sum(), (d * f).sum())
    }
}
