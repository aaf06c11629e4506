/// A row-major image with `channels` interleaved samples per pixel.
///
/// The sample order within a row is pixel by pixel, channel by channel, as in a DNG with
/// PlanarConfiguration 1 ("chunky"): `samples[(row * width + column) * channels + channel]`.
public struct ImageBuffer<Sample: Sendable>: Sendable {
    public let width: Int
    public let height: Int
    public let channels: Int
    public var samples: [Sample]

    /// Wraps existing samples. Traps when the count does not match the shape (a caller bug).
    public init(width: Int, height: Int, channels: Int, samples: [Sample]) {
        precondition(width >= 0 && height >= 0 && channels > 0)
        precondition(samples.count == width * height * channels, "sample count does not match the shape")
        self.width = width
        self.height = height
        self.channels = channels
        self.samples = samples
    }

    /// An image filled with one value.
    public init(width: Int, height: Int, channels: Int, repeating value: Sample) {
        self.init(width: width, height: height, channels: channels,
                  samples: [Sample](repeating: value, count: width * height * channels))
    }

    public var pixelCount: Int { width * height }

    /// The sample of `channel` at (`row`, `column`).
    public subscript(row: Int, column: Int, channel: Int) -> Sample {
        get { samples[(row * width + column) * channels + channel] }
        set { samples[(row * width + column) * channels + channel] = newValue }
    }
}
