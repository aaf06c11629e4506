import Foundation
import SceneLinearKit

/// The EXR reader the analysis commands use (`stats`, `histogram`, `ratio`, `report` on
/// .exr inputs: `AnalysisInput.load`, then a statistics pass over the image) on arbitrary
/// bytes written to a file: errors are fine, crashes are bugs. The library reads files, so
/// each input goes to a file in /dev/shm (memory) first.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEXR(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let path = fuzzInputPath
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes: data, count: size)) else { return 0 }
    defer { try? FileManager.default.removeItem(atPath: path) }
    var options = DevelopOptions()
    options.limits.maxPixels = 1 << 20  // as the decode target: headers claiming more are refused
    options.maxMemoryBytes = 256 << 20
    if let input = try? AnalysisInput.load(path, options: options) {
        let image = input.image
        _ = try? RegionStatistics.measure(image, region: Region(name: "all", shape: .rectangle(PixelRect(width: image.width, height: image.height))),
                                          percentiles: [50])
    }
    return 0
}

private let fuzzInputPath: String = {
    let dir = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    return "\(dir)/scenelinear-fuzz-\(getpid()).exr"
}()
