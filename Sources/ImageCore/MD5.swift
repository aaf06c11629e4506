internal import CCrypto
internal import CDigest

/// MD5 digests (OpenSSL libcrypto), the hash DNG uses for its raw-data digests
/// (RawImageDigest, NewRawImageDigest, OriginalRawFileDigest). Not for security.
public enum MD5Digest {
    /// A 16-byte MD5 digest.
    public typealias Value = [UInt8]

    /// The MD5 of `bytes`.
    public static func of(_ bytes: UnsafeRawBufferPointer) -> Value {
        var out = [UInt8](repeating: 0, count: 16)
        let ok = out.withUnsafeMutableBufferPointer { o in ccrypto_md5(bytes.baseAddress, bytes.count, o.baseAddress) }
        // libcrypto's MD5 fails only when it cannot allocate its context.
        precondition(ok == 1, "libcrypto MD5 failed")
        return out
    }

    /// The MD5 of `bytes`.
    public static func of(_ bytes: [UInt8]) -> Value {
        bytes.withUnsafeBytes { of($0) }
    }

    /// The MD5s of up to eight messages of equal length, computed together (one vector
    /// lane each).
    public static func lanes(_ messages: [[UInt8]]) -> [Value] {
        precondition((1...8).contains(messages.count) && messages.allSatisfy { $0.count == messages[0].count })
        let length = messages[0].count
        var out = [UInt8](repeating: 0, count: 16 * messages.count)
        let copies = messages.map { m -> UnsafeMutablePointer<UInt8> in
            let p = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, length))
            p.initialize(from: m, count: length)
            return p
        }
        defer { copies.forEach { $0.deallocate() } }
        var pointers = copies.map { UnsafePointer<UInt8>?($0) }
        pointers.withUnsafeMutableBufferPointer { p in
            out.withUnsafeMutableBytes { o in
                md5_lanes(p.baseAddress, messages.count, length,
                          o.baseAddress!.assumingMemoryBound(to: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                                                                  UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8).self))
            }
        }
        return (0..<messages.count).map { Array(out[(16 * $0)..<(16 * $0 + 16)]) }
    }

    /// Lowercase hex of a digest.
    public static func hex(_ digest: Value) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var s = [UInt8]()
        s.reserveCapacity(digest.count * 2)
        for b in digest {
            s.append(digits[Int(b >> 4)])
            s.append(digits[Int(b & 15)])
        }
        return String(decoding: s, as: UTF8.self)
    }
}

/// An MD5 computed piece by piece: the owner of one libcrypto digest context, freed when
/// the value goes away. Not shared between threads.
public final class MD5Hasher {
    private let context: OpaquePointer

    public init() {
        guard let context = ccrypto_md5_new() else { preconditionFailure("libcrypto MD5 context allocation failed") }
        self.context = context
    }

    deinit { ccrypto_md5_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        precondition(ccrypto_md5_update(context, bytes.baseAddress, bytes.count) == 1, "libcrypto MD5 update failed")
    }

    public func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The digest of everything given so far; the hasher is spent afterwards.
    public func finish() -> MD5Digest.Value {
        var out = [UInt8](repeating: 0, count: 16)
        let ok = out.withUnsafeMutableBufferPointer { ccrypto_md5_final(context, $0.baseAddress) }
        precondition(ok == 1, "libcrypto MD5 final failed")
        return out
    }
}
