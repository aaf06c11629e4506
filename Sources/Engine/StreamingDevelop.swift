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

/// An image ready for the writers: in half floats (`developHalf`), or in `Float` when
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

    /// The result of `developHalf`.
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
    public static func developHalf(path: String, options: DevelopOptions = DevelopOptions(),
                                        keepClipMask: Bool) throws -> HalfDevelopedImage {
        var timings = StageTimings()
        let dng = try measure(&timings.container) { try DNGFile.open(path: path) }
        return try developHalf(dng, options: options, keepClipMask: keepClipMask, timings: timings)
    }

    /// - Parameter observer: also sees the output as patches (`ImagePatch`, in `Float`, before
    ///   the half conversion), e.g. the first pass of a measurement run in the same pass.
    /// - Parameter cache: where the decoded blocks are recorded for later passes (see `scan`).
    public static func developHalf(_ dng: DNGFile, options: DevelopOptions = DevelopOptions(), keepClipMask: Bool,
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
    /// the file `developHalf` and `EXRFile.write` make; the image is then not kept
    /// (`ConvertedImage.image` nil). Files whose header depends on the whole pass (an opcode
    /// list acting region by region reports what it did; a digest mismatch recorded with
    /// `DigestPolicy.ignoreMismatch`), DefaultScale resampling and the other EXR options are
    /// developed whole and then written.
    static func convertToEXR(path: String, options: DevelopOptions = DevelopOptions(), exr: EXROptions,
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
    static func convertToHDF5(path: String, options: DevelopOptions = DevelopOptions(), hdf5: HDF5Options,
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
    /// - Parameter masksReady: given the semantic masks on the output grid before `prepare`
    ///   (`options.includeMasks`, a recording pass): for regions given by a mask.
    public static func scan(_ dng: DNGFile, options: DevelopOptions, record: Bool, cache: DecodedBlockCache? = nil,
                            masksReady: (([SemanticMaskLayer]) throws -> Void)? = nil,
                            prepare: @escaping ImageScan.Prepare,
                            visit: @escaping ImageScan.Visitor) throws -> DevelopedImage {
        var o = options
        if !record {
            o.digest = .skip
            o.includeMasks = false
        }
        let s = try stream(dng, options: o, keepClipMask: false, timings: StageTimings(), as: Float.self,
                           convert: { _, _ in }, visitor: (prepare, visit), hash: record, cache: cache,
                           masksReady: record ? masksReady : nil)
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
    /// per pixel; CFA 2 of 50) — and only when decoding them again would cost more than the
    /// fresh memory that holds them: not for uncompressed or lossless-JPEG blocks (a 12 MP
    /// ProRAW-style `stats` takes the same time decoding twice, in half the memory;
    /// docs/performance.md), but for Deflate, JPEG XL and lossy JPEG ones.
    public static func measurementBlockCache(_ dng: DNGFile, options: DevelopOptions) throws -> DecodedBlockCache {
        let raw = try selectImage(dng, options: options).raw
        guard ![Compression.none, Compression.jpeg].contains(raw.compression) else { return DecodedBlockCache(capacity: 0) }
        let estimate = wholeImagePeakBytes(raw)
        return DecodedBlockCache(capacity: max(0, min(estimate / 4, memoryLimit(options) - estimate)))
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
    /// and Stage 1 storage that is not decoded block by block (32-bit integer samples,
    /// planar or interleaved fields: Stage 1), DefaultScale resampling (the
    /// colour-converted image). See `docs/pipeline.md`.
    static func stream<E: BitwiseCopyable & Sendable>(
        _ dng: DNGFile, options: DevelopOptions, keepClipMask: Bool, timings initial: StageTimings, as type: E.Type,
        convert: @escaping @Sendable (UnsafeBufferPointer<Float>, UnsafeMutableBufferPointer<E>) -> Void,
        visitor: (prepare: ImageScan.Prepare, visit: ImageScan.Visitor)? = nil, hash: Bool = true,
        cache: DecodedBlockCache? = nil, observer: (prepare: ImageScan.Prepare, visit: ImageScan.Visitor)? = nil,
        output target: StreamingOutput? = nil, replacing replacement: Stage2Replacement? = nil,
        masksReady: (([SemanticMaskLayer]) throws -> Void)? = nil
    ) throws -> Streamed<E> {
        do {
            return try streamRoutes(dng, options: options, keepClipMask: keepClipMask, timings: initial, as: type, convert: convert,
                                    visitor: visitor, hash: hash, cache: cache, observer: observer, output: target,
                                    replacing: replacement, masksReady: masksReady)
        } catch {
            // Zeros read from a file cut under its mapping look like damaged data: say what happened.
            try dng.file.checkIntact()
            throw error
        }
    }

    static func streamRoutes<E: BitwiseCopyable & Sendable>(
        _ dng: DNGFile, options: DevelopOptions, keepClipMask: Bool, timings: StageTimings, as _: E.Type,
        convert: @escaping @Sendable (UnsafeBufferPointer<Float>, UnsafeMutableBufferPointer<E>) -> Void,
        visitor: (prepare: ImageScan.Prepare, visit: ImageScan.Visitor)?, hash: Bool,
        cache: DecodedBlockCache?, observer: (prepare: ImageScan.Prepare, visit: ImageScan.Visitor)?,
        output target: StreamingOutput?, replacing replacement: Stage2Replacement?,
        masksReady: (([SemanticMaskLayer]) throws -> Void)?
    ) throws -> Streamed<E> {
        // The lens calibration for this capture's aperture (one of several, or interpolated).
        var options = options
        options.lens = try options.lens?.forCapture(dng.metadata, path: dng.path, allowOther: options.allowOtherLens)
        var (raw, main, notes) = try selectImage(dng, options: options)
        // Over the pixel limit: refused before anything else (the memory estimate, which needs the plan, below).
        try checkPixelLimit(raw, path: dng.path, options: options)
        // The raw-data digest, computed as the blocks are decoded (once, on whichever route).
        let expectation = replacement == nil ? try digestExpectation(dng, raw: raw, main: main, options: options) : nil
        let digester = try expectation?.makeDigester(dng)
        let output: DevelopRequest.Output = switch target?.format {
        case .exr?: .exr(streamable: true)
        case .hdf5?: .hdf5(streamable: true)
        case nil: visitor != nil ? .scan : .image(halfFloats: E.self == Float16.self)
        }
        let request = DevelopRequest(output: output, observed: observer != nil, replacesStage2: replacement != nil,
                                     digest: options.digest, drawsCharts: options.measurementDrawsCharts)
        let list2 = try parseOpcodeList(2, dng: dng, raw: raw)
        // A replaced Stage 2 of variances or counts takes the file's OpcodeList3 as such planes must.
        var own3 = try parseOpcodeList(3, dng: dng, raw: raw)
        if let matrix = replacement?.matrix { own3 = try matrix.list3(own3, path: dng.path) }
        let list3 = try lensCorrected(own3, list2: list2, dng: dng, raw: raw, options: options,
                                      matrix: replacement?.matrix, notes: &notes)
        let plan = DevelopPlan(layout: try SourceLayout.of(dng, raw: raw, limits: options.limits, list2: list2, list3: list3),
                               request: request)
        let run = try DevelopRun(dng, options: options, plan: plan, raw: raw, main: main, lists: (list2, list3), notes: notes,
                                 digest: (expectation, digester), timings: timings, cache: cache, target: target,
                                 replacement: replacement, hash: hash, masksReady: masksReady) { matrix in
            OutputSink<E>(matrix: matrix, keepClipMask: keepClipMask, convert: convert, visitor: visitor, observer: observer)
        }
        return try run.execute()
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

    /// The note a list running region by region records (the report of the region at the
    /// origin), known before the pass: which opcodes run and which are skipped follows from
    /// the list and the stage's bounds, not from the pixels, so the list is run here on the
    /// one pixel at the origin. A file whose header goes first records it; the pass's own
    /// note is compared with it at the end.
    static func predictedListNote(_ list: OpcodeList, number: Int, planes: Int, bounds: PixelRect,
                                  context c: StreamingOpcodes) throws -> MetadataItem {
        var pixel = ImageBuffer<Float>(width: 1, height: 1, channels: planes, repeating: 0)
        let context = OpcodeContext(imageBounds: bounds, originRow: 0, originColumn: 0, clipping: c.clipping,
                                    bayerPhase: planes == 1 ? c.bayerPhase : nil)
        do { return listNote(number, try OpcodeApplier.apply(list, to: &pixel, context: context)) } catch { throw error.inFile(c.path) }
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
                                          crop: PixelRect, orientation: Int, into out: PixelView<E>,
                                          maskInto maskOut: PixelView<UInt8>?, clipped: SharedCount,
                                          convert: (UnsafeBufferPointer<Float>, UnsafeMutableBufferPointer<E>) -> Void,
                                          observe: ImageScan.Visitor? = nil) throws {
        try visitPlaced(values, mask: mask, rows: rows, columns: columns, crop: crop, orientation: orientation, clipped: clipped) { patch in
            try observe?(patch)
            let r = patch.rect, n = r.width
            for y in r.top..<r.bottom {
                let from = (y - r.top) * patch.rowStride
                convert(UnsafeBufferPointer(start: patch.values + 3 * from, count: 3 * n),
                        UnsafeMutableBufferPointer(start: out.pixel(r.left, y), count: 3 * n))
                if let maskOut, let m = patch.mask { maskOut.pixel(r.left, y).update(from: m + from, count: n) }
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
