import Foundation
import Opcodes

extension ExposureScaling {
    /// With a lens calibration and absolute units: the item `vignetting` added.
    func withLens(_ lens: LensCalibration?, raw: ImageIFD) -> ExposureScaling {
        guard let lens, mode.isAbsolute else { return self }
        return appending(lens.uncertaintyPart(width: raw.activeArea.width, height: raw.activeArea.height))
    }
}

extension Pipeline {
    /// Map points of the GainMap that divides out a lens calibration's fall-off (across ×
    /// down). Bilinear interpolation overestimates a convex 1/V by about h²/8 · (1/V)'': with
    /// 65 × 49 points that was +0.012 % of a fisheye sky's E_v through a 40 % fall-off, more than
    /// the fit's own uncertainty; with 257 × 193 it is 16 times less (under 10⁻⁵).
    static let lensMapPoints = (h: 257, v: 193)

    /// OpcodeList3 with `options.lens`'s correction appended: one GainMap over the whole Stage
    /// 3 image, a map plane per camera channel holding 1 / V_c at each map point (docs/lens.md),
    /// so every route — region by region or whole — divides the fall-off out in camera RGB,
    /// before the colour matrix. The file's list unchanged without a lens calibration.
    /// `options.lens` is the calibration for this capture already (`forCapture`: its camera,
    /// lens and aperture checked).
    /// - Throws: `PhotometryError` for a calibration made on captures that did (or did not)
    ///   carry lens-shading opcodes of their own when this file does not (or does), unless
    ///   `options.allowOtherLens`.
    /// - Parameter matrix: for a replaced Stage 2, what its planes are: values (1 / V), variances
    ///   (1 / V², so that a merge's standard deviations are corrected as its values) or counts
    ///   (no correction).
    static func lensCorrected(_ list3: OpcodeList?, list2: OpcodeList?, dng: DNGFile, raw: ImageIFD,
                              options: DevelopOptions, matrix: Stage2Replacement.Matrix?, notes: inout [MetadataItem]) throws -> OpcodeList? {
        guard let lens = options.lens, matrix != .identity else { return list3 }
        let power = matrix == .squared ? 2.0 : 1.0
        let own = hasLensShading(list2) || hasLensShading(list3)
        if own != lens.lensShadingOpcodes && !options.allowOtherLens {
            throw PhotometryError(path: dng.path, reason: own
                ? "the file corrects its own lens shading (a GainMap or FixVignetteRadial opcode), and the lens calibration \(lens.name) was made on captures without: both would be applied (--allow-other-lens applies both)"
                : "the lens calibration \(lens.name) measured what remained after its captures' own lens-shading opcodes, and this file has none (--allow-other-lens applies it anyway)",
                                  category: .calibrationMismatch)
        }
        let area = raw.activeArea
        let (ph, pv) = lensMapPoints
        var gains = [Float](repeating: 1, count: ph * pv * 3)
        for v in 0..<pv {
            for h in 0..<ph {
                let r = lens.falloff.radius(u: Double(h) / Double(ph - 1), v: Double(v) / Double(pv - 1), width: area.width, height: area.height)
                for c in 0..<3 { gains[(v * ph + h) * 3 + c] = Float(pow(lens.falloff.transmission(channel: c, r: r), -power)) }
            }
        }
        let map = GainMap(area: OpcodeArea(top: 0, left: 0, bottom: 0, right: 0, plane: 0, planes: 3, rowPitch: 1, colPitch: 1),
                          pointsV: pv, pointsH: ph, spacingV: 1 / Double(pv - 1), spacingH: 1 / Double(ph - 1), originV: 0, originH: 0,
                          mapPlanes: 3, gains: gains)
        let entries = list3?.entries ?? []
        let entry = OpcodeEntry(index: entries.count, header: OpcodeHeader(id: OpcodeID.gainMap, version: 0x0103_0000, flags: 0),
                                opcode: .gainMap(map))
        notes.append(MetadataItem("lens", .text("vignetting divided out: \(lens.name) (\(lens.method), f/\(String(format: "%.3g", lens.fNumber)), \(lens.camera.lens ?? "lens not recorded"))")))
        return OpcodeList(list: .list3, entries: entries + [entry], warnings: list3?.warnings ?? [])
    }

    /// Whether the raw image of `dng` carries lens-shading opcodes (GainMap or
    /// FixVignetteRadial in OpcodeList2 or 3).
    public static func carriesLensShading(_ dng: DNGFile, options: DevelopOptions = DevelopOptions()) throws -> Bool {
        let (raw, _, _) = try selectImage(dng, options: options)
        let list2 = try parseOpcodeList(2, dng: dng, raw: raw), list3 = try parseOpcodeList(3, dng: dng, raw: raw)
        return hasLensShading(list2) || hasLensShading(list3)
    }

    /// Whether a list holds an opcode that corrects lens shading.
    static func hasLensShading(_ list: OpcodeList?) -> Bool {
        list?.opcodes.contains { op in
            switch op {
            case .gainMap, .fixVignetteRadial: return true
            default: return false
            }
        } ?? false
    }
}
