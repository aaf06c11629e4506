internal import COpenEXR
import ExchangeCore
import Foundation
import ImageCore

/// The source of a write: the channels of one level over `width × height` row-major pixels,
/// each a view of the bytes it lies in (`PixelView`: its owner keeps them alive and
/// unchanged while a write runs, which only reads them) and its sample's place in a pixel.
struct EXRSourcePlanes: Sendable {
    struct Channel: Sendable {
        var name: String
        /// The pixels the channel's samples lie in, as bytes: one pixel is `pixels.channels`
        /// bytes (an interleaved RGB pixel, or one sample of a plane of its own).
        var pixels: PixelView<UInt8>
        /// Where the channel's sample starts in a pixel, in bytes.
        var offset: Int
        /// Samples from one pixel to the next.
        var pixelStride: Int

        /// The channel whose first sample is the `offset`-th byte of `pixels` bytes (`pixelStride`
        /// samples of `bytesPerSample` bytes a pixel).
        init(name: String, in pixels: UnsafeRawPointer, offset: Int = 0, pixelStride: Int, bytesPerSample: Int, width: Int, height: Int) {
            self.name = name
            self.pixels = PixelView(UnsafeMutablePointer(mutating: pixels.assumingMemoryBound(to: UInt8.self)), width: width, height: height,
                                    channels: pixelStride * bytesPerSample)
            self.offset = offset
            self.pixelStride = pixelStride
        }

        /// The channel's first sample.
        var first: UnsafeRawPointer { UnsafeRawPointer(pixels.base + offset) }
    }
    var width: Int
    var height: Int
    var bytesPerSample: Int
    var channels: [Channel] = []

    func channel(_ name: String) -> Channel? { channels.first { $0.name == name } }

    /// Adds R, G and B, interleaved in that order in the pixels at `rgb`.
    mutating func addRGB(_ rgb: UnsafeRawPointer) {
        for (c, name) in ["R", "G", "B"].enumerated() {
            channels.append(Channel(name: name, in: rgb, offset: c * bytesPerSample, pixelStride: 3, bytesPerSample: bytesPerSample,
                                    width: width, height: height))
        }
    }

    /// Adds the channel `name`, a plane of its own at `plane`.
    mutating func addPlane(_ name: String, _ plane: UnsafeRawPointer) {
        channels.append(Channel(name: name, in: plane, pixelStride: 1, bytesPerSample: bytesPerSample, width: width, height: height))
    }

    /// Points channel `index` at other pixels of the same layout.
    mutating func move(_ index: Int, to pixels: UnsafeRawPointer) {
        let c = channels[index]
        channels[index] = Channel(name: c.name, in: pixels, offset: c.offset, pixelStride: c.pixelStride, bytesPerSample: bytesPerSample,
                                  width: width, height: height)
    }
}

extension EXRSourcePlanes {
    /// Points the pipeline's channels at the block of `planes` whose top-left pixel is (x, y).
    static func point(_ pipe: UnsafeMutablePointer<exr_encode_pipeline_t>, at planes: EXRSourcePlanes, x: Int, y: Int) {
        let size = planes.bytesPerSample
        for c in 0..<Int(pipe.pointee.channel_count) {
            let channel = pipe.pointee.channels + c
            let name = String(cString: channel.pointee.channel_name)
            guard let source = planes.channel(name) else { preconditionFailure("unexpected channel \(name)") }
            let pixels = source.pixels
            channel.pointee.encode_from_ptr = UnsafePointer(pixels.pixel(x, y) + source.offset)
            channel.pointee.user_pixel_stride = Int32(pixels.channels)
            channel.pointee.user_line_stride = Int32(pixels.channels * pixels.rowStride)
            channel.pointee.user_bytes_per_element = Int16(size)
            channel.pointee.user_data_type = UInt16((size == 2 ? EXR_PIXEL_HALF : EXR_PIXEL_FLOAT).rawValue)
        }
    }
}

/// The pixels of one level of an EXR being written, owned: interleaved RGB then one plane
/// per extra channel, as HALF or FLOAT.
// Safe because the store is filled when it is made and only read afterwards (`withPlanes`, `halved`).
final class EXRPixelStore: @unchecked Sendable {
    let width: Int
    let height: Int
    let type: EXRPixelType
    private let storage: UnsafeMutableRawBufferPointer
    /// Level-0 Float values kept for building the next mip-map level (nil for HALF scanline files).
    private var floats: [Float]?
    /// The image's own half RGB values, referenced rather than copied (nil when `storage`
    /// holds R, G, B).
    private let rgbHalves: [Float16]?
    /// FLOAT pixels referenced rather than copied: interleaved RGB and one array per extra
    /// channel (nil when `storage` holds them).
    private var referencedFloats: (rgb: [Float], extra: [[Float]])?
    let names: [String]
    /// The channels; with `rgbHalves`, R, G and B point nowhere until `withPlanes`.
    private let planes: EXRSourcePlanes

    private init(width: Int, height: Int, type: EXRPixelType, names: [String], rgbHalves: [Float16]? = nil, referenced: Bool = false) {
        self.width = width
        self.height = height
        self.type = type
        self.names = names
        self.rgbHalves = rgbHalves
        let bytes = type == .half ? 2 : 4
        let rgbPlanes = rgbHalves == nil ? 3 : 0
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: referenced ? 1 : max(1, width * height * (rgbPlanes + names.count) * bytes),
                                                         alignment: 16)
        var planes = EXRSourcePlanes(width: width, height: height, bytesPerSample: bytes)
        let base = UnsafeRawPointer(storage.baseAddress!)
        planes.addRGB(base)
        for (k, name) in names.enumerated() { planes.addPlane(name, base + (rgbPlanes + k) * width * height * bytes) }
        self.planes = planes
    }

    /// HALF pixels: `rgbHalves` as they are (not copied), the extra planes rounded to half.
    convenience init(width: Int, height: Int, rgbHalves: [Float16], extra: [[Float]], names: [String]) {
        self.init(width: width, height: height, type: .half, names: names, rgbHalves: rgbHalves)
        let n = width * height
        let out = storage.baseAddress!.assumingMemoryBound(to: Float16.self)
        for (k, plane) in extra.enumerated() {
            let halves = HalfConversion.halves(plane)
            halves.withUnsafeBufferPointer { (out + k * n).update(from: $0.baseAddress!, count: n) }
        }
    }

    /// Runs `body` with the channels (R, G, B pointing into the image's own values, valid
    /// during `body` only).
    func withPlanes<R>(_ body: (EXRSourcePlanes) throws -> R) rethrows -> R {
        if let referencedFloats {
            return try referencedFloats.rgb.withUnsafeBufferPointer { rgb in
                var p = planes
                for c in 0..<3 { p.move(c, to: rgb.baseAddress!) }
                func extra(_ k: Int) throws -> R {
                    guard k < referencedFloats.extra.count else { return try body(p) }
                    return try referencedFloats.extra[k].withUnsafeBufferPointer { plane in
                        p.move(3 + k, to: plane.baseAddress!)
                        return try extra(k + 1)
                    }
                }
                return try extra(0)
            }
        }
        guard let rgbHalves else { return try body(planes) }
        return try rgbHalves.withUnsafeBufferPointer { rgb in
            var p = planes
            for c in 0..<3 { p.move(c, to: rgb.baseAddress!) }
            return try body(p)
        }
    }

    /// Pixels from Float values, stored as `type`.
    /// - Throws: `HalfRangeError` naming `destination` when HALF cannot hold a value.
    /// - Parameter keepFloats: keep the Float values for `halved` (mip-map levels); without it
    ///   the values are written into the store part by part, with no copy of the whole.
    convenience init(width: Int, height: Int, rgbFloats: [Float], extra: [[Float]], names: [String], type: EXRPixelType,
                     destination: String, keepFloats: Bool = true) throws {
        if type == .float && !keepFloats {
            // Referenced as they are: no copy of the image.
            self.init(width: width, height: height, type: type, names: names, referenced: true)
            referencedFloats = (rgbFloats, extra)
            return
        }
        self.init(width: width, height: height, type: type, names: names)
        guard keepFloats else {
            var offset = 0
            for part in [rgbFloats] + extra {
                try fill(part, at: offset, destination: destination)
                offset += part.count
            }
            return
        }
        var all = rgbFloats
        for plane in extra { all += plane }
        try fill(all, destination: destination)
        floats = all
    }

    /// Writes `values` into the store from sample `offset` on, as the store's type.
    private func fill(_ values: [Float], at offset: Int = 0, destination: String) throws {
        if type == .half {
            let halves = try HalfConversion.checkedHalves(values, what: destination)
            halves.withUnsafeBytes { (storage.baseAddress! + 2 * offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        } else {
            values.withUnsafeBytes { (storage.baseAddress! + 4 * offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
    }

    /// The next mip-map level (ROUND_DOWN): each pixel the mean of a 2×2 block of this one
    /// (a 1-pixel dimension stays 1).
    func halved(type: EXRPixelType) throws -> EXRPixelStore {
        let src = floats ?? []
        let w2 = max(1, width / 2), h2 = max(1, height / 2)
        let fx = width > 1 ? 2 : 1, fy = height > 1 ? 2 : 1
        let next = EXRPixelStore(width: w2, height: h2, type: type, names: names)
        var out = [Float](repeating: 0, count: w2 * h2 * (3 + names.count))
        let n = width * height, n2 = w2 * h2
        // Interleaved RGB.
        for y in 0..<h2 {
            for x in 0..<w2 {
                for c in 0..<3 {
                    var sum: Float = 0
                    for dy in 0..<fy { for dx in 0..<fx { sum += src[((y * fy + dy) * width + x * fx + dx) * 3 + c] } }
                    out[(y * w2 + x) * 3 + c] = sum / Float(fx * fy)
                }
            }
        }
        for k in 0..<names.count {
            let from = 3 * n + k * n, to = 3 * n2 + k * n2
            for y in 0..<h2 {
                for x in 0..<w2 {
                    var sum: Float = 0
                    for dy in 0..<fy { for dx in 0..<fx { sum += src[from + (y * fy + dy) * width + x * fx + dx] } }
                    out[to + y * w2 + x] = sum / Float(fx * fy)
                }
            }
        }
        try next.fill(out, destination: "a mip-map level")  // (averages of values HALF holds: never thrown)
        next.floats = out
        return next
    }

    deinit { storage.deallocate() }
}
