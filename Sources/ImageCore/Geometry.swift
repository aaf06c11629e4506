/// A rectangle of pixels in DNG order: `top` and `left` inclusive, `bottom` and `right`
/// exclusive (the ActiveArea convention of DNG tag 50829).
public struct PixelRect: Hashable, Sendable, CustomStringConvertible, Codable {
    public var top: Int
    public var left: Int
    public var bottom: Int
    public var right: Int

    public init(top: Int, left: Int, bottom: Int, right: Int) {
        self.top = top
        self.left = left
        self.bottom = bottom
        self.right = right
    }

    /// The rectangle `(0, 0)`–`(height, width)`.
    public init(width: Int, height: Int) {
        self.init(top: 0, left: 0, bottom: height, right: width)
    }

    public var width: Int { right - left }
    public var height: Int { bottom - top }
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// True when `other` lies entirely inside this rectangle.
    public func contains(_ other: PixelRect) -> Bool {
        other.top >= top && other.left >= left && other.bottom <= bottom && other.right <= right
    }

    public var description: String { "(top \(top), left \(left), bottom \(bottom), right \(right))" }
}
