import Foundation
import ImageCore

/// How large an image the EXR and HDF5 readers accept. Checked from the header — the data
/// window, the dataset's shape — before any pixel buffer is allocated, so a small crafted
/// file cannot make a reader ask for gigabytes.
public struct ReadLimits: Sendable, Equatable {
    /// Largest image accepted, in pixels (default 2³⁰, as for DNGs).
    public var maxPixels: Int
    /// Largest memory the decoded planes and the image may take together, in bytes
    /// (default three quarters of the allocation's memory: physical memory, the cgroup's memory limit or Slurm's, whichever is least).
    public var maxBytes: Int

    public init(maxPixels: Int = 1 << 30, maxBytes: Int? = nil) {
        self.maxPixels = maxPixels
        self.maxBytes = maxBytes ?? Allocation.current.memoryBytes / 4 * 3
    }

    /// Refuses a `width × height` image needing `bytesPerPixel` bytes per pixel.
    /// - Throws: `ExchangeError` with category `.limitExceeded` (exit code 17).
    package func check(path: String, width: Int, height: Int, bytesPerPixel: Int) throws {
        let pixels = width.multipliedReportingOverflow(by: height)
        if pixels.overflow || pixels.partialValue > maxPixels {
            throw ExchangeError(path: path, operation: "read",
                                message: "the image is \(width)×\(height) pixels, more than the limit of \(maxPixels) (--max-pixels)",
                                category: .limitExceeded)
        }
        let bytes = pixels.partialValue.multipliedReportingOverflow(by: bytesPerPixel)
        if bytes.overflow || bytes.partialValue > maxBytes {
            throw ExchangeError(path: path, operation: "read",
                                message: "reading the \(width)×\(height) image needs about \(bytes.overflow ? Int.max : bytes.partialValue) bytes, more than the limit of \(maxBytes) (--max-memory)",
                                category: .limitExceeded)
        }
    }
}
