import ArgumentParser
import Foundation
import SceneLinearKit

/// `--projection`, `--fov` and `--circle`: a circular fisheye's lens, shared by
/// `illuminance` (which needs it) and `merge` (whose .hdr it makes a fisheye picture).
struct FisheyeOptions: ParsableArguments {
    @Option(help: "The lens's projection: equidistant (r = fθ), equisolid (r = 2f sin θ/2), orthographic (r = f sin θ) or stereographic (r = 2f tan θ/2).")
    var projection: FisheyeProjection?

    @Option(help: "Full field of view across the image circle, degrees (default 180).")
    var fov: Double?

    @Option(help: ArgumentHelp("The image circle in output pixels: centre x, centre y and radius, or auto (found from the dark surround: a first estimate from the pixels above the surround, refined by counting the pixels near the edge that are brighter than halfway between the sky just inside and the surround just outside; the centroid and √(count/π); see docs/fisheye.md) (default: the circle inscribed in the image, centred).", valueName: "x,y,r|auto"))
    var circle: String?

    var fieldOfView: Double { fov ?? 180 }

    func validate() throws {
        guard let projection else {
            if fov != nil || circle != nil { throw ValidationError("--fov and --circle describe a fisheye lens: they need --projection") }
            return
        }
        guard fieldOfView > 0 && fieldOfView <= projection.maximumFieldOfView else {
            throw ValidationError("--fov must be in (0, \(projection.maximumFieldOfView)] degrees for --projection \(projection.rawValue)")
        }
        if let circle, circle != "auto", parsedCircle(circle) == nil {
            throw ValidationError("--circle must be x,y,r (pixels, r > 0) or auto")
        }
    }

    /// The lens of `image` (read from `path`): the given circle, the one found (`auto`), or
    /// the inscribed one; nil without --projection.
    /// - Throws: `AnalysisError` when `auto` finds no image circle.
    func lens(for image: SceneLinearImage, path: String) throws -> FisheyeLens? {
        guard let projection else { return nil }
        let width = image.width, height = image.height
        guard circle == "auto" else {
            return FisheyeSpec(projection: projection, fieldOfView: fieldOfView, circle: circle.flatMap(parsedCircle)).lens(width: width, height: height)
        }
        let w = Rec2020.luminanceWeights, px = image.pixels.samples
        let y = (0..<(width * height)).map { i in Float(w.x) * px[3 * i] + Float(w.y) * px[3 * i + 1] + Float(w.z) * px[3 * i + 2] }
        guard let found = FisheyeLens.detectCircle(luminance: y, width: width, height: height) else {
            throw AnalysisError(reason: "\(path): no image circle found (give --circle x,y,r)")
        }
        return FisheyeLens(projection: projection, fieldOfView: fieldOfView, centerX: found.x, centerY: found.y, radius: found.r)
    }
}
