import Foundation
import Opcodes
import SemanticMasks

/// The result of the conversion into half floats: the output image and what `convert`
/// reports about it.
public struct HalfDevelopedImage: Sendable {
    public let image: HalfSceneLinearImage
    public let rawIFD: ImageIFD
    public let color: ColorTransform
    public let geometry: GeometryPlan
    public var timings: StageTimings
}

/// Where `Pipeline.stream` writes a file as the rows are made: the format with its options
/// (`EXROptions.isStreamable`, `HDF5Options.isStreamable`), the temporary file, and the name
/// errors give (the destination).
struct StreamingOutput {
    enum Format {
        case exr(EXROptions)
        case hdf5(HDF5Options)
    }
    var format: Format
    var temporaryPath: String
    var path: String
}

/// An image ready for the writers: in half floats (`developForOutput`), or in `Float` when
/// the measurements need it too (`develop`, for `convert --analysis`).
public struct ConvertedImage: Sendable {
    /// The image; nil when it went into its file as it was made (`Pipeline.convertToEXR`,
    /// `Pipeline.convertToHDF5`).
    public let image: (any SceneLinearRaster)?
    /// What the image is (size, metadata, masks), with or without its pixels.
    public let description: any SceneLinearDescription
    public let rawIFD: ImageIFD
    public let geometry: GeometryPlan
    public var timings: StageTimings
    public let clippedPixelCount: Int
    /// What a Radiance picture written by `Pipeline.convert` records of its lower bounds.
    public var radianceLowerBounds: RadianceLowerBounds?

    /// The result of `develop`.
    public init(_ d: DevelopedImage) {
        self.init(image: d.image, description: d.image, rawIFD: d.rawIFD, geometry: d.geometry, timings: d.timings,
                  clippedPixelCount: d.image.clippedPixelCount)
    }

    /// The result of `developForExport`.
    public init(_ h: HalfDevelopedImage) {
        self.init(image: h.image, description: h.image, rawIFD: h.rawIFD, geometry: h.geometry, timings: h.timings,
                  clippedPixelCount: h.image.clippedPixelCount)
    }

    init(image: (any SceneLinearRaster)?, description: any SceneLinearDescription, rawIFD: ImageIFD, geometry: GeometryPlan,
         timings: StageTimings, clippedPixelCount: Int) {
        self.image = image
        self.description = description
        self.rawIFD = rawIFD
        self.geometry = geometry
        self.timings = timings
        self.clippedPixelCount = clippedPixelCount
    }
}

extension Pipeline {
    /// What a CFA image's provenance records of its demosaicing: the method and, for a 2×2
    /// pattern, the pattern (colour per site, row-major, from the raw image's top-left, as
    /// CFAPattern): with the ActiveArea, trims, crop and orientation it places every output
    /// pixel on its raw site (`SiteLayout`).
    static func demosaicNotes(_ method: DemosaicMethod, cfa: CFADescription) -> [MetadataItem] {
        var notes = [MetadataItem("demosaic", .text(method.rawValue))]
        if cfa.repeatRows == 2 && cfa.repeatCols == 2 && Set(cfa.pattern) == [0, 1, 2] {
            notes.append(MetadataItem("cfaPattern", .integers(cfa.pattern)))
        }
        return notes
    }

    /// Rows per strip from a decoded block: a strip of a 256-pixel tile in floats (48 KiB)
    /// stays in a core's cache from Stage 2 to the output samples.
    static let streamingStripRows = 16

    /// The image `convert` writes, in half floats.
    /// - Parameter keepClipMask: whether the outputs need the clip mask (HDF5, or EXR with
    ///   the clip-mask channel).
    public static func developForOutput(path: String, options: DevelopOptions = DevelopOptions(),
                                        keepClipMask: Bool) throws -> ConvertedImage {
        ConvertedImage(try developForExport(path: path, options: options, keepClipMask: keepClipMask))
    }

    /// Develops a DNG straight into the half-float output image, region by region, without
    /// a full-size intermediate where no stage needs one: the blocks (tiles or strips) are
    /// decoded in parallel, each into a buffer of its own, and each block goes, a strip of
    /// rows at a time, through Stage 2, the opcode lists, the colour matrix and the
    /// conversion to half floats, into its place in the cropped and oriented output; the
    /// input is hashed meanwhile on a thread of its own. Stages that need more than a region
    /// collect it first (see `stream`). The values are bit for bit those of `develop`
    /// followed by the writers' half conversion.
    ///
    /// - Parameter keepClipMask: whether to keep the full clip mask (the count of clipped
    ///   pixels is always kept).
    /// - Throws: the same errors as `develop` (for a damaged tile, that of the
    ///   lowest-numbered damaged one).
    public static func developForExport(path: String, options: DevelopOptions = DevelopOptions(),
                                        keepClipMask: Bool) throws -> HalfDevelopedImage {
        var timings = StageTimings()
        let dng = try measure(&timings.container) { try DNGFile.open(path: path) }
        return try developForExport(dng, options: options, keepClipMask: keepClipMask, timings: timings)
    }

    /// - Parameter observer: also sees the output as patches (`ImagePatch`, in `Float`, before
    ///   the half conversion), e.g. the first pass of a measurement run in the same pass.
    /// - Parameter cache: where the decoded blocks are recorded for later passes (see `developPass`).
    public static func developForExport(_ dng: DNGFile, options: DevelopOptions = DevelopOptions(), keepClipMask: Bool,
                                        timings: StageTimings = StageTimings(),
                                        observer: (prepare: ImageScan.Prepare, visit: ImageScan.Visitor)? = nil,
                                        cache: DecodedBlockCache? = nil) throws -> HalfDevelopedImage {
        let nonFinite = SharedCount()
        let s = try stream(dng, options: options, keepClipMask: keepClipMask, timings: timings, as: Float16.self,
                           convert: { nonFinite.add(HalfConversion.convert($0, to: $1)) }, cache: cache, observer: observer)
        if nonFinite.value > 0 { throw HalfRangeError(what: dng.path, count: nonFinite.value) }
        let image = HalfSceneLinearImage(pixels: ImageBuffer(width: s.width, height: s.height, channels: 3, samples: s.pixels),
                                         clipMask: s.clipMask, clippedPixelCount: s.clippedPixelCount, encoding: s.color.encoding,
                                         exposure: s.exposure, provenance: s.provenance, masks: s.masks)
        return HalfDevelopedImage(image: image, rawIFD: s.raw, color: s.color, geometry: s.geometry, timings: s.timings)
    }

    /// Converts a DNG into one EXR, `destination` (written under a temporary name and
    /// renamed into place): for half-float scanline ZIP or ZIPS files (`EXROptions.isStreamable`,
    /// the default), straight into the file as the rows are made (`EXRStreamWriter`: each
    /// chunk compressed once its rows are done, with no image-sized buffer), byte for byte
    /// the file `developForOutput` and `EXRFile.write` make; the image is then not kept
    /// (`ConvertedImage.image` nil). Files whose header depends on the whole pass (an opcode
    /// list acting region by region reports what it did; a digest mismatch recorded with
    /// `DigestPolicy.ignoreMismatch`), DefaultScale resampling and the other EXR options are
    /// developed whole and then written.
    public static func convertToEXR(path: String, options: DevelopOptions = DevelopOptions(), exr: EXROptions,
                                    to destination: String) throws -> ConvertedImage {
        try convertStreaming(path: path, options: options, to: destination, keepClipMask: exr.includeClipMask,
                             format: exr.isStreamable ? .exr(exr) : nil) { image, temporary in
            try EXRFile.write(image, temporary: temporary, reportedAs: destination, options: exr)
            return OutputFormat.exr
        }
    }

    /// Converts a DNG into one HDF5 file, `destination`, as `convertToEXR` does: for
    /// compressed float16 files (`HDF5Options.isStreamable`, the default), `/image` is written
    /// chunk by chunk as the rows are made (`HDF5StreamWriter`), the attributes, clip mask and
    /// masks afterwards; the file holds what `HDF5File.write` writes of the developed image.
    /// DefaultScale resampling and the other options develop the image whole first.
    public static func convertToHDF5(path: String, options: DevelopOptions = DevelopOptions(), hdf5: HDF5Options,
                                     to destination: String) throws -> ConvertedImage {
        try convertStreaming(path: path, options: options, to: destination, keepClipMask: true,
                             format: hdf5.isStreamable ? .hdf5(hdf5) : nil) { image, temporary in
            try HDF5File.write(image, temporary: temporary, reportedAs: destination, options: hdf5)
            return OutputFormat.hdf5
        }
    }

    /// `convertToEXR` or `convertToHDF5`, as `format` says, with `export`'s settings for it.
    public static func convert(path: String, options: DevelopOptions = DevelopOptions(), format: OutputFormat,
                               export: ExportOptions, to destination: String) throws -> ConvertedImage {
        switch format {
        case .exr: return try convertToEXR(path: path, options: options, exr: export.exr, to: destination)
        case .hdf5: return try convertToHDF5(path: path, options: options, hdf5: export.hdf5, to: destination)
        case .hdr:
            // From the Float image (RGBE keeps more range than half floats).
            let developed = try develop(path: path, options: options)
            var seconds = 0.0
            let bounds = try measure(&seconds) { try RadianceFile.write(developed.image, to: destination) }
            var converted = ConvertedImage(developed)
            converted.radianceLowerBounds = bounds
            converted.timings.export[OutputFormat.hdr.rawValue] = seconds
            return converted
        }
    }

    /// The conversion into one file: streamed when `format` is given and the image allows,
    /// else developed into half floats and written by `writeWhole` into the temporary file.
    private static func convertStreaming(path: String, options: DevelopOptions, to destination: String, keepClipMask: Bool,
                                         format: StreamingOutput.Format?,
                                         writeWhole: (HalfSceneLinearImage, String) throws -> OutputFormat) throws -> ConvertedImage {
        var timings = StageTimings()
        let dng = try measure(&timings.container) { try DNGFile.open(path: path) }
        return try AtomicFile.write(to: destination) { temporary in
            let target = format.map { StreamingOutput(format: $0, temporaryPath: temporary, path: destination) }
            let nonFinite = SharedCount()
            let s = try stream(dng, options: options, keepClipMask: keepClipMask, timings: timings, as: Float16.self,
                               convert: { nonFinite.add(HalfConversion.convert($0, to: $1)) }, output: target)
            // Infinity is never written: the temporary file goes, and `convert` writes floats instead.
            if nonFinite.value > 0 { throw HalfRangeError(what: destination, count: nonFinite.value) }
            var timings = s.timings
            if s.wroteFile {
                let description = WrittenImageDescription(width: s.width, height: s.height, masks: s.masks, encoding: s.color.encoding,
                                                          exposure: s.exposure, provenance: s.provenance)
                return ConvertedImage(image: nil, description: description, rawIFD: s.raw, geometry: s.geometry,
                                      timings: timings, clippedPixelCount: s.clippedPixelCount)
            }
            let image = HalfSceneLinearImage(pixels: ImageBuffer(width: s.width, height: s.height, channels: 3, samples: s.pixels),
                                             clipMask: s.clipMask, clippedPixelCount: s.clippedPixelCount,
                                             encoding: s.color.encoding, exposure: s.exposure, provenance: s.provenance, masks: s.masks)
            var seconds = 0.0
            let written = try measure(&seconds) { try writeWhole(image, temporary) }
            timings.export[written.rawValue] = seconds
            return ConvertedImage(image: image, description: image, rawIFD: s.raw, geometry: s.geometry, timings: timings,
                                  clippedPixelCount: s.clippedPixelCount)
        }
    }

    /// One pass of the conversion `convert` and `develop` run, its output handed to `visit`
    /// as patches of the output image (`ImagePatch`: `Float` RGB in output coordinates, after
    /// crop, scale and orientation) instead of being kept: `prepare` gets the output size
    /// before the first patch. The first pass of a measurement (`record`) hashes the input,
    /// checks its digests and decodes its semantic masks; a later pass over the same file
    /// (`record` false) only develops it again.
    /// - Parameter cache: the decoded blocks: recorded by the first pass that gets it, taken
    ///   from it by the passes after (no decoding), when the image is decoded block by block.
    /// - Returns: the image without its pixels (`pixels` empty) and what else the pass made.
    public static func developPass(_ dng: DNGFile, options: DevelopOptions, record: Bool, cache: DecodedBlockCache? = nil,
                                   prepare: @escaping ImageScan.Prepare,
                                   visit: @escaping ImageScan.Visitor) throws -> DevelopedImage {
        var o = options
        if !record {
            o.digest = .skip
            o.includeMasks = false
        }
        let s = try stream(dng, options: o, keepClipMask: false, timings: StageTimings(), as: Float.self,
                           convert: { _, _ in }, visitor: (prepare, visit), hash: record, cache: cache)
        let image = SceneLinearImage(pixels: ImageBuffer(width: 0, height: 0, channels: 3, samples: []), clipMask: nil,
                                     encoding: s.color.encoding, exposure: s.exposure, provenance: s.provenance, masks: [])
        return DevelopedImage(image: image, dng: dng, rawIFD: s.raw, mapping: s.mapping, color: s.color, geometry: s.geometry,
                              timings: s.timings)
    }

    /// Where the first of a measurement's passes over `dng` keeps its decoded blocks for the
    /// passes after it. The decoded samples take a small part of what `convert` is allowed
    /// (`estimatedPeakBytes`, which counts a full-size output the measurements never hold):
    /// they are kept when they fit in a quarter of that estimate and in what the memory
    /// limit leaves beside it (for a 16-bit LinearRaw image, 6 of the estimate's 50 bytes
    /// per pixel; CFA 2 of 50).
    public static func measurementBlockCache(_ dng: DNGFile, options: DevelopOptions) throws -> DecodedBlockCache {
        let estimate = wholeImagePeakBytes(try selectImage(dng, options: options).raw)
        return DecodedBlockCache(capacity: max(0, min(estimate / 4, memoryLimit(options) - estimate)))
    }

    /// The route a pass takes, for its memory estimate: nil (the whole-image estimate) for a
    /// merged Stage 2, which the merge holds besides.
    static func developRoute<E>(_: E.Type, output: StreamingOutput?, visitor: Bool, observer: Bool, replacing: Bool,
                                options: DevelopOptions) -> DevelopRoute? {
        if replacing { return nil }
        if observer { return .convertWithAnalysis }
        if visitor { return measurementRoute(options) }
        switch output?.format {
        case .exr?: return .streamedEXR
        case .hdf5?: return .streamedHDF5
        case nil: return E.self == Float16.self ? .halfImage : .floatImage
        }
    }

    /// The route of a measurement's passes: with or without charts drawn beside them.
    public static func measurementRoute(_ options: DevelopOptions) -> DevelopRoute {
        options.measurementDrawsCharts ? .measurementWithCharts : .measurement
    }

    /// What the streaming conversion made, in output samples of type `E`.
    struct Streamed<E: Sendable>: Sendable {
        var pixels: [E]
        var width: Int, height: Int
        var clipMask: [UInt8]?
        var clippedPixelCount: Int
        var raw: ImageIFD
        var mapping: LinearizationMapping
        var color: ColorTransform
        var exposure: ExposureScaling
        var geometry: GeometryPlan
        var provenance: ImageProvenance
        var masks: [SemanticMaskLayer]
        var timings: StageTimings
        /// Whether the output went into the file `stream` was asked to write (`pixels` empty).
        var wroteFile = false
    }

    /// The conversion into output samples of type `E`, made from each band's `Float` values
    /// by `convert` (a row of RGB values into as many output samples).
    ///
    /// Regions flow from the decoder's blocks through fused stages into the output sink. A
    /// stage that needs more than its region collects what comes before it and hands it on
    /// band by band: a CFA image's demosaicing (the Stage 2 mosaic), opcodes that read their
    /// neighbours or crop (FixBadPixelsConstant/List, TrimBounds: their stage), OpcodeList1
    /// and Stage 1 storage that is not decoded block by block (32-bit and floating-point
    /// samples, planar or interleaved fields: Stage 1), DefaultScale resampling (the
    /// colour-converted image). See `docs/pipeline.md`.
    static func stream<E: BitwiseCopyable & Sendable>(
        _ dng: DNGFile, options: DevelopOptions, keepClipMask: Bool, timings initial: StageTimings, as type: E.Type,
        convert: @escaping @Sendable (UnsafeBufferPointer<Float>, UnsafeMutableBufferPointer<E>) -> Void,
        visitor: (prepare: ImageScan.Prepare, visit: ImageScan.Visitor)? = nil, hash: Bool = true,
        cache: DecodedBlockCache? = nil, observer: (prepare: ImageScan.Prepare, visit: ImageScan.Visitor)? = nil,
        output target: StreamingOutput? = nil, replacing replacement: Stage2Replacement? = nil
    ) throws -> Streamed<E> {
        do {
            return try streamRoutes(dng, options: options, keepClipMask: keepClipMask, timings: initial, as: type, convert: convert,
                                    visitor: visitor, hash: hash, cache: cache, observer: observer, output: target,
                                    replacing: replacement)
        } catch {
            // Zeros read from a file cut under its mapping look like damaged data: say what happened.
            try dng.file.checkIntact()
            throw error
        }
    }

    static func streamRoutes<E: BitwiseCopyable & Sendable>(
        _ dng: DNGFile, options: DevelopOptions, keepClipMask: Bool, timings initial: StageTimings, as _: E.Type,
        convert: @escaping @Sendable (UnsafeBufferPointer<Float>, UnsafeMutableBufferPointer<E>) -> Void,
        visitor: (prepare: ImageScan.Prepare, visit: ImageScan.Visitor)?, hash: Bool,
        cache: DecodedBlockCache?, observer: (prepare: ImageScan.Prepare, visit: ImageScan.Visitor)?,
        output target: StreamingOutput?, replacing replacement: Stage2Replacement?
    ) throws -> Streamed<E> {
        var timings = initial
        let path = dng.path
        let (raw, main, notes) = try selectImage(dng, options: options)
        // Over the pixel limit: refused before anything else (the memory estimate, which needs the route, below).
        try checkPixelLimit(raw, path: path, options: options)
        // The raw-data digest, computed as the blocks are decoded (once, on whichever route).
        let digestExpectation = replacement == nil ? try digestExpectation(dng, raw: raw, main: main, options: options) : nil
        let digester = try digestExpectation?.makeDigester(dng)
        let cfa = raw.photometric == Photometric.cfa ? raw.cfa : nil
        let spp = raw.samplesPerPixel
        // A layout the decoder's blocks go on from: LinearRaw with three samples per pixel, or a
        // 2×2 Bayer CFA. Anything else takes the Stage 1 collector, so that damaged data is
        // reported as such before the layout is refused.
        let blockwiseLayout = raw.photometric == Photometric.linearRaw ? spp == 3
            : (spp == 1 && cfa.map { BandDemosaicer.supports(cfa: $0, activeArea: raw.activeArea) } == true)
        let hasList1 = try dng.opcodeListBytes(1, of: raw) != nil
        let list2 = try parseOpcodeList(2, dng: dng, raw: raw), list3 = try parseOpcodeList(3, dng: dng, raw: raw)
        // Lists whose opcodes all act on a pixel by its value and position run on every region.
        let list2PerRegion = list2.map { $0.entries.allSatisfy { isPositionwise($0.opcode) } } ?? true
        let list3PerRegion = list3.map { $0.entries.allSatisfy { isPositionwise($0.opcode) } } ?? true

        let linearization = try LinearizationPlan(ifd: raw, path: path)
        let area = raw.activeArea
        let color = try ColorTransform.make(metadata: dng.metadata, encoding: options.encoding,
                                            whiteBalance: options.whiteBalance, path: path)
        let exposure = try exposureScaling(options.exposure, metadata: dng.metadata, path: path, options: options)
        // Stage 3 is the ActiveArea (less any TrimBounds), or half of it for 2×2 superpixels.
        let binning = cfa != nil && options.demosaic == .superpixel ? 2 : 1
        let (geometryIFD, geometryBinning) = geometrySource(raw: raw, main: main, binning: binning)
        func geometry(width: Int, height: Int) throws -> GeometryPlan {
            try ImageGeometry.plan(ifd: geometryIFD, orientation: dng.metadata.orientation, width: width, height: height,
                                   binning: geometryBinning, crop: options.crop, applyOrientation: options.applyOrientation,
                                   path: path)
        }

        // The hash reads the whole file on a thread of its own while the tiles are decoded
        // (it is needed only for the provenance record); each tile's pages leave resident
        // memory once it is done, and are read from the page cache.
        let file = dng.file
        let hashing = BackgroundValue { () -> (String, Double) in
            guard hash else { return ("", 0) }
            var seconds = 0.0
            // Each 4 MiB the hash has read leaves resident memory at once (blocks still to be
            // decoded read their pages again from the page cache), so the input file never
            // counts whole in the peak.
            let hex = measure(&seconds) {
                file.data.withUnsafeBytes { bytes in
                    SHA256Digest.hex(of: bytes, piece: 4 << 20) { file.releaseResidentPages(offset: $0.lowerBound, length: $0.count) }
                }
            }
            return (hex, seconds)
        }
        // However this function ends, the hashing thread is done before it returns (it reads
        // the file's mapping, which must outlive it, and the process must not exit under it).
        defer { _ = hashing.wait() }
        let matrix = ColorConversion.floatMatrix(color, exposure: exposure)
        let sinkMatrix: [Float] = switch replacement?.matrix {
        case .color?, nil: matrix
        case .squared?: matrix.map { $0 * $0 }
        case .identity?: [1, 0, 0, 0, 1, 0, 0, 0, 1]
        }
        let sink = OutputSink<E>(matrix: sinkMatrix, keepClipMask: keepClipMask,
                                 convert: convert, visitor: visitor, observer: observer)
        let reports = SharedStore<Int, OpcodeReport>()
        let opcodes = StreamingOpcodes(path: path, clipping: options.opcodeClipping,
                                       bayerPhase: cfa == nil ? nil : activeAreaBayerPhase(raw), reports: reports)
        let start = DispatchTime.now().uptimeNanoseconds
        var processing = notes
        var trims: [Int: PixelRect] = [:]  // what a TrimBounds of OpcodeList2/3 cropped Stage 2/3 to
        // An EXR written as the rows are made needs its header first: everything it records
        // must be known before the first row. So not when an opcode list acting region by
        // region reports on the pixels after the pass, nor when a digest mismatch may be
        // recorded instead of refused; the SHA-256 is set once the hash is done. An HDF5
        // file's attributes are written at the end.
        var exrOptions: EXROptions?
        if case .exr(let o)? = target?.format { exrOptions = o }
        let predictedDigestItems: [MetadataItem]? = exrOptions == nil || options.digest == .ignoreMismatch
            || (list2 != nil && list2PerRegion) || (list3 != nil && list3PerRegion) ? nil
            : try checkDigests(dng, raw: raw, main: main, expectation: digestExpectation, imageDigest: nil, options: options,
                               assumingImageMatches: true)
        var streamedMasks: [SemanticMaskLayer] = []
        var streamedProcessing: [MetadataItem] = []
        var fileStart: StreamingStart?
        /// What a file written before the pass records of the source: its SHA-256, still being
        /// computed, is a placeholder of the same length (set at the end).
        func headerProvenance() -> ImageProvenance {
            Self.provenance(dng: dng, raw: raw, mapping: linearization.mapping, color: color,
                            sha256: String(repeating: "0", count: 64))
        }
        if let target, let exrOptions, let digestItems = predictedDigestItems {
            fileStart = { plan, stage3Width, stage3Height in
                if options.includeMasks && !dng.maskIFDs.isEmpty {
                    let grid = Stage3Grid.pipeline(activeArea: area, binning: binning, width: stage3Width, height: stage3Height,
                                                   trim2: trims[2], trim3: trims[3])
                    streamedMasks = try SemanticMasks.layers(dng, grid: grid, plan: plan, limits: options.limits)
                }
                var provenance = headerProvenance()
                // A CFA image's demosaicing is noted once its bands are made.
                let demosaicNote = MetadataItem("demosaic", .text(options.demosaic.rawValue))
                let notes = processing + (cfa != nil && !processing.contains(demosaicNote) ? Pipeline.demosaicNotes(options.demosaic, cfa: cfa!) : [])
                streamedProcessing = notes + digestItems + plan.processingItems
                provenance.processing = streamedProcessing
                let description = WrittenImageDescription(width: plan.outputWidth, height: plan.outputHeight, masks: streamedMasks,
                                                          encoding: color.encoding, exposure: exposure, provenance: provenance)
                return try EXRStreamWriter(temporaryPath: target.temporaryPath, path: target.path, description: description,
                                           options: exrOptions)
            }
        } else if let target, case .hdf5(let hdf5Options) = target.format {
            fileStart = { plan, _, _ in
                // The root's attributes first, as in every file; the SHA-256 is set at the end.
                try HDF5StreamWriter(temporaryPath: target.temporaryPath, path: target.path, width: plan.outputWidth,
                                     height: plan.outputHeight, encoding: color.encoding, provenance: headerProvenance(),
                                     options: hdf5Options, clipMask: keepClipMask)
            }
        }
        // The memory estimate of the route this pass takes (before anything is decoded): the
        // whole-image one when a stage is collected whole (OpcodeList1, a list acting on all
        // of Stage 2 or 3), the half image when the file cannot be written as its rows are made.
        let collects = hasList1 || !list2PerRegion || !list3PerRegion
        var route = collects ? nil : developRoute(E.self, output: target, visitor: visitor != nil, observer: observer != nil,
                                                  replacing: replacement != nil, options: options)
        if target != nil && fileStart == nil && route != nil { route = .halfImage }
        try checkLimits(raw, path: path, options: options, route: route)
        var output: (SinkOutput<E>, GeometryPlan)?
        var stage2: LinearImage?  // Stage 2, collected whole for a stage that needs it so
        var list2Done = false     // whether OpcodeList2 ran region by region

        var stage3: Stage3Image?  // Stage 3 collected: OpcodeList3 needs all of it, or Stage 2 was collected
        var demosaicked = false

        /// A CFA image's Stage 3 band by band from `demosaicBands` (false when nothing was
        /// decoded): on to the output sink with OpcodeList3 per band, or, when the list needs
        /// all of Stage 3, into a collected Stage 3.
        func finishDemosaicked(width: Int, height: Int, mapping: LinearizationMapping,
                               _ demosaicBands: (@Sendable (inout Band, Range<Int>) throws -> Void) throws -> Bool) throws {
            if list3PerRegion {
                let plan = try geometry(width: width, height: height)
                var decoded = false
                let made = try sink.run(plan: plan, stage3Width: width, stage3Height: height, list3: list3, opcodes: opcodes,
                                        file: fileStart) { finish in
                    decoded = try demosaicBands { band, rows in try finish.finish(&band, rows: rows, columns: 0..<width) }
                }
                if decoded { output = (made, plan) }
            } else {
                stage3 = try StageCollector.collect(width: width, height: height, planes: 3, ifd: raw, mapping: mapping) { collector in
                    try demosaicBands { band, rows in collector.store(band, rows: rows, columns: 0..<width) }
                }.map { Stage3Image(planes: $0) }
            }
        }

        if replacement == nil && !hasList1 && blockwiseLayout {
            let bounds = PixelRect(width: area.width, height: area.height)
            let perRegion2 = list2PerRegion ? list2 : nil
            /// What a decoded block goes through: a strip of rows at a time, Stage 2 and OpcodeList2
            /// (when it acts per pixel) into `target`.
            func strips(into target: StripTarget<E>) -> @Sendable (PixelRect, UnsafePointer<UInt16>, Int, Bool) throws -> Void {
                { @Sendable (region: PixelRect, samples: UnsafePointer<UInt16>, rowStride: Int, fewBlocks: Bool) throws in
                    // The block's pixels inside the ActiveArea, in ActiveArea coordinates (none for a
                    // block wholly in the masked border).
                    let top = max(region.top, area.top), bottom = min(region.bottom, area.bottom)
                    let left = max(region.left, area.left), right = min(region.right, area.right)
                    guard top < bottom, left < right else { return }
                    let rows = (top - area.top)..<(bottom - area.top), columns = (left - area.left)..<(right - area.left)
                    nonisolated(unsafe) let first = samples + (rows.lowerBound + area.top - region.top) * rowStride
                        + (columns.lowerBound + area.left - region.left) * spp
                    // Strips of a few rows, so that each stays in the core's cache through every
                    // step; spread over the cores when there are too few blocks to be.
                    let stripCount = (rows.count + streamingStripRows - 1) / streamingStripRows
                    try Parallel.forEachChunkThrowing(count: fewBlocks ? stripCount : 1, minimumChunk: 1) { part in
                        var strip = Band(width: columns.count, channels: spp)
                        for k in fewBlocks ? part : 0..<stripCount {
                            let top = rows.lowerBound + k * streamingStripRows
                            let stripRows = top..<min(rows.upperBound, top + streamingStripRows)
                            strip.resize(rows: stripRows.count)
                            strip.values.samples.withUnsafeMutableBufferPointer { v in
                                strip.mask.withUnsafeMutableBufferPointer { m in
                                    linearization.linearize(first + (top - rows.lowerBound) * rowStride, rowStride: rowStride,
                                                            rows: stripRows, columns: columns, into: v.baseAddress!, mask: m.baseAddress!)
                                }
                            }
                            if let perRegion2 {
                                try applyOpcodes(perRegion2, number: 2, to: &strip.values, bounds: bounds, row: stripRows.lowerBound,
                                                 column: columns.lowerBound, context: opcodes)
                            }
                            switch target {
                            case .finish(let finish): try finish.finish(&strip, rows: stripRows, columns: columns)
                            case .collect(let collector): collector.store(strip, rows: stripRows, columns: columns)
                            case .window(let window): window.store(strip, rows: stripRows, columns: columns)
                            }
                        }
                    }
                }
            }
            /// The decoder's blocks into `target`; false when the storage is not decoded block by block.
            func decodeBlocks(into target: StripTarget<E>) throws -> Bool {
                try RawDecoder.forEachBlock(dng, ifd: raw, limits: options.limits, digester: digester, cache: cache,
                                            strips(into: target))
            }
            if cfa == nil && list2PerRegion && list3PerRegion {
                // Every stage per region: each strip goes from the decoder to the output at once.
                let plan = try geometry(width: area.width, height: area.height)
                var decoded = false
                let made = try sink.run(plan: plan, stage3Width: area.width, stage3Height: area.height, list3: list3,
                                        opcodes: opcodes, file: fileStart) { finish in decoded = try decodeBlocks(into: .finish(finish)) }
                if decoded { output = (made, plan) }
            } else if let cfa, list2PerRegion {
                // CFA: a window of the mosaic's rows, demosaiced band by band as the rows a band
                // reads arrive (a row of blocks at a time), then OpcodeList3, colour and output.
                let bands: DemosaicBands
                do throws(DemosaicError) {
                    bands = try DemosaicBands(width: area.width, height: area.height, cfa: cfa, activeArea: area, ifd: raw.path,
                                              method: options.demosaic)
                } catch {
                    throw FileFailure(path: path, error)
                }
                let width = bands.outputWidth, height = bands.outputHeight
                let blockRows = raw.layout?.blockHeight ?? area.height
                let bandReach = (0..<bands.bandCount).map { bands.inputRows(ofBand: $0).count }.max() ?? 0
                // The window holds fewer rows than one band reads from before a group of block rows
                // arrives, plus that group (under rowGroupRows plus one block's height).
                let window = MosaicWindow(width: area.width, height: area.height,
                                          capacity: min(area.height, blockRows + RawDecoder.rowGroupRows + bandReach))
                /// Decodes the blocks and hands each band of Stage 3 to `body` once the rows it
                /// reads are in the window.
                func demosaicBands(_ body: @Sendable (inout Band, Range<Int>) throws -> Void) throws -> Bool {
                    var nextBand = 0
                    return try RawDecoder.forEachBlockRow(dng, ifd: raw, limits: options.limits, digester: digester, cache: cache,
                                                          strips(into: .window(window))) { ifdRows in
                        let upper = min(ifdRows.upperBound, area.bottom) - area.top
                        if upper > window.frontier { window.complete(upTo: upper) }
                        var last = nextBand
                        while last < bands.bandCount && bands.inputRows(ofBand: last).upperBound <= window.frontier { last += 1 }
                        guard last > nextBand else { return }
                        let ready = nextBand..<last
                        let rowHasClip = RowClipIndex(flags: window.rowHasClip)
                        try demosaicInParallel(ready, of: bands, { b, values, mask in
                            bands.demosaic(band: b, window: window.values, clip: window.clip, windowTop: window.top,
                                           rowHasClip: rowHasClip, into: values, mask: mask)
                        }, body)
                        nextBand = last
                        window.slide(to: nextBand < bands.bandCount ? bands.inputRows(ofBand: nextBand).lowerBound : window.frontier)
                    }
                }
                try finishDemosaicked(width: width, height: height, mapping: linearization.mapping, demosaicBands)
                demosaicked = output != nil || stage3 != nil
            } else {
                stage2 = try StageCollector.collect(width: area.width, height: area.height, planes: spp, ifd: raw,
                                                    mapping: linearization.mapping) { try decodeBlocks(into: .collect($0)) }
            }
            list2Done = perRegion2 != nil && (output != nil || stage2 != nil || stage3 != nil)
        }
        if let replacement {
            // Stage 2 made elsewhere, with OpcodeList2 already applied (see `Stage2Replacement`).
            guard replacement.image.width == area.width, replacement.image.height == area.height,
                  replacement.image.planes == spp else {
                throw RawDecodeError.inconsistentLayout(path: path, ifd: raw.path, reason: "a replacement Stage 2 of "
                    + "\(replacement.image.width)×\(replacement.image.height)×\(replacement.image.planes) for an ActiveArea of \(area.width)×\(area.height)×\(spp)")
            }
            stage2 = replacement.image
            list2Done = true
        } else if output == nil && stage2 == nil && stage3 == nil {
            // The Stage 1 collector: OpcodeList1, or storage not decoded block by block.
            var stored = try RawDecoder.decode(dng, ifd: raw, limits: options.limits, digester: digester)
            try applyOpcodeList1(dng: dng, raw: raw, to: &stored, clipping: options.opcodeClipping, notes: &processing)
            stage2 = try Linearizer.linearize(stored, path: path)
        }
        if list2Done, let report = reports[2] { processing.append(listNote(2, report)) }
        if demosaicked, let cfa { processing += Pipeline.demosaicNotes(options.demosaic, cfa: cfa) }

        if var linear = stage2 {
            stage2 = nil
            if !list2Done {
                trims[2] = try applyOpcodeList(2, dng: dng, raw: raw, to: &linear, clipping: options.opcodeClipping, notes: &processing)
            }
            if raw.photometric == Photometric.cfa {
                guard let cfa else {
                    throw RawDecodeError.inconsistentLayout(path: path, ifd: raw.path, reason: "a CFA image without CFARepeatPatternDim/CFAPattern")
                }
                let mosaic: BandDemosaicer
                do throws(DemosaicError) {
                    mosaic = try BandDemosaicer(values: linear.values.samples, clip: linear.clipMask, width: linear.width,
                                                height: linear.height, cfa: cfa, activeArea: linear.mapping.activeArea,
                                                ifd: raw.path, method: options.demosaic)
                } catch {
                    throw FileFailure(path: path, error)
                }
                processing += Pipeline.demosaicNotes(options.demosaic, cfa: cfa)
                let width = mosaic.bands.outputWidth, height = mosaic.bands.outputHeight
                let mapping = linear.mapping
                linear = LinearImage(ifd: raw, values: ImageBuffer(width: 0, height: 0, channels: 1, samples: []), clipMask: [],
                                     mapping: mapping)  // the mosaic lives on in `mosaic` only
                try finishDemosaicked(width: width, height: height, mapping: mapping) { body in
                    try demosaicInParallel(0..<mosaic.bands.bandCount, of: mosaic.bands, mosaic.demosaic, body)
                    return true
                }
            } else {
                guard let planes = Stage3Image(linearRaw: consume linear) else {
                    throw RawDecodeError.unsupported(path: path, ifd: raw.path, reason: "LinearRaw with \(spp) samples per pixel (3 supported)")
                }
                stage3 = planes
            }
        }
        if var stage3 = stage3.take() {  // (taken, so that OpcodeList3 writes the planes in place)
            // Stage 3 collected (LinearRaw's Stage 2, or the demosaiced planes): OpcodeList3 on
            // all of it unless it acts per pixel, then colour and output band by band.
            if !list3PerRegion {
                trims[3] = try applyOpcodeList3(dng: dng, raw: raw, to: &stage3, clipping: options.opcodeClipping, notes: &processing)
            }
            let image = stage3
            let plan = try geometry(width: image.width, height: image.height)
            let made = try sink.run(plan: plan, stage3Width: image.width, stage3Height: image.height,
                                    list3: list3PerRegion ? list3 : nil, opcodes: opcodes, file: fileStart) { finish in
                try forEachBand(of: image) { band, rows in try finish.finish(&band, rows: rows, columns: 0..<image.width) }
            }
            output = (made, plan)
        }
        if list3PerRegion, list3 != nil, let report = reports[3] { processing.append(listNote(3, report)) }
        guard let (made, plan) = output else { preconditionFailure("every route ends in the output sink") }
        let digestItems = try checkDigests(dng, raw: raw, main: main, expectation: digestExpectation,
                                           imageDigest: digester?.finish(), options: options)
        timings.develop = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let (sha, hashSeconds) = hashing.wait()
        timings.hash = hashSeconds
        // The hash has read every page: a file cut while it was read is found here, before
        // anything is written in its name.
        try dng.file.checkIntact()
        dng.file.releaseResidentPages()
        let mapping = linearization.mapping
        var provenance = Self.provenance(dng: dng, raw: raw, mapping: mapping, color: color, sha256: sha)
        provenance.processing = processing + digestItems + plan.processingItems
        var masks: [SemanticMaskLayer] = []
        if let writer = made.writer as? EXRStreamWriter {
            // The header went first: it must record what the pass found.
            guard provenance.processing == streamedProcessing else {
                throw OutputError(path: target!.path, reason: "internal error: the EXR header was written with processing items "
                                  + "\(streamedProcessing.map(\.key)) but the conversion recorded \(provenance.processing.map(\.key))")
            }
            // The export's own time: the chunk table and the SHA-256 (the chunks were written
            // during develop).
            try measure(&timings.export[OutputFormat.exr.rawValue, default: 0]) { try writer.finish(sourceSHA256: sha) }
            masks = streamedMasks
        } else if options.includeMasks && !dng.maskIFDs.isEmpty {
            let grid = Stage3Grid.pipeline(activeArea: area, binning: binning, width: made.stage3Width, height: made.stage3Height,
                                           trim2: trims[2], trim3: trims[3])
            masks = try SemanticMasks.layers(dng, grid: grid, plan: plan, limits: options.limits)
        }
        if let writer = made.writer as? HDF5StreamWriter {
            // What is left after the pass: the clip mask, the semantic masks and the attributes.
            try measure(&timings.export[OutputFormat.hdf5.rawValue, default: 0]) {
                try writer.finish(WrittenImageDescription(width: made.width, height: made.height, masks: masks,
                                                          encoding: color.encoding, exposure: exposure, provenance: provenance))
            }
        }
        return Streamed(pixels: made.pixels, width: made.width, height: made.height, clipMask: keepClipMask ? made.mask : nil,
                        clippedPixelCount: made.clippedPixelCount, raw: raw, mapping: mapping, color: color, exposure: exposure,
                        geometry: plan, provenance: provenance, masks: masks, timings: timings, wroteFile: made.writer != nil)
    }

    /// Bands `range` of `bands`, each demosaiced by `demosaic(band, values, mask)` into a band
    /// buffer of its own and handed to `body`, in parallel.
    static func demosaicInParallel(_ range: Range<Int>, of bands: DemosaicBands,
                                   _ demosaic: @Sendable (Int, UnsafeMutablePointer<Float>, UnsafeMutablePointer<UInt8>) -> Void,
                                   _ body: @Sendable (inout Band, Range<Int>) throws -> Void) throws {
        try Parallel.forEachChunkThrowing(count: range.count, minimumChunk: 1) { part in
            var band = Band(width: bands.outputWidth, channels: 3)
            for k in part {
                let b = range.lowerBound + k, rows = bands.rows(ofBand: b)
                band.resize(rows: rows.count)
                band.values.samples.withUnsafeMutableBufferPointer { v in
                    band.mask.withUnsafeMutableBufferPointer { m in demosaic(b, v.baseAddress!, m.baseAddress!) }
                }
                try body(&band, rows)
            }
        }
    }

    /// Opcode list `number` (2 or 3) of the raw IFD, parsed; nil when the file has none.
    static func parseOpcodeList(_ number: Int, dng: DNGFile, raw: ImageIFD) throws -> OpcodeList? {
        guard let bytes = try dng.opcodeListBytes(number, of: raw) else { return nil }
        do { return try OpcodeList.parse(bytes, list: number == 2 ? .list2 : .list3) } catch { throw error.inFile(dng.path) }
    }

    /// The processing note of opcode list `number` that ran region by region.
    static func listNote(_ number: Int, _ report: OpcodeReport) -> MetadataItem {
        let parts = describe(report)
        return MetadataItem("opcodeList\(number)", .text(parts.isEmpty ? "empty" : parts.joined(separator: "; ")))
    }

    /// A collected Stage 3 image band by band (64 rows), in parallel.
    static func forEachBand(of image: Stage3Image, _ body: @Sendable (inout Band, Range<Int>) throws -> Void) throws {
        let rowsPerBand = 64, width = image.width, planes = image.planes
        try Parallel.forEachChunkThrowing(count: (image.height + rowsPerBand - 1) / rowsPerBand, minimumChunk: 1) { part in
            var band = Band(width: width, channels: planes)
            for b in part {
                let rows = (b * rowsPerBand)..<min(image.height, (b + 1) * rowsPerBand)
                band.resize(rows: rows.count)
                image.values.samples.withUnsafeBufferPointer { v in
                    band.values.samples.withUnsafeMutableBufferPointer {
                        $0.baseAddress!.update(from: v.baseAddress! + rows.lowerBound * width * planes, count: rows.count * width * planes)
                    }
                }
                image.clipMask.withUnsafeBufferPointer { m in
                    band.mask.withUnsafeMutableBufferPointer {
                        $0.baseAddress!.update(from: m.baseAddress! + rows.lowerBound * width, count: rows.count * width)
                    }
                }
                try body(&band, rows)
            }
        }
    }

    /// What applying an opcode list to a part of the image needs besides the part.
    struct StreamingOpcodes: Sendable {
        let path: String
        let clipping: ClippingPolicy
        /// The Bayer phase of a one-plane mosaic at the ActiveArea's origin.
        let bayerPhase: Int?
        /// The report of each list, kept from the part at the image's origin.
        let reports: SharedStore<Int, OpcodeReport>
    }

    /// Opcode list `number` on the part of the Stage 2 or 3 image at (`row`, `column`).
    static func applyOpcodes(_ list: OpcodeList, number: Int, to values: inout ImageBuffer<Float>, bounds: PixelRect, row: Int,
                             column: Int, context c: StreamingOpcodes) throws {
        let context = OpcodeContext(imageBounds: bounds, originRow: row, originColumn: column, clipping: c.clipping,
                                    bayerPhase: values.channels == 1 ? c.bayerPhase : nil)
        let report: OpcodeReport
        do { report = try OpcodeApplier.apply(list, to: &values, context: context) } catch { throw error.inFile(c.path) }
        if row == 0 && column == 0 { c.reports[number] = report }
    }

    /// The colour matrix (with the exposure factor) on every pixel of `values`, in place.
    static func convertColor(_ values: inout ImageBuffer<Float>, _ matrix: [Float]) {
        values.samples.withUnsafeMutableBufferPointer { v in
            ColorConversion.convert(matrix, v.baseAddress!, to: v.baseAddress!, pixels: v.count / 3)
        }
    }

    /// Opcodes whose result at a pixel depends only on its value and position.
    static func isPositionwise(_ opcode: Opcode) -> Bool {
        switch opcode {
        case .gainMap, .mapTable, .mapPolynomial, .deltaPerRow, .deltaPerColumn, .scalePerRow, .scalePerColumn,
             .fixVignetteRadial, .warpRectilinear, .warpFisheye, .warpRectilinear2:
            return true
        case .fixBadPixelsConstant, .fixBadPixelsList, .trimBounds, .unknown:
            return false
        }
    }

    /// Converts a strip of the colour-converted image (ActiveArea `rows` × `columns`) to output
    /// samples with `convert` and puts it where crop and orientation send it (the patch
    /// `visitPlaced` makes of it, row by row, shown first to `observe` when given); counts
    /// clipped pixels.
    static func place<E: BitwiseCopyable>(_ values: ImageBuffer<Float>, mask: [UInt8], rows: Range<Int>, columns: Range<Int>,
                                          crop: PixelRect, orientation: Int, outWidth: Int, into out: UnsafeMutablePointer<E>,
                                          maskInto maskOut: UnsafeMutablePointer<UInt8>?, clipped: SharedCount,
                                          convert: (UnsafeBufferPointer<Float>, UnsafeMutableBufferPointer<E>) -> Void,
                                          observe: ImageScan.Visitor? = nil) throws {
        try visitPlaced(values, mask: mask, rows: rows, columns: columns, crop: crop, orientation: orientation, clipped: clipped) { patch in
            try observe?(patch)
            let r = patch.rect, n = r.width
            for y in r.top..<r.bottom {
                let from = (y - r.top) * patch.rowStride, to = y * outWidth + r.left
                convert(UnsafeBufferPointer(start: patch.values + 3 * from, count: 3 * n),
                        UnsafeMutableBufferPointer(start: out + 3 * to, count: 3 * n))
                if let maskOut, let m = patch.mask { (maskOut + to).update(from: m + from, count: n) }
            }
        }
    }

    /// Hands a strip of the colour-converted image (ActiveArea `rows` × `columns`) to `visit`
    /// as a patch of the output image: its part inside the crop, oriented (in place for the
    /// usual orientation, else through a buffer of the patch's size); counts clipped pixels.
    static func visitPlaced(_ values: ImageBuffer<Float>, mask: [UInt8], rows: Range<Int>, columns: Range<Int>, crop: PixelRect,
                            orientation: Int, clipped: SharedCount, visit: (ImagePatch) throws -> Void) throws {
        let top = max(rows.lowerBound, crop.top), bottom = min(rows.upperBound, crop.bottom)
        let left = max(columns.lowerBound, crop.left), right = min(columns.upperBound, crop.right)
        guard top < bottom, left < right else { return }
        let width = values.width, h = bottom - top, n = right - left
        let first = (top - rows.lowerBound) * width + (left - columns.lowerBound)
        try values.samples.withUnsafeBufferPointer { v in
            try mask.withUnsafeBufferPointer { m in
                var count = 0
                for i in 0..<h { for x in 0..<n where m[first + i * width + x] != 0 { count += 1 } }
                clipped.add(count)
                let (y0, x0) = (top - crop.top, left - crop.left)
                if orientation == 1 {
                    try visit(ImagePatch(rect: PixelRect(top: y0, left: x0, bottom: y0 + h, right: x0 + n),
                                         values: v.baseAddress! + 3 * first, mask: m.baseAddress! + first, rowStride: width))
                    return
                }
                func place(_ x: Int, _ y: Int) -> (x: Int, y: Int) {
                    ImageGeometry.orientedPosition(x: x, y: y, width: crop.width, height: crop.height, orientation: orientation)
                }
                let a = place(x0, y0), b = place(x0 + n - 1, y0 + h - 1)
                let rect = PixelRect(top: min(a.y, b.y), left: min(a.x, b.x), bottom: max(a.y, b.y) + 1, right: max(a.x, b.x) + 1)
                // Every sample of the patch is written below (the rectangle holds n × h pixels).
                let moved = UnsafeMutablePointer<Float>.allocate(capacity: 3 * n * h)
                let movedMask = UnsafeMutablePointer<UInt8>.allocate(capacity: n * h)
                defer {
                    moved.deallocate()
                    movedMask.deallocate()
                }
                for i in 0..<h {
                    for x in 0..<n {
                        let p = place(x0 + x, y0 + i), to = (p.y - rect.top) * rect.width + (p.x - rect.left)
                        let from = first + i * width + x
                        moved[3 * to] = v[3 * from]
                        moved[3 * to + 1] = v[3 * from + 1]
                        moved[3 * to + 2] = v[3 * from + 2]
                        movedMask[to] = m[from]
                    }
                }
                try visit(ImagePatch(rect: rect, values: moved, mask: movedMask, rowStride: rect.width))
            }
        }
    }
}
