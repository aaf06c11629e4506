import Foundation
import Opcodes

/// A band of rows of one stage: `channels` interleaved values and one clip-mask byte per pixel.
struct Band {
    var values: ImageBuffer<Float>
    var mask: [UInt8]

    init(width: Int, channels: Int) {
        values = ImageBuffer(width: width, height: 0, channels: channels, samples: [])
        mask = []
    }

    /// Makes room for `rows` rows (the contents are for the caller to write).
    mutating func resize(rows: Int) {
        guard values.height != rows else { return }
        values = ImageBuffer(width: values.width, height: rows, channels: values.channels, repeating: 0)
        mask = [UInt8](repeating: 0, count: values.width * rows)
    }
}

/// A sink that collects the bands of a stage into one image, for a stage that needs more
/// than a band (demosaicing, area opcodes, TrimBounds). Bands from any thread write their
/// own rows (`PixelView`'s rule); each pixel must be written once.
struct StageCollector: Sendable {
    private let values: PixelView<Float>
    private let mask: PixelView<UInt8>

    /// Runs `body` with a collector over a `width` × `height` image of `planes` planes and
    /// returns the image and its clip mask, or nil when `body` returns false (nothing was
    /// collected).
    static func collect(width: Int, height: Int, planes: Int,
                        _ body: (StageCollector) throws -> Bool) rethrows -> (values: ImageBuffer<Float>, mask: [UInt8])? {
        // Every sample is written by a band, so the values are not cleared first.
        var values = LargeBuffer.uninitialized(Float.self, count: width * height * planes)
        var mask = [UInt8](repeating: 0, count: width * height)
        let complete = try values.withUnsafeMutableBufferPointer { v in
            try mask.withUnsafeMutableBufferPointer { m in
                try body(StageCollector(values: PixelView(v, width: width, height: height, channels: planes),
                                        mask: PixelView(m, width: width, height: height)))
            }
        }
        guard complete else { return nil }
        return (ImageBuffer(width: width, height: height, channels: planes, samples: values), mask)
    }

    /// `collect` into a Stage 2 or 3 image of `ifd`.
    static func collect(width: Int, height: Int, planes: Int, ifd: ImageIFD, mapping: LinearizationMapping,
                        _ body: (StageCollector) throws -> Bool) rethrows -> LinearImage? {
        try collect(width: width, height: height, planes: planes, body).map {
            LinearImage(ifd: ifd, values: $0.values, clipMask: $0.mask, mapping: mapping)
        }
    }

    /// Stores `band`, the image's `rows` × `columns`.
    func store(_ band: Band, rows: Range<Int>, columns: Range<Int>) {
        let n = columns.count, planes = values.channels
        band.values.samples.withUnsafeBufferPointer { v in
            band.mask.withUnsafeBufferPointer { m in
                for (i, r) in rows.enumerated() {
                    values.pixel(columns.lowerBound, r).update(from: v.baseAddress! + i * n * planes, count: n * planes)
                    mask.pixel(columns.lowerBound, r).update(from: m.baseAddress! + i * n, count: n)
                }
            }
        }
    }
}

/// What the output sink made: the output samples (cropped, scaled, oriented), the clip mask
/// on the same grid, and the size of the Stage 3 image it came from; or, when the output
/// went into an EXR as it was made, the writer (no samples).
struct SinkOutput<E: Sendable>: Sendable {
    var pixels: [E]
    var mask: [UInt8]
    var width: Int, height: Int
    var clippedPixelCount: Int
    var stage3Width: Int, stage3Height: Int
    var writer: (any StreamingImageWriter)? = nil
}

/// Starts the file the output sink writes into as the rows are made, given the geometry and
/// the Stage 3 size (see `Pipeline.convertToEXR`, `Pipeline.convertToHDF5`).
typealias StreamingStart = (GeometryPlan, _ stage3Width: Int, _ stage3Height: Int) throws -> any StreamingImageWriter

/// The end of every route: Stage 3 bands through OpcodeList3 (when it acts per pixel) and
/// the colour matrix into output samples of type `E`, placed where crop and orientation
/// send them; with DefaultScale resampling, the colour-converted image is collected and
/// resampled whole.
struct OutputSink<E: BitwiseCopyable & Sendable>: Sendable {
    let matrix: [Float]
    let keepClipMask: Bool
    let convert: @Sendable (UnsafeBufferPointer<Float>, UnsafeMutableBufferPointer<E>) -> Void
    /// When set, the output goes to a visitor as patches (`ImagePatch`, in `Float`) instead
    /// of into an image: `prepare` gets the output size first.
    var visitor: (prepare: ImageScan.Prepare, visit: ImageScan.Visitor)?
    /// When set (and `visitor` is not), the output goes into the image *and* its patches to
    /// this observer, before their conversion to `E`: a second sink in the same pass.
    var observer: (prepare: ImageScan.Prepare, visit: ImageScan.Visitor)?

    /// Allocates the output of `plan` for a `stage3Width` × `stage3Height` Stage 3 image and
    /// runs `body`, which must hand every Stage 3 pixel to the finisher once.
    ///
    /// - Parameter file: when given (and no DefaultScale resampling applies), the output goes
    ///   into the file it starts, row by row, instead of into an image.
    func run(plan: GeometryPlan, stage3Width: Int, stage3Height: Int, list3: OpcodeList?, opcodes: Pipeline.StreamingOpcodes,
             file: StreamingStart? = nil, _ body: (BandFinisher<E>) throws -> Void) throws -> SinkOutput<E> {
        let bounds = PixelRect(width: stage3Width, height: stage3Height)
        if plan.scaledWidth != plan.crop.width || plan.scaledHeight != plan.crop.height {
            // DefaultScale: the colour-converted Stage 3 image whole, then crop, resample, orient.
            let converted = try StageCollector.collect(width: stage3Width, height: stage3Height, planes: 3) { collector in
                try body(BandFinisher(list3: list3, bounds: bounds, opcodes: opcodes, matrix: matrix, target: .collect(collector)))
                return true
            }!
            let moved = ImageGeometry.apply(plan, to: converted.values)
            let movedMask = ImageGeometry.apply(plan, toMask: ImageBuffer(width: stage3Width, height: stage3Height, channels: 1,
                                                                           samples: converted.mask)).samples
            let clippedCount = movedMask.reduce(0) { $0 + ($1 != 0 ? 1 : 0) }
            if let visitor {
                try visitor.prepare(moved.width, moved.height)
                try ImagePatch.visitBands(of: moved.samples, mask: movedMask, width: moved.width, height: moved.height, visitor.visit)
                return SinkOutput(pixels: [], mask: [], width: moved.width, height: moved.height, clippedPixelCount: clippedCount,
                                  stage3Width: stage3Width, stage3Height: stage3Height)
            }
            if let observer {
                try observer.prepare(moved.width, moved.height)
                try ImagePatch.visitBands(of: moved.samples, mask: movedMask, width: moved.width, height: moved.height, observer.visit)
            }
            var out = LargeBuffer.uninitialized(E.self, count: moved.samples.count)
            moved.samples.withUnsafeBufferPointer { s in out.withUnsafeMutableBufferPointer { convert(s, $0) } }
            return SinkOutput(pixels: out, mask: movedMask, width: moved.width, height: moved.height,
                              clippedPixelCount: clippedCount,
                              stage3Width: stage3Width, stage3Height: stage3Height)
        }
        let outWidth = plan.outputWidth, outHeight = plan.outputHeight
        if let visitor {
            try visitor.prepare(outWidth, outHeight)
            let clipped = SharedCount()
            try body(BandFinisher(list3: list3, bounds: bounds, opcodes: opcodes, matrix: matrix,
                                  target: .visit(visitor.visit, plan: plan, clipped: clipped)))
            return SinkOutput(pixels: [], mask: [], width: outWidth, height: outHeight, clippedPixelCount: clipped.value,
                              stage3Width: stage3Width, stage3Height: stage3Height)
        }
        try observer?.prepare(outWidth, outHeight)
        if let file {
            precondition(E.self == Float16.self, "a file is written from half floats")
            let writer = try file(plan, stage3Width, stage3Height)
            let clipped = SharedCount()
            try body(BandFinisher(list3: list3, bounds: bounds, opcodes: opcodes, matrix: matrix,
                                  target: .file(writer, plan: plan, clipped: clipped, convert: convert, observe: observer?.visit)))
            return SinkOutput(pixels: [], mask: [], width: outWidth, height: outHeight, clippedPixelCount: clipped.value,
                              stage3Width: stage3Width, stage3Height: stage3Height, writer: writer)
        }
        // Every output pixel is written exactly once, so the output is not cleared first (and
        // its pages are touched only as the bands arrive).
        var out = LargeBuffer.uninitialized(E.self, count: outWidth * outHeight * 3)
        var mask = [UInt8](repeating: 0, count: keepClipMask ? outWidth * outHeight : 0)
        let clipped = SharedCount()
        try out.withUnsafeMutableBufferPointer { o in
            try mask.withUnsafeMutableBufferPointer { m in
                let target = BandFinisher<E>.Target.output(out: PixelView(o, width: outWidth, height: outHeight, channels: 3),
                                                           mask: keepClipMask ? PixelView(m, width: outWidth, height: outHeight) : nil,
                                                           plan: plan, clipped: clipped, convert: convert, observe: observer?.visit)
                try body(BandFinisher(list3: list3, bounds: bounds, opcodes: opcodes, matrix: matrix, target: target))
            }
        }
        return SinkOutput(pixels: out, mask: mask, width: outWidth, height: outHeight, clippedPixelCount: clipped.value,
                          stage3Width: stage3Width, stage3Height: stage3Height)
    }
}

/// Finishes Stage 3 bands for the output sink (see `OutputSink`); safe to call from any
/// thread, each band once (each band's rows of the target are its own: `PixelView`'s rule).
struct BandFinisher<E: BitwiseCopyable & Sendable>: Sendable {
    enum Target {
        case output(out: PixelView<E>, mask: PixelView<UInt8>?, plan: GeometryPlan, clipped: SharedCount,
                    convert: @Sendable (UnsafeBufferPointer<Float>, UnsafeMutableBufferPointer<E>) -> Void,
                    observe: ImageScan.Visitor?)
        case collect(StageCollector)
        case visit(ImageScan.Visitor, plan: GeometryPlan, clipped: SharedCount)
        case file(any StreamingImageWriter, plan: GeometryPlan, clipped: SharedCount,
                 convert: @Sendable (UnsafeBufferPointer<Float>, UnsafeMutableBufferPointer<E>) -> Void,
                 observe: ImageScan.Visitor?)
    }
    let list3: OpcodeList?
    let bounds: PixelRect
    let opcodes: Pipeline.StreamingOpcodes
    let matrix: [Float]
    let target: Target

    /// OpcodeList3 (when given), colour, and the output of `band`: Stage 3 `rows` × `columns`.
    func finish(_ band: inout Band, rows: Range<Int>, columns: Range<Int>) throws {
        if let list3 {
            try Pipeline.applyOpcodes(list3, number: 3, to: &band.values, bounds: bounds, row: rows.lowerBound,
                                      column: columns.lowerBound, context: opcodes)
        }
        Pipeline.convertColor(&band.values, matrix)
        switch target {
        case .collect(let collector):
            collector.store(band, rows: rows, columns: columns)
        case .output(let out, let mask, let plan, let clipped, let convert, let observe):
            try Pipeline.place(band.values, mask: band.mask, rows: rows, columns: columns, crop: plan.crop,
                           orientation: plan.orientation, into: out, maskInto: mask, clipped: clipped,
                           convert: convert, observe: observe)
        case .visit(let visit, let plan, let clipped):
            try Pipeline.visitPlaced(band.values, mask: band.mask, rows: rows, columns: columns, crop: plan.crop,
                                     orientation: plan.orientation, clipped: clipped, visit: visit)
        case .file(let writer, let plan, let clipped, let convert, let observe):
            try Pipeline.visitPlaced(band.values, mask: band.mask, rows: rows, columns: columns, crop: plan.crop,
                                     orientation: plan.orientation, clipped: clipped) { patch in
                try observe?(patch)
                let r = patch.rect, n = r.width
                let rows = writer.rows(r.top..<r.bottom)
                for y in r.top..<r.bottom {
                    let from = (y - r.top) * patch.rowStride
                    let row = UnsafeMutableRawPointer(rows.rgb(y) + 3 * r.left).assumingMemoryBound(to: E.self)
                    convert(UnsafeBufferPointer(start: patch.values + 3 * from, count: 3 * n),
                            UnsafeMutableBufferPointer(start: row, count: 3 * n))
                    rows.setClip(y, from: r.left, patch.mask.map { $0 + from }, count: n)
                }
                try writer.finished(rows: r.top..<r.bottom, pixels: n)
            }
        }
    }
}

/// Where the decoder's strips go: on to the output, into a collector, or into the mosaic window.
enum StripTarget<E: BitwiseCopyable & Sendable>: Sendable {
    case finish(BandFinisher<E>)
    case collect(StageCollector)
    case window(MosaicWindow)
}

/// A sink that keeps a window of the Stage 2 mosaic's rows — those the next demosaicing band
/// reads and those decoded since — instead of the whole mosaic: rows arrive a row of blocks
/// at a time (`store` from any thread, then `complete`), and `slide` drops the rows no band
/// will read again.
// Safe because bands store their own rows; complete and slide run on the decoding thread between groups of blocks.
final class MosaicWindow: @unchecked Sendable {
    let width: Int, capacity: Int
    /// Mosaic row `r` (ActiveArea coordinates) is window row `r − top`.
    private(set) var top = 0
    /// Rows `top..<frontier` are complete.
    private(set) var frontier = 0
    /// The window's rows, `capacity` of them (window row `r − top` holds mosaic row `r`).
    let values: PixelView<Float>
    let clip: PixelView<UInt8>
    /// Per mosaic row, once complete: whether it holds a clipped sample.
    private(set) var rowHasClip: [Bool]

    init(width: Int, height: Int, capacity: Int) {
        self.width = width
        self.capacity = capacity
        values = PixelView(.allocate(capacity: width * capacity), width: width, height: capacity)
        clip = PixelView(.allocate(capacity: width * capacity), width: width, height: capacity)
        rowHasClip = [Bool](repeating: false, count: height)
    }

    deinit {
        values.base.deallocate()
        clip.base.deallocate()
    }

    /// Stores a strip: mosaic `rows` × `columns`, one plane.
    func store(_ band: Band, rows: Range<Int>, columns: Range<Int>) {
        precondition(rows.lowerBound >= frontier && rows.upperBound - top <= capacity, "a strip outside the mosaic window")
        let n = columns.count
        band.values.samples.withUnsafeBufferPointer { v in
            band.mask.withUnsafeBufferPointer { m in
                for (i, r) in rows.enumerated() {
                    values.pixel(columns.lowerBound, r - top).update(from: v.baseAddress! + i * n, count: n)
                    clip.pixel(columns.lowerBound, r - top).update(from: m.baseAddress! + i * n, count: n)
                }
            }
        }
    }

    /// Rows up to `upTo` have been stored.
    func complete(upTo: Int) {
        for r in frontier..<upTo { rowHasClip[r] = RowClipIndex.holdsClip(clip.row(r - top), width: width) }
        frontier = upTo
    }

    /// Drops the rows above `newTop` (no band reads them any more).
    func slide(to newTop: Int) {
        precondition(newTop >= top && newTop <= frontier)
        guard newTop > top else { return }
        let kept = frontier - newTop
        // The kept rows may overlap their new place: memmove.
        memmove(values.base, values.row(newTop - top), kept * width * MemoryLayout<Float>.stride)
        memmove(clip.base, clip.row(newTop - top), kept * width)
        top = newTop
    }
}
