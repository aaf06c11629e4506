import ImageCore

/// Area-averaging reduction of single-channel images (box filter with exact fractional
/// footprints), done as a horizontal then a vertical pass, rows in parallel.
enum AreaResample {
    /// For each target index along one axis: the first source index and the weights of the
    /// source samples its footprint covers (summing to 1).
    struct Taps {
        var first: [Int]
        var offset: [Int]
        var weights: [Float]

        init(source: Int, target: Int) {
            first = []
            offset = [0]
            weights = []
            let step = Double(source) / Double(target)
            for j in 0..<target {
                let a = Double(j) * step, b = Double(j + 1) * step
                let start = Int(a.rounded(.down)), end = min(source, Int(b.rounded(.up)))
                first.append(start)
                for i in start..<max(start + 1, end) {
                    let w = min(b, Double(i + 1)) - max(a, Double(i))
                    weights.append(Float(max(0, w) / step))
                }
                offset.append(weights.count)
            }
        }
    }

    /// Mean of `values` (`width × height`) over the footprint of each target pixel.
    static func average(_ values: [Float], width: Int, height: Int, targetWidth: Int, targetHeight: Int) -> [Float] {
        let h = Taps(source: width, target: targetWidth), v = Taps(source: height, target: targetHeight)
        let rows = mapRows(values, width: width, rows: height, into: targetWidth, fill: 0, minimumChunk: 32) { s, d in
            for j in 0..<targetWidth {
                var sum: Float = 0
                let f = h.first[j]
                for k in h.offset[j]..<h.offset[j + 1] { sum += s[f + k - h.offset[j]] * h.weights[k] }
                d[j] = sum
            }
        }
        return mapColumns(rows, width: targetWidth, taps: v, fill: 0) { s, w, d in
            for x in 0..<targetWidth { d[x] += s[x] * w }
        }
    }

    /// Whether any source pixel with a share in each target pixel's footprint is set.
    static func any(_ flags: [Bool], width: Int, height: Int, targetWidth: Int, targetHeight: Int) -> [Bool] {
        let h = Taps(source: width, target: targetWidth), v = Taps(source: height, target: targetHeight)
        let rows = mapRows(flags, width: width, rows: height, into: targetWidth, fill: false, minimumChunk: 32) { s, d in
            for j in 0..<targetWidth {
                let f = h.first[j]
                d[j] = (h.offset[j]..<h.offset[j + 1]).contains { k in h.weights[k] > 0 && s[f + k - h.offset[j]] }
            }
        }
        return mapColumns(rows, width: targetWidth, taps: v, fill: false) { s, w, d in
            guard w > 0 else { return }
            for x in 0..<targetWidth where s[x] { d[x] = true }
        }
    }

    /// The horizontal pass: `body` turns each source row (`width` values) into a row of
    /// `targetWidth` values; rows in parallel.
    private static func mapRows<T: Sendable>(_ source: [T], width: Int, rows: Int, into targetWidth: Int, fill: T,
                                            minimumChunk: Int,
                                            _ body: @Sendable (UnsafePointer<T>, UnsafeMutablePointer<T>) -> Void) -> [T] {
        var out = [T](repeating: fill, count: targetWidth * rows)
        source.withUnsafeBufferPointer { srcAll in
            out.withUnsafeMutableBufferPointer { dstAll in
                // Safe because each chunk writes its own rows of the destination; the source is only read.
                nonisolated(unsafe) let src = srcAll, dst = dstAll
                Parallel.forEachChunk(count: rows, minimumChunk: minimumChunk) { range in
                    for y in range { body(src.baseAddress! + y * width, dst.baseAddress! + y * targetWidth) }
                }
            }
        }
        return out
    }

    /// The vertical pass: each target row starts at `fill` and `accumulate` adds every
    /// source row of its footprint with that row's weight; target rows in parallel.
    private static func mapColumns<T: Sendable>(_ source: [T], width: Int, taps v: Taps, fill: T,
                                               _ accumulate: @Sendable (UnsafePointer<T>, Float, UnsafeMutablePointer<T>) -> Void) -> [T] {
        let targetHeight = v.first.count
        var out = [T](repeating: fill, count: width * targetHeight)
        source.withUnsafeBufferPointer { srcAll in
            out.withUnsafeMutableBufferPointer { dstAll in
                // Safe because each chunk writes its own rows of the destination; the source is only read.
                nonisolated(unsafe) let src = srcAll, dst = dstAll
                Parallel.forEachChunk(count: targetHeight, minimumChunk: 16) { range in
                    for j in range {
                        let d = dst.baseAddress! + j * width
                        let f = v.first[j]
                        for k in v.offset[j]..<v.offset[j + 1] {
                            accumulate(src.baseAddress! + (f + k - v.offset[j]) * width, v.weights[k], d)
                        }
                    }
                }
            }
        }
        return out
    }
}
