import Foundation
import Testing
import ImageCore
import ExchangeCore
@testable import EXRExchange
import TestSupport

/// `EXRFile.updateString`: a string attribute rewritten in place (how a header written before
/// the pixels gets the source's SHA-256), seen by the reader and by `exrheader`; a value of
/// another length, or a missing attribute, is refused and the file left as it was.
@Suite struct EXRHeaderUpdateTests {
    @Test func stringAttributeUpdatedInPlace() throws {
        let dir = TestData.temporaryDirectory("exr-header-update")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("a.exr").path
        var image = Fixture.image(width: 16, height: 40)
        image.provenance.sourceSHA256 = String(repeating: "0", count: 64)
        try EXRFile.write(image, to: path)
        let name = EXRMetadata.prefix + "sourceSHA256"
        let before = Fixture.bytes(path)
        let value = String(repeating: "ab", count: 32)
        try EXRFile.updateString(name, to: value, in: path, reportedAs: path)
        #expect(try EXRFile.readSceneLinear(path).provenance.sourceSHA256 == value)
        let after = Fixture.bytes(path)
        // Only those 64 bytes changed.
        #expect(after.count == before.count && zip(before, after).filter { $0 != $1 }.count == 64)
        let header = try TestData.run(try TestData.tool("exrheader"), [path])
        #expect(header.stdout.contains("sceneLinear:sourceSHA256 (type string): \"\(value)\""))

        #expect(throws: ExchangeError.self) { try EXRFile.updateString(name, to: "short", in: path, reportedAs: path) }
        #expect(throws: ExchangeError.self) { try EXRFile.updateString("sceneLinear:nothing", to: value, in: path, reportedAs: path) }
        #expect(throws: ExchangeError.self) {
            try EXRFile.updateString("dataWindow", to: "0123456789abcdef", in: path, reportedAs: path)
        }
        #expect(Fixture.bytes(path) == after)
        let missing = dir.appendingPathComponent("missing.exr").path
        #expect(throws: ExchangeError.self) { try EXRFile.updateString(name, to: value, in: missing, reportedAs: missing) }
    }
}
