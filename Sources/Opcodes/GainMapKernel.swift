import ImageCore

/// Where one image row or column falls on the gain map's grid: the lower map index and the
/// fraction towards the next one (0 outside the map, where the edge gain is replicated).
struct MapPosition: Sendable {
    var index: Int
    var fraction: Float

    /// The map position of the pixel centre `pixel + ½` of an image spanning
    /// `start ..< start + extent`, for a map of `points` points at relative positions
    /// `origin + i · spacing`.
    init(pixel: Int, start: Int, extent: Int, points: Int, origin: Double, spacing: Double) {
        guard points > 1 else {
            index = 0
            fraction = 0
            return
        }
        let relative = (Double(pixel - start) + 0.5) / Double(extent)
        let f = (relative - origin) / spacing
        if f <= 0 {
            (index, fraction) = (0, 0)
        } else if f >= Double(points - 1) {
            (index, fraction) = (points - 1, 0)
        } else {
            let i = Int(f)
            (index, fraction) = (i, Float(f - Double(i)))
        }
    }
}

extension ImageBuffer where Sample == Float {
    /// GainMap: each sample of the grid is multiplied by the gain interpolated bilinearly
    /// at its pixel centre, in relative coordinates of `bounds`; outside the map's points
    /// the nearest edge gain is used. Image plane `p` uses map plane
    /// min(p − area.plane, mapPlanes − 1).
    ///
    /// Per row, the two map rows around it are blended once per processed plane; then the
    /// row is walked pixel by pixel with the planes inside, so each sample costs two loads
    /// from the blended row and one multiply-add.
    mutating func applyGainMap(_ op: GainMap, grid: SampleGrid, bounds: PixelRect,
                               limits: ValueLimits) -> OpcodeApplier.KernelResult {
        guard !grid.isEmpty else { return .init(samples: 0, outOfRange: 0) }
        let pointsH = op.pointsH, mapPlanes = op.mapPlanes
        let columns = (0..<grid.columnCount).map {
            MapPosition(pixel: grid.stageColumn($0), start: bounds.left, extent: bounds.width,
                        points: pointsH, origin: op.originH, spacing: op.spacingH)
        }
        let columnIndex = columns.map { Int32($0.index) }
        let columnFraction = columns.map(\.fraction)
        let planes = grid.planes, firstPlane = op.area.plane, planeCount = planes.count
        let count = grid.columnCount, stride = grid.colPitch * channels
        // Per row: one blended map row per processed plane, each followed by a copy of its
        // last gain so that index + 1 is always readable.
        let rowLength = pointsH + 1
        let outside = op.gains.withUnsafeBufferPointer { gainBuffer in
            columnIndex.withUnsafeBufferPointer { ci in
                columnFraction.withUnsafeBufferPointer { cf in
                    // Safe because the gain tables are only read.
                    nonisolated(unsafe) let gains = gainBuffer.baseAddress!, cIndex = ci.baseAddress!, cFraction = cf.baseAddress!
                    return forEachGridRow(grid) { k, row in
                        let v = MapPosition(pixel: grid.stageRow(k), start: bounds.top, extent: bounds.height,
                                            points: op.pointsV, origin: op.originV, spacing: op.spacingV)
                        let row0 = v.index, row1 = Swift.min(v.index + 1, op.pointsV - 1), t = v.fraction
                        var outside = 0
                        withUnsafeTemporaryAllocation(of: Float.self, capacity: rowLength * planeCount) { blended in
                            for (q, p) in planes.enumerated() {
                                let mp = Swift.min(p - firstPlane, mapPlanes - 1)
                                let b = blended.baseAddress! + q * rowLength
                                for j in 0..<pointsH {
                                    let g0 = gains[(row0 * pointsH + j) * mapPlanes + mp]
                                    let g1 = gains[(row1 * pointsH + j) * mapPlanes + mp]
                                    b[j] = t == 0 ? g0 : g0 + t * (g1 - g0)
                                }
                                b[pointsH] = b[pointsH - 1]
                            }
                            // Pixel by pixel, planes inside: the row is read and written once.
                            let first = row + planes.lowerBound
                            for j in 0..<count {
                                let i = Int(cIndex[j]), f = cFraction[j]
                                let px = first + j * stride
                                var b = blended.baseAddress! + i
                                for q in 0..<planeCount {
                                    let g0 = b[0]
                                    px[q] = limits.store(px[q] * (g0 + f * (b[1] - g0)), &outside)
                                    b += rowLength
                                }
                            }
                        }
                        return outside
                    }
                }
            }
        }
        return .init(samples: grid.sampleCount, outOfRange: outside)
    }
}
