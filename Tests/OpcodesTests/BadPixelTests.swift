import Foundation
import ImageCore
import Opcodes
import Testing
import TestSupport

/// Bad-pixel repair on a one-plane Bayer image: the mean of the nearest good same-colour
/// pixel in each of the four same-colour directions.
@Suite struct BadPixelTests {
    /// RGGB: red at (0, 0), so DNG Bayer phase 1.
    static let rggb = OpcodeContext.bayerPhase(cfaPattern: [0, 1, 1, 2])

    @Test func bayerPhaseEncoding() {
        #expect(OpcodeContext.bayerPhase(cfaPattern: [1, 0, 2, 1]) == 0)
        #expect(Self.rggb == 1)
        #expect(OpcodeContext.bayerPhase(cfaPattern: [2, 1, 1, 0]) == 2)
        #expect(OpcodeContext.bayerPhase(cfaPattern: [1, 2, 0, 1]) == 3)
        #expect(OpcodeContext.bayerPhase(cfaPattern: [0, 1, 2, 3]) == nil)
    }

    /// The reference repair written out here: `bad` holds the bad pixels; green pixels
    /// (RGGB: row + column odd) walk the diagonals, red and blue the axes two apart.
    static func reference(_ image: ImageBuffer<Float>, bad: Set<[Int]>, steps: Int) -> ImageBuffer<Float> {
        var out = image
        for p in bad {
            let (r, c) = (p[0], p[1])
            let green = (r + c) % 2 == 1
            let dirs = green ? [(1, 1), (1, -1), (-1, 1), (-1, -1)] : [(2, 0), (-2, 0), (0, 2), (0, -2)]
            var found: [Double] = []
            for (dr, dc) in dirs {
                var s = 1
                while s <= steps {
                    let (rr, cc) = (r + dr * s, c + dc * s)
                    if rr < 0 || cc < 0 || rr >= image.height || cc >= image.width { break }
                    if !bad.contains([rr, cc]) { found.append(Double(image[rr, cc, 0])); break }
                    s += 1
                }
            }
            if !found.isEmpty { out[r, c, 0] = Float(found.reduce(0, +) / Double(found.count)) }
        }
        return out
    }

    /// Stage 1: stored values equal to the constant are bad; a bad neighbour never counts;
    /// at the image edge fewer neighbours are used.
    @Test func constantRepairIsTheSameColourNeighbourMean() throws {
        var image = randomImage(width: 20, height: 16, channels: 1, seed: 51, range: 100...4000)
        for i in image.samples.indices { image.samples[i] = image.samples[i].rounded() }
        let badPixels: Set<[Int]> = [[5, 5], [5, 7], [8, 9], [0, 0], [15, 19], [4, 4], [6, 6], [7, 12], [9, 12]]
        for p in badPixels { image[p[0], p[1], 0] = 0 }
        let expected = Self.reference(image, bad: badPixels, steps: 1)
        var result = image
        let report = try applyList([.fixBadPixelsConstant(FixBadPixelsConstant(constant: 0, bayerPhase: 1))], list: .list1,
                                   to: &result, context: OpcodeContext(wholeImage: image, bayerPhase: Self.rggb))
        #expect(report.applied[0].samples == badPixels.count)
        #expect(report.warnings.isEmpty)
        for r in 0..<16 {
            for c in 0..<20 {
                #expect(abs(result[r, c, 0] - expected[r, c, 0]) <= 1e-3, "\(r),\(c)")
            }
        }
        // Blue (5, 5): its same-colour neighbour (5, 7) is bad too, so the other three count.
        let three = (Double(image[5, 3, 0]) + Double(image[3, 5, 0]) + Double(image[7, 5, 0])) / 3
        #expect(abs(Double(result[5, 5, 0]) - three) < 1e-3)
        // A green pixel (8, 9): the mean of its diagonal neighbours.
        let diagonal = (Double(image[7, 8, 0]) + Double(image[7, 10, 0]) + Double(image[9, 8, 0]) + Double(image[9, 10, 0])) / 4
        #expect(abs(Double(result[8, 9, 0]) - diagonal) < 1e-3)
    }

    /// Stage 2: the constant is compared with the sample's 16-bit code.
    @Test func constantRepairStage2ComparesCodes() throws {
        var image = ImageBuffer<Float>(width: 6, height: 6, channels: 1, repeating: 0.5)
        image[2, 2, 0] = 1000.2 / 65535   // code 1000
        image[2, 4, 0] = 0.25
        var result = image
        try applyList([.fixBadPixelsConstant(FixBadPixelsConstant(constant: 1000, bayerPhase: 1))], to: &result,
                      context: OpcodeContext(wholeImage: image, bayerPhase: Self.rggb))
        // Red at (2, 2): neighbours (0, 2), (4, 2), (2, 0), (2, 4).
        #expect(abs(result[2, 2, 0] - (0.5 + 0.5 + 0.5 + 0.25) / 4) < 1e-7)
        #expect(result[2, 4, 0] == 0.25)
    }

    /// Listed points and rectangles: pixels inside a rectangle take the nearest good
    /// same-colour pixels beyond its edges. Points outside the image are ignored.
    @Test func listRepairCoversPointsAndRectangles() throws {
        let image = randomImage(width: 24, height: 20, channels: 1, seed: 61, range: 0.1...0.9)
        let rect = PixelRect(top: 6, left: 8, bottom: 11, right: 13)
        let points = [BadPixel(row: 2, column: 3), BadPixel(row: 15, column: 20), BadPixel(row: -4, column: 2), BadPixel(row: 3, column: 3)]
        var bad: Set<[Int]> = []
        for p in points where p.row >= 0 { bad.insert([p.row, p.column]) }
        for r in rect.top..<rect.bottom { for c in rect.left..<rect.right { bad.insert([r, c]) } }
        let expected = Self.reference(image, bad: bad, steps: 64)
        var result = image
        let op = FixBadPixelsList(bayerPhase: 1, points: points, rectangles: [rect])
        let report = try applyList([.fixBadPixelsList(op)], to: &result, context: OpcodeContext(wholeImage: image, bayerPhase: Self.rggb))
        #expect(report.applied[0].samples == bad.count)
        for r in 0..<20 {
            for c in 0..<24 {
                #expect(abs(result[r, c, 0] - expected[r, c, 0]) <= Float(Tolerance.float), "\(r),\(c)")
                if !bad.contains([r, c]) { #expect(result[r, c, 0] == image[r, c, 0]) }
            }
        }
        // The centre of the 5 × 5 rectangle, red (8, 10): its nearest good red pixels are
        // 4 rows or columns away on each axis.
        let centre = (Double(image[4, 10, 0]) + Double(image[12, 10, 0]) + Double(image[8, 6, 0]) + Double(image[8, 14, 0])) / 4
        #expect(abs(Double(result[8, 10, 0]) - centre) < Tolerance.float)
    }

    /// The opcodes need a one-plane Bayer image: required ones fail, optional ones are
    /// skipped with the reason; a differing Bayer phase is a warning.
    @Test func applicability() throws {
        let op = Opcode.fixBadPixelsConstant(FixBadPixelsConstant(constant: 0, bayerPhase: 1))
        var rgb = ImageBuffer<Float>(width: 4, height: 4, channels: 3, repeating: 0)
        let error = try #require(throws: OpcodeError.self) { try applyList([op], list: .list1, to: &rgb) }
        #expect(error.kind == .notApplicable && error.index == 0 && error.opcodeID == 4 && error.category == .unsupportedFeature)
        #expect(error.description.contains("3 planes"))

        var mono = ImageBuffer<Float>(width: 4, height: 4, channels: 1, repeating: 0)
        let noCFA = try #require(throws: OpcodeError.self) { try applyList([op], list: .list1, to: &mono) }
        #expect(noCFA.kind == .notApplicable && noCFA.description.contains("Bayer"))

        let report = try applyList([op], list: .list1, flags: 1, to: &rgb)
        guard case .notApplicable(let why) = report.skipped.first?.reason else { Issue.record("not skipped"); return }
        #expect(why.contains("3 planes") && report.applied.isEmpty)

        var bayer = ImageBuffer<Float>(width: 4, height: 4, channels: 1, repeating: 10)
        let warned = try applyList([op], list: .list1, to: &bayer, context: OpcodeContext(wholeImage: bayer, bayerPhase: 2))
        #expect(warned.warnings.count == 1 && warned.warnings[0].contains("Bayer phase 1 differs"))
    }
}
