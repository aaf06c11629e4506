import CaptureSimulation
import DNGWriter
import Foundation
import SceneLinearKit
import SimulationCheck
import Testing
import TestSupport

/// The development plan is a pure value of the file's layout and the request: each layout →
/// its expected plan (how Stage 2 is made, where the lists run, how demosaicing reads the
/// mosaic, which stages are collected and why, the sink and the memory estimate's route);
/// and the layouts read from real and simulated files.
@Suite struct DevelopPlanTests {
    typealias Plan = DevelopPlan
    static let float = DevelopRequest(output: .image(halfFloats: false))

    static func layout(_ kind: SourceLayout.Kind, blockwise: Bool = true, cuts: Bool = true, list1: Bool = false,
                       list2: SourceLayout.ListReach = .absent, list3: SourceLayout.ListReach = .absent) -> SourceLayout {
        SourceLayout(kind: kind, blockwiseStorage: blockwise, stage1CutsIntoStrips: cuts, hasOpcodeList1: list1, opcodeList2: list2,
                     opcodeList3: list3)
    }

    /// Stage by stage, for the layouts the engine meets: (what, layout, Stage 2, list 2,
    /// demosaic, Stage 3, list 3, collectors).
    @Test func stagesOfEachLayout() {
        let linear = SourceLayout.Kind.linearRaw(samplesPerPixel: 3)
        let cases: [(String, SourceLayout, Plan.Stage2, Plan.ListStep, Plan.Demosaic, Plan.Stage3, Plan.ListStep, Int)] = [
            ("LinearRaw", Self.layout(linear), .streamed, .absent, .none, .streamed, .absent, 0),
            ("LinearRaw, gain maps in both lists", Self.layout(linear, list2: .perRegion, list3: .perRegion),
             .streamed, .perRegion, .none, .streamed, .perRegion, 0),
            ("LinearRaw, bad pixels in OpcodeList2", Self.layout(linear, list2: .whole),
             .collectedFromBlocks, .whole, .none, .collected, .absent, 1),
            ("LinearRaw, TrimBounds in OpcodeList3", Self.layout(linear, list2: .perRegion, list3: .whole),
             .collectedFromBlocks, .perRegion, .none, .collected, .whole, 1),
            ("Bayer", Self.layout(.bayer), .mosaicWindow, .absent, .fromWindow, .streamed, .absent, 0),
            ("Bayer, lens shading in OpcodeList2", Self.layout(.bayer, list2: .perRegion, list3: .perRegion),
             .mosaicWindow, .perRegion, .fromWindow, .streamed, .perRegion, 0),
            ("Bayer, bad pixels in OpcodeList2", Self.layout(.bayer, list2: .whole),
             .collectedFromBlocks, .whole, .fromCollectedMosaic, .streamed, .absent, 1),
            ("Bayer, TrimBounds in OpcodeList3", Self.layout(.bayer, list3: .whole),
             .mosaicWindow, .absent, .fromWindow, .collected, .whole, 1),
            ("Bayer, OpcodeList1", Self.layout(.bayer, list1: true, list2: .perRegion),
             .mosaicWindow, .perRegion, .fromWindow, .streamed, .absent, 1),
            ("Bayer, OpcodeList1 and bad pixels in OpcodeList2", Self.layout(.bayer, list1: true, list2: .whole),
             .collectedFromBlocks, .whole, .fromCollectedMosaic, .streamed, .absent, 2),
            ("Bayer, interleaved fields or planar storage", Self.layout(.bayer, blockwise: false),
             .mosaicWindow, .absent, .fromWindow, .streamed, .absent, 1),
            ("Bayer, 32-bit integer storage", Self.layout(.bayer, blockwise: false, cuts: false),
             .collectedFromStage1, .absent, .fromCollectedMosaic, .streamed, .absent, 1),
            ("LinearRaw, planar or interleaved storage", Self.layout(linear, blockwise: false, list3: .perRegion),
             .streamed, .absent, .none, .streamed, .perRegion, 1),
            ("LinearRaw, 32-bit integer storage", Self.layout(linear, blockwise: false, cuts: false, list3: .perRegion),
             .collectedFromStage1, .absent, .none, .collected, .perRegion, 1),
            ("LinearRaw with 4 samples (refused after decoding)", Self.layout(.linearRaw(samplesPerPixel: 4)),
             .collectedFromStage1, .absent, .none, .collected, .absent, 1),
            ("a 3×3 CFA (refused after decoding)", Self.layout(.otherCFA, list2: .perRegion),
             .collectedFromStage1, .whole, .fromCollectedMosaic, .streamed, .absent, 1),
        ]
        for (what, layout, stage2, list2, demosaic, stage3, list3, collectors) in cases {
            let plan = DevelopPlan(layout: layout, request: Self.float)
            // Stage 1 is decoded whole exactly when a collector names it.
            #expect((plan.stage1 == .collected) == (plan.collectors.first?.hasPrefix("Stage 1") == true), "\(what): \(plan.summary)")
            #expect((plan.stage1 == .collected) == (layout.hasOpcodeList1 || !layout.blockwiseStorage || stage2 == .collectedFromStage1),
                    "\(what): \(plan.summary)")
            #expect(plan.stage2 == stage2, "\(what): \(plan.summary)")
            #expect(plan.list2 == list2, "\(what): \(plan.summary)")
            #expect(plan.demosaic == demosaic, "\(what): \(plan.summary)")
            #expect(plan.stage3 == stage3, "\(what): \(plan.summary)")
            #expect(plan.list3 == list3, "\(what): \(plan.summary)")
            #expect(plan.collectors.count == collectors, "\(what): \(plan.collectors)")
        }
        // The reasons name what needs the whole stage.
        #expect(DevelopPlan(layout: Self.layout(.bayer, list1: true), request: Self.float).collectors == ["Stage 1: OpcodeList1 acts on the whole raw image"])
        #expect(DevelopPlan(layout: Self.layout(.bayer, list3: .whole), request: Self.float).collectors
                == ["Stage 3: OpcodeList3 reads neighbours or crops"])
        // A merged Stage 2: its OpcodeList2 taken as applied, the whole-image estimate.
        var merged = Self.float
        merged.replacesStage2 = true
        let replaced = DevelopPlan(layout: Self.layout(.bayer, list2: .perRegion), request: merged)
        #expect(replaced.stage2 == .replaced && replaced.list2 == .takenAsApplied && replaced.demosaic == .fromCollectedMosaic)
        #expect(replaced.memoryRoute == nil)
    }

    /// The sink and the memory estimate's route of each request; an EXR goes out as its rows
    /// are made only when its header can be written first.
    @Test func sinksAndRoutes() {
        let plain = Self.layout(.bayer), shaded = Self.layout(.bayer, list2: .perRegion), trimmed = Self.layout(.bayer, list3: .whole)
        func plan(_ layout: SourceLayout, _ output: DevelopRequest.Output, observed: Bool = false,
                  digest: DigestPolicy = .verify, charts: Bool = false) -> DevelopPlan {
            DevelopPlan(layout: layout, request: DevelopRequest(output: output, observed: observed, digest: digest, drawsCharts: charts))
        }
        let cases: [(String, DevelopPlan, Plan.Sink, DevelopRoute?)] = [
            ("EXR", plan(plain, .exr(streamable: true)), .exrAsRowsAreMade, .streamedEXR),
            ("EXR, other options", plan(plain, .exr(streamable: false)), .imageThenFile, .halfImage),
            ("EXR, a list run per region (its note known before the pass)", plan(shaded, .exr(streamable: true)), .exrAsRowsAreMade, .streamedEXR),
            ("EXR, a digest mismatch to record", plan(plain, .exr(streamable: true), digest: .ignoreMismatch), .imageThenFile, .halfImage),
            ("EXR, OpcodeList3 collected", plan(trimmed, .exr(streamable: true)), .exrAsRowsAreMade, nil),
            ("HDF5", plan(shaded, .hdf5(streamable: true)), .hdf5AsRowsAreMade, .streamedHDF5),
            ("half image", plan(plain, .image(halfFloats: true)), .image(halfFloats: true, observed: false), .halfImage),
            ("half image, measured in the same pass", plan(plain, .image(halfFloats: true), observed: true),
             .image(halfFloats: true, observed: true), .convertWithAnalysis),
            ("Float image", plan(plain, .image(halfFloats: false)), .image(halfFloats: false, observed: false), .floatImage),
            ("measurement", plan(plain, .scan), .scan, .measurement),
            ("report", plan(plain, .scan, charts: true), .scan, .measurementWithCharts),
            ("measurement of a file with OpcodeList1", plan(Self.layout(.bayer, list1: true), .scan), .scan, nil),
            ("EXR of samples stored in interleaved fields or planes (the collected Stage 1 added to the route's estimate)",
             plan(Self.layout(.linearRaw(samplesPerPixel: 3), blockwise: false), .exr(streamable: true)), .exrAsRowsAreMade, .streamedEXR),
            ("EXR of 32-bit integer samples",
             plan(Self.layout(.linearRaw(samplesPerPixel: 3), blockwise: false, cuts: false), .exr(streamable: true)), .exrAsRowsAreMade, nil),
        ]
        for (what, plan, sink, route) in cases {
            #expect(plan.sink == sink, "\(what): \(plan.summary)")
            #expect(plan.memoryRoute == route, "\(what): \(String(describing: plan.memoryRoute))")
        }
    }

    /// The layouts read from files: the bundled sample and simulated captures (LinearRaw and
    /// CFA, with lens shading, bad pixels, TrimBounds, OpcodeList1), as the tests that decode
    /// them expect.
    @Test func layoutsOfFiles() throws {
        let sample = try DNGFile.open(path: TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng").path)
        let samplePlan = try Pipeline.plan(sample, options: DevelopOptions(), request: Self.float)
        #expect(samplePlan.stage2 == .streamed && samplePlan.collectors.isEmpty, "\(samplePlan.summary)")

        let dir = TestData.temporaryDirectory("plan-layouts")
        defer { try? FileManager.default.removeItem(at: dir) }
        var camera = CameraModel()
        camera.layout = "cfa"
        camera.lensShading = 0.3
        let scene = try RenderedScene(BuiltInScene.sunset.description(width: 96, height: 64))
        var capture = try Simulator.capture(scene, camera: camera).dng
        func layout(_ lists: [Int: [UInt8]]?) throws -> SourceLayout {
            if let lists { capture.opcodeLists = lists }
            let path = dir.appendingPathComponent("c.dng").path
            try DNGWriter.write(capture, to: path)
            let dng = try DNGFile.open(path: path)
            return try SourceLayout.of(dng, raw: try dng.mainRawImage(), limits: DecodeLimits())
        }
        #expect(try layout(nil) == Self.layout(.bayer, list2: .perRegion))
        let badPixels = StreamingDevelopTests.longList([(5, [0, 1, 0, 10, 10])])
        let trim = StreamingDevelopTests.longList([(6, [0, 0, 60, 90])])
        #expect(try layout([2: badPixels, 3: trim]) == Self.layout(.bayer, list2: .whole, list3: .whole))
        #expect(try layout([1: StreamingDevelopTests.longList([(4, [0, 0])])]) == Self.layout(.bayer, list1: true))
        camera.layout = "linear-raw"
        camera.lensShading = nil
        capture = try Simulator.capture(scene, camera: camera).dng
        #expect(try layout([:]) == Self.layout(.linearRaw(samplesPerPixel: 3)))
        // Floating-point samples: decoded block by block when chunky, whole when planar.
        var floats = FloatDNG(capture)
        let path = dir.appendingPathComponent("f.dng").path
        for (planar, blockwise) in [(1, true), (2, false)] {
            floats.planar = planar
            try floats.write(to: path)
            let dng = try DNGFile.open(path: path)
            #expect(try SourceLayout.of(dng, raw: try dng.mainRawImage(), limits: DecodeLimits())
                    == Self.layout(.linearRaw(samplesPerPixel: 3), blockwise: blockwise), "PlanarConfiguration \(planar)")
        }
    }

    /// The DNG SDK's JPEG XL samples (skipped when not fetched): the 60 MP LinearRaw file of
    /// 16-bit tiles with an OpcodeList2 of MapPolynomials and the 33 MP one of float16 tiles go
    /// tile by tile into an EXR written as its rows are made, their memory estimated by that
    /// route (under a third of the whole-image estimate); the Bayer one stored in interleaved
    /// fields is decoded whole, then demosaiced from a window of its rows as they are cut from
    /// Stage 1 (its decoded samples added to the route's estimate, still under a third).
    @Test func jpegXLSamples() throws {
        let exr = DevelopRequest(output: .exr(streamable: true))
        let expected: [(String, DevelopPlan.Stage1, DevelopPlan.Stage2)] = [
            ("01_jxl_linear_raw_integer.dng", .blocks, .streamed),
            ("02_jxl_linear_raw_float.dng", .blocks, .streamed),
            ("03_jxl_bayer_raw_integer.dng", .collected, .mosaicWindow),
        ]
        for (name, stage1, stage2) in expected {
            let dng = try DNGFile.open(path: try TestData.dngSDKSample(name).path)
            let plan = try Pipeline.plan(dng, options: DevelopOptions(), request: exr)
            #expect(plan.stage1 == stage1 && plan.stage2 == stage2 && plan.memoryRoute == .streamedEXR && plan.sink == .exrAsRowsAreMade,
                    "\(name): \(plan.summary)")
            let raw = try dng.mainRawImage()
            let stored = Pipeline.collectedStage1Bytes(raw, plan: plan)
            #expect(stored == (stage1 == .collected ? raw.width * raw.height * 2 : 0), "\(name)")
            let planned = Pipeline.estimatedPeakBytes(raw, plannedRoute: plan.memoryRoute) + stored
            let whole = Pipeline.estimatedPeakBytes(raw, route: nil)
            #expect(planned * 3 < whole, "\(name): \(planned) against \(whole)")
        }
    }
}
