import FuzzSupport

/// The EXR reader the analysis commands use (`stats`, `histogram`, `ratio`, `report` on .exr
/// inputs) on arbitrary bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEXR(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzAnalysisInput(data, size, fileExtension: "exr")
}
