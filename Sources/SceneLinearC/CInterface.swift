// The C interface of scenelinear.h: each function checks its arguments, runs one library
// verb and turns every thrown error into a status and a message. Nothing here may trap: a
// trap would end the calling process (a Python interpreter, a C program).
import Foundation
import SceneLinearKit

/// What a handle holds: the image as read, its standard deviation layer when the file has
/// one, its path, and for a merged bracket the frames each pixel used and the merge's report
/// (JSON). Immutable once made.
/// A handle from `sl_develop` holds no pixels (they went to the caller): its size, clipped
/// pixel count and semantic masks are given separately.
final class ImageHandle: Sendable {
    let path: String
    let image: SceneLinearImage
    let deviation: [Float]?
    let frames: [UInt8]?
    let mergeReport: String?
    let width: Int, height: Int
    let clippedPixels: Int
    let masks: [SemanticMaskLayer]
    /// Whether the pixels are in `image` (not only in the caller's memory).
    let holdsPixels: Bool

    init(path: String, image: SceneLinearImage, deviation: [Float]?, frames: [UInt8]? = nil, mergeReport: String? = nil,
         outputSize: (width: Int, height: Int)? = nil, clippedPixels: Int? = nil, masks: [SemanticMaskLayer]? = nil) {
        self.path = path
        self.image = image
        self.deviation = deviation
        self.frames = frames
        self.mergeReport = mergeReport
        holdsPixels = outputSize == nil
        width = outputSize?.width ?? image.width
        height = outputSize?.height ?? image.height
        self.clippedPixels = clippedPixels ?? image.clippedPixelCount
        self.masks = masks ?? image.masks
    }

    /// Throws unless the pixels are here.
    func requirePixels() throws {
        guard holdsPixels else { throw InterfaceError(reason: "\(path): the pixels were developed into the caller's memory") }
    }

    static func from(_ p: OpaquePointer?) -> ImageHandle? {
        p.map { Unmanaged<ImageHandle>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
    }
}

/// A failure of the interface itself: a null or wrong-sized argument.
struct InterfaceError: SceneLinearFailure {
    var reason: String
    var category: FailureCategory { .usage }
    var description: String { reason }
}

/// Runs `body`, returning 0, or the failure's category code with its message in `err`; the
/// failure's file and system error number are kept for `sl_error_details` on this thread.
func status(_ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt, _ body: () throws -> Void) -> Int32 {
    do {
        try body()
        LastFailure.keep(nil)
        return 0
    } catch let failure as any SceneLinearFailure {
        LastFailure.keep(failure)
        write(message: failure.description, to: err, errlen)
        return failure.category.exitCode
    } catch {
        LastFailure.keep(nil)
        write(message: "internal error: \(error)", to: err, errlen)
        return FailureCategory.internalError.exitCode
    }
}

/// The file and system error number of the calling thread's last failure.
final class LastFailure {
    let file: String, systemError: Int32

    private init(file: String, systemError: Int32) {
        self.file = file
        self.systemError = systemError
    }

    private static let key = "scenelinear.lastFailure"

    static func keep(_ failure: (any SceneLinearFailure)?) {
        if let failure, failure.file != nil || failure.systemError != nil {
            Thread.current.threadDictionary[key] = LastFailure(file: failure.file ?? "", systemError: failure.systemError ?? 0)
        } else {
            Thread.current.threadDictionary.removeObject(forKey: key)
        }
    }

    static var details: LastFailure? { Thread.current.threadDictionary[key] as? LastFailure }
}

@_cdecl("sl_error_details")
public func sl_error_details(_ systemError: UnsafeMutablePointer<Int32>?, _ path: UnsafeMutablePointer<CChar>?, _ pathlen: UInt) -> Int32 {
    guard let details = LastFailure.details else {
        systemError?.pointee = 0
        write(message: "", to: path, pathlen)
        return 0
    }
    systemError?.pointee = details.systemError
    write(message: details.file, to: path, pathlen)
    return details.file.utf8.count + 1 > Int(pathlen) && path != nil ? 2 : 1
}

/// Copies `message` into `err`, cut at a character boundary to fit `errlen` bytes with its NUL.
func write(message: String, to err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) {
    guard let err, errlen > 0 else { return }
    var bytes = Array(message.utf8)
    var limit = Int(min(errlen - 1, UInt(bytes.count)))
    // Do not cut inside a UTF-8 sequence: back up over continuation bytes.
    while limit < bytes.count, limit > 0, bytes[limit] & 0xC0 == 0x80 { limit -= 1 }
    bytes = Array(bytes[..<limit])
    bytes.withUnsafeBufferPointer { b in
        err.withMemoryRebound(to: UInt8.self, capacity: bytes.count + 1) { out in
            if let base = b.baseAddress { out.update(from: base, count: bytes.count) }
            out[bytes.count] = 0
        }
    }
}

func string(_ p: UnsafePointer<CChar>?, _ name: String) throws -> String {
    guard let p else { throw InterfaceError(reason: "\(name) is NULL") }
    return String(decoding: UnsafeRawBufferPointer(start: p, count: strlen(p)), as: UTF8.self)
}

/// The caller's handle pointer, cleared: a failure leaves it NULL.
func handleSlot(_ out: UnsafeMutablePointer<OpaquePointer?>?) throws -> UnsafeMutablePointer<OpaquePointer?> {
    guard let out else { throw InterfaceError(reason: "the handle pointer is NULL") }
    out.pointee = nil
    return out
}

/// Hands `h` to the caller (+1: released by sl_image_release).
func hand(_ h: ImageHandle, to out: UnsafeMutablePointer<OpaquePointer?>) {
    out.pointee = OpaquePointer(Unmanaged.passRetained(h).toOpaque())
}

func handle(_ p: OpaquePointer?) throws -> ImageHandle {
    guard let h = ImageHandle.from(p) else { throw InterfaceError(reason: "the image handle is NULL") }
    return h
}

/// A NUL-terminated copy of `text` the caller releases with sl_string_free.
func allocated(_ text: String, into out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) throws {
    guard let out else { throw InterfaceError(reason: "the result pointer is NULL") }
    guard let copy = strdup(text) else { throw InterfaceError(reason: "out of memory for a \(text.utf8.count)-byte result") }
    out.pointee = copy
}

/// Runs `body` with the thread count the options ask for.
func withThreads<T>(_ document: RequestDocument, _ body: () throws -> T) throws -> T {
    guard let n = try document.threads() else { return try body() }
    return try Parallel.withThreadCount(n, body)
}

/// Checks that a caller's buffer holds exactly `expected` elements.
func checkCount(_ dst: UnsafeMutableRawPointer?, _ count: UInt, expected: Int, _ what: String) throws {
    guard dst != nil else { throw InterfaceError(reason: "the \(what) buffer is NULL") }
    guard count == UInt(expected) else {
        throw InterfaceError(reason: "the \(what) buffer holds \(count) elements; the image needs \(expected)")
    }
}

@_cdecl("sl_abi_version")
public func sl_abi_version() -> Int32 { 1 }

@_cdecl("sl_version")
public func sl_version(_ buffer: UnsafeMutablePointer<CChar>?, _ length: UInt) -> Int32 {
    status(nil, 0) {
        guard let buffer, length > UInt(SceneLinearVersion.software.utf8.count) else {
            throw InterfaceError(reason: "the version buffer is NULL or too short")
        }
        write(message: SceneLinearVersion.software, to: buffer, length)
    }
}

@_cdecl("sl_image_open")
public func sl_image_open(_ path: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?,
                          _ out: UnsafeMutablePointer<OpaquePointer?>?, _ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        let out = try handleSlot(out)
        let file = try string(path, "the path")
        let document = try RequestDocument(json: options.map { try string($0, "the options") }, allowed: RequestDocument.developKeys)
        let develop = try document.developOptions()
        let (image, deviation) = try withThreads(document) { () throws -> (SceneLinearImage, [Float]?) in
            // A Radiance picture this tool wrote (radiance, its scale and lower bounds); the rest as the measurements read them.
            if ["hdr", "pic"].contains(URL(fileURLWithPath: file).pathExtension.lowercased()) {
                return (try RadianceFile.readSceneLinear(file, limits: ReadLimits(maxPixels: develop.limits.maxPixels,
                                                                                   maxBytes: Pipeline.memoryLimit(develop))), nil)
            }
            return try AnalysisInput.read(file, options: develop)
        }
        hand(ImageHandle(path: file, image: image, deviation: deviation), to: out)
    }
}

@_cdecl("sl_image_release")
public func sl_image_release(_ image: OpaquePointer?) {
    guard let image else { return }
    Unmanaged<ImageHandle>.fromOpaque(UnsafeRawPointer(image)).release()
}

@_cdecl("sl_image_shape")
public func sl_image_shape(_ image: OpaquePointer?, _ height: UnsafeMutablePointer<Int64>?, _ width: UnsafeMutablePointer<Int64>?,
                           _ channels: UnsafeMutablePointer<Int64>?) -> Int32 {
    status(nil, 0) {
        let h = try handle(image)
        height?.pointee = Int64(h.height)
        width?.pointee = Int64(h.width)
        channels?.pointee = 3
    }
}

@_cdecl("sl_image_read")
public func sl_image_read(_ image: OpaquePointer?, _ dst: UnsafeMutablePointer<Float>?, _ count: UInt,
                          _ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        let h = try handle(image)
        try h.requirePixels()
        try checkCount(dst, count, expected: h.image.pixels.samples.count, "pixel")
        h.image.pixels.samples.withUnsafeBufferPointer { dst!.update(from: $0.baseAddress!, count: $0.count) }
    }
}

@_cdecl("sl_image_read_std")
public func sl_image_read_std(_ image: OpaquePointer?, _ dst: UnsafeMutablePointer<Float>?, _ count: UInt,
                              _ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        let h = try handle(image)
        try h.requirePixels()
        try checkCount(dst, count, expected: h.image.pixels.samples.count, "standard deviation")
        let layer = try h.deviation ?? Pipeline.standardDeviationLayer(of: h.image, path: h.path)
        guard layer.count == Int(count) else { throw InterfaceError(reason: "\(h.path): the standard deviation layer has \(layer.count) values, not \(count)") }
        layer.withUnsafeBufferPointer { dst!.update(from: $0.baseAddress!, count: $0.count) }
    }
}

@_cdecl("sl_image_read_clip_mask")
public func sl_image_read_clip_mask(_ image: OpaquePointer?, _ dst: UnsafeMutablePointer<UInt8>?, _ count: UInt,
                                    _ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        let h = try handle(image)
        try h.requirePixels()
        let n = h.image.width * h.image.height
        try checkCount(dst, count, expected: n, "clip mask")
        if let mask = h.image.clipMask {
            mask.withUnsafeBufferPointer { dst!.update(from: $0.baseAddress!, count: n) }
        } else {
            dst!.update(repeating: 0, count: n)
        }
    }
}

@_cdecl("sl_image_read_mask")
public func sl_image_read_mask(_ image: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ dst: UnsafeMutablePointer<Float>?, _ count: UInt,
                               _ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        let h = try handle(image)
        let wanted = try string(name, "the mask name")
        guard let layer = h.masks.first(where: { $0.name == wanted || $0.semanticName == wanted }) else {
            let known = h.masks.map(\.name)
            throw InterfaceError(reason: "\(h.path): no semantic mask '\(wanted)' (the image has \(known.isEmpty ? "none" : known.joined(separator: ", ")))")
        }
        try checkCount(dst, count, expected: h.width * h.height, "mask")
        layer.values.samples.withUnsafeBufferPointer { dst!.update(from: $0.baseAddress!, count: $0.count) }
    }
}

@_cdecl("sl_image_metadata")
public func sl_image_metadata(_ image: OpaquePointer?, _ json: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                              _ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        let h = try handle(image)
        try allocated(try ImageDocument(h).json(), into: json)
    }
}

@_cdecl("sl_analyze")
public func sl_analyze(_ paths: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?,
                       _ json: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ err: UnsafeMutablePointer<CChar>?,
                       _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        json?.pointee = nil
        let files = try pathList(paths)
        let document = try RequestDocument(json: options.map { try string($0, "the options") },
                                           allowed: RequestDocument.developKeys.union(RequestDocument.analysisKeys).union(RequestDocument.fisheyeKeys))
        let request = try document.analysisRequest()
        let results = try withThreads(document) { Pipeline.analyze(try AnalysisInput.expand(files), request: request) }
        try allocated(try AnalysisOutput.json(results), into: json)
        if let failed = results.first(where: { $0.error != nil }) {
            write(message: failed.error ?? "", to: err, errlen)
            throw AnalysisFailure(message: failed.error ?? "", code: FailureCategory.allCases.first { $0.name == failed.errorCategory } ?? .internalError)
        }
    }
}

/// A measured file's failure, reported after its document was made.
struct AnalysisFailure: SceneLinearFailure {
    var message: String
    var code: FailureCategory
    var category: FailureCategory { code }
    var description: String { message }
}

@_cdecl("sl_string_free")
public func sl_string_free(_ s: UnsafeMutablePointer<CChar>?) {
    free(s)
}
