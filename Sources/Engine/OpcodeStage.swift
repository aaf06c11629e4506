import Foundation
import Opcodes

extension Pipeline {
    /// Applies OpcodeList1 of the raw IFD to the Stage 1 samples, when the file has one.
    ///
    /// Stage 1 is the whole raw IFD (masked areas included) with (0, 0) at its top-left, in
    /// stored units: the list runs on a Float copy of the samples and integer results are
    /// rounded back to the stored type and clipped to its range (0 … 2¹⁶ − 1 or 2³² − 1), as
    /// the next stage needs integers (the DNG SDK does the same). Floating-point samples stay
    /// Float; with the default `keepRange` policy their values outside 0 … 1 are kept.
    /// TrimBounds at Stage 1 is reported but not applied (it would move the ActiveArea).
    static func applyOpcodeList1(dng: DNGFile, raw: ImageIFD, to stored: inout StoredImage,
                                 clipping: ClippingPolicy, notes: inout [MetadataItem]) throws {
        guard let bytes = try dng.opcodeListBytes(1, of: raw) else { return }
        let report: OpcodeReport
        do {
            let list = try OpcodeList.parse(bytes, list: .list1)
            var values: ImageBuffer<Float>
            var maximum: Float = 65535
            switch stored.samples {
            case .uint16(let b): values = ImageBuffer(width: b.width, height: b.height, channels: b.channels, samples: b.samples.map(Float.init))
            case .uint32(let b):
                values = ImageBuffer(width: b.width, height: b.height, channels: b.channels, samples: b.samples.map(Float.init))
                maximum = Float(UInt32.max)  // 2³² in Float; results are clipped to UInt32 on the way back
            case .float32(let b): values = b
            }
            var phase: Int?
            if values.channels == 1, let cfa = raw.cfa, cfa.repeatRows == 2, cfa.repeatCols == 2 {
                phase = OpcodeContext.bayerPhase(cfaPattern: cfa.pattern)
            }
            let isFloat = stored.sampleType == .float32
            // Integers go back to integers, so the spec's clipping to the stored range applies.
            let context = OpcodeContext(imageBounds: PixelRect(width: values.width, height: values.height),
                                        clipping: isFloat ? clipping : .dngClip, bayerPhase: phase,
                                        stage1Maximum: maximum, integerSource: !isFloat)
            report = try OpcodeApplier.apply(list, to: &values, context: context)
            let w = values.width, h = values.height, c = values.channels
            switch stored.samples {
            case .uint16:
                let out = values.samples.map { UInt16(min(max($0.rounded(), 0), 65535)) }
                stored = StoredImage(ifd: stored.ifd, samples: .uint16(ImageBuffer(width: w, height: h, channels: c, samples: out)))
            case .uint32:
                let out = values.samples.map { v -> UInt32 in
                    let r = Double(v).rounded()
                    return r <= 0 ? 0 : r >= 4_294_967_295 ? .max : UInt32(r)
                }
                stored = StoredImage(ifd: stored.ifd, samples: .uint32(ImageBuffer(width: w, height: h, channels: c, samples: out)))
            case .float32:
                stored = StoredImage(ifd: stored.ifd, samples: .float32(values))
            }
        } catch {
            throw error.inFile(dng.path)
        }
        var parts = describe(report)
        if let trim = report.trimBounds, trim != PixelRect(width: stored.width, height: stored.height) {
            parts.append("TrimBounds \(trim) not applied at Stage 1")
        }
        notes.append(MetadataItem("opcodeList1", .text(parts.isEmpty ? "empty" : parts.joined(separator: "; "))))
    }

    /// The Bayer phase (for opcodes on the mosaic) of the pattern at the ActiveArea's
    /// top-left pixel of a 2×2 CFA image; nil for other images.
    static func activeAreaBayerPhase(_ raw: ImageIFD) -> Int? {
        guard let cfa = raw.cfa, cfa.repeatRows == 2, cfa.repeatCols == 2 else { return nil }
        let top = raw.activeArea.top, left = raw.activeArea.left
        let shifted = (0..<4).map { i in cfa.pattern[((i / 2 + top) % 2) * 2 + (i % 2 + left) % 2] }
        return OpcodeContext.bayerPhase(cfaPattern: shifted)
    }

    /// "GainMap ×4 applied", "WarpRectilinear skipped (geometric warp, not applied)", ….
    static func describe(_ report: OpcodeReport) -> [String] {
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
        return parts
    }

    /// Applies OpcodeList2 or 3 of the raw IFD to a Stage 2/3 image, when the file has one.
    ///
    /// Coordinates are those of the ActiveArea (DNG chapter 7). A TrimBounds crops the image.
    /// Warps are reported, not applied. What ran is appended to `notes` as processing items.
    /// - Returns: the rectangle a TrimBounds cropped the image to, nil when none did.
    /// - Throws: `OpcodeError` (naming the file) for malformed lists and required opcodes that
    ///   cannot run.
    @discardableResult
    static func applyOpcodeList(_ number: Int, dng: DNGFile, raw: ImageIFD, to image: inout LinearImage,
                                clipping: ClippingPolicy, notes: inout [MetadataItem], parsed: OpcodeList? = nil) throws -> PixelRect? {
        let bytes = parsed == nil ? try dng.opcodeListBytes(number, of: raw) : nil
        guard parsed != nil || bytes != nil else { return nil }
        let list: OpcodeList
        let report: OpcodeReport
        do {
            if let parsed { list = parsed } else { list = try OpcodeList.parse(bytes!, list: number == 2 ? .list2 : .list3) }
            let phase = image.planes == 1 ? activeAreaBayerPhase(raw) : nil
            let context = OpcodeContext(wholeImage: image.values, clipping: clipping, bayerPhase: phase)
            var values = image.values
            report = try OpcodeApplier.apply(list, to: &values, context: context)
            image.values = values
        } catch {
            throw error.inFile(dng.path)
        }
        var parts = describe(report)
        var applied: PixelRect?
        if let trim = report.trimBounds, trim != PixelRect(width: image.width, height: image.height) {
            image = image.cropped(to: trim)
            parts.append("TrimBounds → \(trim)")
            notes.append(MetadataItem("trimBounds\(number)", .integers([trim.top, trim.left, trim.bottom, trim.right])))
            applied = trim
        }
        notes.append(MetadataItem("opcodeList\(number)", .text(parts.isEmpty ? "empty" : parts.joined(separator: "; "))))
        return applied
    }

    /// OpcodeList3 on a collected Stage 3 image (see `applyOpcodeList`).
    @discardableResult
    /// `parsed`: the list as the executor holds it (with a lens correction appended), instead
    /// of the file's.
    static func applyOpcodeList3(dng: DNGFile, raw: ImageIFD, to image: inout Stage3Image, clipping: ClippingPolicy,
                                 notes: inout [MetadataItem], parsed: OpcodeList? = nil) throws -> PixelRect? {
        var stage = image.stage
        // Release `image`'s reference, so that the list writes the planes in place.
        image = Stage3Image(planes: LinearImage(ifd: stage.ifd, values: ImageBuffer(width: 0, height: 0, channels: 3, samples: []),
                                                clipMask: [], mapping: stage.mapping))
        let trim = try applyOpcodeList(3, dng: dng, raw: raw, to: &stage, clipping: clipping, notes: &notes, parsed: parsed)
        image = Stage3Image(planes: stage)
        return trim
    }
}
