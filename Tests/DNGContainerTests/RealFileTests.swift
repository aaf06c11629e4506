import Foundation
import Testing
import ImageCore
@testable import DNGContainer
import TestSupport

/// Metadata of real DNG files nobody on the project wrote, against exiftool's reading.
@Suite struct RealFileTests {
    @Test func iPhone12ProProRAWHeader() throws {
        let url = try TestData.shared("real/iphone12pro_proraw_header_only.dng")
        let dng = try DNGFile.open(path: url.path)
        #expect(dng.byteOrder == .bigEndian)
        #expect(dng.metadata.dngVersion == "1.4.0.0")
        #expect(dng.metadata.dngBackwardVersion == "1.3.0.0")
        #expect(dng.metadata.make == "Apple")
        #expect(dng.metadata.model == "iPhone 12 Pro")
        #expect(dng.metadata.uniqueCameraModel == "iPhone13,3 back camera")
        #expect(dng.metadata.orientation == 6)
        #expect(abs(dng.metadata.baselineExposure - (-0.3022167683)) < 1e-9)
        #expect(dng.metadata.capture.iso == 32)
        #expect(abs((dng.metadata.capture.exposureTime ?? 0) - 1.0 / 5556) < 1e-9)
        #expect(abs((dng.metadata.capture.fNumber ?? 0) - 1.6) < 1e-9)
        #expect(dng.metadata.profileToneCurvePoints == 257)

        let cal = dng.metadata.calibration
        #expect(cal.illuminants == [17, 21])
        #expect(cal.colorMatrices.count == 2)
        #expect(abs(cal.colorMatrices[0][0] - 1.2271626) < 1e-6)
        #expect(abs(cal.colorMatrices[1][0] - 0.9145434499) < 1e-9)
        let neutral = try #require(cal.asShotNeutral)
        #expect(abs(neutral[0] - 0.448975116) < 1e-8 && neutral[1] == 1 && abs(neutral[2] - 0.5408688784) < 1e-8)
        #expect(cal.profileName == "Apple Embedded Color Profile")

        let raw = try dng.mainRawImage()
        #expect(raw.path == "IFD0/SubIFD0")
        #expect(raw.photometric == Photometric.linearRaw)
        #expect(raw.width == 4032 && raw.height == 3024)
        #expect(raw.samplesPerPixel == 3 && raw.bitsPerSample == [12, 12, 12])
        #expect(raw.compression == 7)
        let layout = try #require(raw.layout)
        #expect(layout.kind == .tiles && layout.blockWidth == 504 && layout.blockHeight == 378)
        #expect(layout.offsets.count == 64 && layout.byteCounts.count == 64)
        #expect(raw.blackLevel == [0, 0, 0] && raw.whiteLevel == [65535, 65535, 65535])
        #expect(raw.noiseProfile == [3e-05, 3e-08])
        let table = try #require(raw.linearizationTable)
        #expect(table.count == 4096)
        let csv = try String(contentsOf: url.deletingLastPathComponent().appendingPathComponent("iphone12pro_LinearizationTable.csv"), encoding: .utf8)
        let expected = csv.split(whereSeparator: \.isNewline).compactMap { UInt16($0.trimmingCharacters(in: .whitespaces)) }
        #expect(expected.count == 4096)
        #expect(table == expected)
        #expect(table.firstIndex(of: 65535) == 1454)
        let pgtm = try #require(raw.profileGainTableMap)
        #expect(pgtm.pointsV == 6 && pgtm.pointsH == 8 && pgtm.pointsN == 257 && pgtm.byteCount == 49408)

        let masks = dng.semanticMasks
        #expect(masks.count == 1)
        #expect(masks.first?.semanticName == "urn:com:apple:photo:2020:aux:semanticskymatte")
        #expect(masks.first?.width == 2016 && masks.first?.height == 1512)
        #expect(masks.first?.path == "IFD0/SubIFD1")
        #expect(dng.images.first?.role == .preview)
    }

    @Test func canonKissX4CFA() throws {
        let url = try TestData.shared("real/canon_kissx4_cfa14_uncompressed.dng")
        let dng = try DNGFile.open(path: url.path)
        let raw = try dng.mainRawImage()
        #expect(raw.photometric == Photometric.cfa)
        #expect(raw.width == 1888 && raw.height == 1182)
        #expect(raw.bitsPerSample == [14])
        #expect(raw.activeArea == PixelRect(top: 26, left: 152, bottom: 1182, right: 1886))
        #expect(raw.blackLevel == [2056] && raw.whiteLevel == [15000])
        #expect(raw.cfa?.patternName == "RGGB")
    }

    @Test func canon350DStripped() throws {
        let url = try TestData.shared("real/canon350d_image_data_stripped.dng")
        let dng = try DNGFile.open(path: url.path)
        let raw = try dng.mainRawImage()
        #expect(raw.photometric == Photometric.cfa)
        #expect(raw.compression == 7)
        #expect(raw.bitsPerSample == [16])
        #expect(dng.images.filter { $0.role == .preview }.count >= 2)
    }

    @Test func goProVC5() throws {
        let url = try TestData.shared("real/gopro_hero6_vc5_compression9.dng")
        let dng = try DNGFile.open(path: url.path)
        let raw = try dng.mainRawImage()
        #expect(raw.compression == 9)
    }
}
