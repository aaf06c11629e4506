import Foundation
import Opcodes

extension Pipeline {
    /// Applies OpcodeList2 or 3 of the raw IFD to a Stage 2/3 image, when the file has one.
    ///
    /// Coordinates are those of the ActiveArea (DNG chapter 7). A TrimBounds crops the image.
    /// Warps are reported, not applied. What ran is appended to `notes` as processing items.
    /// - Throws: `OpcodeError` (naming the file) for malformed lists and required opcodes that
    ///   cannot run.
    static func applyOpcodeList(_ number: Int, dng: DNGFile, raw: ImageIFD, to image: inout LinearImage,
                                clipping: ClippingPolicy, notes: inout [MetadataItem]) throws {
        guard let bytes = try dng.opcodeListBytes(number, of: raw) else { return }
        let list: OpcodeList
        let report: OpcodeReport
        do {
            list = try OpcodeList.parse(bytes, list: number == 2 ? .list2 : .list3)
            var phase: Int?
            if image.planes == 1, let cfa = raw.cfa, cfa.repeatRows == 2, cfa.repeatCols == 2 {
                // The pattern at the ActiveArea's top-left pixel.
                let top = raw.activeArea.top, left = raw.activeArea.left
                let shifted = (0..<4).map { i in cfa.pattern[((i / 2 + top) % 2) * 2 + (i % 2 + left) % 2] }
                phase = OpcodeContext.bayerPhase(cfaPattern: shifted)
            }
            let context = OpcodeContext(wholeImage: image.values, clipping: clipping, bayerPhase: phase)
            var values = image.values
            report = try OpcodeApplier.apply(list, to: &values, context: context)
            image.values = values
        } catch {
            throw error.inFile(dng.path)
        }
        do {
            var parts: [String] = []
            var applied: [String: Int] = [:]
            for a in report.applied { applied[OpcodeID.name(of: a.id), default: 0] += 1 }
            parts += applied.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value) applied" }
            for s in report.skipped {
                let why: String
                switch s.reason {
                case .unknownOptional: why = "unknown optional opcode"
                case .newerVersion: why = "needs a newer DNG version"
                case .geometric: why = "geometric warp, not applied"
                case .replacedByWarpRectilinear2: why = "replaced by WarpRectilinear2"
                case .notApplicable(let text): why = text
                }
                parts.append("\(OpcodeID.name(of: s.id)) skipped (\(why))")
            }
            if let trim = report.trimBounds, trim != PixelRect(width: image.width, height: image.height) {
                image = image.cropped(to: trim)
                parts.append("TrimBounds → \(trim)")
                notes.append(MetadataItem("trimBounds\(number)", .integers([trim.top, trim.left, trim.bottom, trim.right])))
            }
            notes.append(MetadataItem("opcodeList\(number)", .text(parts.isEmpty ? "empty" : parts.joined(separator: "; "))))
        }
    }
}
