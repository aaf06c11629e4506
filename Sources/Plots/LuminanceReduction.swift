import ImageCore
import Synchronization

/// Luminance already at an EV map's size, with what the map reports about the full image:
/// what `EVMap` draws when the image was never held whole (`LuminanceReduction`).
public struct ReducedLuminance: Sendable {
    /// The image's size.
    public var sourceWidth: Int, sourceHeight: Int
    /// The map's size (the image's when it needs no reduction).
    public var width: Int, height: Int
    /// Mean luminance over each map pixel's footprint, `width × height`, row by row.
    public var values: [Float]
    /// Map pixels with at least one clipped image pixel in their footprint; nil when the
    /// image has no clip mask.
    public var clipped: [Bool]?
    /// Image pixels clipped, and with luminance ≤ 0 (no logarithm).
    public var clippedCount: Int, noValueCount: Int

    public var isReduced: Bool { width != sourceWidth || height != sourceHeight }
}

/// Reduces an image's luminance to an EV map's size while its patches pass by (any order,
/// any thread): each map pixel gets the mean of the luminance over its exact footprint
/// (box filter with fractional edges, as `EVMap` reduces a whole image), a map pixel is
/// clipped when any image pixel with a share in it is. Sums are in `Double`, so the result
/// equals the whole-image reduction (sums in `Float`) to `Float` precision, and does not
/// depend on the order patches come in beyond that.
public final class LuminanceReduction: Sendable {
    public let sourceWidth: Int, sourceHeight: Int
    public let width: Int, height: Int
    /// Per image column (row): the first map column (row) it falls in, its share there, and
    /// its share in the next one (0 when it lies in one map pixel only).
    private let columns: [Share], rows: [Share]
    private let parts: AccumulatorPool<Part>

    struct Share: Sendable {
        var first: Int
        var weight: Double
        var next: Double
    }

    /// One worker's sums.
    // Safe because each worker writes its own Part; they are read after the workers are done.
    private final class Part: @unchecked Sendable {
        var sums: [Double]
        var clipped: [Bool]
        var clippedCount = 0, noValueCount = 0, anyMask = false
        init(count: Int) {
            sums = [Double](repeating: 0, count: count)
            clipped = [Bool](repeating: false, count: count)
        }
    }

    /// A reduction of a `sourceWidth × sourceHeight` image for a map whose longest side is
    /// at most `maxSize` (`EVMap.maxSize`).
    public init(sourceWidth: Int, sourceHeight: Int, maxSize: Int) {
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        let size = EVMap.mapSize(width: sourceWidth, height: sourceHeight, maxSize: maxSize)
        width = size.width
        height = size.height
        columns = Self.shares(source: sourceWidth, target: width)
        rows = Self.shares(source: sourceHeight, target: height)
        let count = size.width * size.height
        parts = AccumulatorPool { Part(count: count) }
    }

    /// The shares of each source index in the target pixels whose footprints (a step of
    /// source / target indices each) cover it: one or two (a step is at least one index).
    static func shares(source: Int, target: Int) -> [Share] {
        guard source > 0, target > 0 else { return [] }
        let step = Double(source) / Double(target)
        return (0..<source).map { i in
            let j = min(target - 1, Int((Double(i) / step).rounded(.down)))
            let end = Double(j + 1) * step  // the right edge of target pixel j
            let inFirst = min(1, max(0, end - Double(i)))
            let first = inFirst / step
            let next = j + 1 < target ? (1 - inFirst) / step : 0
            return Share(first: j, weight: first, next: next)
        }
    }

    /// Takes a patch's pixels in.
    public func add(_ patch: ImagePatch) {
        let weights = SIMD3<Float>(Rec2020.luminanceWeights)
        let columns = self.columns, rows = self.rows, mapWidth = width
        parts.with { part in
            part.sums.withUnsafeMutableBufferPointer { sums in
                part.clipped.withUnsafeMutableBufferPointer { clipped in
                    var clippedCount = 0, noValue = 0
                    for y in patch.rect.top..<patch.rect.bottom {
                        let offset = (y - patch.rect.top) * patch.rowStride
                        let p = patch.values + 3 * offset
                        let mask = patch.mask.map { $0 + offset }
                        let row = rows[y]
                        for x in 0..<patch.rect.width {
                            let c = columns[patch.rect.left + x]
                            let lum = p[3 * x] * weights.x + p[3 * x + 1] * weights.y + p[3 * x + 2] * weights.z
                            if !(lum > 0) { noValue += 1 }
                            let v = Double(lum)
                            let i = row.first * mapWidth + c.first
                            sums[i] += v * c.weight * row.weight
                            if c.next > 0 { sums[i + 1] += v * c.next * row.weight }
                            if row.next > 0 {
                                sums[i + mapWidth] += v * c.weight * row.next
                                if c.next > 0 { sums[i + mapWidth + 1] += v * c.next * row.next }
                            }
                            if let mask, mask[x] != 0 {
                                clippedCount += 1
                                clipped[i] = true
                                if c.next > 0 { clipped[i + 1] = true }
                                if row.next > 0 {
                                    clipped[i + mapWidth] = true
                                    if c.next > 0 { clipped[i + mapWidth + 1] = true }
                                }
                            }
                        }
                    }
                    part.clippedCount += clippedCount
                    part.noValueCount += noValue
                    if patch.mask != nil { part.anyMask = true }
                }
            }
        }
    }

    /// The map, once every patch is in.
    public func result() -> ReducedLuminance {
        let all = parts.all
        var sums = [Double](repeating: 0, count: width * height)
        var clipped = [Bool](repeating: false, count: width * height)
        var clippedCount = 0, noValue = 0, anyMask = false
        for part in all {
            for i in sums.indices {
                sums[i] += part.sums[i]
                if part.clipped[i] { clipped[i] = true }
            }
            clippedCount += part.clippedCount
            noValue += part.noValueCount
            anyMask = anyMask || part.anyMask
        }
        return ReducedLuminance(sourceWidth: sourceWidth, sourceHeight: sourceHeight, width: width, height: height,
                                values: sums.map { Float($0) }, clipped: anyMask ? clipped : nil, clippedCount: clippedCount,
                                noValueCount: noValue)
    }
}
