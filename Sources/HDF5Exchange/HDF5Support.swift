internal import CHDF5
import ExchangeCore
import HDF5Format
import Foundation
import ImageCore
import Synchronization

/// Process-wide serialisation of HDF5 calls.
///
/// Debian's serial HDF5 is built thread-safe (one global library lock, per-thread error
/// stacks), but other builds are not; holding one lock for a whole file operation keeps
/// the error stack of a failure together with the call that made it either way. The lock is
/// not reentrant: code running under `withLock` never calls it again.
enum HDF5Library {
    private static let lock = Mutex(())

    /// HDF5's advisory file locks are turned off (unless the user set
    /// `HDF5_USE_FILE_LOCKING`): files are written under a temporary name and renamed into
    /// place, so the locks protect nothing here, and a child process started while a file
    /// is open (HDF5 opens without close-on-exec) inherits the descriptor and keeps the
    /// lock, making the next open of that file fail with EAGAIN.
    private static let fileLockingOff: Void = {
        setenv("HDF5_USE_FILE_LOCKING", "FALSE", 0)
    }()

    /// Runs `body` under the lock, libhdf5 loaded first: it is loaded on first use
    /// (`CLazyLibraries`), so a program that touches no HDF5 file never loads it nor the
    /// libraries it brings (libcurl, TLS, Kerberos, …). Where it cannot be loaded, HDF5 files
    /// are a feature this installation lacks, reported for `path` as such: exit 14 for a file
    /// to read, 16 for one to write.
    static func withLock<T>(for path: String, writing: Bool, _ body: () throws -> T) throws -> T {
        if let reason = LazyLibrary.hdf5.load() {
            throw ExchangeError(path: path, operation: "dlopen", message: "HDF5 files cannot be \(writing ? "written" : "read"): \(reason)",
                                category: writing ? .outputFailure : .unsupportedFeature)
        }
        return try lock.withLock { _ in
            _ = fileLockingOff
            // Error printing is a per-thread setting in thread-safe builds.
            chdf5_silence_errors()
            return try body()
        }
    }

    /// The size of one element of `storedStringType`: the stored form of a variable-length
    /// string (4 + size of offsets + 4 bytes, at most 40 for the 32-byte offsets the format
    /// allows) and, in the last byte, that form's size.
    static let storedStringSize = 48
    static let storedStringTag = "scenelinear: stored form of a variable-length string"

    /// A memory type `H5Aread` fills with the stored form of variable-length strings — their
    /// length, collection address and object index, as the attribute holds them — instead of
    /// the strings: an opaque type for which a conversion from variable-length strings that
    /// only copies bytes is registered (once per process). libhdf5 then never reads the
    /// global heap; `HDF5GlobalHeap` does. -1 when the registration failed.
    static let storedStringType: hid_t = {
        let opaque = H5Tcreate(H5T_OPAQUE, storedStringSize)
        guard opaque >= 0 else { return -1 }
        guard H5Tset_tag(opaque, storedStringTag) >= 0 else {
            H5Tclose(opaque)
            return -1
        }
        let string = H5Tcopy(chdf5_C_S1())
        guard string >= 0 else { return -1 }
        defer { H5Tclose(string) }
        guard H5Tset_size(string, chdf5_T_VARIABLE()) >= 0,
              H5Tregister(H5T_PERS_SOFT, "scenelinear stored strings", string, opaque, copyStoredStrings) >= 0 else {
            return -1
        }
        return opaque
    }()

    /// True for `storedStringType` (checked by its class, size and tag).
    static func isStoredStringType(_ type: hid_t) -> Bool {
        guard H5Tget_class(type) == H5T_OPAQUE, H5Tget_size(type) == storedStringSize,
              let tag = H5Tget_tag(type) else { return false }
        defer { H5free_memory(tag) }
        return String(cString: tag) == storedStringTag
    }

    /// The current thread's HDF5 error stack as text ("function: description; ..."), and
    /// whether any entry says the file is truncated; then clears the stack.
    static func takeErrorStack() -> (text: String, truncated: Bool) {
        let collector = HDF5ErrorCollector()
        let walker: H5E_walk2_t = { _, error, data in
            guard let error, let data else { return 0 }
            let collector = Unmanaged<HDF5ErrorCollector>.fromOpaque(data).takeUnretainedValue()
            let function = error.pointee.func_name.map { String(cString: $0) } ?? "?"
            let text = error.pointee.desc.map { String(cString: $0) } ?? ""
            collector.lines.append("\(function): \(text)")
            if error.pointee.min_num == collector.truncatedCode { collector.truncated = true }
            return 0
        }
        _ = H5Ewalk2(chdf5_E_DEFAULT(), H5E_WALK_DOWNWARD, walker, Unmanaged.passUnretained(collector).toOpaque())
        _ = H5Eclear2(chdf5_E_DEFAULT())
        return (collector.lines.joined(separator: "; "), collector.truncated)
    }
}

/// The conversion behind `HDF5Library.storedStringType`: accepts a variable-length string
/// source and that opaque destination only, and copies each element's stored form (the
/// source size, `4 + size of offsets + 4` bytes) into the start of a destination element,
/// zero-filled, with the source size in its last byte. The buffer is converted in place and
/// the destination elements are larger, so elements are moved last first.
private let copyStoredStrings: H5T_conv_t = { source, destination, cdata, count, stride, _, buffer, _, _ in
    guard let cdata else { return -1 }
    let size = HDF5Library.storedStringSize
    switch cdata.pointee.command {
    case H5T_CONV_INIT:
        guard HDF5Library.isStoredStringType(destination), H5Tis_variable_str(source) > 0 else { return -1 }
        let sourceSize = H5Tget_size(source)
        guard sourceSize > 0, sourceSize < size else { return -1 }
        cdata.pointee.need_bkg = H5T_BKG_NO
        return 0
    case H5T_CONV_CONV:
        let sourceSize = H5Tget_size(source)
        guard let buffer, sourceSize > 0, sourceSize < size, stride == 0 || stride >= size else { return -1 }
        let sourceStride = stride == 0 ? sourceSize : stride, destinationStride = stride == 0 ? size : stride
        var i = count
        while i > 0 {
            i -= 1
            let element = buffer + i * destinationStride
            memmove(element, buffer + i * sourceStride, sourceSize)
            memset(element + sourceSize, 0, size - sourceSize)
            element.storeBytes(of: UInt8(sourceSize), toByteOffset: size - 1, as: UInt8.self)
        }
        return 0
    default:
        return 0
    }
}

private final class HDF5ErrorCollector {
    let truncatedCode = chdf5_E_TRUNCATED()
    var lines: [String] = []
    var truncated = false
}

/// An HDF5 identifier that is closed exactly once: by `close()` or when released.
final class H5Handle {
    let id: hid_t
    private let closer: (hid_t) -> herr_t
    private var isOpen = true

    init(_ id: hid_t, closer: @escaping (hid_t) -> herr_t) {
        self.id = id
        self.closer = closer
    }

    /// Closes now and returns the library's status.
    @discardableResult
    func close() -> herr_t {
        guard isOpen else { return 0 }
        isOpen = false
        return closer(id)
    }

    deinit { close() }
}

/// One read or write of one file: turns failed HDF5 calls into `ExchangeError`s naming
/// the file, the function and the error stack.
struct HDF5Session {
    let path: String
    let writing: Bool
    /// The file mapped (when the reader first reads bytes itself: a variable-length string,
    /// a chunk, contiguous data) and its global heap.
    private let slot = FileSlot()

    /// Read and set only by the thread holding `HDF5Library`'s lock, like every HDF5 call of
    /// the session (the writer's parallel chunk compression and the reader's parallel chunk
    /// decoding do not touch it).
    // Safe because only the thread holding HDF5Library's lock reads or sets it.
    private final class FileSlot: @unchecked Sendable {
        var file: HDF5MappedFile?
        var heap: HDF5GlobalHeap?
        /// The file's superblock sizes, asked of libhdf5 once.
        var sizes: HDF5ObjectHeader.Sizes?
        /// Addresses of the object headers whose messages passed `HDF5ObjectHeader`.
        var checkedHeaders: Set<UInt64> = []
    }

    /// An error for a failed `operation`, with the HDF5 error stack; reads whose stack
    /// reports a truncated file get `.truncated`, other reads `.corruptData`.
    func error(_ operation: String, _ message: String? = nil, category: FailureCategory? = nil) -> ExchangeError {
        let stack = HDF5Library.takeErrorStack()
        let text = [message, stack.text.isEmpty ? nil : stack.text].compactMap { $0 }.joined(separator: ": ")
        return ExchangeError(path: path, operation: operation, message: text.isEmpty ? "failed" : text,
                             category: category ?? (writing ? .outputFailure : stack.truncated ? .truncated : .corruptData))
    }

    func check(_ status: herr_t, _ operation: String) throws {
        if status < 0 { throw error(operation) }
    }

    func handle(_ id: hid_t, _ operation: String, closer: @escaping (hid_t) -> herr_t) throws -> H5Handle {
        if id < 0 { throw error(operation) }
        return H5Handle(id, closer: closer)
    }

    func type(_ id: hid_t, _ operation: String) throws -> H5Handle { try handle(id, operation, closer: H5Tclose) }
    func space(_ id: hid_t, _ operation: String) throws -> H5Handle { try handle(id, operation, closer: H5Sclose) }
    func plist(_ id: hid_t, _ operation: String) throws -> H5Handle { try handle(id, operation, closer: H5Pclose) }

    // MARK: writing attributes

    /// A variable-length UTF-8 string type (h5py reads it as `str`).
    func utf8StringType() throws -> H5Handle {
        let t = try type(H5Tcopy(chdf5_C_S1()), "H5Tcopy")
        try check(H5Tset_size(t.id, chdf5_T_VARIABLE()), "H5Tset_size")
        try check(H5Tset_cset(t.id, H5T_CSET_UTF8), "H5Tset_cset")
        return t
    }

    /// A dataspace: scalar for nil dims, null (no elements) for an empty shape.
    func dataspace(_ dims: [Int]?) throws -> H5Handle {
        guard let dims else { return try space(H5Screate(H5S_SCALAR), "H5Screate") }
        if dims.contains(0) { return try space(H5Screate(H5S_NULL), "H5Screate") }
        let d = dims.map { hsize_t($0) }
        return try space(H5Screate_simple(Int32(d.count), d, nil), "H5Screate_simple")
    }

    private func attribute(_ object: H5Handle, _ name: String, fileType: hid_t, memoryType: hid_t, dims: [Int]?,
                           _ data: UnsafeRawPointer?) throws {
        let space = try dataspace(dims)
        let attribute = try handle(H5Acreate2(object.id, name, fileType, space.id, chdf5_P_DEFAULT(), chdf5_P_DEFAULT()),
                                   "H5Acreate2 (\(name))", closer: H5Aclose)
        if let data, !(dims?.contains(0) ?? false) {
            try check(H5Awrite(attribute.id, memoryType, data), "H5Awrite (\(name))")
        }
        try check(attribute.close(), "H5Aclose (\(name))")
    }

    func setString(_ object: H5Handle, _ name: String, _ value: String) throws {
        try setStrings(object, name, [value], scalar: true)
    }

    /// Writes a new value into the existing scalar string attribute `name` (its place among
    /// the object's attributes is kept).
    func replaceString(_ object: H5Handle, _ name: String, _ value: String) throws {
        let t = try utf8StringType()
        let attribute = try handle(H5Aopen(object.id, name, chdf5_P_DEFAULT()), "H5Aopen (\(name))", closer: H5Aclose)
        let pointer = strdup(value)
        defer { free(pointer) }
        var pointers = [pointer]
        try pointers.withUnsafeMutableBufferPointer { buffer in
            try check(H5Awrite(attribute.id, t.id, UnsafeRawPointer(buffer.baseAddress)), "H5Awrite (\(name))")
        }
        try check(attribute.close(), "H5Aclose (\(name))")
    }

    func setStrings(_ object: H5Handle, _ name: String, _ values: [String], scalar: Bool = false) throws {
        let t = try utf8StringType()
        let pointers = values.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        try pointers.withUnsafeBufferPointer { buffer in
            try attribute(object, name, fileType: t.id, memoryType: t.id, dims: scalar ? nil : [values.count],
                          UnsafeRawPointer(buffer.baseAddress))
        }
    }

    func setDouble(_ object: H5Handle, _ name: String, _ value: Double) throws {
        var v = value
        try attribute(object, name, fileType: chdf5_IEEE_F64LE(), memoryType: chdf5_NATIVE_DOUBLE(), dims: nil, &v)
    }

    func setDoubles(_ object: H5Handle, _ name: String, _ values: [Double], dims: [Int]? = nil) throws {
        try values.withUnsafeBytes { raw in
            try attribute(object, name, fileType: chdf5_IEEE_F64LE(), memoryType: chdf5_NATIVE_DOUBLE(),
                          dims: dims ?? [values.count], raw.baseAddress)
        }
    }

    func setInt32(_ object: H5Handle, _ name: String, _ value: Int32) throws {
        var v = value
        try attribute(object, name, fileType: chdf5_STD_I32LE(), memoryType: chdf5_NATIVE_INT32(), dims: nil, &v)
    }

    func setInt64(_ object: H5Handle, _ name: String, _ value: Int) throws {
        var v = Int64(value)
        try attribute(object, name, fileType: chdf5_STD_I64LE(), memoryType: chdf5_NATIVE_INT64(), dims: nil, &v)
    }

    func setInt64s(_ object: H5Handle, _ name: String, _ values: [Int]) throws {
        let v = values.map { Int64($0) }
        try v.withUnsafeBytes { raw in
            try attribute(object, name, fileType: chdf5_STD_I64LE(), memoryType: chdf5_NATIVE_INT64(),
                          dims: [values.count], raw.baseAddress)
        }
    }

    func set(_ object: H5Handle, _ name: String, _ value: MetadataValue) throws {
        switch value {
        case .text(let s): try setString(object, name, s)
        case .number(let d): try setDouble(object, name, d)
        case .numbers(let a): try setDoubles(object, name, a)
        case .integer(let i): try setInt64(object, name, i)
        case .integers(let a): try setInt64s(object, name, a)
        }
    }

    // MARK: reading attributes

    /// The names of the attributes of `object`, in creation order when the file tracks it,
    /// else in name order.
    func attributeNames(_ object: H5Handle) throws -> [String] {
        let names = HDF5NameList()
        let visitor: H5A_operator2_t = { _, name, _, data in
            guard let name, let data else { return -1 }
            Unmanaged<HDF5NameList>.fromOpaque(data).takeUnretainedValue().names.append(String(cString: name))
            return 0
        }
        let context = Unmanaged.passUnretained(names).toOpaque()
        try checkHeader(of: object)
        var index: hsize_t = 0
        if H5Aiterate2(object.id, H5_INDEX_CRT_ORDER, H5_ITER_INC, &index, visitor, context) >= 0 {
            return names.names
        }
        _ = H5Eclear2(chdf5_E_DEFAULT())
        names.names = []
        index = 0
        try check(H5Aiterate2(object.id, H5_INDEX_NAME, H5_ITER_INC, &index, visitor, context), "H5Aiterate2")
        return names.names
    }

    /// Every attribute of `object` that maps to a `MetadataValue`, in `attributeNames` order.
    func attributes(_ object: H5Handle) throws -> [(String, MetadataValue)] {
        try attributeNames(object).compactMap { name in
            try attribute(object, name).map { (name, $0) }
        }
    }

    /// One attribute: strings → `.text` (an array of strings joined with ","), floats →
    /// `.number`/`.numbers`, integers → `.integer`/`.integers`; scalar dataspaces give the
    /// single forms, simple and null dataspaces the array forms. Other classes → nil.
    func attribute(_ object: H5Handle, _ name: String) throws -> MetadataValue? {
        try checkHeader(of: object)
        let attribute = try handle(H5Aopen(object.id, name, chdf5_P_DEFAULT()), "H5Aopen (\(name))", closer: H5Aclose)
        let fileType = try type(H5Aget_type(attribute.id), "H5Aget_type (\(name))")
        let space = try self.space(H5Aget_space(attribute.id), "H5Aget_space (\(name))")
        let spaceClass = H5Sget_simple_extent_type(space.id)
        let scalar = spaceClass == H5S_SCALAR
        let count = spaceClass == H5S_NULL ? 0 : Int(H5Sget_simple_extent_npoints(space.id))
        guard count >= 0 else { throw error("H5Sget_simple_extent_npoints (\(name))") }
        switch H5Tget_class(fileType.id) {
        case H5T_STRING:
            let strings = try readStrings(attribute, fileType, count: count, name: name, of: object)
            return .text(strings.joined(separator: ","))
        case H5T_FLOAT:
            var values = [Double](repeating: 0, count: count)
            if count > 0 {
                try check(H5Aread(attribute.id, chdf5_NATIVE_DOUBLE(), &values), "H5Aread (\(name))")
            }
            return scalar ? .number(values.first ?? 0) : .numbers(values)
        case H5T_INTEGER:
            var values = [Int64](repeating: 0, count: count)
            if count > 0 {
                try check(H5Aread(attribute.id, chdf5_NATIVE_INT64(), &values), "H5Aread (\(name))")
            }
            return scalar ? .integer(Int(values.first ?? 0)) : .integers(values.map { Int($0) })
        default:
            return nil
        }
    }

    private func readStrings(_ attribute: H5Handle, _ fileType: H5Handle, count: Int, name: String,
                             of object: H5Handle) throws -> [String] {
        guard count > 0 else { return [] }
        if H5Tis_variable_str(fileType.id) > 0 {
            return try readVariableStrings(attribute, count: count, name: name, of: object)
        }
        let cset = H5Tget_cset(fileType.id)
        let size = H5Tget_size(fileType.id)
        guard size > 0 else { throw error("H5Tget_size (\(name))") }
        let memoryType = try type(H5Tcopy(chdf5_C_S1()), "H5Tcopy")
        try check(H5Tset_size(memoryType.id, size), "H5Tset_size")
        try check(H5Tset_cset(memoryType.id, cset), "H5Tset_cset")
        var bytes = [UInt8](repeating: 0, count: size * count)
        try check(H5Aread(attribute.id, memoryType.id, &bytes), "H5Aread (\(name))")
        return (0..<count).map { i in
            let slice = bytes[(i * size)..<((i + 1) * size)]
            return String(decoding: slice.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}

extension HDF5Session {
    /// Variable-length strings, read by `HDF5GlobalHeap` from the stored references
    /// (libhdf5 1.10.8's own read of the global heap trusts damaged sizes).
    /// - Throws: `ExchangeError` `.corruptData` (operation "global heap") naming the
    ///   attribute, its object and what is wrong with the collection or reference.
    private func readVariableStrings(_ attribute: H5Handle, count: Int, name: String, of object: H5Handle) throws -> [String] {
        let storedType = HDF5Library.storedStringType
        guard storedType >= 0 else { throw error("H5Tregister (stored variable-length strings)", category: .internalError) }
        let heap = try globalHeap(object)
        let size = HDF5Library.storedStringSize
        let (total, overflow) = count.multipliedReportingOverflow(by: size)
        guard !overflow else {
            throw ExchangeError(path: path, operation: "H5Aread (\(name))", message: "\(count) strings", category: .corruptData)
        }
        var stored = [UInt8](repeating: 0, count: total)
        try check(H5Aread(attribute.id, storedType, &stored), "H5Aread (\(name))")
        return try stored.withUnsafeBytes { all in
            try (0..<count).map { i in
                let element = UnsafeRawBufferPointer(rebasing: all[(i * size)..<((i + 1) * size)])
                do {
                    guard let reference = try HDF5GlobalHeap.Reference(stored: element, offsetSize: heap.offsetSize) else {
                        return ""
                    }
                    return try heap.string(reference)
                } catch let damage as HDF5GlobalHeap.Damage {
                    let element = count > 1 ? " (string \(i + 1) of \(count))" : ""
                    throw ExchangeError(path: path, operation: "global heap",
                                        message: "attribute \(name) of \(objectName(object))\(element): \(damage)",
                                        category: .corruptData)
                }
            }
        }
    }

    /// The global heap of the file `object` is in (a session reads one file).
    private func globalHeap(_ object: H5Handle) throws -> HDF5GlobalHeap {
        if let known = slot.heap { return known }
        let sizes = try headerSizes(object)
        let opened = HDF5GlobalHeap(file: try mappedFile(object), offsetSize: sizes.offsets, lengthSize: sizes.lengths)
        slot.heap = opened
        return opened
    }

    /// The superblock's "size of offsets" and "size of lengths" of the file `object` is in,
    /// and the ranks of its symbol-table B-trees.
    private func headerSizes(_ object: H5Handle) throws -> HDF5ObjectHeader.Sizes {
        if let known = slot.sizes { return known }
        let file = try handle(H5Iget_file_id(object.id), "H5Iget_file_id", closer: H5Fclose)
        let creation = try plist(H5Fget_create_plist(file.id), "H5Fget_create_plist")
        var offsetSize = 0, lengthSize = 0
        try check(H5Pget_sizes(creation.id, &offsetSize, &lengthSize), "H5Pget_sizes")
        var internalK: UInt32 = 0, leafK: UInt32 = 0, chunkK: UInt32 = 0
        try check(H5Pget_sym_k(creation.id, &internalK, &leafK), "H5Pget_sym_k")
        try check(H5Pget_istore_k(creation.id, &chunkK), "H5Pget_istore_k")
        let sizes = HDF5ObjectHeader.Sizes(offsets: offsetSize, lengths: lengthSize, leafK: Int(leafK), internalK: Int(internalK),
                                           chunkK: Int(chunkK))
        slot.sizes = sizes
        return sizes
    }

    /// Checks every message of `object`'s header (`HDF5ObjectHeader`) before libhdf5 decodes
    /// any of them; once per object.
    /// - Throws: `ExchangeError` (operation "object header") naming the object, its address and
    ///   what is out of place: `.corruptData`, or `.unsupportedFeature` for a message this
    ///   reader does not check.
    func checkHeader(of object: H5Handle) throws {
        let found = chdf5_object_address(object.id)
        guard found != chdf5_HADDR_UNDEF() else { throw error("H5Oget_info2") }
        try checkHeader(at: UInt64(found), in: object, named: objectName(object))
    }

    /// The same for the object `name` names from `location`, before it is opened (opening a
    /// dataset decodes its datatype and filter pipeline).
    func checkHeader(of name: String, from location: H5Handle) throws {
        let found = chdf5_object_address_by_name(location.id, name)
        guard found != chdf5_HADDR_UNDEF() else { throw error("H5Oget_info_by_name2 (\(name))") }
        try checkHeader(at: UInt64(found), in: location, named: name)
    }

    private func checkHeader(at address: UInt64, in object: H5Handle, named name: String) throws {
        if slot.checkedHeaders.contains(address) { return }
        let file = try mappedFile(object)
        let sizes = try headerSizes(object)
        do {
            try HDF5ObjectHeader.check(file, at: address, sizes: sizes)
        } catch {
            throw ExchangeError(path: path, operation: "object header", message: "\(name) at address \(address): \(error)",
                                category: error.unsupported ? .unsupportedFeature : .corruptData)
        }
        slot.checkedHeaders.insert(address)
    }

    /// - Throws: `ExchangeError` (`.truncated`) when the file this session mapped was cut
    ///   while it was read (its headers, heap or data read as zeros since).
    func checkMappedFileWhole() throws {
        try slot.file?.checkWhole()
    }

    /// The file `object` is in, mapped, with its base address (the user block's size:
    /// addresses in the file are relative to it).
    func mappedFile(_ object: H5Handle) throws -> HDF5MappedFile {
        if let known = slot.file { return known }
        let file = try handle(H5Iget_file_id(object.id), "H5Iget_file_id", closer: H5Fclose)
        let creation = try plist(H5Fget_create_plist(file.id), "H5Fget_create_plist")
        var userBlock: hsize_t = 0
        try check(H5Pget_userblock(creation.id, &userBlock), "H5Pget_userblock")
        let mapped = try HDF5MappedFile(path: path, base: userBlock)
        slot.file = mapped
        return mapped
    }

    /// The path of `object` in the file ("/", "/image"), or "?" when libhdf5 has none.
    func objectName(_ object: H5Handle) -> String {
        let length = H5Iget_name(object.id, nil, 0)
        guard length > 0 else { return "?" }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard H5Iget_name(object.id, &buffer, buffer.count) > 0 else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

private final class HDF5NameList {
    var names: [String] = []
}
