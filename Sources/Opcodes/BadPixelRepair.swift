import ImageCore

// FixBadPixelsConstant and FixBadPixelsList on a one-plane Bayer image.
//
// A bad pixel takes the mean of the nearest good pixel of its own colour in each of four
// directions: for green pixels the four diagonals (±1, ±1), for red and blue pixels the
// four axes at distance 2. FixBadPixelsConstant looks one step away only (a pixel whose
// four neighbours are all bad is left as it is, as the DNG SDK does); FixBadPixelsList
// keeps walking (up to `listSearchSteps` steps) so that pixels inside bad rectangles find
// good neighbours beyond the rectangle's edge. Neighbours are read before any pixel is
// written, and bad neighbours never count, so the order of repairs does not matter.

/// How far FixBadPixelsList looks for a good same-colour pixel in each direction.
let listSearchSteps = 64

/// The same-colour directions of a green pixel (diagonals) and of a red or blue one.
private let diagonalSteps = [(1, 1), (1, -1), (-1, 1), (-1, -1)]
private let axialSteps = [(2, 0), (-2, 0), (0, 2), (0, -2)]

extension ImageBuffer where Sample == Float {
    /// Repairs the samples equal to the opcode's constant (at Stages 2/3: whose 16-bit code
    /// round(x · 65535) equals it) within `region` (stage coordinates).
    mutating func repairConstant(_ op: FixBadPixelsConstant, stage: Int, region: PixelRect,
                                 buffer: PixelRect) -> OpcodeApplier.KernelResult {
        guard !region.isEmpty else { return .init(samples: 0, outOfRange: 0) }
        var bad = BadPixelMap(region: region)
        let constant = op.constant
        let stageOne = stage == 1
        let target = Float(constant)
        let width = self.width
        // Mark the bad pixels, one band of rows per worker (each writes only its rows).
        samples.withUnsafeBufferPointer { all in
            bad.flags.withUnsafeMutableBufferPointer { flags in
                // Safe because each chunk writes its own rows; neighbours are read from the unchanged source.
                nonisolated(unsafe) let src = all.baseAddress!, marks = flags.baseAddress!
                let rw = region.width
                Parallel.forEachChunk(count: region.height, minimumChunk: 16) { rows in
                    for r in rows {
                        let s = src + (region.top + r - buffer.top) * width + (region.left - buffer.left)
                        let m = marks + r * rw
                        for c in 0..<rw {
                            let x = s[c]
                            let isBad: Bool
                            if stageOne {
                                isBad = x == target
                            } else {
                                let clamped: Float = x > 0 ? (x < 1 ? x : 1) : 0   // NaN goes to 0
                                isBad = UInt32(clamped * 65535 + 0.5) == constant
                            }
                            m[c] = isBad ? 1 : 0
                        }
                    }
                }
            }
        }
        return repair(bad, phase: op.bayerPhase, steps: 1, buffer: buffer)
    }

    /// Repairs the listed points and the pixels of the listed rectangles within `region`.
    mutating func repairList(_ op: FixBadPixelsList, region: PixelRect,
                             buffer: PixelRect) -> OpcodeApplier.KernelResult {
        guard !region.isEmpty else { return .init(samples: 0, outOfRange: 0) }
        var bad = BadPixelMap(region: region)
        for point in op.points { bad.mark(PixelRect(top: point.row, left: point.column, bottom: point.row + 1, right: point.column + 1)) }
        for rect in op.rectangles { bad.mark(rect) }
        return repair(bad, phase: op.bayerPhase, steps: listSearchSteps, buffer: buffer)
    }

    /// Replaces every marked pixel by the mean of the nearest unmarked same-colour pixel in
    /// each of its four directions (at most `steps` steps away).
    private mutating func repair(_ bad: BadPixelMap, phase: Int, steps: Int,
                                 buffer: PixelRect) -> OpcodeApplier.KernelResult {
        let region = bad.region
        var fixes: [(offset: Int, value: Float)] = []
        var unrepaired = 0
        let width = self.width
        samples.withUnsafeBufferPointer { all in
            let src = all.baseAddress!
            for r in 0..<region.height {
                for c in 0..<region.width where bad.flags[r * region.width + c] != 0 {
                    let row = region.top + r, column = region.left + c
                    // Green when row + column + phase + (phase >> 1) is even (DNG phase encoding).
                    let green = (row + column + phase + (phase >> 1)) & 1 == 0
                    let directions = green ? diagonalSteps : axialSteps
                    var sum = 0.0, n = 0
                    for (dr, dc) in directions {
                        for step in 1...steps {
                            let rr = r + dr * step, cc = c + dc * step
                            guard rr >= 0, cc >= 0, rr < region.height, cc < region.width else { break }
                            if bad.flags[rr * region.width + cc] == 0 {
                                sum += Double(src[(region.top + rr - buffer.top) * width + region.left + cc - buffer.left])
                                n += 1
                                break
                            }
                        }
                    }
                    if n > 0 {
                        fixes.append(((row - buffer.top) * width + column - buffer.left, Float(sum / Double(n))))
                    } else {
                        unrepaired += 1
                    }
                }
            }
        }
        for fix in fixes { samples[fix.offset] = fix.value }
        let note = unrepaired > 0 ? "\(unrepaired) bad pixels have no good same-colour neighbour and were left unchanged" : nil
        return .init(samples: fixes.count, outOfRange: 0, note: note)
    }
}

/// One flag per pixel of a region (stage coordinates): 1 for a bad pixel.
struct BadPixelMap {
    let region: PixelRect
    var flags: [UInt8]

    init(region: PixelRect) {
        self.region = region
        flags = [UInt8](repeating: 0, count: region.width * region.height)
    }

    /// Marks the part of `rect` inside the region.
    mutating func mark(_ rect: PixelRect) {
        let r = rect.intersection(region)
        guard !r.isEmpty else { return }
        let w = region.width
        for row in r.top..<r.bottom {
            let start = (row - region.top) * w + (r.left - region.left)
            flags.withUnsafeMutableBufferPointer { f in
                f.baseAddress!.advanced(by: start).update(repeating: 1, count: r.width)
            }
        }
    }
}
