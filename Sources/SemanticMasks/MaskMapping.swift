import DNGContainer
import ImageCore

/// The MaskSubArea tag (52536) of a semantic mask, as the Adobe DNG SDK reads it: the mask
/// image is the sub-rectangle at (`top`, `left`) of a mask space of `fullWidth` ×
/// `fullHeight` pixels, and that mask space covers the whole main image (see
/// `docs/pipeline.md`, "Semantic masks"). Tag order: top, left, full width, full height.
public struct MaskSubArea: Sendable, Equatable, Codable {
    public var top: Int
    public var left: Int
    public var fullWidth: Int
    public var fullHeight: Int

    public init(top: Int, left: Int, fullWidth: Int, fullHeight: Int) {
        self.top = top
        self.left = left
        self.fullWidth = fullWidth
        self.fullHeight = fullHeight
    }

    /// How a file's MaskSubArea values are used.
    public enum Reading: Sendable, Equatable {
        /// No tag: the mask itself covers the whole main image.
        case absent
        /// A sub-rectangle of a larger mask space.
        case subArea(MaskSubArea)
        /// Values that do not describe a sub-rectangle holding the mask (all zero, as the
        /// SDK writes for "none", or a rectangle reaching outside the mask space): ignored,
        /// as the SDK ignores them, so the mask covers the whole main image.
        case ignored(reason: String)
    }

    /// Reads the tag values of a `maskWidth` × `maskHeight` mask. A sub-area is used only
    /// when it has four values, a non-empty mask space and holds the whole mask
    /// (`0 ≤ top`, `0 ≤ left`, `left + maskWidth ≤ fullWidth`, `top + maskHeight ≤ fullHeight`).
    public static func read(_ values: [Int]?, maskWidth: Int, maskHeight: Int) -> Reading {
        guard let values else { return .absent }
        guard values.count == 4 else { return .ignored(reason: "\(values.count) values instead of 4") }
        if values.allSatisfy({ $0 == 0 }) { return .ignored(reason: "all zero") }
        let area = MaskSubArea(top: values[0], left: values[1], fullWidth: values[2], fullHeight: values[3])
        guard area.top >= 0, area.left >= 0, area.fullWidth > 0, area.fullHeight > 0,
              area.left + maskWidth <= area.fullWidth, area.top + maskHeight <= area.fullHeight else {
            return .ignored(reason: "the \(maskWidth)×\(maskHeight) mask at top \(values[0]), left \(values[1]) does not fit a \(values[2])×\(values[3]) mask space")
        }
        return .subArea(area)
    }
}

/// Where the pixels of the Stage 3 image (after demosaicing, before colour and geometry)
/// lie on the raw image's ActiveArea, which a semantic mask's space covers.
///
/// Stage 3 pixel (x, y) has its centre at ActiveArea coordinates
/// (`originX + (x + ½)·step`, `originY + (y + ½)·step`), where (0, 0) is the top-left corner
/// of the ActiveArea and one unit is one raw pixel.
public struct Stage3Grid: Sendable, Equatable {
    /// Size of the Stage 3 image.
    public var width: Int
    public var height: Int
    /// Size of the ActiveArea in raw pixels.
    public var activeWidth: Int
    public var activeHeight: Int
    /// ActiveArea coordinates of the top-left corner of Stage 3 pixel (0, 0).
    public var originX: Double
    public var originY: Double
    /// Raw pixels per Stage 3 pixel: 1, or 2 after superpixel demosaicing.
    public var step: Double

    public init(width: Int, height: Int, activeWidth: Int, activeHeight: Int, originX: Double = 0, originY: Double = 0,
                step: Double = 1) {
        self.width = width
        self.height = height
        self.activeWidth = activeWidth
        self.activeHeight = activeHeight
        self.originX = originX
        self.originY = originY
        self.step = step
    }

    /// The grid of a pipeline run: the ActiveArea size, `binning` raw pixels per Stage 3
    /// pixel, and the TrimBounds of OpcodeList2 (in ActiveArea pixels) and OpcodeList3 (in
    /// Stage 3 pixels) when they cropped the image.
    public static func pipeline(activeArea: PixelRect, binning: Int, width: Int, height: Int,
                                trim2: PixelRect? = nil, trim3: PixelRect? = nil) -> Stage3Grid {
        let b = Double(max(1, binning))
        let x = Double(trim2?.left ?? 0) + b * Double(trim3?.left ?? 0)
        let y = Double(trim2?.top ?? 0) + b * Double(trim3?.top ?? 0)
        return Stage3Grid(width: width, height: height, activeWidth: activeArea.width, activeHeight: activeArea.height,
                          originX: x, originY: y, step: b)
    }
}

/// Resampling a semantic mask onto a Stage 3 grid.
public enum MaskResampler {
    /// The mask's value at the centre of every pixel of `grid`, by bilinear interpolation.
    ///
    /// The mask space (`subArea`'s full size, else the mask's own size) is stretched over
    /// the ActiveArea: a Stage 3 pixel centre at ActiveArea coordinates (cx, cy) falls on
    /// mask-space coordinates X = cx · W / activeWidth − ½, Y = cy · H / activeHeight − ½,
    /// where mask-space pixel (i, j) has its centre at (i, j). X and Y are clamped to
    /// [0, W − 1] and [0, H − 1] (the edge pixels extend to the border), and the value is
    /// the bilinear interpolation of the four surrounding mask-space pixels. Mask-space
    /// pixels outside the sub-area are 0, so values fall off to 0 across the sub-area's
    /// edge as they would in a zero-filled full-size mask.
    public static func resample(_ mask: ImageBuffer<Float>, subArea: MaskSubArea?, onto grid: Stage3Grid) -> ImageBuffer<Float> {
        precondition(mask.channels == 1 && mask.width > 0 && mask.height > 0)
        let fullW = subArea?.fullWidth ?? mask.width, fullH = subArea?.fullHeight ?? mask.height
        let left = subArea?.left ?? 0, top = subArea?.top ?? 0
        let columns = taps(count: grid.width, origin: grid.originX, step: grid.step, span: grid.activeWidth,
                           full: fullW, offset: left, storedCount: mask.width)
        let rows = taps(count: grid.height, origin: grid.originY, step: grid.step, span: grid.activeHeight,
                        full: fullH, offset: top, storedCount: mask.height)
        let w = grid.width
        var out = [Float](repeating: 0, count: grid.width * grid.height)
        mask.samples.withUnsafeBufferPointer { srcAll in
            out.withUnsafeMutableBufferPointer { dstAll in
                // Safe because each chunk writes its own rows; the source is only read.
                nonisolated(unsafe) let src = srcAll, dst = dstAll
                Parallel.forEachChunk(count: grid.height, minimumChunk: 64) { range in
                    for y in range {
                        let r = rows[y]
                        for x in 0..<w {
                            let c = columns[x]
                            func at(_ row: Int, _ col: Int) -> Double {
                                row < 0 || col < 0 ? 0 : Double(src[row * mask.width + col])
                            }
                            let upper = at(r.first, c.first) * (1 - c.weight) + at(r.first, c.second) * c.weight
                            let lower = at(r.second, c.first) * (1 - c.weight) + at(r.second, c.second) * c.weight
                            dst[y * w + x] = Float(upper * (1 - r.weight) + lower * r.weight)
                        }
                    }
                }
            }
        }
        return ImageBuffer(width: grid.width, height: grid.height, channels: 1, samples: out)
    }

    /// The two stored-mask indices (−1 outside the sub-area) and the weight of the second,
    /// for each of `count` output positions along one axis.
    struct Tap {
        var first: Int
        var second: Int
        var weight: Double
    }

    /// Whether every pixel centre of `grid` falls exactly on the centre of the stored mask
    /// pixel of its own position (weights 0): `resample` then gives each finite value of at
    /// least +0 back unchanged, so a mask of such values needs no resampling.
    public static func isIdentity(width: Int, height: Int, subArea: MaskSubArea?, onto grid: Stage3Grid) -> Bool {
        guard width == grid.width, height == grid.height else { return false }
        let columns = taps(count: grid.width, origin: grid.originX, step: grid.step, span: grid.activeWidth,
                           full: subArea?.fullWidth ?? width, offset: subArea?.left ?? 0, storedCount: width)
        let rows = taps(count: grid.height, origin: grid.originY, step: grid.step, span: grid.activeHeight,
                        full: subArea?.fullHeight ?? height, offset: subArea?.top ?? 0, storedCount: height)
        func exact(_ taps: [Tap]) -> Bool { taps.indices.allSatisfy { taps[$0].first == $0 && taps[$0].weight == 0 } }
        return exact(columns) && exact(rows)
    }

    static func taps(count: Int, origin: Double, step: Double, span: Int, full: Int, offset: Int, storedCount: Int) -> [Tap] {
        (0..<count).map { i in
            let centre = origin + (Double(i) + 0.5) * step
            let position = min(max(centre * Double(full) / Double(span) - 0.5, 0), Double(full - 1))
            let i0 = Int(position.rounded(.down))
            let i1 = min(i0 + 1, full - 1)
            func index(_ k: Int) -> Int {
                let s = k - offset
                return s >= 0 && s < storedCount ? s : -1
            }
            return Tap(first: index(i0), second: index(i1), weight: position - Double(i0))
        }
    }
}
