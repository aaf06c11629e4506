import Foundation
import ImageCore

/// A part of an image to measure, in output pixel coordinates (after crop and orientation).
public struct Region: Sendable, Equatable {
    public enum Shape: Sendable, Equatable {
        /// A rectangle in pixels.
        case rectangle(PixelRect)
        /// A rectangle as fractions of the width (left, right) and height (top, bottom).
        case fractionalRectangle(top: Double, left: Double, bottom: Double, right: Double)
        /// A polygon, vertices (x, y) in pixels; a pixel belongs when its centre is inside (even-odd rule).
        case polygon([SIMD2<Double>])
        /// Per-pixel weights 0…1 (a matte, e.g. a semantic mask), same size as the image.
        case weights([Float])
    }

    public var name: String
    public var shape: Shape

    public init(name: String, shape: Shape) {
        self.name = name
        self.shape = shape
    }

    /// The weight of every pixel of a `width` × `height` image (0 outside the region).
    /// - Throws: `AnalysisError` when the region lies outside the image or is empty.
    public func weights(width: Int, height: Int) throws -> [Float] {
        var out = [Float](repeating: 0, count: width * height)
        func fill(_ r: PixelRect) throws {
            let c = PixelRect(top: max(0, r.top), left: max(0, r.left), bottom: min(height, r.bottom), right: min(width, r.right))
            guard !c.isEmpty else {
                throw AnalysisError(reason: "region \(name) \(r) lies outside the \(width)×\(height) image")
            }
            for y in c.top..<c.bottom { for x in c.left..<c.right { out[y * width + x] = 1 } }
        }
        switch shape {
        case .rectangle(let r):
            try fill(r)
        case .fractionalRectangle(let t, let l, let b, let r):
            guard t < b, l < r else { throw AnalysisError(reason: "region \(name): top must be above bottom and left before right") }
            try fill(PixelRect(top: Int((t * Double(height)).rounded()), left: Int((l * Double(width)).rounded()),
                               bottom: Int((b * Double(height)).rounded()), right: Int((r * Double(width)).rounded())))
        case .polygon(let vertices):
            guard vertices.count >= 3 else { throw AnalysisError(reason: "region \(name): a polygon needs at least 3 vertices") }
            for y in 0..<height {
                let py = Double(y) + 0.5
                // Crossings of the row's centre line with each edge, then fill between pairs.
                var xs: [Double] = []
                for i in vertices.indices {
                    let a = vertices[i], b = vertices[(i + 1) % vertices.count]
                    if (a.y <= py) != (b.y <= py) { xs.append(a.x + (py - a.y) / (b.y - a.y) * (b.x - a.x)) }
                }
                xs.sort()
                for pair in stride(from: 0, to: xs.count - 1, by: 2) {
                    // Half-open: a centre on the left edge is inside, one on the right edge is not.
                    let start = max(0, Int((xs[pair] - 0.5).rounded(.up))), end = min(width - 1, Int((xs[pair + 1] - 0.5).rounded(.up)) - 1)
                    if start <= end { for x in start...end { out[y * width + x] = 1 } }
                }
            }
        case .weights(let w):
            guard w.count == width * height else {
                throw AnalysisError(reason: "region \(name): mask of \(w.count) pixels for a \(width)×\(height) image")
            }
            out = w.map { min(max($0, 0), 1) }
        }
        guard out.contains(where: { $0 > 0 }) else { throw AnalysisError(reason: "region \(name) contains no pixels") }
        return out
    }

    /// Parses "name=top,left,bottom,right" (pixels, or fractions when every value is ≤ 1) or
    /// "name=poly:x1,y1,x2,y2,..." (pixels).
    public static func parse(_ text: String) throws -> Region {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty else {
            throw AnalysisError(reason: "region \"\(text)\" must be name=top,left,bottom,right or name=poly:x,y,...")
        }
        var spec = parts[1]
        let isPolygon = spec.hasPrefix("poly:")
        if isPolygon { spec.removeFirst(5) }
        let numbers = spec.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard numbers.allSatisfy({ $0 != nil && $0!.isFinite }) else {
            throw AnalysisError(reason: "region \(parts[0]): \"\(parts[1])\" has a value that is not a number")
        }
        let v = numbers.map { $0! }
        if isPolygon {
            guard v.count >= 6, v.count % 2 == 0 else { throw AnalysisError(reason: "region \(parts[0]): a polygon needs x,y pairs (at least 3)") }
            return Region(name: parts[0], shape: .polygon(stride(from: 0, to: v.count, by: 2).map { SIMD2(v[$0], v[$0 + 1]) }))
        }
        guard v.count == 4 else { throw AnalysisError(reason: "region \(parts[0]) needs 4 values top,left,bottom,right") }
        if v.allSatisfy({ $0 >= 0 && $0 <= 1 }) {
            return Region(name: parts[0], shape: .fractionalRectangle(top: v[0], left: v[1], bottom: v[2], right: v[3]))
        }
        return Region(name: parts[0], shape: .rectangle(PixelRect(top: Int(v[0]), left: Int(v[1]), bottom: Int(v[2]), right: Int(v[3]))))
    }
}

/// Why a measurement could not be made.
public struct AnalysisError: SceneLinearFailure, Equatable {
    public let reason: String
    public init(reason: String) { self.reason = reason }
    public var category: FailureCategory { .corruptData }
    public var description: String { reason }
}
