/// Pixels in memory that something else owns: `channels` interleaved values a pixel, `width`
/// pixels a row, `height` rows, each row `rowStride` pixels after the one before. The one view
/// through which the engine's stage collector, its output sink and its mosaic window, and the
/// bracket estimator, write images from several threads at once.
///
/// The view owns nothing: whoever made it keeps the memory alive (and initialised where it is
/// read) for as long as any copy of the view is used, which the `with…` functions that make
/// views ensure by lending them to a closure only.
// Safe because of the one rule every user of a shared view keeps: threads write disjoint
// pixels (each its own rows, bands or samples) and read only pixels no thread is writing.
public struct PixelView<Element: BitwiseCopyable>: @unchecked Sendable {
    public let base: UnsafeMutablePointer<Element>
    public let width: Int, height: Int, channels: Int
    /// Pixels from the start of one row to the start of the next.
    public let rowStride: Int

    public init(_ base: UnsafeMutablePointer<Element>, width: Int, height: Int, channels: Int = 1, rowStride: Int? = nil) {
        precondition(width >= 0 && height >= 0 && channels > 0 && (rowStride ?? width) >= width)
        self.base = base
        self.width = width
        self.height = height
        self.channels = channels
        self.rowStride = rowStride ?? width
    }

    /// A view of `buffer` as `width × height` pixels of `channels` values, rows packed; an
    /// empty buffer (an array not kept) gives a view that must not be written.
    public init(_ buffer: UnsafeMutableBufferPointer<Element>, width: Int, height: Int, channels: Int = 1) {
        precondition(buffer.isEmpty || buffer.count >= width * height * channels)
        let none = UnsafeMutableRawPointer(bitPattern: MemoryLayout<Element>.alignment)!.assumingMemoryBound(to: Element.self)
        self.init(buffer.baseAddress ?? none, width: width, height: buffer.isEmpty ? 0 : height, channels: channels)
    }

    /// The first value of row `y`.
    @inline(__always)
    public func row(_ y: Int) -> UnsafeMutablePointer<Element> { base + y * rowStride * channels }

    /// The first value of pixel (`x`, `y`).
    @inline(__always)
    public func pixel(_ x: Int, _ y: Int) -> UnsafeMutablePointer<Element> { base + (y * rowStride + x) * channels }

    /// Value `i` counted from `base` (rows packed: sample `(y · width + x) · channels + c`).
    @inline(__always)
    public subscript(i: Int) -> Element {
        get { base[i] }
        nonmutating set { base[i] = newValue }
    }
}
