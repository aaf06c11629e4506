import Foundation
import ImageCore

/// The samples one opcode touches, in buffer coordinates: rows `firstRow`,
/// `firstRow + rowPitch`, … (`rowCount` of them), columns likewise, planes `planes`.
///
/// It is the opcode's area (pitches anchored at the area's top-left) intersected with the
/// current image bounds and with the buffer, so every index it yields is inside the buffer.
struct SampleGrid: Sendable {
    var firstRow = 0
    var rowCount = 0
    var rowPitch = 1
    var firstColumn = 0
    var columnCount = 0
    var colPitch = 1
    var planes = 0..<0
    /// The stage coordinates of buffer (0, 0).
    var originRow = 0
    var originColumn = 0

    var isEmpty: Bool { rowCount == 0 || columnCount == 0 || planes.isEmpty }
    var sampleCount: Int { rowCount * columnCount * planes.count }

    /// The stage row of the grid's `k`-th row.
    func stageRow(_ k: Int) -> Int { originRow + firstRow + k * rowPitch }
    /// The stage column of the grid's `j`-th column.
    func stageColumn(_ j: Int) -> Int { originColumn + firstColumn + j * colPitch }

    /// The grid of `area` (or of the whole image for an all-zero area) inside `bounds` and
    /// `buffer` (both in stage coordinates), for an image of `channels` planes.
    init(area: OpcodeArea, bounds: PixelRect, buffer: PixelRect, channels: Int) {
        let rect = area.coversWholeImage ? bounds : area.rect
        let clip = rect.intersection(bounds).intersection(buffer)
        originRow = buffer.top
        originColumn = buffer.left
        rowPitch = area.rowPitch
        colPitch = area.colPitch
        guard !clip.isEmpty else { return }
        // The first sampled row/column at or after the clipped edge, on the area's pitch grid.
        let top = rect.top + (clip.top - rect.top + rowPitch - 1) / rowPitch * rowPitch
        let left = rect.left + (clip.left - rect.left + colPitch - 1) / colPitch * colPitch
        guard top < clip.bottom, left < clip.right else { return }
        firstRow = top - buffer.top
        firstColumn = left - buffer.left
        rowCount = (clip.bottom - top + rowPitch - 1) / rowPitch
        columnCount = (clip.right - left + colPitch - 1) / colPitch
        let firstPlane = min(area.plane, channels)
        let endPlane = min(area.plane + area.planes, channels)
        planes = firstPlane..<endPlane
    }

    /// Every pixel and plane of `rect` inside `buffer`.
    init(all rect: PixelRect, buffer: PixelRect, channels: Int) {
        self.init(area: OpcodeArea(rect, plane: 0, planes: channels), bounds: rect, buffer: buffer, channels: channels)
    }
}

extension PixelRect {
    /// The overlap of two rectangles (empty, with its edges possibly crossed, when none).
    func intersection(_ other: PixelRect) -> PixelRect {
        PixelRect(top: max(top, other.top), left: max(left, other.left),
                  bottom: min(bottom, other.bottom), right: min(right, other.right))
    }
}

/// The logical range of a stage and whether values outside it are clipped.
struct ValueLimits: Sendable {
    let low: Float
    let high: Float
    let clip: Bool

    /// `y` clipped when the policy says so; `outside` counts values outside the range
    /// (NaN counts as outside and clips to `low`).
    @inline(__always)
    func store(_ y: Float, _ outside: inout Int) -> Float {
        let c = y > low ? (y < high ? y : high) : low
        if c != y { outside &+= 1 }
        return clip ? c : y
    }
}

extension ImageBuffer where Sample == Float {
    /// Runs `body` for every row of `grid`, in parallel row bands. `body` gets the grid row
    /// index and a pointer to that row's first grid column, plane 0; columns are
    /// `colPitch × channels` samples apart. It returns its count of out-of-range values.
    /// - Returns: the total of the counts.
    mutating func forEachGridRow(_ grid: SampleGrid,
                                 _ body: @Sendable (_ k: Int, _ row: UnsafeMutablePointer<Float>) -> Int) -> Int {
        guard !grid.isEmpty else { return 0 }
        let width = self.width, channels = self.channels
        let counter = SharedCount()
        samples.withUnsafeMutableBufferPointer { all in
            // Safe because each chunk writes the samples of its own rows.
            nonisolated(unsafe) let base = all.baseAddress!
            Parallel.forEachChunk(count: grid.rowCount, minimumChunk: 8) { rows in
                var outside = 0
                for k in rows {
                    let r = grid.firstRow + k * grid.rowPitch
                    outside += body(k, base + (r * width + grid.firstColumn) * channels)
                }
                counter.add(outside)
            }
        }
        return counter.value
    }
}
