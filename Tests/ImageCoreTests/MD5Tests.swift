import Foundation
import Testing
import ImageCore
import TestSupport

/// MD5 through libcrypto against RFC 1321's test vectors, and the eight-lane MD5 of the
/// raw-image digests against libcrypto for every message length around the padding cases.
@Suite struct MD5Tests {
    @Test func rfc1321Vectors() {
        let vectors = [("", "d41d8cd98f00b204e9800998ecf8427e"), ("a", "0cc175b9c0f1b6a831c399e269772661"),
                       ("abc", "900150983cd24fb0d6963f7d28e17f72"), ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
                       ("12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                        "57edf4a22be3c955ac49da2e2107b67a")]
        for (text, hex) in vectors {
            #expect(MD5Digest.hex(MD5Digest.of(Array(text.utf8))) == hex, "\(text)")
        }
    }

    @Test func lanesEqualOneByOne() {
        var rng = SeededGenerator(seed: 5)
        for length in Array(0...200) + [4095, 4096, 131_072, 393_216] {
            for count in [1, 3, 8] {
                let messages = (0..<count).map { _ in (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) } }
                #expect(MD5Digest.lanes(messages) == messages.map { MD5Digest.of($0) }, "length \(length), \(count) lanes")
            }
        }
    }
}
