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

    /// The lowercase hex SHA-256 of `data`.
    public static func hex(of data: Data) -> String {
        data.withUnsafeBytes { hex(of: $0) }
    }
}
