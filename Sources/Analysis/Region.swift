import Foundation
import ImageCore

/// A part of an image to measure, in output pixel coordinates (after crop and orientation).
public struct Region: Sendable, Equatable {
    public enum Shape: Sendable, Equatable {
        /// A rectangle in pixels: rows top..<bottom, columns left..<right.
        case rectangle(PixelRect)
        /// A rectangle as fractions of the width (left, right) and height (top, bottom), each
        /// edge rounded to the nearest pixel edge (written as percentages: `10%,0%,40%,100%`).
        case fractionalRectangle(top: Double, left: Double, bottom: Double, right: Double)
        /// A polygon, vertices (x, y) in pixels; a pixel belongs when its centre is inside (even-odd rule).
        case polygon([SIMD2<Double>])
        /// Per-pixel weights 0…1 (a matte, e.g. a semantic mask), same size as the image.
        case weights([Float])
        /// A semantic mask of the image, by layer name (`sky`) or SemanticName URN: its values
        /// are the weights. Resolved against the image by `weights(in:)`.
        case mask(String)
    }

    public var name: String
    public var shape: Shape

    public init(name: String, shape: Shape) {
        self.name = name
        self.shape = shape
    }

    /// The whole image, whatever its size.
    public static func wholeImage(name: String = "image") -> Region {
        Region(name: name, shape: .fractionalRectangle(top: 0, left: 0, bottom: 1, right: 1))
    }

    /// Whether the region is a semantic mask (which needs the image's masks to resolve).
    public var isMask: Bool {
        if case .mask = shape { return true }
        return false
    }

    /// The weight of every pixel of `image` (0 outside the region); a mask region takes the
    /// values of the image's semantic mask it names, clamped to 0…1.
    /// - Throws: `AnalysisError` when the region lies outside the image, is empty, or names a
    ///   mask the image does not have.
    public func weights(in image: SceneLinearImage) throws -> [Float] {
        try resolved(in: image).weights(width: image.width, height: image.height)
    }

    /// The region with a mask reference replaced by the mask's values (`.weights`); other
    /// shapes unchanged.
    /// - Throws: `AnalysisError` naming the image's masks when none matches.
    public func resolved(in image: SceneLinearImage) throws -> Region {
        try resolved(masks: image.masks)
    }

    /// The region with a mask reference replaced by the values of the mask of `masks` (an
    /// image's, on its output grid) it names; other shapes unchanged.
    public func resolved(masks: [SemanticMaskLayer]) throws -> Region {
        guard case .mask(let reference) = shape else { return self }
        return Region(name: name, shape: .weights(try maskLayer(reference, in: masks).values.samples))
    }

    /// The semantic mask layer `reference` names: a layer name, else a SemanticName URN
    /// (compared without regard to case); a URN shared by several layers is ambiguous.
    func maskLayer(_ reference: String, in masks: [SemanticMaskLayer]) throws -> SemanticMaskLayer {
        let key = reference.lowercased()
        if let layer = masks.first(where: { $0.name.lowercased() == key }) { return layer }
        let byURN = masks.filter { !$0.semanticName.isEmpty && $0.semanticName.lowercased() == key }
        if byURN.count == 1 { return byURN[0] }
        if byURN.count > 1 {
            throw Region.usageError("region \(name): \(byURN.count) semantic masks have the SemanticName \(reference) (\(byURN.map(\.name).joined(separator: ", "))); give the layer name")
        }
        guard !masks.isEmpty else {
            throw Region.usageError("region \(name): the image has no semantic mask \"\(reference)\" — it has no semantic masks at all (none in the DNG, or converted with --no-masks)")
        }
        let available = masks.map { $0.semanticName.isEmpty ? $0.name : "\($0.name) (\($0.semanticName))" }
        throw Region.usageError("region \(name): the image has no semantic mask \"\(reference)\"; its masks: \(available.joined(separator: ", "))")
    }

    /// The pixels of `image` the region selects: a rectangle, with a weight per pixel when
    /// the shape is not a rectangle.
    /// - Throws: as `weights(in:)`.
    public func selection(in image: SceneLinearImage) throws -> PixelSelection {
        try resolved(in: image).selection(width: image.width, height: image.height)
    }

    /// The pixels of a `width` × `height` image the region selects.
    /// - Throws: as `weights(width:height:)`.
    public func selection(width: Int, height: Int) throws -> PixelSelection {
        if let r = try pixelRectangle(width: width, height: height) {
            return PixelSelection(width: width, height: height, bounds: r, weights: nil)
        }
        let w = try weights(width: width, height: height)
        var top = height, bottom = 0, left = width, right = 0
        for y in 0..<height {
            let row = w[(y * width)..<((y + 1) * width)]
            guard let first = row.firstIndex(where: { $0 > 0 }) else { continue }
            let last = row.lastIndex(where: { $0 > 0 })!
            top = min(top, y)
            bottom = y + 1
            left = min(left, first - y * width)
            right = max(right, last - y * width + 1)
        }
        return PixelSelection(width: width, height: height, bounds: PixelRect(top: top, left: left, bottom: bottom, right: right),
                              weights: w)
    }

    /// The rectangle of a rectangular shape in a `width` × `height` image (nil for other
    /// shapes); fractions are rounded to the nearest pixel edge.
    /// - Throws: a usage `AnalysisError` when the rectangle is inverted, empty, or not wholly
    ///   inside the image (never clipped to it), naming how it was read and the image size.
    func pixelRectangle(width: Int, height: Int) throws -> PixelRect? {
        let r: PixelRect
        switch shape {
        case .rectangle(let rect):
            r = rect
        case .fractionalRectangle(let t, let l, let b, let rr):
            r = PixelRect(top: Int((t * Double(height)).rounded()), left: Int((l * Double(width)).rounded()),
                          bottom: Int((b * Double(height)).rounded()), right: Int((rr * Double(width)).rounded()))
        default:
            return nil
        }
        let image = "the \(width)×\(height) image (top and bottom within 0…\(height), left and right within 0…\(width))"
        if r.top >= r.bottom || r.left >= r.right {
            let what = r.top > r.bottom || r.left > r.right ? "is inverted (top must be above bottom, left before right)" : "holds no pixels"
            throw Region.usageError("region \(name) \(reading(r)) \(what) in \(image)")
        }
        guard PixelRect(width: width, height: height).contains(r) else {
            let overlaps = r.top < height && r.bottom > 0 && r.left < width && r.right > 0
            throw Region.usageError("region \(name) \(reading(r)) is \(overlaps ? "partly outside" : "outside") \(image); regions are never clipped")
        }
        return r
    }

    /// How a rectangle's values were read, with the pixels `r` they give, for messages.
    func reading(_ r: PixelRect) -> String {
        let pixels = "top \(r.top), left \(r.left), bottom \(r.bottom), right \(r.right)"
        guard case .fractionalRectangle(let t, let l, let b, let rr) = shape else { return "(read as pixels: \(pixels))" }
        let given = [t, l, b, rr].map(Region.percent).joined(separator: ",")
        return "(read as percentages \(given) of the height and width: pixels \(pixels))"
    }

    /// A fraction written as a percentage ("28%").
    static func percent(_ f: Double) -> String { String(format: "%.6g%%", 100 * f) }

    /// Refuses a polygon with a vertex outside a `width` × `height` image (pixel edges
    /// 0…width and 0…height): like rectangles, polygons are never clipped.
    func checkPolygon(_ vertices: [SIMD2<Double>], width: Int, height: Int) throws {
        guard vertices.count >= 3 else { throw Region.usageError("region \(name): a polygon needs at least 3 vertices") }
        let outside = vertices.filter { $0.x < 0 || $0.y < 0 || $0.x > Double(width) || $0.y > Double(height) }
        guard let first = outside.first else { return }
        let vertex = "(\(String(format: "%g", first.x)), \(String(format: "%g", first.y)))"
        throw Region.usageError("region \(name) (a polygon, read as pixels x,y) has \(outside.count) of its \(vertices.count) vertices outside the \(width)×\(height) image (x 0…\(width), y 0…\(height)), e.g. \(vertex); regions are never clipped")
    }

    /// The weight of every pixel of a `width` × `height` image (0 outside the region).
    /// - Throws: `AnalysisError` when the region lies outside the image or is empty, and for
    ///   a mask region (which needs the image: use `weights(in:)`).
    public func weights(width: Int, height: Int) throws -> [Float] {
        var out = [Float](repeating: 0, count: width * height)
        switch shape {
        case .rectangle, .fractionalRectangle:
            let c = try pixelRectangle(width: width, height: height)!
            for y in c.top..<c.bottom { for x in c.left..<c.right { out[y * width + x] = 1 } }
        case .polygon(let vertices):
            try checkPolygon(vertices, width: width, height: height)
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
                throw Region.usageError("region \(name): mask of \(w.count) pixels for a \(width)×\(height) image")
            }
            out = w.map { min(max($0, 0), 1) }
        case .mask(let reference):
            throw Region.usageError("region \(name) refers to the semantic mask \(reference): measure it against an image (Region.weights(in:))")
        }
        guard out.contains(where: { $0 > 0 }) else { throw Region.usageError("region \(name) contains no pixels") }
        return out
    }

    /// A region that cannot be right for this image or request: a usage error (exit 64).
    static func usageError(_ reason: String) -> AnalysisError { AnalysisError(reason: reason, category: .usage) }

    /// The largest coordinate a region may give, in pixels.
    public static let coordinateLimit = 1e9

    /// The syntax of a region, for messages.
    public static let syntax = "name=top,left,bottom,right (whole pixels), name=top%,left%,bottom%,right% (percentages of the height and width), name=poly:x1,y1,x2,y2,... (pixels) or name=mask:<mask>"

    /// Parses "name=top,left,bottom,right" (whole pixels: rows top..<bottom, columns
    /// left..<right), "name=top%,left%,bottom%,right%" (percentages of the image's height and
    /// width), "name=poly:x1,y1,x2,y2,..." (pixels) or "name=mask:<layer or URN>" (a semantic
    /// mask). Plain numbers are always pixels: the old fraction form (every value in 0…1) is
    /// refused with its percentage spelling.
    public static func parse(_ text: String) throws -> Region {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty else {
            throw Region.usageError("region \"\(text)\" must be \(syntax)")
        }
        let name = parts[0], spec = parts[1]
        if spec.hasPrefix("mask:") {
            let reference = String(spec.dropFirst(5)).trimmingCharacters(in: .whitespaces)
            guard !reference.isEmpty else {
                throw Region.usageError("region \(name): mask: needs a mask name (e.g. mask:sky) or SemanticName URN")
            }
            return Region(name: name, shape: .mask(reference))
        }
        if spec.hasPrefix("poly:") { return try polygon(name, String(spec.dropFirst(5))) }
        return try rectangle(name, spec)
    }

    /// The values of a region's comma-separated list, each with whether it ends in "%".
    /// - Throws: when a value is not a finite number or lies beyond ±`coordinateLimit`.
    static func values(_ name: String, _ spec: String) throws -> [(value: Double, percent: Bool)] {
        try spec.split(separator: ",", omittingEmptySubsequences: false).map { item in
            var text = item.trimmingCharacters(in: .whitespaces)
            let percent = text.hasSuffix("%")
            if percent { text = String(text.dropLast()).trimmingCharacters(in: .whitespaces) }
            guard let v = Double(text), v.isFinite else {
                throw Region.usageError("region \(name): \"\(spec)\" has a value that is not a number")
            }
            // Pixel coordinates beyond ±10⁹ cannot be meant (nor held as whole numbers on every platform).
            guard abs(v) <= coordinateLimit else {
                throw Region.usageError("region \(name): \"\(spec)\" has a coordinate beyond ±\(Int(coordinateLimit)) pixels")
            }
            return (v, percent)
        }
    }

    /// A polygon's vertices: x,y pairs in pixels (not necessarily whole).
    static func polygon(_ name: String, _ spec: String) throws -> Region {
        let v = try values(name, spec)
        guard !v.contains(where: \.percent) else {
            throw Region.usageError("region \(name): polygon vertices are pixels x,y; percentages are for rectangles only")
        }
        guard v.count >= 6, v.count % 2 == 0 else { throw Region.usageError("region \(name): a polygon needs x,y pairs (at least 3)") }
        return Region(name: name, shape: .polygon(stride(from: 0, to: v.count, by: 2).map { SIMD2(v[$0].value, v[$0 + 1].value) }))
    }

    /// A rectangle: four whole pixels, or four percentages.
    static func rectangle(_ name: String, _ spec: String) throws -> Region {
        let items = try values(name, spec)
        guard items.count == 4 else {
            throw Region.usageError("region \(name) needs 4 values top,left,bottom,right (whole pixels, or percentages such as 10%,0%,40%,100%)")
        }
        let v = items.map(\.value)
        if items.allSatisfy(\.percent) { return try percentages(name, v) }
        if items.contains(where: \.percent) {
            throw Region.usageError("region \(name): \"\(spec)\" mixes percentages and pixels; give all four as percentages (each with %) or all as whole pixels")
        }
        if let problem = pixelProblem(v) { throw Region.usageError("region \(name): \"\(spec)\" \(problem)") }
        let r = PixelRect(top: Int(v[0]), left: Int(v[1]), bottom: Int(v[2]), right: Int(v[3]))
        guard r.top < r.bottom, r.left < r.right else {
            throw Region.usageError("region \(name) (read as pixels: top \(r.top), left \(r.left), bottom \(r.bottom), right \(r.right)) \(r.top > r.bottom || r.left > r.right ? "is inverted: top must be above bottom and left before right" : "holds no pixels")")
        }
        return Region(name: name, shape: .rectangle(r))
    }

    /// Why plain values cannot be read as pixels: not whole numbers, or the old fraction
    /// form (every value in 0…1; "0,0,1,1" once meant the whole image), with the way to
    /// write what was meant; nil when they can.
    static func pixelProblem(_ v: [Double]) -> String? {
        let whole = v.allSatisfy { $0 == $0.rounded() }
        guard v.allSatisfy({ $0 >= 0 && $0 <= 1 }) else {
            return whole ? nil : "is read as pixels, and pixels must be whole numbers (fractions of the image are percentages, e.g. 10%,0%,40%,100%)"
        }
        let percent = v.map { Region.percent($0) }.joined(separator: ",")
        let meant = whole ? "would be the single top-left pixel, but once meant the whole image" : "is the old fraction form, but plain numbers are whole pixels now"
        return "\(meant): write fractions of the image as percentages (\(percent))" + (whole ? ", and that pixel as poly:0,0,1,0,1,1,0,1" : "")
    }

    /// A rectangle given as percentages of the height (top, bottom) and width (left, right).
    static func percentages(_ name: String, _ v: [Double]) throws -> Region {
        let given = v.map { String(format: "%g%%", $0) }.joined(separator: ",")
        guard v.allSatisfy({ $0 >= 0 && $0 <= 100 }) else {
            throw Region.usageError("region \(name) (read as percentages \(given) of the height and width) reaches outside the image (0% … 100%); regions are never clipped")
        }
        guard v[0] < v[2], v[1] < v[3] else {
            throw Region.usageError("region \(name) (read as percentages \(given) of the height and width) \(v[0] > v[2] || v[1] > v[3] ? "is inverted: top must be above bottom and left before right" : "holds no pixels")")
        }
        return Region(name: name, shape: .fractionalRectangle(top: v[0] / 100, left: v[1] / 100, bottom: v[2] / 100, right: v[3] / 100))
    }
}

/// The pixels a region selects in a `width` × `height` image: those of `bounds`, each with
/// its weight from `weights` (row-major over the whole image) or 1 when `weights` is nil.
public struct PixelSelection: Sendable {
    public let width: Int
    public let height: Int
    /// The rectangle holding every selected pixel.
    public let bounds: PixelRect
    public let weights: [Float]?

    public init(width: Int, height: Int, bounds: PixelRect, weights: [Float]?) {
        self.width = width
        self.height = height
        self.bounds = bounds
        self.weights = weights
    }

    /// The whole image.
    public static func all(width: Int, height: Int) -> PixelSelection {
        PixelSelection(width: width, height: height, bounds: PixelRect(width: width, height: height), weights: nil)
    }
}

/// Why a measurement could not be made.
public struct AnalysisError: SceneLinearFailure, Equatable {
    public let reason: String
    public let category: FailureCategory
    /// `category`: `.usage` for a request that cannot be right (a region outside the image,
    /// a mask the image does not have), `.corruptData` (the default) for data that cannot be measured.
    public init(reason: String, category: FailureCategory = .corruptData) {
        self.reason = reason
        self.category = category
    }
    public var description: String { reason }
}
