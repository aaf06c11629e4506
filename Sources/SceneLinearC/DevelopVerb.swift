// sl_develop: a DNG developed straight into the caller's memory (no image-sized buffer of
// the library's own), patch by patch as the conversion makes them (`Pipeline.scan`).
import Foundation
import SceneLinearKit
import Synchronization

/// Called once, with the output size, before any pixel: returns 0 and where the pixels
/// (height × width × 3 floats) and the clip mask (height × width bytes) go.
public typealias AllocateFunction = @convention(c) (UnsafeMutableRawPointer?, Int64, Int64,
                                                    UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?,
                                                    UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32

/// Where the patches go: the caller's buffers (as addresses, set once by `prepare`) and the
/// output width.
final class Destination: Sendable {
    let target = Mutex<(pixels: Int, clip: Int, width: Int, height: Int)>((0, 0, 0, 0))
    let clipped = SharedCount()
    let masks = Mutex<[SemanticMaskLayer]>([])

    /// Copies a patch: its values, and its clip mask as 0/1 (1: a camera channel reached white).
    func copy(_ patch: ImagePatch) {
        let (p, c, width, _) = target.withLock { $0 }
        guard let pixels = UnsafeMutablePointer<Float>(bitPattern: p), let clip = UnsafeMutablePointer<UInt8>(bitPattern: c) else { return }
        let r = patch.rect, w = r.right - r.left
        var count = 0
        for y in r.top..<r.bottom {
            let source = (y - r.top) * patch.rowStride
            (pixels + 3 * (y * width + r.left)).update(from: patch.values + 3 * source, count: 3 * w)
            let row = clip + y * width + r.left
            if let mask = patch.mask {
                // Two loops without a dependency between pixels, so that each is vectorised.
                let from = mask + source
                for x in 0..<w { row[x] = from[x] != 0 ? 1 : 0 }
                var set = 0
                for x in 0..<w { set &+= Int(row[x]) }
                count += set
            } else {
                row.update(repeating: 0, count: w)
            }
        }
        if count > 0 { clipped.add(count) }
    }
}

@_cdecl("sl_develop")
public func sl_develop(_ path: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?, _ allocate: AllocateFunction?,
                       _ context: UnsafeMutableRawPointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?,
                       _ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) -> Int32 {
    // The caller's context, handed back to its own function (as an address: a plain value).
    let contextAddress = Int(bitPattern: context)
    return status(err, errlen) {
        let out = try handleSlot(out)
        guard let allocate else { throw InterfaceError(reason: "the allocation function is NULL") }
        let file = try string(path, "the path")
        let document = try RequestDocument(json: options.map { try string($0, "the options") }, allowed: RequestDocument.developKeys)
        let develop = try document.developOptions()
        let destination = Destination()
        let developed = try withThreads(document) {
            let dng = try DNGFile.open(path: file)
            return try Pipeline.scan(dng, options: develop, record: true, masksReady: { masks in
                destination.masks.withLock { $0 = masks }
            }, prepare: { width, height in
                var pixels: UnsafeMutablePointer<Float>?, clip: UnsafeMutablePointer<UInt8>?
                guard allocate(UnsafeMutableRawPointer(bitPattern: contextAddress), Int64(height), Int64(width), &pixels, &clip) == 0, let pixels, let clip else {
                    throw InterfaceError(reason: "\(file): the caller did not provide buffers for \(height) × \(width) pixels")
                }
                destination.target.withLock { $0 = (Int(bitPattern: pixels), Int(bitPattern: clip), width, height) }
            }, visit: { patch in destination.copy(patch) })
        }
        let (_, _, width, height) = destination.target.withLock { $0 }
        var image = developed.image
        image.masks = []
        hand(ImageHandle(path: file, image: image, deviation: nil, outputSize: (width, height),
                         clippedPixels: destination.clipped.value, masks: destination.masks.withLock { $0 }), to: out)
    }
}

@_cdecl("sl_image_std_of")
public func sl_image_std_of(_ image: OpaquePointer?, _ pixels: UnsafePointer<Float>?, _ clip: UnsafePointer<UInt8>?,
                            _ dst: UnsafeMutablePointer<Float>?, _ count: UInt, _ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        let h = try handle(image)
        let n = h.width * h.height
        try checkCount(dst, count, expected: 3 * n, "standard deviation")
        guard let pixels else { throw InterfaceError(reason: "the pixel buffer is NULL") }
        try Pipeline.standardDeviationLayer(of: h.image, values: UnsafeBufferPointer(start: pixels, count: 3 * n),
                                            clipMask: clip.map { UnsafeBufferPointer(start: $0, count: n) }, path: h.path,
                                            into: UnsafeMutableBufferPointer(start: dst!, count: 3 * n))
    }
}
