internal import CHDF5
import ExchangeCore
import Foundation
import ImageCore

/// Variables along one dimension — a study's time series — in HDF5 that netCDF-4 readers
/// open as a dataset: the dimension is a 1-D dataset made a dimension scale (netCDF's
/// coordinate variable, e.g. `time` in int64 seconds with CF's `units`), every variable 1-D
/// over it with the scale attached, attributes as given (CF's `units`, `long_name`,
/// `flag_masks`…). Written to a temporary file and renamed into place.
public struct HDF5Series: Sendable {
    /// The coordinate: `.integers` or `.doubles`, one per row.
    public var dimension: HDF5Dataset
    /// One value per row each: `.doubles` (NaN where nothing was measured) or `.integers`.
    public var variables: [HDF5Dataset]
    /// The root's attributes (CF's `Conventions`, `title`, `history`…).
    public var attributes: [MetadataItem]

    public init(dimension: HDF5Dataset, variables: [HDF5Dataset], attributes: [MetadataItem]) {
        self.dimension = dimension
        self.variables = variables
        self.attributes = attributes
    }

    public func write(to path: String) throws {
        let n = dimension.shape.first ?? 0
        for v in [dimension] + variables where v.shape != [n] || Self.count(v.values) != n {
            throw ExchangeError(path: path, operation: "HDF5Series.write", message: "\(v.name): \(Self.count(v.values)) values of shape \(v.shape), the dimension has \(n)",
                                category: .outputFailure)
        }
        try AtomicFile.write(to: path) { temporary in
            try reportingDestination(path) {
                try HDF5Library.withLock(for: path, writing: true) { try writeFile(HDF5Session(path: temporary, writing: true)) }
            }
        }
    }

    private func writeFile(_ s: HDF5Session) throws {
        let fapl = try s.plist(H5Pcreate(chdf5_P_FILE_ACCESS()), "H5Pcreate")
        try s.check(H5Pset_libver_bounds(fapl.id, H5F_LIBVER_V18, H5F_LIBVER_V18), "H5Pset_libver_bounds")
        let file = try s.handle(H5Fcreate(s.path, chdf5_F_ACC_TRUNC(), chdf5_P_DEFAULT(), fapl.id), "H5Fcreate", closer: H5Fclose)
        let root = try s.handle(H5Gopen2(file.id, "/", chdf5_P_DEFAULT()), "H5Gopen2 (/)", closer: H5Gclose)
        for item in attributes { try s.set(root, item.key, item.value) }
        let scale = try dataset(s, file, dimension)
        try s.check(H5DSset_scale(scale.id, dimension.name), "H5DSset_scale (/\(dimension.name))")
        for v in variables {
            let d = try dataset(s, file, v)
            try s.check(H5DSattach_scale(d.id, scale.id, 0), "H5DSattach_scale (/\(v.name))")
            try s.check(d.close(), "H5Dclose (/\(v.name))")
        }
        try s.check(scale.close(), "H5Dclose (/\(dimension.name))")
        try s.check(root.close(), "H5Gclose (/)")
        try s.check(file.close(), "H5Fclose")
    }

    /// A 1-D dataset with its values and attributes (left open: the scale is attached to it).
    private func dataset(_ s: HDF5Session, _ file: H5Handle, _ v: HDF5Dataset) throws -> H5Handle {
        let space = try s.dataspace(v.shape)
        let (fileType, memoryType): (hid_t, hid_t) = switch v.values {
        case .doubles: (chdf5_IEEE_F64LE(), chdf5_NATIVE_DOUBLE())
        case .integers: (chdf5_STD_I64LE(), chdf5_NATIVE_INT64())
        case .floats: (chdf5_IEEE_F32LE(), chdf5_NATIVE_FLOAT())
        case .bytes: (chdf5_STD_U8LE(), chdf5_NATIVE_UINT8())
        }
        let d = try s.handle(H5Dcreate2(file.id, v.name, fileType, space.id, chdf5_P_DEFAULT(), chdf5_P_DEFAULT(), chdf5_P_DEFAULT()),
                             "H5Dcreate2 (/\(v.name))", closer: H5Dclose)
        if Self.count(v.values) > 0 {
            let status: herr_t = switch v.values {
            case .doubles(let a): a.withUnsafeBytes { H5Dwrite(d.id, memoryType, chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(), $0.baseAddress) }
            case .integers(let a): a.map(Int64.init).withUnsafeBytes { H5Dwrite(d.id, memoryType, chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(), $0.baseAddress) }
            case .floats(let a): a.withUnsafeBytes { H5Dwrite(d.id, memoryType, chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(), $0.baseAddress) }
            case .bytes(let a): a.withUnsafeBytes { H5Dwrite(d.id, memoryType, chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(), $0.baseAddress) }
            }
            try s.check(status, "H5Dwrite (/\(v.name))")
        }
        for item in v.attributes { try s.set(d, item.key, item.value) }
        return d
    }

    static func count(_ values: HDF5Dataset.Values) -> Int {
        switch values {
        case .doubles(let a): a.count
        case .integers(let a): a.count
        case .floats(let a): a.count
        case .bytes(let a): a.count
        }
    }
}
