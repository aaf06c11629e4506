import Foundation
import SceneLinearKit

/// What the analysis commands do with an input file (`Pipeline.analyze` of the path, and
/// `AnalysisInput.load` then a statistics pass over the whole image), on arbitrary bytes
/// written to a file with extension `fileExtension` (the library reads files; /dev/shm keeps
/// them in memory): errors are fine, crashes are bugs. Headers claiming more than 1 M pixels or 256 MB are refused, as in the
/// decode target.
public func fuzzAnalysisInput(_ data: UnsafePointer<UInt8>, _ size: Int, fileExtension: String) -> CInt {
    let dir = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let path = "\(dir)/scenelinear-fuzz-\(getpid()).\(fileExtension)"
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes: data, count: size)) else { return 0 }
    defer { try? FileManager.default.removeItem(atPath: path) }
    var options = DevelopOptions()
    options.limits.maxPixels = 1 << 20
    options.maxMemoryBytes = 256 << 20
    // The commands' own route: our EXR and HDF5 measured pass by pass from the file (a
    // scanline EXR decoded again a block of rows at a time in each pass), the rest whole.
    var request = AnalysisRequest()
    request.develop = options
    _ = try? Pipeline.analyze(path, request: request)
    if let input = try? AnalysisInput.load(path, options: options) {
        let image = input.image
        _ = try? RegionStatistics.measure(image, region: Region(name: "all", shape: .rectangle(PixelRect(width: image.width, height: image.height))),
                                          percentiles: [50])
    }
    return 0
}
