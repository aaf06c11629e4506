import Foundation
import Testing
import ImageCore
import DNGContainer
import DNGWriter
import TestSupport

/// Files written by the project's DNG writer, read by exiftool (an independent reader) and
/// by this project's container reader: both must see the same tags.
@Suite struct ExifToolCrossCheckTests {
    @Test(arguments: [DNGByteOrder.littleEndian, .bigEndian])
    func exiftoolAndReaderAgree(order: DNGByteOrder) throws {
        let exiftool = try TestData.tool("exiftool")
        let dir = TestData.temporaryDirectory("exiftool")
        defer { try? FileManager.default.removeItem(at: dir) }
        var spec = LinearRawDNG(width: 48, height: 32, samples: Array(repeating: 2000, count: 48 * 32 * 3))
        spec.byteOrder = order
        spec.structure = .previewWithRawSubIFD
        spec.bitsPerSample = 14
        spec.whiteLevel = [16000, 16100, 16200]
        spec.blackLevel = [512, 513.5, 514]
        spec.linearizationTable = (0..<16384).map { UInt16($0 * 4) }
        spec.calibrationIlluminants = [17, 21]
        spec.colorMatrices = [[1.1, -0.3, -0.1, -0.4, 1.4, 0.05, -0.05, 0.2, 0.6], [0.9, -0.3, -0.1, -0.4, 1.3, 0.1, -0.1, 0.23, 0.55]]
        spec.forwardMatrices = [[0.7, 0.15, 0.1, 0.28, 0.7, 0.02, 0.02, 0.1, 0.7], [0.68, 0.17, 0.1, 0.27, 0.71, 0.02, 0.03, 0.1, 0.69]]
        spec.asShotNeutral = [0.45, 1, 0.55]
        spec.baselineExposure = -0.25
        spec.baselineExposureOffset = 0.5
        spec.noiseProfile = [3e-5, 3e-8, 3.1e-5, 3.1e-8, 3.2e-5, 3.2e-8]
        spec.exposureTime = 0.5
        spec.fNumber = 2.8
        spec.iso = 400
        let path = dir.appendingPathComponent("x.dng").path
        try DNGWriter.write(spec, to: path)

        let result = try TestData.run(exiftool, ["-j", "-n", "-G1", path])
        #expect(result.status == 0, "\(result.stderr)")
        let all = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        let tags = try #require(all.first)
        func numbers(_ key: String) -> [Double] {
            if let d = tags[key] as? Double { return [d] }
            return (tags[key] as? String ?? "").split(separator: " ").compactMap { Double($0) }
        }
        #expect(tags["File:FileType"] as? String == "DNG")
        #expect(tags["File:ExifByteOrder"] as? String == (order == .littleEndian ? "II" : "MM"))

        let dng = try DNGFile.open(path: path)
        let raw = try dng.mainRawImage()
        let cal = dng.metadata.calibration
        func close(_ a: [Double], _ b: [Double], _ tolerance: Double = 1e-6) -> Bool {
            a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) <= tolerance * max(1, abs($1)) }
        }
        #expect(numbers("IFD0:DNGVersion") == [1, 6, 0, 0])
        #expect(close(numbers("IFD0:ColorMatrix1"), cal.colorMatrices[0]))
        #expect(close(numbers("IFD0:ColorMatrix2"), cal.colorMatrices[1]))
        #expect(close(numbers("IFD0:ForwardMatrix1"), cal.forwardMatrices[0] ?? []))
        #expect(close(numbers("IFD0:AsShotNeutral"), cal.asShotNeutral ?? []))
        #expect(close(numbers("IFD0:BaselineExposure"), [dng.metadata.baselineExposure]))
        #expect(close(numbers("IFD0:BaselineExposureOffset"), [dng.metadata.baselineExposureOffset]))
        #expect(numbers("IFD0:CalibrationIlluminant1") == [17] && numbers("IFD0:CalibrationIlluminant2") == [21])
        #expect(close(numbers("IFD0:ISO"), [dng.metadata.capture.iso ?? 0]))
        #expect(close(numbers("IFD0:FNumber"), [dng.metadata.capture.fNumber ?? 0]))
        #expect(numbers("SubIFD:BitsPerSample") == [14, 14, 14])
        #expect(numbers("SubIFD:PhotometricInterpretation") == [34892])
        #expect(close(numbers("SubIFD:BlackLevel"), raw.blackLevel))
        #expect(numbers("SubIFD:WhiteLevel") == raw.whiteLevel)
        #expect(close(numbers("SubIFD:NoiseProfile"), raw.noiseProfile ?? [], 1e-9))
        // The values as written (within float-rational precision) survive.
        #expect(close(cal.colorMatrices[0], spec.colorMatrices[0], 1e-6))
        #expect(raw.blackLevel == [512, 513.5, 514])
        #expect(raw.noiseProfile == spec.noiseProfile)
        #expect(raw.linearizationTable == spec.linearizationTable)
    }
}
