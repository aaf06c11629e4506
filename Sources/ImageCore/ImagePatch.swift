import Synchronization

/// A rectangle of a scene-linear image handed from a producer (the conversion, or an image
/// in memory) to a consumer (the measurements): RGB `Float` values interleaved, rows
/// `rowStride` pixels apart, and one clip byte per pixel (bit c set when camera channel c
/// reached white), nil when nothing is clipped or clipping is not known. Valid only during
/// the call it is passed to.
public struct ImagePatch {
    /// Where the patch lies, in output pixel coordinates.
    public let rect: PixelRect
    public let values: UnsafePointer<Float>
    public let mask: UnsafePointer<UInt8>?
    /// Pixels from the start of one row to the start of the next (values: 3 floats each).
    public let rowStride: Int

    public init(rect: PixelRect, values: UnsafePointer<Float>, mask: UnsafePointer<UInt8>?, rowStride: Int) {
        self.rect = rect
        self.values = values
        self.mask = mask
        self.rowStride = rowStride
    }

    /// The patch's part inside `bounds` (same pixels, a smaller rectangle), nil when none.
    public func clipped(to bounds: PixelRect) -> ImagePatch? {
        let r = PixelRect(top: max(rect.top, bounds.top), left: max(rect.left, bounds.left),
                          bottom: min(rect.bottom, bounds.bottom), right: min(rect.right, bounds.right))
        guard r.top < r.bottom, r.left < r.right else { return nil }
        let offset = (r.top - rect.top) * rowStride + (r.left - rect.left)
        return ImagePatch(rect: r, values: values + 3 * offset, mask: mask.map { $0 + offset }, rowStride: rowStride)
    }
}

/// Passes over a whole image: each call of `pass` first calls `prepare` once with the
/// image's width and height, then the visitor with patches that together hold every pixel
/// once, from any number of threads at a time. Calling it again makes another pass over the
/// same values (an image in memory is read again; a DNG is developed again).
public struct ImageScan: Sendable {
    public typealias Visitor = @Sendable (ImagePatch) throws -> Void
    /// Called with the image's width and height before the first patch.
    public typealias Prepare = @Sendable (_ width: Int, _ height: Int) throws -> Void
    public let pass: @Sendable (_ prepare: @escaping Prepare, _ visit: @escaping Visitor) throws -> Void

    public init(_ pass: @escaping @Sendable (_ prepare: @escaping Prepare, _ visit: @escaping Visitor) throws -> Void) {
        self.pass = pass
    }
}

extension SceneLinearImage {
    /// Rows per patch when an image in memory is scanned.
    public static let scanRows = 8

    /// Passes over the image in memory.
    public var scan: ImageScan {
        ImageScan { prepare, visit in
            try prepare(self.width, self.height)
            try self.visitPatches(visit)
        }
    }

    /// A pass over the image in memory: bands of `scanRows` rows, in parallel.
    public func visitPatches(_ visit: @escaping @Sendable (ImagePatch) throws -> Void) throws {
        try ImagePatch.visitBands(of: pixels.samples, mask: clipMask, width: width, height: height, visit)
    }
}

extension ImagePatch {
    /// Visits an RGB image in memory (`values` interleaved, `mask` one byte per pixel or
    /// nil) in bands of `SceneLinearImage.scanRows` rows, in parallel.
    public static func visitBands(of values: [Float], mask: [UInt8]?, width: Int, height: Int,
                                  _ visit: @escaping @Sendable (ImagePatch) throws -> Void) throws {
        let rows = SceneLinearImage.scanRows
        try Parallel.forEachChunkThrowing(count: (height + rows - 1) / rows, minimumChunk: 4) { chunk in
            try values.withUnsafeBufferPointer { v in
                for b in chunk {
                    let top = b * rows, bottom = min(height, top + rows)
                    let rect = PixelRect(top: top, left: 0, bottom: bottom, right: width)
                    if let mask {
                        try mask.withUnsafeBufferPointer { m in
                            try visit(ImagePatch(rect: rect, values: v.baseAddress! + 3 * top * width, mask: m.baseAddress! + top * width,
                                                 rowStride: width))
                        }
                    } else {
                        try visit(ImagePatch(rect: rect, values: v.baseAddress! + 3 * top * width, mask: nil, rowStride: width))
                    }
                }
            }
        }
    }
}

extension ImagePatch {
    /// Fills a band of whole rows: `rows` of the image into `values` (RGB `Float`,
    /// interleaved, rows `width` pixels apart) and, when the image has a clip mask, `mask`.
    /// The fewest rows that are both whole blocks of `blockRows` rows and whole bands of
    /// `SceneLinearImage.scanRows`: what `visitBands` asks `fill` for at a time, so that a
    /// file's block is decoded once per pass.
    public static func fillRows(blockRows: Int) -> Int {
        let block = max(1, blockRows)
        var rows = block
        while rows % SceneLinearImage.scanRows != 0 { rows += block }
        return rows
    }

    public typealias BandFill = @Sendable (_ rows: Range<Int>, _ values: UnsafeMutablePointer<Float>,
                                           _ mask: UnsafeMutablePointer<UInt8>?) throws -> Void

    /// Visits an image that is not held as `Float` RGB (e.g. decoded planes of half floats) in
    /// the bands `visitBands(of:)` uses — `SceneLinearImage.scanRows` rows, in parallel —
    /// each made by `fill` into a buffer of the thread's own. For a file stored in blocks of
    /// `blockRows` rows, `fill` is asked for `fillRows(blockRows:)` rows at a time (whole
    /// blocks and whole bands; the last group may be shorter), each then visited band by band:
    /// the same bands, the same values.
    public static func visitBands(width: Int, height: Int, hasMask: Bool, blockRows: Int = SceneLinearImage.scanRows,
                                  fill: @escaping BandFill, _ visit: @escaping @Sendable (ImagePatch) throws -> Void) throws {
        let rows = SceneLinearImage.scanRows
        let group = fillRows(blockRows: blockRows)
        try Parallel.forEachChunkThrowing(count: (height + group - 1) / group, minimumChunk: max(1, 4 * rows / group)) { chunk in
            try withUnsafeTemporaryAllocation(of: Float.self, capacity: 3 * group * width) { values in
                try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: hasMask ? group * width : 0) { mask in
                    for g in chunk {
                        let top = g * group, bottom = min(height, top + group)
                        try fill(top..<bottom, values.baseAddress!, hasMask ? mask.baseAddress! : nil)
                        for band in stride(from: top, to: bottom, by: rows) {
                            let offset = (band - top) * width
                            try visit(ImagePatch(rect: PixelRect(top: band, left: 0, bottom: min(bottom, band + rows), right: width),
                                                 values: UnsafePointer(values.baseAddress! + 3 * offset),
                                                 mask: hasMask ? UnsafePointer(mask.baseAddress! + offset) : nil, rowStride: width))
                        }
                    }
                }
            }
        }
    }
}

/// Per-thread accumulators for a pass whose visitor runs on many threads at once: each call
/// borrows one accumulator (made on demand) for its whole duration, so no two threads ever
/// share one; `all` hands back every accumulator made, for merging once the pass is over.
public final class AccumulatorPool<A: AnyObject & Sendable>: Sendable {
    private struct State { var free: [A] = []; var all: [A] = [] }
    private let state = Mutex(State())
    private let make: @Sendable () -> A

    public init(_ make: @escaping @Sendable () -> A) { self.make = make }

    public func with<R>(_ body: (A) throws -> R) rethrows -> R {
        let a = state.withLock { s -> A? in s.free.popLast() } ?? {
            let fresh = make()
            state.withLock { $0.all.append(fresh) }
            return fresh
        }()
        defer { state.withLock { $0.free.append(a) } }
        return try body(a)
    }

    /// Every accumulator made (call once the pass is over).
    public var all: [A] { state.withLock { $0.all } }
}
