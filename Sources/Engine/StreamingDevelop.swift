import Foundation
import Opcodes
import SemanticMasks

/// The result of the streaming conversion: the output image in half floats and what
/// `convert` reports about it.
public struct HalfDevelopedImage: Sendable {
    public let image: HalfSceneLinearImage
    public let rawIFD: ImageIFD
    public let color: ColorTransform
    public let geometry: GeometryPlan
    public var timings: StageTimings
}

/// An image ready for the writers, from either conversion path.
public struct ConvertedImage: Sendable {
    public let image: any SceneLinearRaster
    public let rawIFD: ImageIFD
    public let geometry: GeometryPlan
    public var timings: StageTimings
    public let clippedPixelCount: Int
    /// True when the streaming conversion made it (`developForExport`), false for `develop`.
    public let streamed: Bool

    /// The result of `develop`.
    public init(_ d: DevelopedImage) {
        self.init(image: d.image, rawIFD: d.rawIFD, geometry: d.geometry, timings: d.timings,
                  clippedPixelCount: d.image.clippedPixelCount, streamed: false)
    }

    init(image: any SceneLinearRaster, rawIFD: ImageIFD, geometry: GeometryPlan, timings: StageTimings,
         clippedPixelCount: Int, streamed: Bool) {
        self.image = image
        self.rawIFD = rawIFD
        self.geometry = geometry
        self.timings = timings
        self.clippedPixelCount = clippedPixelCount
        self.streamed = streamed
    }
}

extension Pipeline {
    /// Rows per strip of the streaming conversion: a strip of a 256-pixel tile in floats
    /// (48 KiB) stays in a core's cache from Stage 2 to the half conversion.
    static let streamingStripRows = 16

    /// The image `convert` writes: from the streaming conversion when it covers the file
    /// (less memory, same bits), else from `develop`.
    /// - Parameter keepClipMask: whether the outputs need the clip mask (HDF5, or EXR with
    ///   the clip-mask channel).
    public static func developForOutput(path: String, options: DevelopOptions = DevelopOptions(),
                                        keepClipMask: Bool) throws -> ConvertedImage {
        var timings = StageTimings()
        let dng = try measure(&timings.container) { try DNGFile.open(path: path) }
        if options.allowStreaming,
           let h = try developForExport(dng, options: options, keepClipMask: keepClipMask, timings: timings) {
            return ConvertedImage(image: h.image, rawIFD: h.rawIFD, geometry: h.geometry, timings: h.timings,
                                  clippedPixelCount: h.image.clippedPixelCount, streamed: true)
        }
        return ConvertedImage(try developWholeImage(dng, options: options, timings: timings))
    }

    /// Develops a DNG straight into the half-float output image, tile by tile, without any
    /// full-size intermediate: the blocks (tiles or strips) are decoded in parallel, each
    /// into a buffer of its own, and each block goes, a strip of rows at a time, through
    /// Stage 2, the opcode lists, the colour matrix and the conversion to half floats, into
    /// its place in the cropped and oriented output; the input is hashed meanwhile on a
    /// thread of its own. The values are bit for bit those of `develop` followed by the
    /// writers' half conversion (tested); the peak memory is the output, one block per
    /// core and the part of the input file being read.
    ///
    /// It covers the common case and returns nil otherwise, so the caller uses `develop`:
    /// LinearRaw images of up to 16-bit integer samples, no OpcodeList1, OpcodeList2/3 made
    /// only of opcodes that act on each pixel by its position (GainMap, MapTable,
    /// MapPolynomial, Delta/ScalePerRow/Column, FixVignetteRadial; warps, which are never
    /// applied, are reported as skipped), and no DefaultScale resampling.
    ///
    /// - Parameter keepClipMask: whether to keep the full clip mask (the count of clipped
    ///   pixels is always kept).
    /// - Throws: the same errors as `develop` (for a damaged tile, that of the
    ///   lowest-numbered damaged one).
    public static func developForExport(path: String, options: DevelopOptions = DevelopOptions(),
                                        keepClipMask: Bool) throws -> HalfDevelopedImage? {
        var timings = StageTimings()
        let dng = try measure(&timings.container) { try DNGFile.open(path: path) }
        return try developForExport(dng, options: options, keepClipMask: keepClipMask, timings: timings)
    }

    public static func developForExport(_ dng: DNGFile, options: DevelopOptions = DevelopOptions(), keepClipMask: Bool,
                                        timings: StageTimings = StageTimings()) throws -> HalfDevelopedImage? {
        guard let s = try stream(dng, options: options, keepClipMask: keepClipMask, timings: timings, as: Float16.self,
                                 convert: { HalfConversion.convert($0, to: $1) }) else { return nil }
        let image = HalfSceneLinearImage(pixels: ImageBuffer(width: s.width, height: s.height, channels: 3, samples: s.pixels),
                                         clipMask: s.clipMask, clippedPixelCount: s.clippedPixelCount, encoding: s.color.encoding,
                                         exposure: s.exposure, provenance: s.provenance, masks: s.masks)
        return HalfDevelopedImage(image: image, rawIFD: s.raw, color: s.color, geometry: s.geometry, timings: s.timings)
    }

    /// `develop` by the streaming conversion, into `Float` (what the measurements use): the
    /// same values as the whole-image path, with no full-size intermediate; nil when the
    /// streaming conversion does not cover the file.
    static func developStreaming(_ dng: DNGFile, options: DevelopOptions, timings: StageTimings) throws -> DevelopedImage? {
        guard let s = try stream(dng, options: options, keepClipMask: true, timings: timings, as: Float.self,
                                 convert: { source, target in _ = target.initialize(from: source) }) else { return nil }
        let image = SceneLinearImage(pixels: ImageBuffer(width: s.width, height: s.height, channels: 3, samples: s.pixels),
                                     clipMask: s.clipMask, encoding: s.color.encoding, exposure: s.exposure, provenance: s.provenance,
                                     masks: s.masks)
        return DevelopedImage(image: image, dng: dng, rawIFD: s.raw, mapping: s.mapping, color: s.color, geometry: s.geometry,
                              timings: s.timings)
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
    }

    /// The streaming conversion into output samples of type `E`, made from each strip's
    /// `Float` values by `convert` (a row of RGB values into as many output samples).
    static func stream<E: BitwiseCopyable & Sendable>(
        _ dng: DNGFile, options: DevelopOptions, keepClipMask: Bool, timings initial: StageTimings, as _: E.Type,
        convert: @escaping @Sendable (UnsafeBufferPointer<Float>, UnsafeMutableBufferPointer<E>) -> Void
    ) throws -> Streamed<E>? {
        var timings = initial
        let path = dng.path
        let (raw, main, notes) = try selectImage(dng, options: options)
        // LinearRaw with three samples per pixel, or a 2×2 Bayer CFA (anything else, and
        // every error those checks would raise, is left to the whole-image path).
        let cfa = raw.photometric == Photometric.cfa ? raw.cfa : nil
        guard raw.photometric == Photometric.linearRaw ? raw.samplesPerPixel == 3
                : (raw.samplesPerPixel == 1 && cfa.map { BandDemosaicer.supports(cfa: $0, activeArea: raw.activeArea) } == true),
              raw.sampleFormat == 1, raw.planarConfiguration == 1, raw.bitsPerSample.allSatisfy({ $0 <= 16 }),
              try dng.opcodeListBytes(1, of: raw) == nil else { return nil }
        let spp = raw.samplesPerPixel
        var lists: [(Int, OpcodeList)] = []
        for number in [2, 3] {
            guard let bytes = try dng.opcodeListBytes(number, of: raw) else { continue }
            let list: OpcodeList
            do { list = try OpcodeList.parse(bytes, list: number == 2 ? .list2 : .list3) } catch { throw error.inFile(path) }
            guard list.entries.allSatisfy({ isPositionwise($0.opcode) }) else { return nil }
            lists.append((number, list))
        }
        try checkLimits(raw, path: path, options: options)
        let opcodeLists = lists
        let digestExpectation = try digestExpectation(dng, raw: raw, main: main, options: options)
        let digester = try digestExpectation?.makeDigester(dng)

        let linearization = try LinearizationPlan(ifd: raw, path: path)
        let area = raw.activeArea
        let color = try ColorTransform.make(metadata: dng.metadata, encoding: options.encoding,
                                            whiteBalance: options.whiteBalance, path: path)
        let exposure = try exposureScaling(options.exposure, metadata: dng.metadata, path: path)
        // Stage 3's size: the ActiveArea, or half of it for 2×2 superpixels.
        let binning = cfa != nil && options.demosaic == .superpixel ? 2 : 1
        let stage3Width = area.width / binning, stage3Height = area.height / binning
        let (geometryIFD, geometryBinning) = geometrySource(raw: raw, main: main, binning: binning)
        let plan = try ImageGeometry.plan(ifd: geometryIFD, orientation: dng.metadata.orientation, width: stage3Width,
                                          height: stage3Height, binning: geometryBinning, crop: options.crop,
                                          applyOrientation: options.applyOrientation, path: path)
        guard plan.scaledWidth == plan.crop.width, plan.scaledHeight == plan.crop.height else { return nil }
        let bayerPhase = cfa == nil ? nil : activeAreaBayerPhase(raw)

        // The hash reads the whole file on a thread of its own while the tiles are decoded
        // (it is needed only for the provenance record); each tile's pages leave resident
        // memory once it is done, and are read from the page cache.
        let file = dng.file
        let hashing = BackgroundValue { () -> (String, Double) in
            var seconds = 0.0
            let hex = measure(&seconds) { SHA256Digest.hex(of: file.data) }
            // The hash has touched every page of the file; drop them from resident memory
            // (blocks still to be decoded read theirs again from the page cache).
            file.releaseResidentPages()
            return (hex, seconds)
        }
        // However this function ends, the hashing thread is done before it returns (it reads
        // the file's mapping, which must outlive it, and the process must not exit under it).
        defer { _ = hashing.wait() }
        let matrix = ColorConversion.floatMatrix(color, exposure: exposure)
        let crop = plan.crop, orientation = plan.orientation
        let outWidth = plan.outputWidth, outHeight = plan.outputHeight
        // Every output pixel is written by `place` exactly once, so the output is not cleared
        // first (and its pages are touched only as the tiles arrive).
        var output = LargeBuffer.uninitialized(E.self, count: outWidth * outHeight * 3)
        var mask = [UInt8](repeating: 0, count: keepClipMask ? outWidth * outHeight : 0)
        let clipped = SharedCount()
        let reports = SharedStore<Int, OpcodeReport>()
        let clipping = options.opcodeClipping
        let start = DispatchTime.now().uptimeNanoseconds
        let covered = try output.withUnsafeMutableBufferPointer { outAll in
            try mask.withUnsafeMutableBufferPointer { maskAll in
                nonisolated(unsafe) let out = outAll.baseAddress!
                nonisolated(unsafe) let maskOut = keepClipMask ? maskAll.baseAddress : nil  // an empty array still has a base address
                let areaBounds = PixelRect(width: area.width, height: area.height)
                let opcodes = StreamingOpcodes(path: path, clipping: clipping, bayerPhase: bayerPhase, reports: reports)
                let list2 = opcodeLists.first { $0.0 == 2 }?.1, list3 = opcodeLists.first { $0.0 == 3 }?.1

                // A CFA image's Stage 2 mosaic is gathered whole (one Float and one clip byte per
                // sample); LinearRaw tiles go on through every step at once.
                var mosaic = cfa == nil ? [] : LargeBuffer.uninitialized(Float.self, count: area.width * area.height)
                var mosaicClip = [UInt8](repeating: 0, count: cfa == nil ? 0 : area.width * area.height)
                let decoded = try mosaic.withUnsafeMutableBufferPointer { mosaicAll in
                    try mosaicClip.withUnsafeMutableBufferPointer { mosaicClipAll in
                        // (nil for LinearRaw: an empty array still has a base address)
                        nonisolated(unsafe) let mosaicOut = cfa == nil ? nil : mosaicAll.baseAddress
                        nonisolated(unsafe) let mosaicClipOut = cfa == nil ? nil : mosaicClipAll.baseAddress
                        return try RawDecoder.forEachBlock(dng, ifd: raw, limits: options.limits, digester: digester) { region, samples, rowStride, fewBlocks in
                            // The block's pixels inside the ActiveArea, in ActiveArea coordinates.
                            let rows = (max(region.top, area.top) - area.top)..<(min(region.bottom, area.bottom) - area.top)
                            let columns = (max(region.left, area.left) - area.left)..<(min(region.right, area.right) - area.left)
                            guard !rows.isEmpty, !columns.isEmpty else { return }
                            nonisolated(unsafe) let first = samples + (rows.lowerBound + area.top - region.top) * rowStride
                                + (columns.lowerBound + area.left - region.left) * spp
                            // Strips of a few rows, so that each stays in the core's cache through
                            // every step; spread over the cores when there are too few blocks to be.
                            let stripCount = (rows.count + streamingStripRows - 1) / streamingStripRows
                            try Parallel.forEachChunkThrowing(count: fewBlocks ? stripCount : 1, minimumChunk: 1) { part in
                                let strips = fewBlocks ? part : 0..<stripCount
                                var values = ImageBuffer<Float>(width: columns.count, height: 0, channels: spp, samples: [])
                                var stripMask: [UInt8] = []
                                for k in strips {
                                    let top = rows.lowerBound + k * streamingStripRows
                                    let strip = top..<min(rows.upperBound, top + streamingStripRows)
                                    if values.height != strip.count {
                                        values = ImageBuffer(width: columns.count, height: strip.count, channels: spp, repeating: 0)
                                        stripMask = [UInt8](repeating: 0, count: columns.count * strip.count)
                                    }
                                    values.samples.withUnsafeMutableBufferPointer { v in
                                        stripMask.withUnsafeMutableBufferPointer { m in
                                            linearization.linearize(first + (top - rows.lowerBound) * rowStride, rowStride: rowStride,
                                                                    rows: strip, columns: columns, into: v.baseAddress!, mask: m.baseAddress!)
                                        }
                                    }
                                    if let list2 {
                                        try applyOpcodes(list2, number: 2, to: &values, bounds: areaBounds, row: strip.lowerBound,
                                                         column: columns.lowerBound, context: opcodes)
                                    }
                                    guard let mosaicOut, let mosaicClipOut else {
                                        if let list3 {
                                            try applyOpcodes(list3, number: 3, to: &values, bounds: areaBounds, row: strip.lowerBound,
                                                             column: columns.lowerBound, context: opcodes)
                                        }
                                        convertColor(&values, matrix)
                                        place(values, mask: stripMask, rows: strip, columns: columns, crop: crop, orientation: orientation,
                                              outWidth: outWidth, into: out, maskInto: maskOut, clipped: clipped, convert: convert)
                                        continue
                                    }
                                    values.samples.withUnsafeBufferPointer { v in
                                        for (i, r) in strip.enumerated() {
                                            let at = r * area.width + columns.lowerBound
                                            (mosaicOut + at).update(from: v.baseAddress! + i * columns.count, count: columns.count)
                                            for c in 0..<columns.count { mosaicClipOut[at + c] = stripMask[i * columns.count + c] }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                guard decoded, let cfa else { return decoded }

                // Stage 3 of a CFA image, band by band: demosaic, OpcodeList3, colour, output.
                let bands: BandDemosaicer
                do throws(DemosaicError) {
                    bands = try BandDemosaicer(values: mosaic, clip: mosaicClip, width: area.width, height: area.height, cfa: cfa,
                                               activeArea: area, ifd: raw.path, method: options.demosaic)
                } catch {
                    throw FileFailure(path: path, error)
                }
                let stage3Bounds = PixelRect(width: stage3Width, height: stage3Height)
                try Parallel.forEachChunkThrowing(count: bands.bandCount, minimumChunk: 1) { part in
                    var values = ImageBuffer<Float>(width: stage3Width, height: 0, channels: 3, samples: [])
                    var bandMask: [UInt8] = []
                    for b in part {
                        let rows = bands.rows(ofBand: b)
                        if values.height != rows.count {
                            values = ImageBuffer(width: stage3Width, height: rows.count, channels: 3, repeating: 0)
                            bandMask = [UInt8](repeating: 0, count: stage3Width * rows.count)
                        }
                        values.samples.withUnsafeMutableBufferPointer { v in
                            bandMask.withUnsafeMutableBufferPointer { m in bands.demosaic(band: b, into: v.baseAddress!, mask: m.baseAddress!) }
                        }
                        if let list3 {
                            try applyOpcodes(list3, number: 3, to: &values, bounds: stage3Bounds, row: rows.lowerBound, column: 0,
                                             context: opcodes)
                        }
                        convertColor(&values, matrix)
                        place(values, mask: bandMask, rows: rows, columns: 0..<stage3Width, crop: crop, orientation: orientation,
                              outWidth: outWidth, into: out, maskInto: maskOut, clipped: clipped, convert: convert)
                    }
                }
                return true
            }
        }
        guard covered else { return nil }
        let digestItems = try checkDigests(dng, raw: raw, main: main, expectation: digestExpectation,
                                           imageDigest: digester?.finish(), options: options)
        timings.streamed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let (sha, hashSeconds) = hashing.wait()
        timings.hash = hashSeconds
        dng.file.releaseResidentPages()
        let mapping = linearization.mapping
        var provenance = Self.provenance(dng: dng, raw: raw, mapping: mapping, color: color, sha256: sha)
        var processing = notes
        for number in [2, 3] {
            if number == 3 && cfa != nil { processing.append(MetadataItem("demosaic", .text(options.demosaic.rawValue))) }
            guard lists.contains(where: { $0.0 == number }) else { continue }
            let parts = reports[number].map(describe) ?? []
            processing.append(MetadataItem("opcodeList\(number)", .text(parts.isEmpty ? "empty" : parts.joined(separator: "; "))))
        }
        provenance.processing = processing + digestItems + plan.processingItems
        var masks: [SemanticMaskLayer] = []
        if options.includeMasks && !dng.maskIFDs.isEmpty {
            let grid = Stage3Grid.pipeline(activeArea: area, binning: binning, width: stage3Width, height: stage3Height)
            masks = try SemanticMasks.layers(dng, grid: grid, plan: plan, limits: options.limits)
        }
        return Streamed(pixels: output, width: outWidth, height: outHeight, clipMask: keepClipMask ? mask : nil,
                        clippedPixelCount: clipped.value, raw: raw, mapping: mapping, color: color, exposure: exposure, geometry: plan,
                        provenance: provenance, masks: masks, timings: timings)
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
    /// samples with `convert` and puts it where crop and orientation send it; counts clipped pixels.
    private static func place<E: BitwiseCopyable>(_ values: ImageBuffer<Float>, mask: [UInt8], rows: Range<Int>, columns: Range<Int>,
                                                  crop: PixelRect, orientation: Int, outWidth: Int, into out: UnsafeMutablePointer<E>,
                                                  maskInto maskOut: UnsafeMutablePointer<UInt8>?, clipped: SharedCount,
                                                  convert: (UnsafeBufferPointer<Float>, UnsafeMutableBufferPointer<E>) -> Void) {
        let width = values.width, cropWidth = crop.width, cropHeight = crop.height
        // The strip's columns inside the crop.
        let left = max(columns.lowerBound, crop.left), right = min(columns.upperBound, crop.right)
        guard left < right else { return }
        let n = right - left
        var count = 0
        withUnsafeTemporaryAllocation(of: E.self, capacity: n * 3) { halfRow in
            values.samples.withUnsafeBufferPointer { v in
                for (i, r) in rows.enumerated() where r >= crop.top && r < crop.bottom {
                    let y = r - crop.top, x0 = left - crop.left
                    let from = i * width + (left - columns.lowerBound)
                    let src = UnsafeBufferPointer(rebasing: v[(from * 3)..<((from + n) * 3)])
                    for x in 0..<n where mask[from + x] != 0 { count += 1 }
                    if orientation == 1 {
                        convert(src, UnsafeMutableBufferPointer(start: out + (y * outWidth + x0) * 3, count: n * 3))
                        if let maskOut {
                            for x in 0..<n { maskOut[y * outWidth + x0 + x] = mask[from + x] }
                        }
                        continue
                    }
                    convert(src, halfRow)
                    for x in 0..<n {
                        let (nx, ny) = ImageGeometry.orientedPosition(x: x0 + x, y: y, width: cropWidth, height: cropHeight,
                                                                     orientation: orientation)
                        let to = ny * outWidth + nx
                        out[3 * to] = halfRow[3 * x]
                        out[3 * to + 1] = halfRow[3 * x + 1]
                        out[3 * to + 2] = halfRow[3 * x + 2]
                        maskOut?[to] = mask[from + x]
                    }
                }
            }
        }
        clipped.add(count)
    }
}
