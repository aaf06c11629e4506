import Foundation
import ImageCore
import Opcodes
import Testing
import TestSupport

/// The parser against lists serialised by the test builder: round trips, header rules,
/// and every way the bytes can be wrong.
@Suite struct OpcodeParsingTests {
    /// Every opcode of DNG 1.7.1 survives serialisation and parsing unchanged, with its
    /// header fields.
    @Test func everyOpcodeRoundTrips() throws {
        let all = Samples.every()
        #expect(Set(all.map(\.id)) == Set(1...14), "the samples cover IDs 1 ... 14")
        var b = OpcodeListBuilder()
        for (i, op) in all.enumerated() { b.add(op, version: 0x0103_0000 + UInt32(i), flags: UInt32(i % 4)) }
        let list = try OpcodeList.parse(b.bytes, list: .list3)
        #expect(list.list == .list3)
        #expect(list.opcodes == all)
        #expect(list.warnings.isEmpty)
        for (i, entry) in list.entries.enumerated() {
            #expect(entry.index == i)
            #expect(entry.header.id == all[i].id)
            #expect(entry.header.version == 0x0103_0000 + UInt32(i))
            #expect(entry.header.isOptional == (i % 2 == 1))
            #expect(entry.header.mayBeSkippedForPreview == (i % 4 >= 2))
        }
        #expect(list.entries[2].header.versionString == "1.3.0.2")
    }

    /// Field values land where the layout puts them (checked on hand-written bytes, not
    /// only through the builder).
    @Test func gainMapFieldsFromHandWrittenBytes() throws {
        var w = BigEndianWriter()
        w.u32(1)                                        // one opcode
        w.u32(9); w.u32(0x0103_0000); w.u32(1); w.u32(76 + 2 * 2 * 1 * 4)
        w.i32(0); w.i32(1); w.i32(100); w.i32(200)       // area
        w.u32(2); w.u32(1); w.u32(2); w.u32(2)           // plane 2, 1 plane, pitch 2 × 2
        w.u32(2); w.u32(2)                               // 2 × 2 points
        w.f64(0.75); w.f64(0.5); w.f64(0.125); w.f64(0.25) // spacing V/H, origin V/H
        w.u32(1)
        for g: Float in [1.5, 2, 2.5, 3] { w.f32(g) }
        let list = try OpcodeList.parse(w.bytes, list: .list2)
        guard case .gainMap(let m) = list.opcodes.first else { Issue.record("not a gain map"); return }
        #expect(m.area == OpcodeArea(top: 0, left: 1, bottom: 100, right: 200, plane: 2, planes: 1, rowPitch: 2, colPitch: 2))
        #expect((m.pointsV, m.pointsH, m.mapPlanes) == (2, 2, 1))
        #expect((m.spacingV, m.spacingH, m.originV, m.originH) == (0.75, 0.5, 0.125, 0.25))
        #expect(m.gain(row: 1, column: 0, plane: 0) == 2.5)
        #expect(list.entries[0].header.isOptional)
    }

    @Test func emptyListParses() throws {
        let list = try OpcodeList.parse([0, 0, 0, 0], list: .list1)
        #expect(list.entries.isEmpty)
    }

    /// An unknown ID: error when required, skipped with a warning when optional; both
    /// name the list, the entry and the ID.
    @Test func unknownOpcodes() throws {
        var required = OpcodeListBuilder()
        required.add(Samples.every()[2])
        required.addRaw(id: 99, parameters: [1, 2, 3])
        let error = try #require(throws: OpcodeError.self) { try OpcodeList.parse(required.bytes, list: .list2) }
        #expect(error.kind == .unknownOpcode && error.index == 1 && error.opcodeID == 99 && error.list == .list2)
        #expect(error.category == .unsupportedFeature)
        #expect(error.description.hasPrefix("OpcodeList2 entry 1 (unknown opcode, ID 99):"))
        #expect(error.inFile("a.dng").description.hasPrefix("a.dng: OpcodeList2 entry 1"))

        var optional = OpcodeListBuilder()
        optional.addRaw(id: 99, flags: 1, parameters: [1, 2, 3])
        optional.add(Samples.every()[2])
        let list = try OpcodeList.parse(optional.bytes, list: .list2)
        #expect(list.opcodes[0] == .unknown(id: 99, parameters: [1, 2, 3]))
        #expect(list.warnings.count == 1 && list.warnings[0].contains("unknown ID 99"))
        var image = ImageBuffer<Float>(width: 4, height: 4, channels: 1, repeating: 0.5)
        let report = try OpcodeApplier.apply(list, to: &image, context: OpcodeContext(wholeImage: image))
        #expect(report.skipped == [.init(index: 0, id: 99, reason: .unknownOptional)])
        #expect(report.applied.map(\.index) == [1])
        #expect(report.warnings == list.warnings)
    }

    /// Opcodes newer than 1.7.1.0: error when required, skipped when optional; 1.7.1.0
    /// itself is accepted.
    @Test func newerVersions() throws {
        let op = Samples.every()[7]
        var current = OpcodeListBuilder()
        current.add(op, version: 0x0107_0100)
        #expect(try OpcodeList.parse(current.bytes, list: .list1).opcodes == [op])

        var newer = OpcodeListBuilder()
        newer.add(op, version: 0x0108_0000)
        let error = try #require(throws: OpcodeError.self) { try OpcodeList.parse(newer.bytes, list: .list1) }
        #expect(error.kind == .unsupportedVersion && error.index == 0 && error.opcodeID == 8)
        #expect(error.category == .unsupportedVersion)
        #expect(error.description.contains("1.8.0.0"))

        var optional = OpcodeListBuilder()
        optional.add(op, version: 0x0107_0101, flags: 1)
        let list = try OpcodeList.parse(optional.bytes, list: .list1)
        #expect(list.opcodes == [.unknown(id: 8, parameters: OpcodeListBuilder.parameters(of: op))])
        #expect(list.warnings.count == 1)
        var image = ImageBuffer<Float>(width: 4, height: 4, channels: 1, repeating: 100)
        let report = try OpcodeApplier.apply(list, to: &image, context: OpcodeContext(wholeImage: image))
        #expect(report.skipped == [.init(index: 0, id: 8, reason: .newerVersion)])
        #expect(image.samples.allSatisfy { $0 == 100 })
    }

    /// Each parameter block must have exactly the size its layout implies.
    @Test func parameterSizeMismatches() throws {
        for (i, op) in Samples.every().enumerated() {
            let params = OpcodeListBuilder.parameters(of: op)
            for delta in [-1, 1, 4] where params.count + delta >= 0 {
                var b = OpcodeListBuilder()
                let changed = delta < 0 ? Array(params.dropLast(-delta)) : params + [UInt8](repeating: 0, count: delta)
                b.addRaw(id: op.id, parameters: changed)
                let error = try #require(throws: OpcodeError.self, "sample \(i), size change \(delta)") {
                    try OpcodeList.parse(b.bytes, list: .list1)
                }
                #expect(error.index == 0 && error.opcodeID == op.id)
                // A count read from a shortened block can also be inconsistent with the area.
                #expect([.parameterSize, .invalidParameter].contains(error.kind), "sample \(i): \(error)")
            }
        }
    }

    /// Values outside their ranges are specific errors naming the opcode.
    @Test func invalidParameters() throws {
        let area = OpcodeArea(top: 0, left: 0, bottom: 10, right: 10)
        let cases: [(Opcode, String)] = [
            (.mapTable(MapTable(area: OpcodeArea(top: 0, left: 0, bottom: 10, right: 10, rowPitch: 0), table: [1])), "pitch"),
            (.mapTable(MapTable(area: OpcodeArea(top: 0, left: 0, bottom: 10, right: 10, planes: 0), table: [1])), "plane count"),
            (.mapTable(MapTable(area: OpcodeArea(top: 5, left: 0, bottom: 5, right: 10), table: [1])), "empty"),
            (.mapTable(MapTable(area: OpcodeArea(top: 0, left: 9, bottom: 10, right: 3), table: [1])), "empty or inverted"),
            (.mapTable(MapTable(area: area, table: [])), "entries"),
            (.mapPolynomial(MapPolynomial(area: area, coefficients: Array(repeating: 0.1, count: 10))), "degree"),
            (.mapPolynomial(MapPolynomial(area: area, coefficients: [0, .nan])), "nan"),
            (.fixBadPixelsConstant(FixBadPixelsConstant(constant: 0, bayerPhase: 4)), "Bayer phase"),
            (.fixBadPixelsList(FixBadPixelsList(bayerPhase: 0, points: [], rectangles: [PixelRect(top: 5, left: 0, bottom: 4, right: 3)])), "inverted"),
            (.trimBounds(PixelRect(top: 10, left: 0, bottom: 10, right: 5)), "empty"),
            (.fixVignetteRadial(FixVignetteRadial(coefficients: [0, 0, 0, 0, 0], centerX: 1.5, centerY: 0.5)), "optical centre"),
            (.gainMap(GainMap(area: area, pointsV: 2, pointsH: 2, spacingV: 0, spacingH: 1, originV: 0, originH: 0, mapPlanes: 1,
                              gains: [1, 1, 1, 1])), "spacing"),
            (.gainMap(GainMap(area: area, pointsV: 1, pointsH: 1, spacingV: 1, spacingH: 1, originV: 0, originH: 0, mapPlanes: 1,
                              gains: [.infinity])), "inf"),
            (.gainMap(GainMap(area: area, pointsV: 0, pointsH: 1, spacingV: 1, spacingH: 1, originV: 0, originH: 0, mapPlanes: 1,
                              gains: [])), "at least 1"),
            (.deltaPerRow(AreaValues(area: OpcodeArea(top: 0, left: 0, bottom: 10, right: 10, rowPitch: 3), values: [1, 2, 3])), "need 4"),
            (.scalePerColumn(AreaValues(area: OpcodeArea(top: 0, left: 0, bottom: 0, right: 0), values: [])), "all zero"),
            (.warpRectilinear(WarpRectilinear(planes: [], centerX: 0.5, centerY: 0.5)), "is 0"),
            (.warpRectilinear2(WarpRectilinear2(planes: [.init(radial: Array(repeating: 0, count: 15), tangential: [0, 0],
                                                               minimumValidRadius: 1, maximumValidRadius: 0.5)],
                                                centerX: 0.5, centerY: 0.5, useReciprocal: false)), "inverted"),
        ]
        for (op, text) in cases {
            let error = try #require(throws: OpcodeError.self, "\(op.name): \(text)") {
                try OpcodeList.parse(OpcodeListBuilder.list(op), list: .list2)
            }
            #expect([.invalidParameter, .parameterSize].contains(error.kind), "\(error)")
            #expect(error.opcodeID == op.id && error.index == 0)
            #expect(error.description.contains(text), "\(error.description) should mention \(text)")
            #expect(error.category == .corruptData)
        }
    }

    /// An all-zero area means the whole image for MapTable, MapPolynomial and GainMap.
    @Test func allZeroAreaIsWholeImage() throws {
        let op = Opcode.mapPolynomial(MapPolynomial(area: OpcodeArea(top: 0, left: 0, bottom: 0, right: 0), coefficients: [0, 2]))
        var image = ImageBuffer<Float>(width: 5, height: 3, channels: 1, repeating: 0.25)
        try applyList([op], to: &image)
        #expect(image.samples.allSatisfy { $0 == 0.5 })
    }

    /// Every proper prefix of a valid list is a `.truncated` error, never a crash.
    @Test func everyTruncationIsTruncated() throws {
        var b = OpcodeListBuilder()
        for op in Samples.every() { b.add(op) }
        let bytes = b.bytes
        for length in 0..<bytes.count {
            let error = try #require(throws: OpcodeError.self, "prefix \(length)") {
                try OpcodeList.parse(Array(bytes[0..<length]), list: .list1)
            }
            #expect(error.kind == .truncated, "prefix \(length): \(error)")
            #expect(error.category == .truncated)
        }
        #expect(try OpcodeList.parse(bytes, list: .list1).entries.count == 14)
    }

    @Test func trailingBytesAndImpossibleCounts() throws {
        let bytes = OpcodeListBuilder.list(Samples.every()[5])
        let error = try #require(throws: OpcodeError.self) { try OpcodeList.parse(bytes + [0, 0], list: .list3) }
        #expect(error.kind == .trailingBytes && error.index == nil && error.category == .corruptData)
        #expect(error.description == "OpcodeList3: 2 bytes follow the last of its 1 opcodes")

        let huge: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 64)
        let countError = try #require(throws: OpcodeError.self) { try OpcodeList.parse(huge, list: .list1) }
        #expect(countError.kind == .truncated && countError.description.contains("4294967295 opcodes"))
    }

    /// Seeded random corruption of a valid list: parsing either succeeds or throws an
    /// `OpcodeError`; whatever parses also applies without crashing.
    @Test func randomCorruptionNeverCrashes() throws {
        var b = OpcodeListBuilder()
        for op in Samples.every() { b.add(op) }
        let original = b.bytes
        var rng = SeededGenerator(seed: 2024)
        var outcomes: [OpcodeError.Kind: Int] = [:]
        var parsed = 0
        for trial in 0..<3000 {
            var bytes = original
            let flips = Int.random(in: 1...4, using: &rng)
            for _ in 0..<flips {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                if trial % 3 == 0 {
                    bytes[at] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
                } else {
                    bytes[at] = UInt8.random(in: 0...255, using: &rng)
                }
            }
            do {
                let list = try OpcodeList.parse(bytes, list: .list1)
                parsed += 1
                var image = randomImage(width: 24, height: 20, channels: 1, seed: UInt64(trial), range: 0...65535)
                let context = OpcodeContext(wholeImage: image, clipping: trial % 2 == 0 ? .dngClip : .keepRange, bayerPhase: 1)
                do {
                    _ = try OpcodeApplier.apply(list, to: &image, context: context)
                } catch {
                    #expect(error.kind == .notApplicable, "apply may only refuse an opcode that cannot run: \(error)")
                }
            } catch {
                outcomes[error.kind, default: 0] += 1
            }
        }
        #expect(parsed > 100, "many corruptions only change values")
        #expect(outcomes.count >= 4, "corruption reaches several error kinds: \(outcomes)")
    }
}
