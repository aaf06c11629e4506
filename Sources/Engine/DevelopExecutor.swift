import Foundation
import Opcodes
import SemanticMasks

/// The one executor: follows a `DevelopPlan` from the file's blocks to the output sink. Each
/// step of the plan is one method; the state they share (the processing notes in the order
/// the stages record them, the crops TrimBounds made, a collected stage) lives here for one
/// development.
final class DevelopRun<E: BitwiseCopyable & Sendable> {
    let dng: DNGFile, raw: ImageIFD, main: ImageIFD
    let plan: DevelopPlan
    let options: DevelopOptions
    let path: String
    let cfa: CFADescription?
    let spp: Int
    let area: PixelRect
    let binning: Int
    let list2: OpcodeList?, list3: OpcodeList?
    let linearization: LinearizationPlan
    let color: ColorTransform
    let exposure: ExposureScaling
    let sink: OutputSink<E>
    let reports = SharedStore<Int, OpcodeReport>()
    let opcodes: Pipeline.StreamingOpcodes
    let digestExpectation: RawDigestExpectation?
    let digester: ImageDigester?
    let cache: DecodedBlockCache?
    let target: StreamingOutput?
    let replacement: Stage2Replacement?
    let hash: Bool
    /// Told the semantic masks on the output grid before the first patch (a scan whose
    /// regions are masks); nil: the masks are decoded after the pass.
    let masksReady: (([SemanticMaskLayer]) throws -> Void)?
    var timings: StageTimings

    /// What the stages record, in order (the provenance's processing items).
    var processing: [MetadataItem]
    /// What a TrimBounds of OpcodeList2/3 cropped Stage 2/3 to.
    var trims: [Int: PixelRect] = [:]
    /// Starts the file written as its rows are made (set up by `prepareFile`).
    var fileStart: StreamingStart?
    /// What a file whose header went first recorded: its masks and processing items.
    var streamedMasks: [SemanticMaskLayer] = []
    var streamedProcessing: [MetadataItem] = []
    /// The sink's output and the geometry it was placed by, once a route has ended in it.
    var output: (SinkOutput<E>, GeometryPlan)?
    /// The masks decoded before the output, when `masksReady` asked for them.
    var earlyMasks: [SemanticMaskLayer]?
    /// The pixels the decoder reports while it decodes, in this pass (`countDecodeProgress`).
    var decodeAhead = 0
    /// A stage collected whole, on its way to the next step.
    var stage1: StoredImage?
    var stage2: LinearImage?
    var stage3: Stage3Image?

    init(_ dng: DNGFile, options: DevelopOptions, plan: DevelopPlan, raw: ImageIFD, main: ImageIFD,
         lists: (list2: OpcodeList?, list3: OpcodeList?), notes: [MetadataItem],
         digest: (expectation: RawDigestExpectation?, digester: ImageDigester?), timings: StageTimings,
         cache: DecodedBlockCache?, target: StreamingOutput?, replacement: Stage2Replacement?, hash: Bool,
         masksReady: (([SemanticMaskLayer]) throws -> Void)? = nil, sink makeSink: ([Float]) -> OutputSink<E>) throws {
        self.dng = dng
        self.raw = raw
        self.main = main
        self.plan = plan
        self.options = options
        self.timings = timings
        self.cache = cache
        self.target = target
        self.replacement = replacement
        self.hash = hash
        self.masksReady = masksReady
        path = dng.path
        processing = notes
        (digestExpectation, digester) = digest
        cfa = raw.photometric == Photometric.cfa ? raw.cfa : nil
        spp = raw.samplesPerPixel
        area = raw.activeArea
        binning = cfa != nil && options.demosaic == .superpixel ? 2 : 1
        (list2, list3) = lists
        linearization = try LinearizationPlan(ifd: raw, path: path)
        color = try ColorTransform.make(metadata: dng.metadata, encoding: options.encoding, whiteBalance: options.whiteBalance,
                                        path: path)
        exposure = try Pipeline.exposureScaling(options.exposure, metadata: dng.metadata, path: path, options: options)
            .withLens(options.lens, raw: raw)
        // The colour matrix with the exposure factor, or what a replaced Stage 2's planes take.
        let matrix = ColorConversion.floatMatrix(color, exposure: exposure)
        let sinkMatrix: [Float] = switch replacement?.matrix {
        case .color?, nil: matrix
        case .squared?: matrix.map { $0 * $0 }
        case .identity?: [1, 0, 0, 0, 1, 0, 0, 0, 1]
        }
        sink = makeSink(sinkMatrix)
        opcodes = Pipeline.StreamingOpcodes(path: path, clipping: options.opcodeClipping,
                                            bayerPhase: cfa == nil ? nil : Pipeline.activeAreaBayerPhase(raw), reports: reports)
    }

    /// Stage 3's crop, scale and orientation for a `width` × `height` Stage 3 image.
    func geometry(width: Int, height: Int) throws -> GeometryPlan {
        // Stage 3 is the ActiveArea (less any TrimBounds), or half of it for 2×2 superpixels.
        let (ifd, geometryBinning) = Pipeline.geometrySource(raw: raw, main: main, binning: binning)
        return try ImageGeometry.plan(ifd: ifd, orientation: dng.metadata.orientation, width: width, height: height,
                                      binning: geometryBinning, crop: options.crop, applyOrientation: options.applyOrientation,
                                      path: path)
    }

    /// The semantic masks on the output grid of `geometry` for a `stage3Width` × `stage3Height`
    /// Stage 3 (none unless asked for and present); in half floats for a file written as its
    /// rows are made (both such writers store masks in half floats).
    func outputMasks(_ geometry: GeometryPlan, stage3Width: Int, stage3Height: Int, half: Bool = false) throws -> [SemanticMaskLayer] {
        guard options.includeMasks && !dng.maskIFDs.isEmpty else { return [] }
        let grid = Stage3Grid.pipeline(activeArea: area, binning: binning, width: stage3Width, height: stage3Height,
                                       trim2: trims[2], trim3: trims[3])
        return try SemanticMasks.layers(dng, grid: grid, plan: geometry, limits: options.limits, half: half)
    }

    /// The output sink over Stage 3 bands (`OutputSink.run`); the masks decoded and handed on
    /// first when `masksReady` asks (every crop a TrimBounds makes is known by then).
    func runSink(_ geometry: GeometryPlan, stage3Width: Int, stage3Height: Int, list3: OpcodeList?,
                 _ body: (BandFinisher<E>) throws -> Void) throws -> SinkOutput<E> {
        if let masksReady {
            let masks = try outputMasks(geometry, stage3Width: stage3Width, stage3Height: stage3Height)
            earlyMasks = masks
            try masksReady(masks)
        }
        return try sink.run(plan: geometry, stage3Width: stage3Width, stage3Height: stage3Height, list3: list3, opcodes: opcodes,
                            file: fileStart, body)
    }

    /// Runs the plan: the route to the sink, then the digests, the hash, the provenance and
    /// whatever the written file still needs.
    func execute() throws -> Pipeline.Streamed<E> {
        // The hash reads the whole file on a thread of its own while the blocks are decoded (it
        // is needed only for the provenance record); each 4 MiB it has read leaves resident
        // memory at once (blocks still to be decoded read their pages again from the page
        // cache), so the input file never counts whole in the peak.
        let file = dng.file, hash = self.hash
        let hashing = BackgroundValue { () -> (String, Double) in
            guard hash else { return ("", 0) }
            var seconds = 0.0
            let hex = Pipeline.measure(&seconds) {
                file.data.withUnsafeBytes { bytes in
                    SHA256Digest.hex(of: bytes, piece: 4 << 20) { file.releaseResidentPages(offset: $0.lowerBound, length: $0.count) }
                }
            }
            return (hex, seconds)
        }
        // However this ends, the hashing thread is done before it returns (it reads the file's
        // mapping, which must outlive it, and the process must not exit under it).
        defer { _ = hashing.wait() }
        try prepareFile()
        try Pipeline.checkLimits(raw, path: path, options: options, route: plan.memoryRoute, planned: true,
                                 extra: Pipeline.adding(Pipeline.maskBytes(dng, raw: raw, options: options),
                                                        Pipeline.collectedStage1Bytes(raw, plan: plan)))
        countDecodeProgress()
        options.progress?.start(pixels: area.width * area.height, decodedFirst: decodeAhead)
        let start = DispatchTime.now().uptimeNanoseconds
        try runStage2()
        if stage2 != nil { try developCollectedStage2() }
        if stage3 != nil { try finishCollectedStage3() }
        if plan.list3 == .perRegion, let report = reports[3] { processing.append(Pipeline.listNote(3, report)) }
        guard let (made, geometry) = output else { throw internalError("the plan \(plan.summary) ended in no output") }
        return try finish(made, geometry: geometry, start: start, hashing: hashing)
    }

    /// An error for a plan the executor could not follow (a defect, reported, never a crash).
    func internalError(_ what: String) -> OutputError {
        OutputError(path: target?.path ?? path, reason: "internal error: \(what)")
    }

    /// Stage 2 as the plan makes it: on to the output, through the mosaic window, or collected.
    func runStage2() throws {
        // Stage 1 collected first: its OpcodeList1 note precedes what the stages after it
        // record, and a decoding error comes before any output is started.
        if plan.stage1 == .collected { stage1 = try decodeStage1() }
        switch plan.stage2 {
        case .streamed:
            let geometry = try geometry(width: area.width, height: area.height)
            var decoded = false
            let made = try runSink(geometry, stage3Width: area.width, stage3Height: area.height, list3: list3) { finish in
                decoded = try decodeBlocks(into: .finish(finish))
            }
            guard decoded else { throw internalError("the blocks of \(raw.path) were planned to be decoded one by one") }
            output = (made, geometry)
        case .mosaicWindow:
            try demosaicFromWindow()
        case .collectedFromBlocks:
            stage2 = try StageCollector.collect(width: area.width, height: area.height, planes: spp, ifd: raw,
                                                mapping: linearization.mapping) { try decodeBlocks(into: .collect($0)) }
            guard stage2 != nil else { throw internalError("the blocks of \(raw.path) were planned to be decoded one by one") }
        case .collectedFromStage1:
            guard let stored = stage1.take() else { throw internalError("no Stage 1 was collected for \(raw.path)") }
            stage2 = try Linearizer.linearize(stored, path: path)
            options.progress?.add(area.width * area.height)
        case .replaced:
            try takeReplacement()
        }
        if plan.list2 == .perRegion, let report = reports[2] { processing.append(Pipeline.listNote(2, report)) }
        if plan.demosaic == .fromWindow, let cfa { processing += Pipeline.demosaicNotes(options.demosaic, cfa: cfa) }
    }

    /// A Stage 2 made elsewhere, with OpcodeList2 already applied (see `Stage2Replacement`).
    func takeReplacement() throws {
        guard let replacement else { throw internalError("a replaced Stage 2 was planned without one") }
        guard replacement.image.width == area.width, replacement.image.height == area.height, replacement.image.planes == spp else {
            throw RawDecodeError.inconsistentLayout(path: path, ifd: raw.path, reason: "a replacement Stage 2 of "
                + "\(replacement.image.width)×\(replacement.image.height)×\(replacement.image.planes) for an ActiveArea of \(area.width)×\(area.height)×\(spp)")
        }
        stage2 = replacement.image
    }

    /// The decoder's blocks (or, when the plan collects Stage 1, strips of it) into `target`, a
    /// strip of rows at a time through Stage 2 and OpcodeList2 (when the plan runs it per
    /// region); false when neither can be cut.
    func decodeBlocks(into target: StripTarget<E>) throws -> Bool {
        if plan.stage1 == .collected { return try handOnStage1(into: target, rowsDone: nil) }
        return try RawDecoder.forEachBlock(dng, ifd: raw, limits: options.limits, digester: digester, cache: cache,
                                           decodeProgress: decodeProgress, strips(into: target))
    }

    /// The Stage 1 collector: the whole raw image decoded (its digest taken), OpcodeList1 applied.
    func decodeStage1() throws -> StoredImage {
        var stored = try RawDecoder.decode(dng, ifd: raw, limits: options.limits, digester: digester, decodeProgress: decodeProgress)
        try Pipeline.applyOpcodeList1(dng: dng, raw: raw, to: &stored, clipping: options.opcodeClipping, notes: &processing)
        return stored
    }

    /// Rows of the collected Stage 1 handed on at a time to a consumer that needs whole rows.
    static var stage1GroupRows: Int { 4 * RawDecoder.rowGroupRows }

    /// The collected Stage 1 (taken: its memory goes when it has been handed on) handed on
    /// as the decoder's blocks are (`strips(into:)`): all of
    /// it at once (its strips spread over the cores), or `stage1GroupRows` rows at a time with
    /// `rowsDone` after each; false for samples held as 32-bit integers (the plan then
    /// linearizes Stage 1 whole).
    func handOnStage1(into target: StripTarget<E>, rowsDone: ((Range<Int>) throws -> Void)?) throws -> Bool {
        guard let stored = stage1.take() else { throw internalError("no Stage 1 was collected for \(raw.path)") }
        let width = stored.ifd.width, height = stored.ifd.height, rowStride = width * stored.ifd.samplesPerPixel
        let body = strips(into: target), groupRows = rowsDone == nil ? max(1, height) : Self.stage1GroupRows
        func handOn(_ first: BlockSamples) throws {
            for top in stride(from: 0, to: height, by: groupRows) {
                let rows = top..<min(height, top + groupRows)
                try body(PixelRect(top: rows.lowerBound, left: 0, bottom: rows.upperBound, right: width),
                         first.advanced(by: top * rowStride), rowStride, true)
                try rowsDone?(rows)
            }
        }
        switch stored.samples {
        case .uint16(let b): try b.samples.withUnsafeBufferPointer { try handOn(.uint16($0.baseAddress!)) }
        case .float32(let b): try b.samples.withUnsafeBufferPointer { try handOn(.float32($0.baseAddress!)) }
        case .uint32: return false
        }
        return true
    }

    /// The pixels this pass's decoder reports while it decodes (a JPEG XL image of few
    /// blocks, `RawDecoder.decodeProgressPixels`), counted in the progress before Stage 2's:
    /// none without a progress, when the blocks come from the cache or Stage 2 from elsewhere.
    func countDecodeProgress() {
        guard options.progress != nil, plan.stage2 != .replaced, cache?.isComplete != true else { return decodeAhead = 0 }
        decodeAhead = RawDecoder.decodeProgressPixels(dng, ifd: raw, limits: options.limits)
    }

    /// The progress told of the decoder's pixels, when this pass counts them (`decodeAhead`).
    var decodeProgress: RawDecoder.DecodeProgress? {
        guard let progress = options.progress, decodeAhead > 0 else { return nil }
        return { progress.add($0) }
    }

    /// `decodeBlocks`, a row of blocks at a time, with `rowsDone` after each.
    func decodeBlockRows(into target: StripTarget<E>, rowsDone: (Range<Int>) throws -> Void) throws -> Bool {
        if plan.stage1 == .collected {
            return try withoutActuallyEscaping(rowsDone) { try handOnStage1(into: target, rowsDone: $0) }
        }
        return try RawDecoder.forEachBlockRow(dng, ifd: raw, limits: options.limits, digester: digester, cache: cache,
                                       decodeProgress: decodeProgress,
                                       strips(into: target), rowsDone: rowsDone)
    }

    /// What a decoded block goes through: its part inside the ActiveArea, a strip of rows at a
    /// time (each stays in the core's cache through every step; spread over the cores when
    /// there are too few blocks to be), linearized and through OpcodeList2 per region into `target`.
    func strips(into target: StripTarget<E>) -> @Sendable (PixelRect, BlockSamples, Int, Bool) throws -> Void {
        let area = self.area, spp = self.spp, linearization = self.linearization, opcodes = self.opcodes
        let progress = options.progress
        let perRegion2 = plan.list2 == .perRegion ? list2 : nil
        let bounds = PixelRect(width: area.width, height: area.height), stripRows = Pipeline.streamingStripRows
        return { @Sendable (region: PixelRect, samples: BlockSamples, rowStride: Int, fewBlocks: Bool) throws in
            let top = max(region.top, area.top), bottom = min(region.bottom, area.bottom)
            let left = max(region.left, area.left), right = min(region.right, area.right)
            guard top < bottom, left < right else { return }
            let rows = (top - area.top)..<(bottom - area.top), columns = (left - area.left)..<(right - area.left)
            // Safe because the block's samples outlive this call and are only read.
            nonisolated(unsafe) let first = samples.advanced(by: (rows.lowerBound + area.top - region.top) * rowStride
                + (columns.lowerBound + area.left - region.left) * spp)
            let stripCount = (rows.count + stripRows - 1) / stripRows
            try Parallel.forEachChunkThrowing(count: fewBlocks ? stripCount : 1, minimumChunk: 1) { part in
                var strip = Band(width: columns.count, channels: spp)
                for k in fewBlocks ? part : 0..<stripCount {
                    let top = rows.lowerBound + k * stripRows
                    let inStrip = top..<min(rows.upperBound, top + stripRows)
                    strip.resize(rows: inStrip.count)
                    strip.values.samples.withUnsafeMutableBufferPointer { v in
                        strip.mask.withUnsafeMutableBufferPointer { m in
                            linearization.linearize(first.advanced(by: (top - rows.lowerBound) * rowStride), rowStride: rowStride,
                                                    rows: inStrip, columns: columns, into: v.baseAddress!, mask: m.baseAddress!)
                        }
                    }
                    if let perRegion2 {
                        try Pipeline.applyOpcodes(perRegion2, number: 2, to: &strip.values, bounds: bounds, row: inStrip.lowerBound,
                                                  column: columns.lowerBound, context: opcodes)
                    }
                    switch target {
                    case .finish(let finish): try finish.finish(&strip, rows: inStrip, columns: columns)
                    case .collect(let collector): collector.store(strip, rows: inStrip, columns: columns)
                    case .window(let window): window.store(strip, rows: inStrip, columns: columns)
                    }
                    progress?.add(inStrip.count * columns.count)
                }
            }
        }
    }

    /// CFA: a window of the mosaic's rows, demosaiced band by band as the rows a band reads
    /// arrive (a row of blocks at a time), then on as Stage 3 bands.
    func demosaicFromWindow() throws {
        guard let cfa else { throw internalError("a mosaic window was planned for an image without a CFA") }
        let bands: DemosaicBands
        do throws(DemosaicError) {
            bands = try DemosaicBands(width: area.width, height: area.height, cfa: cfa, activeArea: area, ifd: raw.path,
                                      method: options.demosaic)
        } catch {
            throw FileFailure(path: path, error)
        }
        let blockRows = plan.stage1 == .collected ? Self.stage1GroupRows : raw.layout?.blockHeight ?? area.height
        let bandReach = (0..<bands.bandCount).map { bands.inputRows(ofBand: $0).count }.max() ?? 0
        // The window holds fewer rows than one band reads from before a group of block rows
        // arrives, plus that group (under rowGroupRows plus one block's height).
        let window = MosaicWindow(width: area.width, height: area.height,
                                  capacity: min(area.height, blockRows + RawDecoder.rowGroupRows + bandReach))
        try finishStage3Bands(width: bands.outputWidth, height: bands.outputHeight) { body in
            var nextBand = 0
            let decoded = try self.decodeBlockRows(into: .window(window)) { ifdRows in
                let upper = min(ifdRows.upperBound, self.area.bottom) - self.area.top
                if upper > window.frontier { window.complete(upTo: upper) }
                var last = nextBand
                while last < bands.bandCount && bands.inputRows(ofBand: last).upperBound <= window.frontier { last += 1 }
                guard last > nextBand else { return }
                let rowHasClip = RowClipIndex(flags: window.rowHasClip)
                try Pipeline.demosaicInParallel(nextBand..<last, of: bands, { b, values, mask in
                    bands.demosaic(band: b, window: window.values.base, clip: window.clip.base, windowTop: window.top,
                                   rowHasClip: rowHasClip, into: values, mask: mask)
                }, body)
                nextBand = last
                window.slide(to: nextBand < bands.bandCount ? bands.inputRows(ofBand: nextBand).lowerBound : window.frontier)
            }
            guard decoded else { throw self.internalError("the blocks of \(self.raw.path) were planned to be decoded one by one") }
        }
    }

    /// A CFA image's Stage 3 band by band from `demosaicBands`: on to the output sink with
    /// OpcodeList3 per band, or, when the plan collects Stage 3, into a collected Stage 3.
    func finishStage3Bands(width: Int, height: Int,
                           _ demosaicBands: (@Sendable (inout Band, Range<Int>) throws -> Void) throws -> Void) throws {
        if plan.stage3 == .streamed {
            let geometry = try geometry(width: width, height: height)
            let made = try runSink(geometry, stage3Width: width, stage3Height: height, list3: list3) { finish in
                try demosaicBands { band, rows in try finish.finish(&band, rows: rows, columns: 0..<width) }
            }
            output = (made, geometry)
        } else {
            stage3 = try StageCollector.collect(width: width, height: height, planes: 3, ifd: raw, mapping: linearization.mapping) { collector in
                try demosaicBands { band, rows in collector.store(band, rows: rows, columns: 0..<width) }
                return true
            }.map { Stage3Image(planes: $0) }
        }
    }

    /// A collected Stage 2: OpcodeList2 on all of it when the plan says so, then the
    /// demosaicing of a CFA mosaic (band by band from the whole mosaic) or LinearRaw's planes
    /// as Stage 3.
    func developCollectedStage2() throws {
        guard var linear = stage2.take() else { return }
        if plan.list2 == .whole {
            trims[2] = try Pipeline.applyOpcodeList(2, dng: dng, raw: raw, to: &linear, clipping: options.opcodeClipping,
                                                    notes: &processing)
        }
        guard raw.photometric == Photometric.cfa else {
            guard let planes = Stage3Image(linearRaw: consume linear) else {
                throw RawDecodeError.unsupported(path: path, ifd: raw.path, reason: "LinearRaw with \(spp) samples per pixel (3 supported)")
            }
            stage3 = planes
            return
        }
        guard let cfa else {
            throw RawDecodeError.inconsistentLayout(path: path, ifd: raw.path, reason: "a CFA image without CFARepeatPatternDim/CFAPattern")
        }
        let mosaic: BandDemosaicer
        do throws(DemosaicError) {
            mosaic = try BandDemosaicer(values: linear.values.samples, clip: linear.clipMask, width: linear.width, height: linear.height,
                                        cfa: cfa, activeArea: linear.mapping.activeArea, ifd: raw.path, method: options.demosaic)
        } catch {
            throw FileFailure(path: path, error)
        }
        processing += Pipeline.demosaicNotes(options.demosaic, cfa: cfa)
        _ = consume linear  // the mosaic lives on in `mosaic` only
        try finishStage3Bands(width: mosaic.bands.outputWidth, height: mosaic.bands.outputHeight) { body in
            try Pipeline.demosaicInParallel(0..<mosaic.bands.bandCount, of: mosaic.bands, mosaic.demosaic, body)
        }
    }

    /// A collected Stage 3 (LinearRaw's Stage 2, or the demosaiced planes): OpcodeList3 on all
    /// of it when the plan says so, then colour and output band by band.
    func finishCollectedStage3() throws {
        guard var image = stage3.take() else { return }  // (taken, so that OpcodeList3 writes the planes in place)
        if plan.list3 == .whole {
            trims[3] = try Pipeline.applyOpcodeList3(dng: dng, raw: raw, to: &image, clipping: options.opcodeClipping, notes: &processing,
                                                     parsed: list3)
        }
        let planes = image
        let geometry = try geometry(width: planes.width, height: planes.height)
        let made = try runSink(geometry, stage3Width: planes.width, stage3Height: planes.height,
                               list3: plan.list3 == .perRegion ? list3 : nil) { finish in
            try Pipeline.forEachBand(of: planes) { band, rows in try finish.finish(&band, rows: rows, columns: 0..<planes.width) }
        }
        output = (made, geometry)
    }
}

extension DevelopRun {
    /// Sets up the start of a file written as its rows are made. An EXR's header goes first:
    /// the digest items it records are predicted (the image's digest assumed to match: a
    /// mismatch fails the conversion, and the file is not kept), the semantic masks decoded
    /// onto the output grid, the SHA-256 a placeholder set at the end. An HDF5 file's root
    /// attributes go first, the rest at the end.
    func prepareFile() throws {
        guard let target else { return }
        switch (target.format, plan.sink) {
        case (.exr(let exrOptions), .exrAsRowsAreMade):
            let digestItems = try Pipeline.checkDigests(dng, raw: raw, main: main, expectation: digestExpectation, imageDigest: nil,
                                                        options: options, assumingImageMatches: true)
            fileStart = { [unowned self] geometry, stage3Width, stage3Height in
                streamedMasks = try outputMasks(geometry, stage3Width: stage3Width, stage3Height: stage3Height, half: true)
                var provenance = headerProvenance()
                // What the pass notes after the header: OpcodeList2 run region by region, a CFA
                // image's demosaicing, OpcodeList3 run band by band.
                var notes = processing
                if plan.list2 == .perRegion, let list2 {
                    notes.append(try Pipeline.predictedListNote(list2, number: 2, planes: spp,
                                                                bounds: PixelRect(width: area.width, height: area.height), context: opcodes))
                }
                let demosaicNote = MetadataItem("demosaic", .text(options.demosaic.rawValue))
                if let cfa, !processing.contains(demosaicNote) { notes += Pipeline.demosaicNotes(options.demosaic, cfa: cfa) }
                if plan.list3 == .perRegion, let list3 {
                    notes.append(try Pipeline.predictedListNote(list3, number: 3, planes: 3,
                                                                bounds: PixelRect(width: stage3Width, height: stage3Height), context: opcodes))
                }
                streamedProcessing = notes + digestItems + geometry.processingItems
                provenance.processing = streamedProcessing
                let description = WrittenImageDescription(width: geometry.outputWidth, height: geometry.outputHeight, masks: streamedMasks,
                                                          encoding: color.encoding, exposure: exposure, provenance: provenance)
                return try EXRStreamWriter(temporaryPath: target.temporaryPath, path: target.path, description: description,
                                           options: exrOptions)
            }
        case (.hdf5(let hdf5Options), .hdf5AsRowsAreMade):
            fileStart = { [unowned self] geometry, _, _ in
                try HDF5StreamWriter(temporaryPath: target.temporaryPath, path: target.path, width: geometry.outputWidth,
                                     height: geometry.outputHeight, encoding: color.encoding, provenance: headerProvenance(),
                                     options: hdf5Options, clipMask: sink.keepClipMask)
            }
        default:
            break
        }
    }

    /// What a file written before the pass records of the source: its SHA-256, still being
    /// computed, is a placeholder of the same length (set at the end).
    func headerProvenance() -> ImageProvenance {
        Pipeline.provenance(dng: dng, raw: raw, mapping: linearization.mapping, color: color, sha256: String(repeating: "0", count: 64))
    }

    /// After the pass: the digests checked, the hash awaited (a file cut while it was read is
    /// found here, before anything is written in its name), the provenance, the semantic
    /// masks, and what a file written as its rows were made still needs.
    func finish(_ made: SinkOutput<E>, geometry: GeometryPlan, start: UInt64,
                hashing: BackgroundValue<(String, Double)>) throws -> Pipeline.Streamed<E> {
        let digestItems = try Pipeline.checkDigests(dng, raw: raw, main: main, expectation: digestExpectation,
                                                    imageDigest: digester?.finish(), options: options)
        timings.develop = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let (sha, hashSeconds) = hashing.wait()
        timings.hash = hashSeconds
        try dng.file.checkIntact()
        dng.file.releaseResidentPages()
        var provenance = Pipeline.provenance(dng: dng, raw: raw, mapping: linearization.mapping, color: color, sha256: sha)
        provenance.processing = processing + digestItems + geometry.processingItems
        var masks: [SemanticMaskLayer] = []
        if let writer = made.writer as? EXRStreamWriter {
            // The header went first: it must record what the pass found.
            guard provenance.processing == streamedProcessing else {
                throw internalError("the EXR header was written with processing items \(streamedProcessing.map(\.key)) "
                                    + "but the conversion recorded \(provenance.processing.map(\.key))")
            }
            // The export's own time: the chunk table and the SHA-256 (the chunks were written during develop).
            try Pipeline.measure(&timings.export[OutputFormat.exr.rawValue, default: 0]) { try writer.finish(sourceSHA256: sha) }
            masks = streamedMasks
        } else {
            masks = try earlyMasks ?? outputMasks(geometry, stage3Width: made.stage3Width, stage3Height: made.stage3Height,
                                                  half: made.writer is HDF5StreamWriter)
        }
        if let writer = made.writer as? HDF5StreamWriter {
            // What is left after the pass: the clip mask, the semantic masks and the attributes.
            try Pipeline.measure(&timings.export[OutputFormat.hdf5.rawValue, default: 0]) {
                try writer.finish(WrittenImageDescription(width: made.width, height: made.height, masks: masks,
                                                          encoding: color.encoding, exposure: exposure, provenance: provenance))
            }
        }
        return Pipeline.Streamed(pixels: made.pixels, width: made.width, height: made.height,
                                 clipMask: sink.keepClipMask ? made.mask : nil, clippedPixelCount: made.clippedPixelCount, raw: raw,
                                 mapping: linearization.mapping, color: color, exposure: exposure, geometry: geometry,
                                 provenance: provenance, masks: masks, timings: timings, wroteFile: made.writer != nil)
    }
}
