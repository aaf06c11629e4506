import FuzzSupport

/// The HDF5 reader the analysis commands use (`stats`, `histogram`, `ratio`, `report` on .h5
/// inputs) on arbitrary bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHDF5(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzAnalysisInput(data, size, fileExtension: "h5")
}
