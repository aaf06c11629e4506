import Foundation
import Opcodes

/// What the engine needs to know of a raw image to plan its development, read from the
/// file's tags without decoding anything (`SourceLayout.of`).
public struct SourceLayout: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// LinearRaw with its samples per pixel (3 developed; others refused).
        case linearRaw(samplesPerPixel: Int)
        /// A one-sample CFA of a 2×2 Bayer pattern the band demosaicer reads.
        case bayer
        /// Another CFA (its pattern or ActiveArea not demosaiced band by band).
        case otherCFA
    }
    /// Where an opcode list of Stage 2 or 3 can run.
    public enum ListReach: Equatable, Sendable {
        case absent
        /// Every opcode acts on a pixel by its value and position: the list runs on each region.
        case perRegion
        /// An opcode reads its neighbours or crops (FixBadPixels, TrimBounds): the list needs
        /// the whole stage.
        case whole
    }
    public var kind: Kind
    /// Chunky integer samples of at most 16 bits or floating-point samples, without
    /// interleaved fields: decoded block by block.
    public var blockwiseStorage: Bool
    /// Decoded whole, Stage 1 holds integers of at most 16 bits or floating-point samples
    /// (not wider integers), so strips can be cut from it as from the decoder's blocks.
    public var stage1CutsIntoStrips: Bool
    public var hasOpcodeList1: Bool
    public var opcodeList2: ListReach
    public var opcodeList3: ListReach

    public init(kind: Kind, blockwiseStorage: Bool, stage1CutsIntoStrips: Bool = true, hasOpcodeList1: Bool = false,
                opcodeList2: ListReach = .absent, opcodeList3: ListReach = .absent) {
        self.kind = kind
        self.blockwiseStorage = blockwiseStorage
        self.stage1CutsIntoStrips = stage1CutsIntoStrips
        self.hasOpcodeList1 = hasOpcodeList1
        self.opcodeList2 = opcodeList2
        self.opcodeList3 = opcodeList3
    }

    /// Whether Stage 1 is decoded whole: OpcodeList1 acts on all of it, or the storage is not
    /// decoded block by block (interleaved fields, planes, integers wider than 16 bits).
    var collectsStage1: Bool { hasOpcodeList1 || !blockwiseStorage }

    /// Whether strips can go on through the stages, from the decoder's blocks or from the
    /// whole Stage 1 (the layout and the storage allow).
    var strips: Bool {
        guard !collectsStage1 || stage1CutsIntoStrips else { return false }
        switch kind {
        case .linearRaw(let spp): return spp == 3
        case .bayer: return true
        case .otherCFA: return false
        }
    }
}

extension SourceLayout.Kind {
    var isLinearRaw: Bool { if case .linearRaw = self { return true } else { return false } }
}

/// What a development is asked to make.
public struct DevelopRequest: Equatable, Sendable {
    public enum Output: Equatable, Sendable {
        /// The image in memory, in half floats or `Float`.
        case image(halfFloats: Bool)
        /// One EXR file; `streamable`: the options allow writing it as its rows are made
        /// (`EXROptions.isStreamable`).
        case exr(streamable: Bool)
        /// One HDF5 file (`HDF5Options.isStreamable`).
        case hdf5(streamable: Bool)
        /// Patches of the output for measurement sinks, no image.
        case scan
    }
    public var output: Output
    /// The image in memory is also shown, patch by patch, to a measurement sink (`convert --analysis`).
    public var observed = false
    /// Stage 2 is given (a merged bracket), not decoded.
    public var replacesStage2 = false
    public var digest: DigestPolicy = .verify
    /// The passes of a measurement draw charts beside them (their memory estimate counts them).
    public var drawsCharts = false

    public init(output: Output, observed: Bool = false, replacesStage2: Bool = false, digest: DigestPolicy = .verify,
                drawsCharts: Bool = false) {
        self.output = output
        self.observed = observed
        self.replacesStage2 = replacesStage2
        self.digest = digest
        self.drawsCharts = drawsCharts
    }
}

/// A development decided before any pixel is read: how Stage 2 is made, where the opcode
/// lists run, how demosaicing reads the mosaic, whether Stage 3 is collected, and where the
/// output goes; with the reason for each collector. A pure value of the file's layout and
/// the request (`init(layout:request:)`); the executor (`Pipeline.stream`) follows it.
public struct DevelopPlan: Equatable, Sendable {
    public enum Stage1: Equatable, Sendable {
        /// Decoded block by block, each block handed on as it is decoded.
        case blocks
        /// Decoded whole (OpcodeList1 applied), then handed on in strips as if they were
        /// blocks (or, with `Stage2.collectedFromStage1`, linearized whole).
        case collected
    }
    public enum Stage2: Equatable, Sendable {
        /// Each strip goes from the decoder (or the collected Stage 1) through every stage to the output.
        case streamed
        /// The mosaic's rows kept in a window, demosaiced band by band as they arrive.
        case mosaicWindow
        /// Collected whole from strips of the decoder's blocks or of the collected Stage 1
        /// (linearized, OpcodeList2 on them when it runs per region).
        case collectedFromBlocks
        /// The whole Stage 1 linearized at once: a layout strips cannot be cut from (32-bit
        /// integers, LinearRaw of other than 3 samples, a CFA the band demosaicer does not read).
        case collectedFromStage1
        /// Made outside the file (a merged bracket), OpcodeList2 taken as applied.
        case replaced
    }
    public enum ListStep: Equatable, Sendable {
        case absent
        /// On each strip or band as it passes.
        case perRegion
        /// On the whole collected stage.
        case whole
        /// Already applied to a replaced Stage 2.
        case takenAsApplied
    }
    public enum Demosaic: Equatable, Sendable {
        /// LinearRaw: the planes are Stage 3.
        case none
        /// Band by band from the mosaic window.
        case fromWindow
        /// From the whole collected mosaic.
        case fromCollectedMosaic
    }
    public enum Stage3: Equatable, Sendable {
        /// Band by band into the output.
        case streamed
        /// Collected whole before the output (OpcodeList3 needs it, or Stage 2 was collected).
        case collected
    }
    public enum Sink: Equatable, Sendable {
        /// The image in memory, also shown to a measurement sink when `observed`.
        case image(halfFloats: Bool, observed: Bool)
        /// An EXR written as its rows are made: its header first, so everything it records
        /// is known before the first row.
        case exrAsRowsAreMade
        /// An HDF5 file written as its rows are made (its attributes at the end).
        case hdf5AsRowsAreMade
        /// The half-float image whole, then written into the file.
        case imageThenFile
        /// Patches for measurement sinks.
        case scan
    }

    public var stage1: Stage1
    public var stage2: Stage2
    public var list2: ListStep
    public var demosaic: Demosaic
    public var stage3: Stage3
    public var list3: ListStep
    public var sink: Sink
    /// Why each stage collected whole is collected, in stage order.
    public var collectors: [String]
    /// The route of the memory estimate; nil: the whole-image estimate (a stage collected
    /// whole — by an opcode list, or a storage not decoded block by block — or a replaced
    /// Stage 2 the merge holds besides).
    public var memoryRoute: DevelopRoute?

    public init(layout: SourceLayout, request: DevelopRequest) {
        var collectors: [String] = []
        let list2Whole = layout.opcodeList2 == .whole, list3Whole = layout.opcodeList3 == .whole
        let cfa = !layout.kind.isLinearRaw
        stage1 = (layout.collectsStage1 || !layout.strips) && !request.replacesStage2 ? .collected : .blocks
        if stage1 == .collected {
            collectors.append(layout.hasOpcodeList1 ? "Stage 1: OpcodeList1 acts on the whole raw image"
                              : !layout.collectsStage1 ? "Stage 1: a layout the blocks cannot go on from (refused, or damage reported first)"
                              : "Stage 1: integer samples wider than 16 bits, planar or in interleaved fields")
        }
        if request.replacesStage2 {
            stage2 = .replaced
        } else if !layout.strips {
            stage2 = .collectedFromStage1
        } else if !cfa && !list2Whole && !list3Whole {
            stage2 = .streamed
        } else if cfa && !list2Whole {
            stage2 = .mosaicWindow
        } else {
            stage2 = .collectedFromBlocks
            collectors.append(list2Whole ? "Stage 2: OpcodeList2 reads neighbours or crops" : "Stage 2 (the LinearRaw planes): OpcodeList3 reads neighbours or crops")
        }
        switch (layout.opcodeList2, stage2) {
        case (.absent, _): list2 = .absent
        case (_, .replaced): list2 = .takenAsApplied
        case (.perRegion, .streamed), (.perRegion, .mosaicWindow), (.perRegion, .collectedFromBlocks): list2 = .perRegion
        default: list2 = .whole
        }
        demosaic = !cfa ? .none : stage2 == .mosaicWindow ? .fromWindow : .fromCollectedMosaic
        // Stage 3 is streamed when it comes band by band (from the decoder's strips or the
        // demosaicer) and OpcodeList3 runs per band.
        let stage3Streams = !list3Whole && (stage2 == .streamed || cfa)
        stage3 = stage3Streams ? .streamed : .collected
        if !stage3Streams && cfa { collectors.append("Stage 3: OpcodeList3 reads neighbours or crops") }
        list3 = layout.opcodeList3 == .absent ? .absent : list3Whole ? .whole : .perRegion
        sink = Self.sink(request)
        // A Stage 1 collected only for its storage adds its own size to the route's estimate
        // (`Pipeline.estimatedFileBytes(_:plan:)`).
        let collects = layout.hasOpcodeList1 || list2Whole || list3Whole
        memoryRoute = request.replacesStage2 || collects || stage2 == .collectedFromStage1 ? nil : Self.route(sink, request: request)
        self.collectors = collectors
    }

    /// Where the output goes. An EXR is written as its rows are made only when its header can
    /// be written first: not when a digest mismatch may be recorded instead of refused. (The
    /// notes of opcode lists run per region are known before the pass:
    /// `Pipeline.predictedListNote`.)
    static func sink(_ request: DevelopRequest) -> Sink {
        switch request.output {
        case .image(let half): return .image(halfFloats: half, observed: request.observed)
        case .scan: return .scan
        case .hdf5(let streamable): return streamable ? .hdf5AsRowsAreMade : .imageThenFile
        case .exr(let streamable):
            return streamable && request.digest != .ignoreMismatch ? .exrAsRowsAreMade : .imageThenFile
        }
    }

    /// The memory estimate's route of a sink.
    static func route(_ sink: Sink, request: DevelopRequest) -> DevelopRoute {
        switch sink {
        case .image(let half, let observed): return observed ? .convertWithAnalysis : half ? .halfImage : .floatImage
        case .exrAsRowsAreMade: return .streamedEXR
        case .hdf5AsRowsAreMade: return .streamedHDF5
        case .imageThenFile: return .halfImage
        case .scan: return request.drawsCharts ? .measurementWithCharts : .measurement
        }
    }

    /// The plan as one line per stage (for errors and logs).
    public var summary: [String] {
        var lines = ["Stage 1: \(stage1)", "Stage 2: \(stage2)", "OpcodeList2: \(list2)", "demosaic: \(demosaic)", "Stage 3: \(stage3)",
                     "OpcodeList3: \(list3)", "sink: \(sink)"]
        lines += collectors.map { "collected — \($0)" }
        return lines
    }
}

extension SourceLayout {
    /// The layout of `raw` in `dng`, from its tags and opcode lists (nothing decoded).
    /// - Throws: the opcode lists' parse errors (naming the file), the block plan's for a
    ///   malformed layout.
    public static func of(_ dng: DNGFile, raw: ImageIFD, limits: DecodeLimits) throws -> SourceLayout {
        try of(dng, raw: raw, limits: limits, list2: Pipeline.parseOpcodeList(2, dng: dng, raw: raw),
               list3: Pipeline.parseOpcodeList(3, dng: dng, raw: raw))
    }

    /// `of` with OpcodeList2 and 3 already parsed (the executor's, parsed once).
    static func of(_ dng: DNGFile, raw: ImageIFD, limits: DecodeLimits, list2: OpcodeList?, list3: OpcodeList?) throws -> SourceLayout {
        let kind: Kind
        if raw.photometric == Photometric.linearRaw {
            kind = .linearRaw(samplesPerPixel: raw.samplesPerPixel)
        } else if raw.samplesPerPixel == 1, let cfa = raw.cfa, BandDemosaicer.supports(cfa: cfa, activeArea: raw.activeArea) {
            kind = .bayer
        } else {
            kind = .otherCFA
        }
        // A storage the block plan cannot describe fails on every route, in the decoder: as blockwise here.
        let storage = try? RawDecoder.storage(dng, ifd: raw, limits: limits)
        return SourceLayout(kind: kind, blockwiseStorage: storage?.blockByBlock ?? true,
                            stage1CutsIntoStrips: storage?.storedType != .uint32,
                            hasOpcodeList1: try dng.opcodeListBytes(1, of: raw) != nil,
                            opcodeList2: reach(list2), opcodeList3: reach(list3))
    }

    /// Where `list` can run: on each region when every opcode acts on a pixel by its value and
    /// position, else on the whole stage.
    static func reach(_ list: OpcodeList?) -> ListReach {
        guard let list else { return .absent }
        return list.entries.allSatisfy { Pipeline.isPositionwise($0.opcode) } ? .perRegion : .whole
    }
}

extension Pipeline {
    /// The plan of developing `dng` with `options` as `request` asks.
    public static func plan(_ dng: DNGFile, options: DevelopOptions, request: DevelopRequest) throws -> DevelopPlan {
        let (raw, _, _) = try selectImage(dng, options: options)
        return DevelopPlan(layout: try SourceLayout.of(dng, raw: raw, limits: options.limits), request: request)
    }
}
