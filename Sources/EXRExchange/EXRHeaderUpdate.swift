import ExchangeCore
import Foundation

extension EXRFile {
    /// Sets string attribute `name` of the single-part file at `file` to `value`, of the same
    /// length as the value it holds, by rewriting those bytes in place (OpenEXRCore 3.1 has
    /// no in-place header update). The header is walked attribute by attribute (name, type,
    /// 4-byte little-endian size, value) from byte 8 to the byte that ends it.
    static func updateString(_ name: String, to value: String, in file: String, reportedAs path: String) throws {
        func failure(_ message: String) -> ExchangeError {
            ExchangeError(path: path, operation: "updating attribute \(name)", message: message, category: .outputFailure)
        }
        func systemFailure(_ code: Int32) -> ExchangeError {
            ExchangeError(path: path, operation: "updating attribute \(name)", systemError: code, category: .outputFailure)
        }
        let fd = open(file, O_RDWR)
        guard fd >= 0 else { throw systemFailure(errno) }
        defer { close(fd) }
        // The header is a few kilobytes: read 64 KiB, and more while the walk runs past them
        // (up to 16 MiB).
        var header: [UInt8] = []
        var count = 0
        var reading = 64 << 10
        while true {
            header = [UInt8](repeating: 0, count: reading)
            count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            guard count > 8 else { throw failure("the file is too short for a header") }
            if count < reading || reading >= 16 << 20 || Self.headerEnd(header, count: count) != nil { break }
            reading *= 4
        }
        let found = try walk(header, count: count) { attribute, type, size, valueStart in
            guard attribute == name else { return false }
            guard type == "string", size == value.utf8.count else {
                throw failure("the header holds a \(type) of \(size) bytes, the new value has \(value.utf8.count)")
            }
            let bytes = Array(value.utf8)
            let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(valueStart)) }
            guard written == bytes.count else { throw systemFailure(errno) }
            return true
        }
        if !found { throw failure("the header has no such attribute") }
    }

    /// Where the header's attributes end (the offset of the byte that ends them), when it is
    /// within the first `count` bytes.
    static func headerEnd(_ header: [UInt8], count: Int) -> Int? {
        var end: Int?
        _ = walk(header, count: count) { _, _, _, _ in false } end: { end = $0 }
        return end
    }

    /// Calls `visit(name, type, size, value offset)` for each attribute of a single-part
    /// header in the first `count` bytes until it returns true; `end` gets the offset of
    /// the byte that ends the attributes when the walk reaches it. Returns whether `visit`
    /// returned true.
    static func walk(_ header: [UInt8], count: Int, _ visit: (String, String, Int, Int) throws -> Bool,
                     end: (Int) -> Void = { _ in }) rethrows -> Bool {
        func string(at start: Int) -> (String, Int)? {
            var end = start
            while end < count && header[end] != 0 { end += 1 }
            guard end < count else { return nil }
            return (String(decoding: header[start..<end], as: UTF8.self), end + 1)
        }
        var at = 8
        while at < count {
            if header[at] == 0 {
                end(at)
                return false
            }
            guard let (attribute, afterName) = string(at: at), let (type, afterType) = string(at: afterName),
                  afterType + 4 <= count else { return false }
            let size = (0..<4).reduce(0) { $0 | Int(header[afterType + $1]) << (8 * $1) }
            let valueStart = afterType + 4
            guard size >= 0, valueStart + size <= count else { return false }
            if try visit(attribute, type, size, valueStart) { return true }
            at = valueStart + size
        }
        return false
    }
}
