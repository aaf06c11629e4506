import Foundation
import Testing
import ImageCore
import TestSupport

/// SHA-256 through libcrypto against FIPS 180-2's test vectors, whole and in pieces (how a
/// mapped input is hashed while its pages are let go): the same digest for every piece
/// size, and the pieces cover the bytes once, in order.
@Suite struct SHA256Tests {
    static let vectors = [("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
                          ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
                          ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                           "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")]

    @Test func vectorsWholeAndInPieces() {
        for (text, hex) in Self.vectors {
            let bytes = Array(text.utf8)
            #expect(bytes.withUnsafeBytes { SHA256Digest.hex(of: $0) } == hex, "\(text)")
            for piece in [1, 3, 64, 1000] {
                var covered: [Range<Int>] = []
                let pieces = bytes.withUnsafeBytes { SHA256Digest.hex(of: $0, piece: piece) { covered.append($0) } }
                #expect(pieces == hex, "\(text), pieces of \(piece)")
                #expect(covered.map(\.count).reduce(0, +) == bytes.count && zip(covered, covered.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
            }
        }
        // A million 'a's (FIPS 180-2's third vector), in pieces that do not divide it.
        let million = [UInt8](repeating: 0x61, count: 1_000_000)
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        #expect(million.withUnsafeBytes { SHA256Digest.hex(of: $0, piece: 4 << 10 + 7) { _ in } } == expected)
        #expect(million.withUnsafeBytes { SHA256Digest.hex(of: $0) } == expected)
    }
}
