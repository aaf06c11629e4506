import ExchangeCore
import Foundation
import ImageCore

extension RadianceFile {
    /// A Radiance picture this tool wrote, as a scene-linear image: radiance in W·sr⁻¹·m⁻²
    /// (linear Rec.2020, `read`), the absolute scale its header records
    /// (`SCENELINEAR_SCALE`, cd/m² per linear reference value, and its relative uncertainty;
    /// `SCENELINEAR_SCALE_SOURCE`), and its lower bounds: the pixels the header's
    /// `SCENELINEAR_LOWER_BOUND_MASK` picture marks (a pixel ≥ 0.5 is a lower bound), none
    /// when the header says there are none, and no clip mask (clipping unknown) when it says
    /// unknown or names a mask that is not there.
    public static func readSceneLinear(_ path: String, limits: ReadLimits = ReadLimits()) throws -> SceneLinearImage {
        let picture = try read(path, limits: limits)
        let n = picture.width * picture.height
        var clip: [UInt8]?
        let count = picture.headerValue("SCENELINEAR_LOWER_BOUND_PIXELS").flatMap { Int($0) }
        if count == 0 {
            clip = [UInt8](repeating: 0, count: n)
        } else if count != nil, let name = picture.headerValue("SCENELINEAR_LOWER_BOUND_MASK") {
            let maskPath = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(name).path
            if FileManager.default.fileExists(atPath: maskPath) {
                let mask = try read(maskPath, limits: limits)
                guard mask.width == picture.width, mask.height == picture.height else {
                    throw ExchangeError(path: maskPath, operation: "RadianceFile.readSceneLinear",
                                        message: "the lower-bound mask is \(mask.width)×\(mask.height), the picture \(picture.width)×\(picture.height)",
                                        category: .corruptData)
                }
                clip = (0..<n).map { i in mask.rec2020[3 * i + 1] >= 0.5 ? 1 : 0 }
            }
        }
        var exposure = ExposureScaling(mode: .radiance, factor: 1, source: picture.headerValue("SCENELINEAR_SCALE_SOURCE"))
        if let scale = picture.headerValue("SCENELINEAR_SCALE") {
            let parts = scale.components(separatedBy: ", relative standard uncertainty ")
            if let value = Double(parts[0].split(separator: " ").first ?? ""), value > 0, value.isFinite {
                exposure.factor = value / Photometric.radianceEfficacy
            }
            if parts.count == 2, let u = Double(parts[1].trimmingCharacters(in: .whitespaces)), u >= 0 { exposure.relativeUncertainty = u }
        }
        var provenance = ImageProvenance.synthetic(picture.headerValue("SCENELINEAR_SOURCE") ?? URL(fileURLWithPath: path).lastPathComponent)
        provenance.software = picture.headerValue("SOFTWARE") ?? ""
        if let date = picture.headerValue("CAPDATE"), CaptureDate.isExifDateTime(date) {
            provenance.dng.append(MetadataItem("dateTimeOriginal", .text(date)))
        }
        if let view = picture.view { provenance.processing.append(MetadataItem("radianceView", .text(view))) }
        return SceneLinearImage(pixels: ImageBuffer(width: picture.width, height: picture.height, channels: 3, samples: picture.rec2020),
                                clipMask: clip, encoding: .linearRec2020, exposure: exposure, provenance: provenance)
    }
}
