import Foundation
import ImageCore

/// SHA-256 helpers for comparing decoded buffers with the digests in the datasets' manifest
/// and with digests printed by the Python cross-check (libcrypto, through ImageCore).
enum SHA256 {
    /// The digest of `bytes` as 64 lowercase hexadecimal digits.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { SHA256Digest.hex(of: $0) }
    }

    /// The digest of `samples` stored as little-endian uint16.
    static func hex(littleEndian samples: [UInt16]) -> String {
        var bytes = [UInt8](repeating: 0, count: samples.count * 2)
        for (i, s) in samples.enumerated() {
            bytes[2 * i] = UInt8(truncatingIfNeeded: s)
            bytes[2 * i + 1] = UInt8(truncatingIfNeeded: s >> 8)
        }
        return hex(bytes)
    }
}
