import CaptureSimulation
import DNGWriter
import Foundation
import SceneLinearKit
import SimulationCheck
import Testing
import TestSupport

/// The merge of raw brackets in closed loop against the simulator's truth (docs/merge.md):
/// bias, noise against the merge's own prediction and the best single frame, per-pixel 95 %
/// coverage over the image and over seeds, lower bounds, misstated exposure times, bad input.
@Suite struct BracketMergeTests {
    /// A simulated bracket of the sky-with-sun scene in a directory of its own.
    static func bracket(_ label: String, stops: [Double], layout: String = "linear-raw", seed: UInt64 = 1,
                        size: (Int, Int) = (512, 384)) throws -> (dir: URL, output: BracketSimulationOutput) {
        let dir = TestData.temporaryDirectory(label)
        var camera = CameraModel()
        camera.layout = layout
        camera.seed = seed
        let scene = try RenderedScene(BuiltInScene.skySun.description(width: size.0, height: size.1))
        let output = try Pipeline.simulateBracket(scene: scene, camera: camera, stops: stops, name: "sky", directory: dir.path)
        return (dir, output)
    }

    /// Four LinearRaw frames 4 EV apart of a 33-stop scene: bias below 0.2 % (or 3 standard
    /// errors in the noise floor) on every measured patch over 22 stops, noise within 5 % of
    /// the prediction and below the best frame's, the sun a lower bound, 93–97 % coverage.
    @Test func linearRawBracketAgainstTruth() throws {
        let (dir, sim) = try Self.bracket("merge-lr", stops: [-8, -4, 0, 4])
        defer { try? FileManager.default.removeItem(at: dir) }
        let report = try Pipeline.validateBracket(frames: sim.frames, record: sim.record)
        #expect(report.passed, "\(report.text)")
        #expect(report.merge.reference == 2)
        #expect((0.93...0.97).contains(report.coverage), "coverage \(report.coverage)")
        #expect(report.lowerBoundPatches.contains("sun"))
        let measured = report.patches.filter { $0.lowerBoundHolds == nil }
        #expect(measured.count >= 19, "\(measured.map(\.name))")
        // The scene spans ≥ 20 stops of measured patches.
        let stops = measured.map(\.stopsBelowWhite)
        #expect(stops.max()! - stops.min()! >= 20, "\(stops)")
        for p in measured {
            // Bias: 0.2 % where the patch mean's standard error allows it.
            for c in 0..<3 where p.standardError[c] / p.truth[c] < 0.002 / 3 {
                #expect(abs(p.relativeBias[c]) < 0.002, "\(p.name) channel \(c): bias \(p.relativeBias[c])")
            }
            for c in 0..<3 { #expect(abs(p.varianceRatio[c] - 1) < 0.05 + 3 * (2.0 / Double(p.pixels)).squareRoot(), "\(p.name): \(p.varianceRatio)") }
        }
        // Where two frames see a patch, the merge beats the best one: the +4 EV frame alone
        // has about 1 + 1/16 times the merged variance.
        let grey = try #require(report.patches.first { $0.name == "grey/10" })
        let best = try #require(grey.bestFrameVariance)
        for c in 0..<3 { #expect(best[c] / grey.measuredVariance[c] > 1.02, "grey/10: \(best) against \(grey.measuredVariance)") }
    }

    /// Five CFA frames 4 EV apart (superpixel): the same checks pass.
    @Test func cfaBracketAgainstTruth() throws {
        let (dir, sim) = try Self.bracket("merge-cfa", stops: [-8, -4, 0, 4, 8], layout: "cfa", seed: 3)
        defer { try? FileManager.default.removeItem(at: dir) }
        let report = try Pipeline.validateBracket(frames: sim.frames, record: sim.record)
        #expect(report.passed, "\(report.text)")
        #expect(report.merge.reference == 2)
        #expect(report.merge.standardDeviation == "exact")
        #expect(report.lowerBoundPatches == ["sun"] || report.lowerBoundPatches == ["sun", "grey/23"], "\(report.lowerBoundPatches)")
    }

    /// Per-pixel coverage over seeds (small version of benchmarks/merge_coverage.py): every
    /// seed within 93–97 %, their mean within 94–96 %.
    @Test func coverageOverSeeds() throws {
        var values: [Double] = []
        for seed: UInt64 in [11, 12, 13] {
            let (dir, sim) = try Self.bracket("merge-seed\(seed)", stops: [-4, 0, 4], seed: seed, size: (256, 192))
            defer { try? FileManager.default.removeItem(at: dir) }
            let report = try Pipeline.validateBracket(frames: sim.frames, record: sim.record)
            #expect((0.93...0.97).contains(report.coverage), "seed \(seed): \(report.coverage)")
            values.append(report.coverage)
        }
        let mean = values.reduce(0, +) / Double(values.count)
        #expect((0.94...0.96).contains(mean), "\(values)")
    }

    /// A frame whose ExposureTime says twice its real time is detected (measured ratio 2× off),
    /// merged at the measured ratio, and the merge still matches the truth; the frame beyond it
    /// in the chain, whose own metadata is right, is not taken for misstated.
    @Test func misstatedExposureTimeIsDetected() throws {
        let (dir, sim) = try Self.bracket("merge-misstated", stops: [-8, -4, 0, 4])
        defer { try? FileManager.default.removeItem(at: dir) }
        // Frame 2 (−4 EV) again, its metadata claiming twice the exposure time.
        var camera = sim.record.camera
        camera.exposureTime /= 16
        camera.seed = sim.record.bracket![1].seed
        var capture = try Simulator.capture(try RenderedScene(sim.record.scene), camera: camera)
        capture.dng.exposureTime = camera.exposureTime * 2
        try DNGWriter.write(capture.dng, to: sim.frames[1])
        var options = MergeOptions()
        options.reference = 2
        let merged = try Pipeline.merge(paths: sim.frames, options: options)
        let frame = merged.report.frames[1]
        #expect(frame.exposureSource == "measured", "\(frame)")
        #expect(abs(frame.nominalExposure / (2.0 / 16) - 1) < 1e-9)
        #expect(abs(frame.exposure * 16 - 1) < 0.002, "used \(frame.exposure)")
        #expect(merged.report.misstatedFrames == [1], "\(merged.report.frames.map(\.exposureSource))")
        #expect(abs(merged.report.frames[0].exposure * 256 - 1) < 1e-9, "frame 1 at its own metadata's exposure")
        let report = try Pipeline.validateBracket(frames: sim.frames, record: sim.record)
        #expect(report.passed, "\(report.text)")
    }

    /// Hand-held: two of three frames photographed with the scene moved by (6, −4) and (−3, 5)
    /// pixels; `align` finds the shifts and the merge matches the truth.
    @Test func alignedBracket() throws {
        let (dir, sim) = try Self.bracket("merge-align", stops: [-4, 0, 4])
        defer { try? FileManager.default.removeItem(at: dir) }
        let scene = try RenderedScene(sim.record.scene)
        for (k, shift) in [(0, (6, -4)), (2, (-3, 5))] {
            // The frame sees the scene moved by `shift`: its pixel (x + sx, y + sy) shows (x, y).
            let r = scene.radiance
            var moved = [Double](repeating: 0, count: r.samples.count)
            for y in 0..<r.height {
                for x in 0..<r.width {
                    let sx = min(max(x - shift.0, 0), r.width - 1), sy = min(max(y - shift.1, 0), r.height - 1)
                    for c in 0..<3 { moved[3 * (y * r.width + x) + c] = r[sy, sx, c] }
                }
            }
            var camera = sim.record.camera
            camera.exposureTime *= pow(2, sim.record.bracket![k].ev)
            camera.seed = sim.record.bracket![k].seed
            let capture = try Simulator.capture(RenderedScene(name: "moved", radiance: ImageBuffer(width: r.width, height: r.height,
                                                                                                   channels: 3, samples: moved)),
                                                camera: camera)
            try DNGWriter.write(capture.dng, to: sim.frames[k])
        }
        var options = MergeOptions()
        options.align = true
        let merged = try Pipeline.merge(paths: sim.frames, options: options)
        #expect(merged.report.frames.map(\.offset) == [[6, -4], [0, 0], [-3, 5]], "\(merged.report.frames.map(\.offset))")
        // Aligned, the frames agree within their noise.
        let shares = merged.report.frames.compactMap(\.disagreeingShare)
        #expect(shares.count == 2 && shares.allSatisfy { $0 < 0.02 }, "\(shares)")
        let report = try Pipeline.validateBracket(frames: sim.frames, record: sim.record, align: true)
        #expect(report.passed, "\(report.text)")
        // Without alignment the moved frames disagree beyond their noise: refused, not smeared.
        #expect {
            _ = try Pipeline.validateBracket(frames: sim.frames, record: sim.record)
        } throws: { error in
            (error as? MergeError)?.category == .bracketMismatch && "\(error)".contains("differ beyond their noise")
        }
    }

    /// CFA frames are moved by whole Bayer cells only (even shifts).
    @Test func alignedMosaicMovesByCells() throws {
        let (dir, sim) = try Self.bracket("merge-align-cfa", stops: [0, 4], layout: "cfa")
        defer { try? FileManager.default.removeItem(at: dir) }
        let scene = try RenderedScene(sim.record.scene)
        let r = scene.radiance
        var moved = [Double](repeating: 0, count: r.samples.count)
        for y in 0..<r.height {
            for x in 0..<r.width {
                let sx = min(max(x - 4, 0), r.width - 1), sy = min(max(y + 2, 0), r.height - 1)
                for c in 0..<3 { moved[3 * (y * r.width + x) + c] = r[sy, sx, c] }
            }
        }
        var camera = sim.record.camera
        camera.exposureTime *= 16
        camera.seed = sim.record.bracket![1].seed
        let capture = try Simulator.capture(RenderedScene(name: "moved", radiance: ImageBuffer(width: r.width, height: r.height,
                                                                                               channels: 3, samples: moved)), camera: camera)
        try DNGWriter.write(capture.dng, to: sim.frames[1])
        var options = MergeOptions()
        options.align = true
        options.reference = 0
        let merged = try Pipeline.merge(paths: sim.frames, options: options)
        #expect(merged.report.frames[1].offset == [4, -2], "\(merged.report.frames.map(\.offset))")
    }

    /// Bad input: one frame, another size, another camera, frames that share no valid pixels.
    @Test func badBrackets() throws {
        let (dir, sim) = try Self.bracket("merge-bad", stops: [-4, 0])
        defer { try? FileManager.default.removeItem(at: dir) }
        func failure(_ paths: [String]) -> MergeError? {
            do { _ = try Pipeline.merge(paths: paths); return nil } catch let e as MergeError { return e } catch { return nil }
        }
        let single = try #require(failure([sim.frames[0]]))
        #expect(single.category == .bracketMismatch && single.reason.contains("at least two frames"))

        let scene = try RenderedScene(BuiltInScene.skySun.description(width: 256, height: 192))
        let small = dir.appendingPathComponent("small.dng").path
        try DNGWriter.write(try Simulator.capture(scene, camera: sim.record.camera).dng, to: small)
        let size = try #require(failure([sim.frames[0], small]))
        #expect(size.path == small && size.reason.contains("512×384") && size.category.exitCode == 19, "\(size)")

        var other = try Simulator.capture(try RenderedScene(sim.record.scene), camera: sim.record.camera)
        other.dng.model = "Another camera"
        let otherPath = dir.appendingPathComponent("other.dng").path
        try DNGWriter.write(other.dng, to: otherPath)
        let camera = try #require(failure([sim.frames[0], otherPath]))
        #expect(camera.path == otherPath && camera.reason.contains("Another camera"), "\(camera)")

        // 24 stops apart on a scene of moderate range: no pixel is valid in both.
        let farDir = TestData.temporaryDirectory("merge-far")
        defer { try? FileManager.default.removeItem(at: farDir) }
        let far = try Pipeline.simulateBracket(scene: try RenderedScene(BuiltInScene.colourChart.description(width: 128, height: 96)),
                                               camera: CameraModel(), stops: [-12, 12], name: "far", directory: farDir.path)
        let overlap = try #require(failure(far.frames))
        #expect(overlap.reason.contains("do not overlap"), "\(overlap)")
    }

    /// Half-float standard deviations (`compact`) agree with the Float variances, and say so when
    /// one is beyond half's range (a frame 24 stops shorter than the reference).
    @Test func compactDeviationsAndTheirLimit() throws {
        let noise = [PlaneNoise](repeating: PlaneNoise(scale: 1e-4, offset: 4e-8), count: 3)
        let n = 1000
        let values = (0..<n).map { Float(0.1 + 0.8 * Double($0) / Double(n)) }
        let clip = [UInt8](repeating: 0, count: n)
        func frames(_ shortExposure: Double) -> [BracketSamples] {
            [BracketSamples(values: values, clipMask: [UInt8](repeating: 1, count: n), gains: nil, exposure: 1, noise: noise, width: n, planes: 1),
             BracketSamples(values: values, clipMask: clip, gains: nil, exposure: shortExposure, noise: noise, width: n, planes: 1)]
        }
        let estimator = BracketEstimator()
        var compact = estimator.merge(frames(1.0 / 16), width: n, height: 1, planes: 1, colours: .planes, compact: true)
        let wide = estimator.merge(frames(1.0 / 16), width: n, height: 1, planes: 1, colours: .planes)
        #expect(!compact.deviationOverflows)
        compact.expandVariance()
        for i in 0..<n { #expect(abs(compact.variance[i] / wide.variance[i] - 1) < 0.002, "\(i)") }
        let extreme = estimator.merge(frames(pow(2, -24)), width: n, height: 1, planes: 1, colours: .planes, compact: true)
        #expect(extreme.deviationOverflows)
    }

    /// The estimator on its own: two frames of a constant signal with Gaussian noise of the
    /// profile's variance, weights at the predicted value — unbiased, variance 1 / Σw.
    @Test func estimatorIsUnbiasedWithItsVariance() throws {
        var rng = SeededGenerator(seed: 5)
        let n = 200_000, truth = 0.02
        let noise = [PlaneNoise](repeating: PlaneNoise(scale: 1e-4, offset: 4e-8), count: 3)
        func frame(_ e: Double) -> BracketSamples {
            let values = (0..<n).map { _ -> Float in
                let mean = truth * e, sd = (1e-4 * mean + 4e-8).squareRoot()
                let u1 = Double.random(in: Double.ulpOfOne..<1, using: &rng), u2 = Double.random(in: 0..<1, using: &rng)
                return Float(mean + sd * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2))
            }
            return BracketSamples(values: values, clipMask: [UInt8](repeating: 0, count: n), gains: nil, exposure: e, noise: noise,
                                  width: n, planes: 1)
        }
        let merged = BracketEstimator().merge([frame(1), frame(16)], width: n, height: 1, planes: 1, colours: .planes)
        let mean = merged.values.reduce(0.0) { $0 + Double($1) } / Double(n)
        let variance = merged.values.reduce(0.0) { $0 + pow(Double($1) - mean, 2) } / Double(n - 1)
        let predicted = merged.variance.reduce(0.0) { $0 + Double($1) } / Double(n)
        let expected = 1 / (1 / (1e-4 * truth + 4e-8) + 256 / (1e-4 * truth * 16 + 4e-8))
        #expect(abs(mean / truth - 1) < 3 * (expected / Double(n)).squareRoot() / truth + 1e-5, "mean \(mean)")
        #expect(abs(predicted / expected - 1) < 0.01, "predicted \(predicted), expected \(expected)")
        #expect(abs(variance / expected - 1) < 0.02, "measured \(variance), expected \(expected)")
        #expect(merged.frames.allSatisfy { $0 == 2 } && merged.lowerBound.allSatisfy { $0 == 0 })
    }
}
