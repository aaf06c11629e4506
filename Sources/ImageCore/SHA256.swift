internal import CCrypto
import Foundation

/// SHA-256 digests (OpenSSL libcrypto), used to record which exact file an output came from.
public enum SHA256Digest {
    /// The lowercase hex SHA-256 of `bytes`.
    public static func hex(of bytes: UnsafeRawBufferPointer) -> String {
        var out = [UInt8](repeating: 0, count: 32)
        let ok = out.withUnsafeMutableBufferPointer { o in
            ccrypto_sha256(bytes.baseAddress, bytes.count, o.baseAddress)
        }
        precondition(ok == 1, "libcrypto SHA-256 failed")
        return out.map { String(format: "%02x", $0) }.joined()
    }

    /// The lowercase hex SHA-256 of `bytes`, read in pieces of `piece` bytes; `done` is
    /// called with each piece's range once it is hashed (e.g. to let a mapped file's pages
    /// go). The same digest as `hex(of:)`.
    public static func hex(of bytes: UnsafeRawBufferPointer, piece: Int, done: (Range<Int>) -> Void) -> String {
        precondition(piece > 0)
        guard let context = ccrypto_sha256_new() else { preconditionFailure("libcrypto SHA-256 failed") }
        defer { ccrypto_md5_free(context) }
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + piece)
            precondition(ccrypto_md5_update(context, bytes.baseAddress! + start, end - start) == 1, "libcrypto SHA-256 failed")
            done(start..<end)
            start = end
        }
        var out = [UInt8](repeating: 0, count: 32)
        precondition(out.withUnsafeMutableBufferPointer { ccrypto_sha256_final(context, $0.baseAddress) } == 1,
                     "libcrypto SHA-256 failed")
        return out.map { String(format: "%02x", $0) }.joined()
    }

    /// The lowercase hex SHA-256 of `data`.
    public static func hex(of data: Data) -> String {
        data.withUnsafeBytes { hex(of: $0) }
    }
}
