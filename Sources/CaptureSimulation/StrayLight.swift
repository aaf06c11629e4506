import ImageCore

/// The simulator's stray light: a share `fraction` of every pixel's light spread evenly over
/// the square of pixels about it whose corners lie `radius` (× the image's height) away — so
/// that all of it stays within that distance — and the rest left in place. The light is
/// conserved (but for what the square carries past the image's edges).
public struct SimulatedStrayLight: Codable, Sendable, Equatable {
    public var fraction: Double
    public var radius: Double

    public init(fraction: Double, radius: Double) {
        self.fraction = fraction
        self.radius = radius
    }

    /// The half-width of the square, in pixels of an image `height` high.
    public func halfWidth(height: Int) -> Int { max(1, Int(radius * Double(height) / 2.0.squareRoot())) }

    /// `radiance` with the stray light: (1 − f) · L + f · (L averaged over the square), the
    /// average by running sums along rows, then columns.
    func spread(_ radiance: ImageBuffer<Double>) -> ImageBuffer<Double> {
        let w = radiance.width, h = radiance.height, c = radiance.channels, k = halfWidth(height: h)
        let side = Double(2 * k + 1)
        var rows = [Double](repeating: 0, count: w * h * c)
        radiance.samples.withUnsafeBufferPointer { src in
            for y in 0..<h {
                for ch in 0..<c {
                    var sum = 0.0
                    for x in 0..<min(k, w) { sum += src[(y * w + x) * c + ch] }
                    for x in 0..<w {
                        if x + k < w { sum += src[(y * w + x + k) * c + ch] }
                        if x - k - 1 >= 0 { sum -= src[(y * w + x - k - 1) * c + ch] }
                        rows[(y * w + x) * c + ch] = sum / side
                    }
                }
            }
        }
        var out = radiance.samples
        for x in 0..<w {
            for ch in 0..<c {
                var sum = 0.0
                for y in 0..<min(k, h) { sum += rows[(y * w + x) * c + ch] }
                for y in 0..<h {
                    if y + k < h { sum += rows[((y + k) * w + x) * c + ch] }
                    if y - k - 1 >= 0 { sum -= rows[((y - k - 1) * w + x) * c + ch] }
                    let i = (y * w + x) * c + ch
                    out[i] = (1 - fraction) * radiance.samples[i] + fraction * sum / side
                }
            }
        }
        return ImageBuffer(width: w, height: h, channels: c, samples: out)
    }
}
