import ImageCore

// The per-sample opcodes. Every kernel runs over a `SampleGrid` (already clipped to the
// image bounds and the buffer) in parallel row bands; parameters were validated when the
// list was parsed, so the loops do no checks.

extension ImageBuffer where Sample == Float {
    /// MapTable: Stage 1 samples index the table by their (rounded, clamped) stored value
    /// and take the entry; Stage 2/3 samples are clamped to 0 … 1 and scaled to the 16-bit
    /// code round(x · 65535), and take entry / 65535 — the 16-bit encoding the DNG SDK
    /// holds those stages in. Indices past the table take its last entry.
    mutating func applyMapTable(_ op: MapTable, grid: SampleGrid, stage: Int,
                                limits: ValueLimits) -> OpcodeApplier.KernelResult {
        let last = op.table.count - 1
        let lut = (0..<65536).map { i -> Float in
            let entry = Float(op.table[Swift.min(i, last)])
            return stage == 1 ? entry : entry / 65535
        }
        let inputScale: Float = stage == 1 ? 1 : 65535
        let inputMax: Float = stage == 1 ? 65535 : 1
        let planes = grid.planes, columns = grid.columnCount, stride = grid.colPitch * channels
        let outside = lut.withUnsafeBufferPointer { table -> Int in
            // Safe because the table is only read.
            nonisolated(unsafe) let t = table.baseAddress!
            return forEachGridRow(grid) { _, row in
                var outside = 0
                for p in planes {
                    for j in 0..<columns {
                        let x = row[j * stride + p]
                        // NaN-safe clamp (NaN compares false and goes to 0).
                        let clamped = x > 0 ? (x < inputMax ? x : inputMax) : 0
                        let index = Int(clamped * inputScale + 0.5)
                        row[j * stride + p] = limits.store(t[Swift.min(index, 65535)], &outside)
                    }
                }
                return outside
            }
        }
        return .init(samples: grid.sampleCount, outOfRange: outside)
    }

    /// MapPolynomial: y = Σ c_k x^k (Horner, in Double), in the stage's logical units.
    mutating func applyPolynomial(_ op: MapPolynomial, grid: SampleGrid,
                                  limits: ValueLimits) -> OpcodeApplier.KernelResult {
        let c = op.coefficients
        let planes = grid.planes, columns = grid.columnCount, stride = grid.colPitch * channels
        let outside = forEachGridRow(grid) { _, row in
            var outside = 0
            for p in planes {
                for j in 0..<columns {
                    let x = Double(row[j * stride + p])
                    var y = 0.0
                    for k in c.indices.reversed() { y = y * x + c[k] }
                    row[j * stride + p] = limits.store(Float(y), &outside)
                }
            }
            return outside
        }
        return .init(samples: grid.sampleCount, outOfRange: outside)
    }

    /// DeltaPerRow/Column add `value × deltaUnit`; ScalePerRow/Column multiply by `value`.
    /// Value `k` belongs to the area's `k`-th sampled row (column), counted from the area's
    /// top (left) edge, also when the grid starts further in.
    mutating func applyPerRowColumn(_ opcode: Opcode, _ op: AreaValues, grid: SampleGrid, deltaUnit: Float,
                                    limits: ValueLimits) -> OpcodeApplier.KernelResult {
        let isDelta: Bool, perRow: Bool
        switch opcode {
        case .deltaPerRow: (isDelta, perRow) = (true, true)
        case .deltaPerColumn: (isDelta, perRow) = (true, false)
        case .scalePerRow: (isDelta, perRow) = (false, true)
        default: (isDelta, perRow) = (false, false)
        }
        guard !grid.isEmpty else { return .init(samples: 0, outOfRange: 0) }
        // Offsets of the grid's first row/column into the value list.
        let rowOffset = (grid.stageRow(0) - op.area.top) / op.area.rowPitch
        let columnOffset = (grid.stageColumn(0) - op.area.left) / op.area.colPitch
        let values = isDelta ? op.values.map { $0 * deltaUnit } : op.values
        let planes = grid.planes, columns = grid.columnCount, stride = grid.colPitch * channels
        let outside = forEachGridRow(grid) { k, row in
            var outside = 0
            if perRow {
                let v = values[rowOffset + k]
                for p in planes {
                    for j in 0..<columns {
                        let x = row[j * stride + p]
                        row[j * stride + p] = limits.store(isDelta ? x + v : x * v, &outside)
                    }
                }
            } else {
                values.withUnsafeBufferPointer { vs in
                    for p in planes {
                        for j in 0..<columns {
                            let x = row[j * stride + p]
                            let v = vs[columnOffset + j]
                            row[j * stride + p] = limits.store(isDelta ? x + v : x * v, &outside)
                        }
                    }
                }
            }
            return outside
        }
        return .init(samples: grid.sampleCount, outOfRange: outside)
    }

    /// FixVignetteRadial: every plane multiplied by g = 1 + k0 r² + … + k4 r¹⁰, with
    /// r the distance of the pixel centre (row + ½, column + ½) from the optical centre
    /// (top + cy · height, left + cx · width of the image bounds) divided by the distance
    /// from the optical centre to the farthest corner of the bounds.
    mutating func applyVignette(_ op: FixVignetteRadial, grid: SampleGrid, bounds: PixelRect,
                                limits: ValueLimits) -> OpcodeApplier.KernelResult {
        let cy = Double(bounds.top) + op.centerY * Double(bounds.height)
        let cx = Double(bounds.left) + op.centerX * Double(bounds.width)
        let farY = Swift.max(cy - Double(bounds.top), Double(bounds.bottom) - cy)
        let farX = Swift.max(cx - Double(bounds.left), Double(bounds.right) - cx)
        let inverseR2 = 1 / (farY * farY + farX * farX)
        let k = op.coefficients
        let dx2 = (0..<grid.columnCount).map { j -> Double in
            let d = Double(grid.stageColumn(j)) + 0.5 - cx
            return d * d * inverseR2
        }
        let channels = self.channels, columns = grid.columnCount, stride = grid.colPitch * channels
        let outside = forEachGridRow(grid) { kRow, row in
            let dy = Double(grid.stageRow(kRow)) + 0.5 - cy
            let dy2 = dy * dy * inverseR2
            var outside = 0
            dx2.withUnsafeBufferPointer { dx2 in
                for j in 0..<columns {
                    let r2 = dx2[j] + dy2
                    let g = Float(1 + r2 * (k[0] + r2 * (k[1] + r2 * (k[2] + r2 * (k[3] + r2 * k[4])))))
                    let px = row + j * stride
                    for p in 0..<channels { px[p] = limits.store(px[p] * g, &outside) }
                }
            }
            return outside
        }
        return .init(samples: grid.sampleCount, outOfRange: outside)
    }
}
