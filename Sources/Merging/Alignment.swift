import Engine
import Foundation
import ImageCore

/// Translation of hand-held frames (`merge --align`, docs/merge.md): the whole-pixel shift
/// (dx, dy) that puts frame pixel (x + dx, y + dy) on reference pixel (x, y), found by a
/// coarse-to-fine search on exposure-normalised log images.
public enum FrameAlignment {
    /// A frame reduced to blocks: log₂ of the mean of each block's samples divided by the
    /// frame's exposure, and whether the block can be compared (no clipped sample, its mean
    /// between 0.002 and 0.9 of white).
    struct Proxy {
        var values: [Float]
        var valid: [Bool]
        var width: Int, height: Int, block: Int
    }

    static func proxy(_ frame: BracketSamples, width: Int, height: Int, planes: Int, block: Int) -> Proxy {
        let w = width / block, h = height / block
        var values = [Float](repeating: 0, count: w * h), valid = [Bool](repeating: false, count: w * h)
        let rowLength = width * planes
        values.withUnsafeMutableBufferPointer { vOut in
            valid.withUnsafeMutableBufferPointer { okOut in
                // Safe because each chunk writes its own block rows.
                nonisolated(unsafe) let vOut = vOut, okOut = okOut
                Parallel.forEachChunk(count: h, minimumChunk: 4) { blockRows in
                    let row = UnsafeMutablePointer<Float>.allocate(capacity: rowLength)
                    let clip = UnsafeMutablePointer<UInt8>.allocate(capacity: width)
                    defer { row.deallocate(); clip.deallocate() }
                    var sums = [Double](repeating: 0, count: w), clipped = [Bool](repeating: false, count: w)
                    for by in blockRows {
                        for i in 0..<w { sums[i] = 0; clipped[i] = false }
                        for y in (by * block)..<((by + 1) * block) {
                            frame.row(y, row, clip, nil)
                            for bx in 0..<w {
                                var s = 0.0
                                for x in (bx * block)..<((bx + 1) * block) {
                                    if clip[x] != 0 { clipped[bx] = true }
                                    for p in 0..<planes { s += Double(row[x * planes + p]) }
                                }
                                sums[bx] += s
                            }
                        }
                        let n = Double(block * block * planes)
                        for bx in 0..<w {
                            let mean = sums[bx] / n
                            let ok = !clipped[bx] && mean > 0.002 && mean < 0.9
                            okOut[by * w + bx] = ok
                            vOut[by * w + bx] = ok ? Float(log2(mean / frame.exposure)) : 0
                        }
                    }
                }
            }
        }
        return Proxy(values: values, valid: valid, width: w, height: h, block: block)
    }

    /// The shift of `frame` against `reference` (block units) within `range` blocks of
    /// `around`: the smallest mean |log difference| over blocks valid in both, with at least
    /// a tenth of the reference's valid blocks in common; nil when no shift has that overlap.
    static func search(_ reference: Proxy, _ frame: Proxy, around: (Int, Int), range: Int) -> (dx: Int, dy: Int)? {
        let minimum = max(16, reference.valid.lazy.filter { $0 }.count / 10)
        var best: (Double, Int, Int)?
        for dy in (around.1 - range)...(around.1 + range) {
            for dx in (around.0 - range)...(around.0 + range) {
                var sum = 0.0, count = 0
                let y0 = max(0, -dy), y1 = min(reference.height, frame.height - dy)
                let x0 = max(0, -dx), x1 = min(reference.width, frame.width - dx)
                guard y0 < y1, x0 < x1 else { continue }
                for y in y0..<y1 {
                    let r = y * reference.width, f = (y + dy) * frame.width + dx
                    for x in x0..<x1 where reference.valid[r + x] && frame.valid[f + x] {
                        sum += Double(abs(reference.values[r + x] - frame.values[f + x]))
                        count += 1
                    }
                }
                guard count >= minimum else { continue }
                let score = sum / Double(count)
                if best == nil || score < best!.0 { best = (score, dx, dy) }
            }
        }
        return best.map { ($0.1, $0.2) }
    }

    /// The shift of `frame` against `reference`, in pixels (even for a Bayer mosaic, so the
    /// pattern lines up), at most `maxShift` each way; nil when the frames share too little
    /// to compare.
    public static func offset(of frame: BracketSamples, against reference: BracketSamples, width: Int, height: Int, planes: Int,
                              mosaic: Bool, maxShift: Int) -> (dx: Int, dy: Int)? {
        // Blocks of 16, 4, then 2 pixels (a Bayer cell) and, for LinearRaw, single pixels.
        var levels = [16, 4, 2]
        if !mosaic { levels.append(1) }
        var estimate = (0, 0)
        var previousBlock = 0
        for block in levels where width / block >= 8 && height / block >= 8 {
            let a = proxy(reference, width: width, height: height, planes: planes, block: block)
            let b = proxy(frame, width: width, height: height, planes: planes, block: block)
            // The coarser level's estimate is within half its block (and a little): search that.
            let range = previousBlock == 0 ? max(1, maxShift / block) : max(1, previousBlock / (2 * block))
            let around = previousBlock == 0 ? (0, 0) : (estimate.0 * previousBlock / block, estimate.1 * previousBlock / block)
            guard let found = search(a, b, around: around, range: range) else { return nil }
            estimate = found
            previousBlock = block
        }
        guard previousBlock > 0 else { return (0, 0) }
        let dx = estimate.0 * previousBlock, dy = estimate.1 * previousBlock
        guard abs(dx) <= maxShift, abs(dy) <= maxShift else { return nil }
        return (dx, dy)
    }
}

extension BracketSamples {
    /// The frame moved so that its pixel (x + dx, y + dy) lands on (x, y); samples from beyond
    /// its edges are missing (value 0, every plane's clip bit set: never merged).
    public func shifted(dx: Int, dy: Int, width: Int, height: Int, planes: Int) -> BracketSamples {
        guard dx != 0 || dy != 0 else { return self }
        var out = self
        let source = row
        let rowLength = width * planes
        let all = UInt8(truncatingIfNeeded: (1 << planes) - 1)
        out.row = { y, values, clip, response in
            let sy = y + dy
            values.initialize(repeating: 0, count: rowLength)
            clip.initialize(repeating: all, count: width)
            response?.slope.initialize(repeating: 1, count: rowLength)
            response?.offset.initialize(repeating: 0, count: rowLength)
            guard sy >= 0 && sy < height else { return }
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 3 * rowLength)
            let mask = UnsafeMutablePointer<UInt8>.allocate(capacity: width)
            defer { buffer.deallocate(); mask.deallocate() }
            source(sy, buffer, mask, response == nil ? nil : (buffer + rowLength, buffer + 2 * rowLength))
            let x0 = max(0, -dx), x1 = min(width, width - dx)
            guard x0 < x1 else { return }
            let from = (x0 + dx) * planes, to = x0 * planes, count = (x1 - x0) * planes
            (values + to).update(from: buffer + from, count: count)
            (clip + x0).update(from: mask + x0 + dx, count: x1 - x0)
            if let response {
                (response.slope + to).update(from: buffer + rowLength + from, count: count)
                (response.offset + to).update(from: buffer + 2 * rowLength + from, count: count)
            }
        }
        return out
    }
}
