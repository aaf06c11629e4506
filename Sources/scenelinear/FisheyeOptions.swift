import ArgumentParser
import Foundation
import SceneLinearKit

/// `--projection`, `--fov` and `--circle`: a circular fisheye's lens, for every command that
/// takes one (illuminance, merge, the analysis commands, calibrate).
struct FisheyeOptions: ParsableArguments {
    @Option(help: "A circular fisheye's projection: equidistant (r = fθ), equisolid (r = 2f sin θ/2), orthographic (r = f sin θ) or stereographic (r = 2f tan θ/2). illuminance integrates over its image circle (required there); stats, histogram, ratio and report weight each pixel by its solid angle (statistics per steradian); merge draws an .hdr output as the picture evalglare reads and adds /fisheye to an .h5; calibrate takes it with --illuminance-vertical. See docs/fisheye.md.")
    var projection: FisheyeProjection?

    @Option(help: "With --projection: the full field of view across the image circle, degrees (default 180).")
    var fov: Double?

    @Option(help: ArgumentHelp("With --projection: the image circle in output pixels, centre x, centre y and radius, or auto (illuminance and merge: found from the dark surround: a first estimate from the pixels above the surround, refined by counting the pixels near the edge that are brighter than halfway between the sky just inside and the surround just outside; the centroid and √(count/π); see docs/fisheye.md) (default: the circle inscribed in the image, centred).", valueName: "x,y,r|auto"), transform: ArgumentValue.imageCircle)
    var circle: FisheyeCircle?

    var fieldOfView: Double { fov ?? 180 }

    func validate() throws {
        guard let projection else {
            if circle != nil { throw ValidationError("--circle describes a fisheye lens: it needs --projection") }
            return
        }
        guard fieldOfView > 0 && fieldOfView <= projection.maximumFieldOfView else {
            throw ValidationError("--fov must be in (0, \(projection.maximumFieldOfView)] degrees for --projection \(projection.rawValue)")
        }
    }

    /// The lens asked for; nil without --projection.
    var request: FisheyeLensRequest? {
        projection.map { FisheyeLensRequest(projection: $0, fieldOfView: fieldOfView, circle: circle ?? .inscribed) }
    }

    /// For illuminance and merge: --fov, like --circle, needs --projection.
    func requireProjectionForLensOptions() throws {
        if projection == nil && (fov != nil || circle != nil) {
            throw ValidationError("--fov and --circle describe a fisheye lens: they need --projection")
        }
    }

    /// For the commands that take the same circle for every image: `--circle auto` refused.
    func requireGivenCircle(_ command: String) throws {
        if circle == .detected {
            throw ValidationError("--circle auto is found in each image by illuminance and merge only: give \(command) the circle as x,y,r")
        }
    }

    /// The lens as the measurements and calibrations take it; nil without --projection.
    /// (`requireGivenCircle` has refused a circle to be found.)
    var spec: FisheyeSpec? { request?.spec }
}

/// `--stray-light`, `--stray-light-angle`, `--bright-source`: a fisheye lens's stated stray
/// light (illuminance and the analysis commands; docs/lens.md#stray-light).
struct StrayLightOptions: ParsableArguments {
    @Option(help: ArgumentHelp("With --projection: the lens's stray light, the share (percent) of every direction's light it spreads within --stray-light-angle (e.g. 2). The pixels about very bright sources are flagged and their part of each result listed; E_v's interval is widened by the most the spread can move it, a region's lower ends by the veiling light nearby sources can add.", valueName: "percent"),
            transform: ArgumentValue.percentage)
    var strayLight: Double?

    @Option(help: ArgumentHelp("With --stray-light: how far the spread reaches, and the flagged zone about a source, degrees (default 10).", valueName: "degrees"))
    var strayLightAngle: Double?

    @Option(help: ArgumentHelp("With --stray-light: a very bright source is at least this many times the image circle's median luminance (default 1000).", valueName: "factor"))
    var brightSource: Double?

    func validate() throws {
        if let problem = request?.problem { throw ValidationError(problem) }
        if strayLight == nil, strayLightAngle != nil || brightSource != nil {
            throw ValidationError("--stray-light-angle and --bright-source describe the stray light: they need --stray-light")
        }
    }

    /// The stated stray light; nil without --stray-light.
    var request: StrayLightRequest? {
        strayLight.map { StrayLightRequest(fraction: $0, angle: strayLightAngle ?? StrayLightRequest.defaultAngle,
                                           threshold: brightSource ?? StrayLightRequest.defaultThreshold) }
    }
}
