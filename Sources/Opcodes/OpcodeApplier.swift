import ImageCore

/// Applies the radiometric opcodes of a parsed list to a `Float` image.
///
/// Applied: FixVignetteRadial, FixBadPixelsConstant, FixBadPixelsList, TrimBounds (as a
/// rectangle in the report; the buffer is not cropped), MapTable, MapPolynomial, GainMap,
/// DeltaPerRow, DeltaPerColumn, ScalePerRow, ScalePerColumn. Not applied, reported as
/// skipped: the warps (WarpRectilinear, WarpFisheye, WarpRectilinear2), which move pixels
/// and are left to the caller, and optional opcodes this reader does not understand.
///
/// Values are in the stage's logical units: stored values at Stage 1, linear reference
/// values (1.0 = white) at Stages 2 and 3.
public enum OpcodeApplier {
    /// Applies `list` to `image` in list order.
    ///
    /// A TrimBounds changes the bounds the following opcodes of the list see (their
    /// relative positions and the pixels they may touch); pixels outside it stay in the
    /// buffer, untouched, for the caller to crop to `report.trimBounds`. After an optional
    /// WarpRectilinear2, an immediately following WarpRectilinear or WarpFisheye is
    /// reported as replaced by it.
    ///
    /// - Parameters:
    ///   - list: the parsed list; its `list` decides the stage, logical range and units.
    ///   - image: the stage image (or part of it, placed by `context`), planes interleaved.
    ///   - context: where the buffer sits, the clipping policy, the Bayer phase.
    /// - Returns: what ran, what was skipped and why, warnings, the trim rectangle.
    /// - Throws: `OpcodeError` with kind `.notApplicable` when a required opcode cannot run
    ///   on this image: a bad-pixel opcode on an image that is not a one-plane Bayer
    ///   mosaic, or a TrimBounds that is not inside the image bounds. (Optional ones are
    ///   skipped with the reason instead.)
    public static func apply(_ list: OpcodeList, to image: inout ImageBuffer<Float>,
                             context: OpcodeContext) throws(OpcodeError) -> OpcodeReport {
        precondition(context.bayerPhase.map { (0...3).contains($0) } ?? true, "Bayer phase must be 0 ... 3")
        precondition(!context.imageBounds.isEmpty, "the image bounds are empty")
        var report = OpcodeReport()
        report.warnings = list.warnings
        let stage = list.list.stage
        let limits = ValueLimits(low: 0, high: stage == 1 ? context.stage1Maximum : 1,
                                 clip: context.clipping == .dngClip)
        let buffer = PixelRect(top: context.originRow, left: context.originColumn,
                               bottom: context.originRow + image.height, right: context.originColumn + image.width)
        var bounds = context.imageBounds
        var inputClipped = false
        var previous: OpcodeEntry?
        for entry in list.entries {
            defer { previous = entry }
            let site = ErrorSite(list: list.list, index: entry.index, opcodeID: entry.header.id)
            func skip(_ reason: OpcodeReport.SkipReason) {
                report.skipped.append(.init(index: entry.index, id: entry.header.id, reason: reason))
            }
            // Raised when the opcode cannot run on this image: fatal for a required opcode.
            func notApplicable(_ why: String) throws(OpcodeError) {
                guard entry.header.isOptional else { throw site.error(.notApplicable, why) }
                skip(.notApplicable(why))
            }
            if case .warpRectilinear2 = previous?.opcode, previous?.header.isOptional == true,
               entry.opcode.id == OpcodeID.warpRectilinear || entry.opcode.id == OpcodeID.warpFisheye {
                skip(.replacedByWarpRectilinear2)
                continue
            }
            switch entry.opcode {
            case .unknown:
                skip(entry.header.version > OpcodeHeader.newestSupportedVersion ? .newerVersion : .unknownOptional)
                continue
            case .warpRectilinear, .warpFisheye, .warpRectilinear2:
                skip(.geometric)
                continue
            case .trimBounds(let rect):
                guard bounds.contains(rect) else {
                    try notApplicable("the bounds \(rect) are not inside the image bounds \(bounds)")
                    continue
                }
                bounds = rect
                report.trimBounds = rect
                report.applied.append(.init(index: entry.index, id: entry.header.id, samples: 0, outOfRange: 0))
                continue
            case .fixBadPixelsConstant(let op):
                if let why = badPixelObstacle(phase: op.bayerPhase, image: image, context: context, report: &report, entry: entry, list: list.list) {
                    try notApplicable(why)
                    continue
                }
            case .fixBadPixelsList(let op):
                if let why = badPixelObstacle(phase: op.bayerPhase, image: image, context: context, report: &report, entry: entry, list: list.list) {
                    try notApplicable(why)
                    continue
                }
            default:
                break
            }
            if limits.clip && !inputClipped {
                report.inputOutOfRange = image.clipAll(limits)
                inputClipped = true
            }
            let result = run(entry.opcode, stage: stage, image: &image, bounds: bounds, buffer: buffer,
                             context: context, limits: limits)
            report.applied.append(.init(index: entry.index, id: entry.header.id, samples: result.samples,
                                        outOfRange: result.outOfRange))
            if let note = result.note {
                report.warnings.append("\(list.list.name) entry \(entry.index) (\(entry.opcode.name)): \(note)")
            }
            if result.samples == 0 && !entry.opcode.isBadPixelRepair {
                report.warnings.append("\(list.list.name) entry \(entry.index) (\(entry.opcode.name)): its area or planes do not overlap the image; nothing changed")
            }
        }
        return report
    }

    /// Why a bad-pixel opcode cannot run, or `nil` when it can (adding a warning when the
    /// opcode's Bayer phase differs from the image's).
    private static func badPixelObstacle(phase: Int, image: ImageBuffer<Float>, context: OpcodeContext,
                                         report: inout OpcodeReport, entry: OpcodeEntry, list: OpcodeListID) -> String? {
        guard image.channels == 1 else {
            return "it repairs one-plane Bayer images; this image has \(image.channels) planes"
        }
        guard let imagePhase = context.bayerPhase else {
            return "it repairs Bayer images; this image is not a 2 × 2 RGB Bayer mosaic"
        }
        if imagePhase != phase {
            report.warnings.append("\(list.name) entry \(entry.index) (\(entry.opcode.name)): its Bayer phase \(phase) differs from the image's \(imagePhase); the opcode's phase is used")
        }
        return nil
    }

    /// The outcome of one kernel.
    struct KernelResult {
        var samples: Int
        var outOfRange: Int
        var note: String? = nil
    }

    /// Runs one value-changing opcode.
    private static func run(_ opcode: Opcode, stage: Int, image: inout ImageBuffer<Float>, bounds: PixelRect,
                            buffer: PixelRect, context: OpcodeContext, limits: ValueLimits) -> KernelResult {
        let channels = image.channels
        switch opcode {
        case .mapTable(let op):
            let grid = SampleGrid(area: op.area, bounds: bounds, buffer: buffer, channels: channels)
            return image.applyMapTable(op, grid: grid, stage: stage, limits: limits)
        case .mapPolynomial(let op):
            let grid = SampleGrid(area: op.area, bounds: bounds, buffer: buffer, channels: channels)
            return image.applyPolynomial(op, grid: grid, limits: limits)
        case .gainMap(let op):
            let grid = SampleGrid(area: op.area, bounds: bounds, buffer: buffer, channels: channels)
            return image.applyGainMap(op, grid: grid, bounds: bounds, limits: limits)
        case .deltaPerRow(let op), .deltaPerColumn(let op), .scalePerRow(let op), .scalePerColumn(let op):
            let grid = SampleGrid(area: op.area, bounds: bounds, buffer: buffer, channels: channels)
            let unit: Float = (stage == 1 || !context.integerSource) ? 1 : 1 / 65535
            return image.applyPerRowColumn(opcode, op, grid: grid, deltaUnit: unit, limits: limits)
        case .fixVignetteRadial(let op):
            let grid = SampleGrid(all: bounds, buffer: buffer, channels: channels)
            return image.applyVignette(op, grid: grid, bounds: bounds, limits: limits)
        case .fixBadPixelsConstant(let op):
            return image.repairConstant(op, stage: stage, region: bounds.intersection(buffer), buffer: buffer)
        case .fixBadPixelsList(let op):
            return image.repairList(op, region: bounds.intersection(buffer), buffer: buffer)
        case .warpRectilinear, .warpFisheye, .warpRectilinear2, .trimBounds, .unknown:
            preconditionFailure("not a value-changing opcode")
        }
    }
}

extension Opcode {
    /// FixBadPixelsConstant and FixBadPixelsList.
    var isBadPixelRepair: Bool {
        switch self {
        case .fixBadPixelsConstant, .fixBadPixelsList: return true
        default: return false
        }
    }
}

extension ImageBuffer where Sample == Float {
    /// Clips every sample to `limits`; returns how many were outside.
    mutating func clipAll(_ limits: ValueLimits) -> Int {
        let grid = SampleGrid(all: PixelRect(width: width, height: height),
                              buffer: PixelRect(width: width, height: height), channels: channels)
        let n = grid.columnCount * channels
        return forEachGridRow(grid) { _, row in
            var outside = 0
            for i in 0..<n { row[i] = limits.store(row[i], &outside) }
            return outside
        }
    }
}
