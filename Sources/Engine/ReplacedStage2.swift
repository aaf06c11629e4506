import Foundation
import Opcodes

/// A Stage 2 image made outside the file — a merged bracket of raw frames — to be developed
/// by the one conversion in place of the file's own Stage 2: OpcodeList2 is taken as
/// applied (the merge applies each frame's), OpcodeList3, demosaicing, colour, crop and
/// orientation are the file's.
public struct Stage2Replacement: Sendable {
    /// What the output channels are made of.
    public enum Matrix: Sendable {
        /// The file's camera → output matrix with its exposure factor: the image itself.
        case color
        /// That matrix's entries squared: the variances of independent camera planes
        /// carried to the variances of the output channels.
        case squared
        /// The camera planes as they are (e.g. a count per plane).
        case identity
    }

    /// The ActiveArea's planes (the file's size and samples per pixel), with its clip mask.
    public var image: LinearImage
    public var matrix: Matrix

    public init(image: LinearImage, matrix: Matrix) {
        self.image = image
        self.matrix = matrix
    }
}

extension Pipeline {
    /// Develops `replacement` as `dng`'s Stage 2 into `Float` output (see `Stage2Replacement`);
    /// the file is not decoded, its digest not checked.
    public static func develop(_ dng: DNGFile, replacing replacement: Stage2Replacement, options: DevelopOptions,
                               hash: Bool) throws -> DevelopedImage {
        var o = options
        o.digest = .skip
        let s = try stream(dng, options: o, keepClipMask: replacement.matrix == .color, timings: StageTimings(), as: Float.self,
                           convert: { source, target in _ = target.initialize(from: source) }, hash: hash,
                           replacing: replacement)
        let image = SceneLinearImage(pixels: ImageBuffer(width: s.width, height: s.height, channels: 3, samples: s.pixels),
                                     clipMask: s.clipMask, encoding: s.color.encoding, exposure: s.exposure,
                                     provenance: s.provenance, masks: s.masks)
        return DevelopedImage(image: image, dng: dng, rawIFD: s.raw, mapping: s.mapping, color: s.color, geometry: s.geometry,
                              timings: s.timings)
    }
}

extension Stage2Replacement.Matrix {
    /// OpcodeList3 as it must act on planes of this kind. The image (`color`) takes the list as
    /// it is. Variances (`squared`) take a gain g as g²: each gain opcode (GainMap,
    /// FixVignetteRadial, ScalePerRow, ScalePerColumn) applied twice; an offset (DeltaPerRow,
    /// DeltaPerColumn) leaves a variance as it is and is left out. Counts (`identity`) take no
    /// gain and no offset. Geometry (warps, trims) and bad-pixel fixes act on every kind alike.
    /// - Throws: `PhotometryError` (unsupported) for a value map (MapTable, MapPolynomial) with
    ///   variances or counts: a non-linear map of the values has no such form, and a standard
    ///   deviation carried through it would be wrong.
    public func list3(_ list: OpcodeList?, path: String) throws -> OpcodeList? {
        guard let list, self != .color else { return list }
        var entries: [OpcodeEntry] = []
        for entry in list.entries {
            switch entry.opcode {
            case .gainMap, .fixVignetteRadial, .scalePerRow, .scalePerColumn:
                if self == .squared { entries += [entry, entry] }
            case .deltaPerRow, .deltaPerColumn:
                continue
            case .mapTable, .mapPolynomial:
                throw PhotometryError(path: path, reason: "the file's OpcodeList3 maps its values through a \(entry.opcode.name), and a merge's \(self == .squared ? "standard deviations" : "frame counts") cannot be carried through a non-linear map",
                                      category: .unsupportedFeature)
            default:
                entries.append(entry)
            }
        }
        let renumbered = entries.enumerated().map { OpcodeEntry(index: $0.offset, header: $0.element.header, opcode: $0.element.opcode) }
        return OpcodeList(list: list.list, entries: renumbered, warnings: list.warnings)
    }
}
