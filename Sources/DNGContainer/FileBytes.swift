import Foundation
import ImageCore

/// The bytes of an input file, memory-mapped, with bounds-checked endian-aware reads.
///
/// Every read takes an absolute file offset and checks it against the file size, so a
/// hostile offset can never reach outside the mapping.
// Safe because the mapping is read-only and immutable after init; page release is a system call on disjoint ranges.
public final class FileBytes: @unchecked Sendable {
    public let path: String
    public let data: Data
    public var count: Int { data.count }
    /// The read-only private mapping behind `data`, when the bytes come from `init(path:)`.
    private let mapping: UnsafeMutableRawPointer?

    /// Guards the mapping against the file shrinking under it (zeros instead of SIGBUS).
    private let shrinkGuard: MappedRange?

    /// Maps the file at `path` (read-only, private). Only a regular file is accepted: a FIFO,
    /// a device or a socket is refused before it is opened (opening a FIFO would wait for a
    /// writer; a device may never end).
    /// - Throws: `ContainerError.fileNotFound` or `.unreadable`.
    public init(path: String) throws(ContainerError) {
        self.path = path
        var pathInfo = stat()
        guard stat(path, &pathInfo) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw .fileNotFound(path: path) }
            throw .unreadable(path: path, problem: .system(errno))
        }
        if let problem = RegularFile.problem(mode: pathInfo.st_mode) { throw .unreadable(path: path, problem: .notRegularFile(problem)) }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .unreadable(path: path, problem: .system(errno)) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path: path, problem: .system(errno)) }
        // (Replaced between the stat and the open.)
        if let problem = RegularFile.problem(mode: info.st_mode) { throw .unreadable(path: path, problem: .notRegularFile(problem)) }
        let size = Int(info.st_size)
        guard size > 0 else {
            data = Data()
            mapping = nil
            shrinkGuard = nil
            return
        }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
            throw .unreadable(path: path, problem: .mapping(errno))
        }
        mapping = base
        shrinkGuard = MappedRange(base: base, length: size)
        data = Data(bytesNoCopy: base, count: size, deallocator: .custom { pointer, count in munmap(pointer, count) })
    }

    /// Checks that no page of the file was found missing while it was read (the file was
    /// truncated under the mapping, and those pages read as zeros). Call it before trusting
    /// what was decoded.
    /// - Throws: `ContainerError.shrankWhileReading`.
    public func checkIntact() throws(ContainerError) {
        guard let shrinkGuard, shrinkGuard.shrank else { return }
        var info = stat()
        let now = stat(path, &info) == 0 ? Int(info.st_size) : 0
        throw .shrankWhileReading(path: path, size: now, mapped: data.count)
    }

    /// Wraps bytes already in memory (tests, generated files).
    public init(data: Data, path: String) {
        self.data = data
        self.path = path
        mapping = nil
        shrinkGuard = nil
    }

    /// Lets the kernel drop the file's pages from this process's resident memory (they stay
    /// in the page cache and are read again when next touched). For the streaming
    /// conversion, whose peak memory would otherwise include the whole input file. Does
    /// nothing for bytes that are not a file mapping.
    public func releaseResidentPages() {
        guard let mapping else { return }
        _ = madvise(mapping, data.count, MADV_DONTNEED)
    }

    /// `releaseResidentPages()` for the pages that lie wholly inside `offset ..< offset +
    /// length` (a range the caller has checked), so that pages shared with neighbouring
    /// bytes stay.
    public func releaseResidentPages(offset: Int, length: Int) {
        guard let mapping else { return }
        MappedRange.releaseResidentPages(of: mapping, size: data.count, offset: offset, length: length)
    }

    /// True when `offset ..< offset + length` lies inside the file (overflow-safe).
    @inline(__always)
    public func contains(offset: Int, length: Int) -> Bool {
        guard offset >= 0, length >= 0 else { return false }
        let (end, overflow) = offset.addingReportingOverflow(length)
        return !overflow && end <= data.count
    }

    /// Calls `body` with the bytes `offset ..< offset + length`; the caller has checked the range.
    public func withBytes<R>(offset: Int, length: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        precondition(contains(offset: offset, length: length), "unchecked byte range")
        return try data.withUnsafeBytes { raw in
            try body(UnsafeRawBufferPointer(rebasing: raw[offset ..< offset + length]))
        }
    }

    /// A copy of the bytes `offset ..< offset + length`; the caller has checked the range.
    public func bytes(offset: Int, length: Int) -> [UInt8] {
        withBytes(offset: offset, length: length) { Array($0) }
    }
}

/// The byte order of a TIFF file: "II" little-endian or "MM" big-endian.
public enum ByteOrder: String, Sendable, Codable {
    case littleEndian = "II"
    case bigEndian = "MM"

    public var name: String { self == .littleEndian ? "little-endian (II)" : "big-endian (MM)" }
}

/// Endian-aware integer reads from a raw buffer at checked positions.
struct EndianReader {
    let raw: UnsafeRawBufferPointer
    let order: ByteOrder

    @inline(__always) func u8(_ at: Int) -> UInt8 { raw[at] }

    @inline(__always) func u16(_ at: Int) -> UInt16 {
        let a = UInt16(raw[at]), b = UInt16(raw[at + 1])
        return order == .littleEndian ? a | b << 8 : a << 8 | b
    }

    @inline(__always) func u32(_ at: Int) -> UInt32 {
        let a = UInt32(raw[at]), b = UInt32(raw[at + 1]), c = UInt32(raw[at + 2]), d = UInt32(raw[at + 3])
        return order == .littleEndian ? a | b << 8 | c << 16 | d << 24 : a << 24 | b << 16 | c << 8 | d
    }

    @inline(__always) func u64(_ at: Int) -> UInt64 {
        let lo = UInt64(u32(at)), hi = UInt64(u32(at + 4))
        return order == .littleEndian ? lo | hi << 32 : lo << 32 | hi
    }
}
