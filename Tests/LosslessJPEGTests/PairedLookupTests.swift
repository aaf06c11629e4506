@testable import LosslessJPEG
import Testing
import TestSupport

/// Samples whose differences are mostly 0 or ±1 (short codes, so that most lookups hold two)
/// with, where `spikes` is set, an occasional large step (long codes and extra bits past the
/// lookup, which the paired decoder must decode one at a time).
func quietSamples(width: Int, height: Int, components: Int, precision: Int, spikes: Bool,
                  generator: inout SeededGenerator) -> [UInt16] {
    let top = (1 << precision) - 1
    var out = [UInt16](repeating: 0, count: width * height * components)
    for i in out.indices {
        var value = top / 2 + Int.random(in: -1...1, using: &generator)
        if spikes && Int.random(in: 0..<23, using: &generator) == 0 { value = Int.random(in: 0...top, using: &generator) }
        out[i] = UInt16(value)
    }
    return out
}

/// Decodes `stream` with the given lookups: the samples, or the error.
func decodeResult(_ stream: [UInt8], _ lookups: LJ92Decoder.Lookups) -> Result<[UInt16], LJ92Error> {
    stream.withUnsafeBytes { raw -> Result<[UInt16], LJ92Error> in
        do throws(LJ92Error) {
            let frame = try LJ92Decoder.readFrame(raw)
            var samples = [UInt16](repeating: 0, count: frame.sampleCount)
            let result = samples.withUnsafeMutableBufferPointer { out -> Result<Void, LJ92Error> in
                do throws(LJ92Error) {
                    try LJ92Decoder.decode(raw, into: out, lookups: lookups)
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            try result.get()
            return .success(samples)
        } catch {
            return .failure(error)
        }
    }
}

@Suite("Two codes per lookup (PairedLookups)")
struct PairedLookupTests {
    @Test("Paired and single lookups decode the same samples: predictors × components × restart intervals",
          arguments: 1...7)
    func sameSamples(predictor: Int) throws {
        var generator = SeededGenerator(seed: UInt64(predictor))
        for components in 1...4 {
            for (width, height) in [(1, 3), (2, 2), (7, 5), (64, 9)] {
                for precision in [8, 12, 16] {
                    for spikes in [false, true] {
                        for restartLines in [0, 2] {
                            let samples = quietSamples(width: width, height: height, components: components,
                                                       precision: precision, spikes: spikes, generator: &generator)
                            let stream = try LJ92Encoder.encode(samples, width: width, height: height, components: components,
                                                                precision: precision, predictor: predictor,
                                                                restartInterval: restartLines * width)
                            let label = "\(width)×\(height)×\(components), \(precision) bits, spikes \(spikes), restart \(restartLines)"
                            #expect(try decodeResult(stream, .paired).get() == samples, "paired: \(label)")
                            #expect(try decodeResult(stream, .single).get() == samples, "single: \(label)")
                            #expect(try decodeResult(stream, .automatic).get() == samples, "automatic: \(label)")
                        }
                    }
                }
            }
        }
    }

    @Test("Quiet data decodes two codes per lookup; noisy data one")
    func choiceFollowsTheData() throws {
        var generator = SeededGenerator(seed: 5)
        func pairs(_ samples: [UInt16]) throws -> Bool {
            let stream = try LJ92Encoder.encode(samples, width: 64, height: 64, components: 3, precision: 12,
                                                predictor: 1, restartInterval: 0)
            let header = try stream.withUnsafeBytes { raw throws(LJ92Error) in try LJ92Decoder.parseHeader(raw) }
            return LJ92Decoder.pairsPay(entropyBytes: stream.count - header.scanStart, samples: 64 * 64 * 3)
        }
        #expect(try pairs(quietSamples(width: 64, height: 64, components: 3, precision: 12, spikes: false, generator: &generator)))
        #expect(try !pairs(randomSamples(64 * 64 * 3, precision: 12, generator: &generator)))
        #expect(LJ92Decoder.pairsPay(entropyBytes: 5, samples: 8) && !LJ92Decoder.pairsPay(entropyBytes: 6, samples: 8))
    }

    @Test("Damaged streams stop at the same place, with the same error, either way")
    func sameErrors() throws {
        var generator = SeededGenerator(seed: 11)
        var failures = 0
        for trial in 0..<400 {
            let components = 1 + trial % 4
            let samples = quietSamples(width: 33, height: 6, components: components, precision: 12,
                                       spikes: trial % 2 == 1, generator: &generator)
            var stream = try LJ92Encoder.encode(samples, width: 33, height: 6, components: components, precision: 12,
                                                predictor: 1 + trial % 7, restartInterval: trial % 3 == 0 ? 66 : 0)
            let scanStart = try stream.withUnsafeBytes { raw throws(LJ92Error) in try LJ92Decoder.parseHeader(raw).scanStart }
            if trial % 5 == 4 {
                stream.removeLast(Int.random(in: 1...min(24, stream.count - scanStart), using: &generator))
            } else {
                for _ in 0...(trial % 3) {
                    let at = Int.random(in: scanStart..<stream.count - 2, using: &generator)
                    stream[at] ^= UInt8.random(in: 1...255, using: &generator)
                }
            }
            let paired = decodeResult(stream, .paired), single = decodeResult(stream, .single)
            #expect(paired == single, "trial \(trial)")
            if case .failure = single { failures += 1 }
        }
        // The damage must reach the decoder's error paths, not only its samples.
        #expect(failures > 100, "\(failures) of 400 damaged streams failed")
    }
}
