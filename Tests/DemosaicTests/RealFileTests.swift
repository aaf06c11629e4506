import DNGContainer
import Demosaic
import Foundation
import ImageCore
import Linearize
import RawDecode
import Testing
import TestSupport

/// A real camera file nobody on the project wrote: a Canon EOS Kiss X4 DNG (RGGB, 14-bit,
/// uncompressed, ActiveArea (26, 152)–(1182, 1886)), through Stage 1, Stage 2 and each
/// demosaicing method.
@Suite struct DemosaicRealFileTests {
    @Test func canonKissX4() throws {
        let url = try TestData.shared("real/canon_kissx4_cfa14_uncompressed.dng")
        guard FileManager.default.fileExists(atPath: url.path) else {
            FileHandle.standardError.write(Data("skipped: \(url.path) not found\n".utf8))
            return
        }
        let dng = try DNGFile.open(path: url.path)
        let ifd = try dng.mainRawImage()
        let linear = try Linearizer.linearize(RawDecoder.decode(dng, ifd: ifd), path: url.path)
        let cfa = try #require(ifd.cfa)
        #expect(cfa.patternName == "RGGB" && linear.mapping.activeArea == PixelRect(top: 26, left: 152, bottom: 1182, right: 1886))
        let (w, h) = (linear.width, linear.height)
        #expect(w == 1734 && h == 1156)
        let inputMin = linear.values.samples.min()!, inputMax = linear.values.samples.max()!

        var means: [DemosaicMethod: [Double]] = [:]
        for method in DemosaicMethod.allCases {
            let out = try Demosaicer.demosaic(linear, cfa: cfa, method: method)
            let size = method == .superpixel ? (w / 2, h / 2) : (w, h)
            #expect(out.width == size.0 && out.height == size.1 && out.planes == 3)
            #expect(out.clipMask.count == size.0 * size.1)
            #expect(out.values.samples.allSatisfy { $0.isFinite && $0 >= inputMin && $0 <= inputMax }, "\(method)")
            #expect(out.ifd.path == ifd.path && out.mapping == linear.mapping)
            var sums = [0.0, 0.0, 0.0]
            for p in 0..<(out.width * out.height) {
                for ch in 0..<3 { sums[ch] += Double(out.values.samples[3 * p + ch]) }
            }
            means[method] = sums.map { $0 / Double(out.width * out.height) }

            if method == .superpixel {
                // (26, 152) is even, even: every cell is R G / G B.
                for (y, x) in [(0, 0), (1, 0), (0, 1), (300, 411), (577, 866), (123, 45)] {
                    let r = linear.values[2 * y, 2 * x, 0]
                    let g = (linear.values[2 * y, 2 * x + 1, 0] + linear.values[2 * y + 1, 2 * x, 0]) / 2
                    let b = linear.values[2 * y + 1, 2 * x + 1, 0]
                    #expect([out.values[y, x, 0], out.values[y, x, 1], out.values[y, x, 2]] == [r, g, b], "cell \(y),\(x)")
                }
            } else {
                // Measured samples pass through unchanged.
                for (r, c) in [(0, 0), (0, 1), (1, 0), (1, 1), (600, 901), (1155, 1733)] {
                    let color = (r % 2) + (c % 2) // R 0, G 1, B 2 for RGGB at an even origin
                    #expect(out.values[r, c, color] == linear.values[r, c, 0], "\(method) at \(r),\(c)")
                }
            }
        }
        // Interpolation preserves the mean of each plane to well under 1 %.
        let reference = means[.superpixel]!
        for method in [DemosaicMethod.bilinear, .rcd] {
            for ch in 0..<3 {
                let m = means[method]![ch]
                #expect(abs(m - reference[ch]) < 0.005 * abs(reference[ch]), "\(method) plane \(ch): \(m) vs \(reference[ch])")
            }
        }
    }
}
