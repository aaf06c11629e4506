import ImageCore

/// Why a Stage 2 image could not be demosaiced.
///
/// Every case names the IFD the image came from; the category is `.unsupportedFeature`
/// (exit code 14) for colour filter arrays this module does not interpolate, and
/// `.corruptData` (exit code 13) when the CFA tags contradict each other.
public struct DemosaicError: SceneLinearFailure, Equatable {
    /// What exactly is not supported or inconsistent.
    public enum Reason: Sendable, Equatable {
        /// The image does not have exactly one plane (a CFA image has one sample per pixel).
        case planeCount(Int)
        /// CFARepeatPatternDim is not 2 × 2.
        case repeatPattern(rows: Int, cols: Int)
        /// CFAPattern has a different number of entries than CFARepeatPatternDim says.
        case patternCount(count: Int, rows: Int, cols: Int)
        /// CFALayout is not 1 (rectangular).
        case layout(Int)
        /// CFAPlaneColor is not red, green and blue in some order.
        case planeColors([Int])
        /// The 2 × 2 pattern is not a Bayer arrangement of one red, two diagonal greens and
        /// one blue (the pattern's colour letters).
        case notBayer(String)
        /// The ActiveArea is smaller than one 2 × 2 cell.
        case tooSmall(width: Int, height: Int)
    }

    /// The IFD the image came from (e.g. "IFD0" or "IFD0/SubIFD0").
    public let ifd: String
    public let reason: Reason

    public init(ifd: String, reason: Reason) {
        self.ifd = ifd
        self.reason = reason
    }

    public var category: FailureCategory {
        if case .patternCount = reason { return .corruptData }
        return .unsupportedFeature
    }

    public var description: String {
        let supported = "only 2×2 Bayer patterns (RGGB, BGGR, GRBG, GBRG) are demosaiced"
        let what: String
        switch reason {
        case .planeCount(let n):
            what = "the image has \(n) planes; a CFA image has one"
        case .repeatPattern(let rows, let cols):
            what = "CFARepeatPatternDim \(rows)×\(cols) is not supported; \(supported)"
        case .patternCount(let count, let rows, let cols):
            what = "CFAPattern has \(count) entries; CFARepeatPatternDim \(rows)×\(cols) needs \(rows * cols)"
        case .layout(let layout):
            what = "CFALayout \(layout) is not supported (only 1, a rectangular grid)"
        case .planeColors(let colors):
            what = "CFAPlaneColor \(colors) is not supported (only red, green and blue planes)"
        case .notBayer(let name):
            what = "CFA pattern \(name) is not supported; \(supported)"
        case .tooSmall(let width, let height):
            what = "the \(width)×\(height) ActiveArea is smaller than one 2×2 CFA cell"
        }
        return "CFA demosaicing of \(ifd): \(what)"
    }
}
