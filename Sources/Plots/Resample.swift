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
        var rows = [Float](repeating: 0, count: targetWidth * height)
        values.withUnsafeBufferPointer { srcAll in
            rows.withUnsafeMutableBufferPointer { dstAll in
                nonisolated(unsafe) let src = srcAll, dst = dstAll
                Parallel.forEachChunk(count: height, minimumChunk: 32) { range in
                    for y in range {
                        let s = src.baseAddress! + y * width, d = dst.baseAddress! + y * targetWidth
                        for j in 0..<targetWidth {
                            var sum: Float = 0
                            let f = h.first[j]
                            for k in h.offset[j]..<h.offset[j + 1] { sum += s[f + k - h.offset[j]] * h.weights[k] }
                            d[j] = sum
                        }
                    }
                }
            }
        }
        var out = [Float](repeating: 0, count: targetWidth * targetHeight)
        rows.withUnsafeBufferPointer { srcAll in
            out.withUnsafeMutableBufferPointer { dstAll in
                nonisolated(unsafe) let src = srcAll, dst = dstAll
                Parallel.forEachChunk(count: targetHeight, minimumChunk: 16) { range in
                    for j in range {
                        let d = dst.baseAddress! + j * targetWidth
                        for x in 0..<targetWidth { d[x] = 0 }
                        let f = v.first[j]
                        for k in v.offset[j]..<v.offset[j + 1] {
                            let w = v.weights[k]
                            let s = src.baseAddress! + (f + k - v.offset[j]) * targetWidth
                            for x in 0..<targetWidth { d[x] += s[x] * w }
                        }
                    }
                }
            }
        }
        return out
    }

    /// Whether any source pixel with a share in each target pixel's footprint is set.
    static func any(_ flags: [Bool], width: Int, height: Int, targetWidth: Int, targetHeight: Int) -> [Bool] {
        let h = Taps(source: width, target: targetWidth), v = Taps(source: height, target: targetHeight)
        var rows = [Bool](repeating: false, count: targetWidth * height)
        flags.withUnsafeBufferPointer { srcAll in
            rows.withUnsafeMutableBufferPointer { dstAll in
                nonisolated(unsafe) let src = srcAll, dst = dstAll
                Parallel.forEachChunk(count: height, minimumChunk: 32) { range in
                    for y in range {
                        let s = src.baseAddress! + y * width, d = dst.baseAddress! + y * targetWidth
                        for j in 0..<targetWidth {
                            var set = false
                            let f = h.first[j]
                            for k in h.offset[j]..<h.offset[j + 1] where h.weights[k] > 0 && s[f + k - h.offset[j]] {
                                set = true
                                break
                            }
                            d[j] = set
                        }
                    }
                }
            }
        }
        var out = [Bool](repeating: false, count: targetWidth * targetHeight)
        rows.withUnsafeBufferPointer { srcAll in
            out.withUnsafeMutableBufferPointer { dstAll in
                nonisolated(unsafe) let src = srcAll, dst = dstAll
                Parallel.forEachChunk(count: targetHeight, minimumChunk: 16) { range in
                    for j in range {
                        let d = dst.baseAddress! + j * targetWidth
                        let f = v.first[j]
                        for k in v.offset[j]..<v.offset[j + 1] where v.weights[k] > 0 {
                            let s = src.baseAddress! + (f + k - v.offset[j]) * targetWidth
                            for x in 0..<targetWidth where s[x] { d[x] = true }
                        }
                    }
                }
            }
        }
        return out
    }
}
