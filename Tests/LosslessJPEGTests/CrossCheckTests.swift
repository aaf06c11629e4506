import Foundation
import LosslessJPEG
import Testing
import TestSupport

/// Writes little-endian 16-bit samples.
func writeU16LE(_ samples: [UInt16], to url: URL) throws {
    var bytes = [UInt8](repeating: 0, count: samples.count * 2)
    for (i, s) in samples.enumerated() {
        bytes[2 * i] = UInt8(truncatingIfNeeded: s)
        bytes[2 * i + 1] = UInt8(truncatingIfNeeded: s >> 8)
    }
    try Data(bytes).write(to: url)
}

/// Python run by the cross-checks: prints "SKIP ..." when imagecodecs is missing (the test is then skipped).
let importImagecodecs = """
import sys
try:
    import imagecodecs, numpy as np
except ImportError as e:
    print('SKIP', e); sys.exit(0)
"""

/// Skips the running test (or, in CI, fails it) when the script found no imagecodecs.
func skipWithoutImagecodecs(_ result: ProcessResult) throws {
    if result.stdout.hasPrefix("SKIP") {
        try TestRequirement.unavailable("imagecodecs in the Python environment (\(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))",
                                        installedByBootstrap: true)
    }
}

@Suite("Cross-checks with independent decoders and encoders (imagecodecs)")
struct CrossCheckTests {
    /// Our streams, decoded by libjpeg-turbo (all), liblj92 and jpegsof3 (those without
    /// restart markers, which these two do not implement).
    @Test("Independent decoders reproduce the samples of our streams")
    func ourStreamsDecodeElsewhere() throws {
        let dir = TestData.temporaryDirectory("lj92-cross")
        defer { try? FileManager.default.removeItem(at: dir) }
        var generator = SeededGenerator(seed: 2024)
        var cases: [String] = []
        func add(_ name: String, _ samples: [UInt16], width: Int, height: Int, components: Int, precision: Int,
                 predictor: Int, restartLines: Int) throws {
            let stream = try LJ92Encoder.encode(samples, width: width, height: height, components: components,
                                                precision: precision, predictor: predictor,
                                                restartInterval: restartLines * width)
            try Data(stream).write(to: dir.appendingPathComponent(name + ".ljp"))
            try writeU16LE(samples, to: dir.appendingPathComponent(name + ".u16"))
            cases.append("\(name) \(components) \(restartLines)")
        }
        for predictor in 1...7 {
            for components in 1...4 {
                for precision in [2, 8, 12, 16] {
                    for restartLines in [0, 1, 3] {
                        let samples = randomSamples(17 * 13 * components, precision: precision, generator: &generator)
                        try add("p\(predictor)c\(components)b\(precision)r\(restartLines)", samples, width: 17,
                                height: 13, components: components, precision: precision, predictor: predictor,
                                restartLines: restartLines)
                    }
                }
            }
        }
        let smooth = smoothSamples(width: 200, height: 150, components: 3, precision: 12, generator: &generator)
        try add("smooth", smooth, width: 200, height: 150, components: 3, precision: 12, predictor: 7, restartLines: 0)
        let extremes = (0..<(11 * 5 * 2)).map { UInt16(($0 / 2 + $0 / 22) % 2 == 0 ? 0 : 65535) }
        try add("extremes", extremes, width: 11, height: 5, components: 2, precision: 16, predictor: 1, restartLines: 0)
        let halves = (0..<(9 * 7)).map { UInt16($0 % 2 == 0 ? 0 : 32768) }
        try add("halves", halves, width: 9, height: 7, components: 1, precision: 16, predictor: 5, restartLines: 1)
        try cases.joined(separator: "\n").write(to: dir.appendingPathComponent("cases.txt"), atomically: true, encoding: .utf8)

        let script = importImagecodecs + "\n" + """
        import os
        d = sys.argv[1]
        spaces = {1: 'GRAY', 3: 'RGB', 4: 'CMYK'}
        for line in open(os.path.join(d, 'cases.txt')).read().split('\\n'):
            name, comps, restart = line.split()
            comps, restart = int(comps), int(restart)
            data = open(os.path.join(d, name + '.ljp'), 'rb').read()
            ref = np.fromfile(os.path.join(d, name + '.u16'), '<u2')
            decoders = {'jpeg8': lambda b: imagecodecs.jpeg8_decode(b, colorspace=spaces.get(comps, 'UNKNOWN'),
                                                                    outcolorspace=spaces.get(comps, 'UNKNOWN'))}
            if restart == 0:
                decoders['ljpeg'] = imagecodecs.ljpeg_decode
                decoders['jpegsof3'] = imagecodecs.jpegsof3_decode
            for key, fn in decoders.items():
                try:
                    out = np.asarray(fn(data)).ravel().astype(np.uint16)
                    print(name, key, 'OK' if np.array_equal(out, ref) else 'MISMATCH')
                except Exception as e:
                    print(name, key, 'ERROR', str(e).replace('\\n', ' '))
        """
        let result = try TestData.runPython(script, [dir.path])
        #expect(result.status == 0, "python failed: \(result.stderr)")
        try skipWithoutImagecodecs(result)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let expectedCount = cases.reduce(0) { $0 + ($1.hasSuffix(" 0") ? 3 : 1) }
        #expect(lines.count == expectedCount, "one verdict per case and decoder")
        for line in lines {
            #expect(line.hasSuffix(" OK"), "\(line)")
        }
    }

    /// Streams written by libjpeg-turbo (lossless mode, all predictors and several
    /// precisions, with an APP14 segment and non-numeric component identifiers) and by
    /// liblj92 (DHT before SOF), decoded by us.
    @Test("We decode streams of independent encoders")
    func theirStreamsDecodeHere() throws {
        let dir = TestData.temporaryDirectory("lj92-foreign")
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = importImagecodecs + "\n" + """
        import os
        d = sys.argv[1]
        rng = np.random.default_rng(7)
        names = []
        def save(name, data, samples):
            open(os.path.join(d, name + '.ljp'), 'wb').write(data)
            samples.astype('<u2').tofile(os.path.join(d, name + '.u16'))
            names.append(name)
        for p in range(1, 8):
            for b in (2, 8, 12, 16):
                for comps in (1, 3):
                    shape = (13, 17) if comps == 1 else (13, 17, 3)
                    a = rng.integers(0, 2 ** b, shape).astype(np.uint16 if b > 8 else np.uint8)
                    save(f'jpeg8_p{p}_b{b}_c{comps}', imagecodecs.jpeg8_encode(a, lossless=True, predictor=p, bitspersample=b), a)
        for b in (8, 12, 14, 16):
            y, x = np.mgrid[0:40, 0:61]
            a = ((x * 5 + y * 3 + rng.integers(0, 4, (40, 61))) % (2 ** b)).astype(np.uint16)
            save(f'ljpeg_b{b}', imagecodecs.ljpeg_encode(a, bitspersample=b), a)
        print('\\n'.join(names))
        """
        let result = try TestData.runPython(script, [dir.path])
        #expect(result.status == 0, "python failed: \(result.stderr)")
        try skipWithoutImagecodecs(result)
        let names = result.stdout.split(separator: "\n").map(String.init)
        #expect(names.count == 7 * 4 * 2 + 4)
        for name in names {
            let stream = [UInt8](try Data(contentsOf: dir.appendingPathComponent(name + ".ljp")))
            let reference = try TestData.readU16LE(dir.appendingPathComponent(name + ".u16"))
            do {
                let (frame, samples) = try LJ92Decoder.decode(stream)
                #expect(samples == reference, "\(name)")
                if name.hasPrefix("jpeg8_p") {
                    #expect(frame.predictor == Int(name.dropFirst(7).prefix(1)), "\(name)")
                }
            } catch {
                Issue.record("\(name): \(error)")
            }
        }
    }
}
