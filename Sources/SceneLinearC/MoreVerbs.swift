// The C interface's other verbs: merging a bracket into an image in memory, illuminance,
// images made from caller arrays and measured, and simulated captures.
import Foundation
import SceneLinearKit
import SimulationCheck
import CaptureSimulation
import ExchangeCore

/// The merge options of a request document: the develop options and reference (numbered
/// from 1), ratio_tolerance and max_disagreement (percent), saturation (fraction of white),
/// unchecked_ratios, align and align_range (pixels), frame_filters (a list of "N=T[±u]"), as
/// `scenelinear merge` takes them.
func mergeOptions(_ d: RequestDocument, frames: Int) throws -> MergeOptions {
    var options = MergeOptions()
    options.develop = try d.developOptions()
    if let r = try d.integer("reference", in: 1...max(1, frames)) { options.reference = r - 1 }
    if let t = try d.number("ratio_tolerance", in: 0...100) { options.ratioTolerance = t / 100 }
    if let s = try d.number("saturation", in: 0.01...1) { options.saturation = s }
    if let u = try d.bool("unchecked_ratios") { options.allowUncheckedRatios = u }
    if let a = try d.bool("align") { options.align = a }
    if let r = try d.integer("align_range", in: 1...4096) { options.maxShift = r }
    if let m = try d.number("max_disagreement", in: 0...100) { options.maxDisagreement = m / 100 }
    options.frameFilters = try frameFilters(d, frames: frames)
    return options
}

/// The frames behind a filter (`frame_filters`: a list of "N=T[±u]", N from 1), by index; a
/// frame outside the `frames` or given twice is refused.
func frameFilters(_ d: RequestDocument, frames: Int) throws -> [Int: FilterFactor] {
    var filters: [Int: FilterFactor] = [:]
    for text in try d.strings("frame_filters") ?? [] {
        let (frame, filter): (Int, FilterFactor)
        do { (frame, filter) = try FilterFactor.parseFrame(text) } catch { throw RequestError("option 'frame_filters': \(error)") }
        guard frame < frames else { throw RequestError("option 'frame_filters': frame \(frame + 1) of \(frames)") }
        guard filters[frame] == nil else { throw RequestError("option 'frame_filters': frame \(frame + 1) given twice") }
        filters[frame] = filter
    }
    return filters
}

let mergeKeys: Set<String> = ["reference", "ratio_tolerance", "saturation", "unchecked_ratios", "align", "align_range", "max_disagreement",
                               "frame_filters"]

/// A JSON list of paths (at least one).
func pathList(_ p: UnsafePointer<CChar>?) throws -> [String] {
    let list = try string(p, "the paths")
    guard let files = try? JSONDecoder().decode([String].self, from: Data(list.utf8)), !files.isEmpty else {
        throw InterfaceError(reason: "the paths are not a non-empty JSON list of strings: \(list.prefix(200))")
    }
    return files
}

@_cdecl("sl_merge")
public func sl_merge(_ framesJSON: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?,
                     _ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        let out = try handleSlot(out)
        let frames = try pathList(framesJSON)
        let document = try RequestDocument(json: options.map { try string($0, "the options") },
                                           allowed: RequestDocument.developKeys.union(mergeKeys))
        let merge = try mergeOptions(document, frames: frames.count)
        let merged = try withThreads(document) { try Pipeline.merge(paths: frames, options: merge) }
        let report = try ReportJSON.encode(merged.report)
        hand(ImageHandle(path: frames[merged.report.reference], image: merged.image, deviation: merged.standardDeviation.samples,
                         frames: merged.frames, mergeReport: report), to: out)
    }
}

@_cdecl("sl_image_read_frames")
public func sl_image_read_frames(_ image: OpaquePointer?, _ dst: UnsafeMutablePointer<UInt8>?, _ count: UInt,
                                 _ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        let h = try handle(image)
        guard let frames = h.frames else { throw InterfaceError(reason: "\(h.path): not a merged image: it has no frame counts") }
        try checkCount(dst, count, expected: frames.count, "frame count")
        frames.withUnsafeBufferPointer { dst!.update(from: $0.baseAddress!, count: $0.count) }
    }
}

@_cdecl("sl_illuminance")
public func sl_illuminance(_ files: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?,
                           _ json: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ err: UnsafeMutablePointer<CChar>?,
                           _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        json?.pointee = nil
        let list = try pathList(files)
        let document = try RequestDocument(json: options.map { try string($0, "the options") },
                                           allowed: RequestDocument.developKeys.union(RequestDocument.fisheyeKeys).union(RequestDocument.strayLightKeys))
        guard var lens = try document.fisheyeRequest() else { throw RequestError("illuminance needs a fisheye projection (option 'projection')") }
        lens.strayLight = try document.strayLightRequest()
        // Absolute units, relative ones taken as luminance, as the command line's illuminance.
        var develop = try document.developOptions(absoluteByDefault: true)
        develop.includeMasks = false
        let measured = try withThreads(document) { try Pipeline.illuminance(list, lens: lens, options: develop) }
        try allocated(try ReportJSON.encode(IlluminanceDocument(results: measured.results, output: nil, lowerBounds: nil)), into: json)
    }
}

@_cdecl("sl_image_from_array")
public func sl_image_from_array(_ pixels: UnsafePointer<Float>?, _ height: Int64, _ width: Int64, _ clip: UnsafePointer<UInt8>?,
                                _ std: UnsafePointer<Float>?, _ options: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?,
                                _ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        let out = try handleSlot(out)
        guard let pixels else { throw InterfaceError(reason: "the pixel buffer is NULL") }
        guard height > 0, width > 0, height <= 1 << 20, width <= 1 << 20, height * width <= 1 << 32 else {
            throw InterfaceError(reason: "an image of \(height) × \(width) pixels: each side must be 1…1048576 and the whole at most 2³² pixels")
        }
        let document = try RequestDocument(json: options.map { try string($0, "the options") }, allowed: ["name", "units", "color"])
        let n = Int(height * width)
        let name = try document.string("name") ?? "array"
        let units = try document.choice("units", ValueUnits.self) ?? .relative
        let mode: ExposureMode = units == .luminance ? .luminance : units == .radiance ? .radiance : .none
        let encoding = try document.choice("color", ColorChoice.self)?.encoding ?? .linearRec2020
        let image = SceneLinearImage(pixels: ImageBuffer(width: Int(width), height: Int(height), channels: 3,
                                                         samples: Array(UnsafeBufferPointer(start: pixels, count: 3 * n))),
                                     clipMask: clip.map { Array(UnsafeBufferPointer(start: $0, count: n)) }, encoding: encoding,
                                     exposure: ExposureScaling(mode: mode, factor: 1, source: "given with the array"),
                                     provenance: .synthetic(name))
        hand(ImageHandle(path: name, image: image, deviation: std.map { Array(UnsafeBufferPointer(start: $0, count: 3 * n)) }), to: out)
    }
}

@_cdecl("sl_image_analyze")
public func sl_image_analyze(_ image: OpaquePointer?, _ options: UnsafePointer<CChar>?,
                             _ json: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ err: UnsafeMutablePointer<CChar>?,
                             _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        json?.pointee = nil
        let h = try handle(image)
        try h.requirePixels()
        let document = try RequestDocument(json: options.map { try string($0, "the options") },
                                           allowed: RequestDocument.analysisKeys.union(RequestDocument.fisheyeKeys).union(["threads"]))
        let request = try document.analysisRequest()
        let input = AnalysisInput.prepared(path: h.path, image: h.image, deviation: h.deviation)
        let result = try withThreads(document) { try Pipeline.analyze(input, request: request) }
        try allocated(try AnalysisOutput.json([result]), into: json)
    }
}

@_cdecl("sl_simulate")
public func sl_simulate(_ options: UnsafePointer<CChar>?, _ json: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                        _ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        json?.pointee = nil
        let document = try RequestDocument(json: options.map { try string($0, "the options") },
                                           allowed: ["scene", "output", "name", "width", "height", "layout", "seed", "noise", "exposure_time",
                                                     "iso", "bracket", "frame_filters", "capture_time", "threads"])
        var camera = CameraModel()
        if let layout = try document.string("layout") {
            guard ["linear-raw", "cfa"].contains(layout) else { throw RequestError("option 'layout': use linear-raw or cfa") }
            camera.layout = layout
        }
        if let seed = try document.integer("seed", in: 0...Int(Int64.max / 2)) { camera.seed = UInt64(seed) }
        if let noise = try document.bool("noise") { camera.noise = noise }
        if let t = try document.number("exposure_time", in: 1e-9...3600) { camera.exposureTime = t }
        if let iso = try document.number("iso", in: 1...10_000_000) { camera.iso = iso }
        if let time = try document.string("capture_time") {
            guard CaptureDate.isExifDateTime(time) else {
                throw RequestError("option 'capture_time': give \"YYYY:MM:DD HH:MM:SS\", not '\(time)'")
            }
            camera.captureTime = time
        }
        let scene = try document.string("scene") ?? BuiltInScene.greyRamp.rawValue
        guard let output = try document.string("output") else { throw RequestError("simulate needs an output directory (option 'output')") }
        let width = try document.integer("width", in: 8...65_536) ?? 1024, height = try document.integer("height", in: 8...65_536) ?? 768
        let result: SimulationDocument = try withThreads(document) {
            let rendered = try Pipeline.loadScene(scene, width: width, height: height)
            try Pipeline.prepareSimulationDirectory(output)
            let name = try document.string("name") ?? rendered.description.name
            if let stops = try document.numbers("bracket") {
                let filters = try frameFilters(document, frames: stops.count).mapValues(\.transmittance)
                let r = try Pipeline.simulateBracket(scene: rendered, camera: camera, stops: stops, name: name, directory: output,
                                                     filters: filters)
                return SimulationDocument(frames: r.frames, files: r.files)
            }
            let r = try Pipeline.simulate(scene: rendered, camera: camera, name: name, directory: output)
            return SimulationDocument(frames: r.files["dng"].map { [$0] } ?? [], files: r.files)
        }
        try allocated(try ReportJSON.encode(result), into: json)
    }
}

/// What `sl_simulate` wrote: the DNG frames and the other files by role (truth-exr,
/// truth-hdf5, expected-hdf5, record).
struct SimulationDocument: Encodable {
    let schema = "scenelinear.simulation/1"
    let frames: [String]
    let files: [String: String]
}

@_cdecl("sl_image_fisheye")
public func sl_image_fisheye(_ image: OpaquePointer?, _ options: UnsafePointer<CChar>?, _ theta: UnsafeMutablePointer<Float>?,
                             _ azimuth: UnsafeMutablePointer<Float>?, _ solidAngle: UnsafeMutablePointer<Float>?, _ count: UInt,
                             _ lensJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ err: UnsafeMutablePointer<CChar>?,
                             _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        lensJSON?.pointee = nil
        let h = try handle(image)
        try h.requirePixels()
        let document = try RequestDocument(json: options.map { try string($0, "the options") }, allowed: RequestDocument.fisheyeKeys)
        guard let request = try document.fisheyeRequest() else { throw RequestError("a fisheye needs a projection (option 'projection')") }
        let n = h.image.width * h.image.height
        for (p, what) in [(theta, "theta"), (azimuth, "azimuth"), (solidAngle, "solid angle")] {
            try checkCount(p, count, expected: n, what)
        }
        let lens = try request.lens(for: h.image, path: h.path)
        let geometry = FisheyeGeometry(lens: lens, width: h.image.width, height: h.image.height)
        let values = geometry.arrays
        let az = geometry.azimuths(solidAngle: values.solidAngle)
        for i in 0..<n {
            theta![i] = values.theta[i]
            azimuth![i] = az[i]
            solidAngle![i] = Float(values.solidAngle[i])
        }
        try allocated(try ReportJSON.encode(lens), into: lensJSON)
    }
}

@_cdecl("sl_image_with_mask")
public func sl_image_with_mask(_ image: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ values: UnsafePointer<Float>?, _ count: UInt,
                               _ out: UnsafeMutablePointer<OpaquePointer?>?, _ err: UnsafeMutablePointer<CChar>?, _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        let out = try handleSlot(out)
        let h = try handle(image)
        try h.requirePixels()
        let label = try string(name, "the mask name")
        guard !label.isEmpty, label.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
            throw InterfaceError(reason: "mask name '\(label)': use letters, digits, _ and -")
        }
        let n = h.image.width * h.image.height
        guard let values else { throw InterfaceError(reason: "the mask buffer is NULL") }
        guard count == UInt(n) else { throw InterfaceError(reason: "the mask holds \(count) values; the image has \(n) pixels") }
        let weights = Array(UnsafeBufferPointer(start: values, count: n))
        guard weights.allSatisfy({ $0 >= 0 && $0 <= 1 }) else { throw InterfaceError(reason: "mask '\(label)': values must lie in 0…1") }
        var image = h.image
        image.masks.removeAll { $0.name == label }
        image.masks.append(SemanticMaskLayer(name: label, semanticName: label, sourceIFD: "given",
                                             values: ImageBuffer(width: image.width, height: image.height, channels: 1, samples: weights)))
        hand(ImageHandle(path: h.path, image: image, deviation: h.deviation, frames: h.frames, mergeReport: h.mergeReport), to: out)
    }
}

/// One reference of `sl_calibrate`: a photo and either a region with its known luminance
/// (cd/m², a spot meter's or a grey card's ρ·E/π) or, for a fisheye photo, the vertical
/// illuminance at its lens (lux); the reading's relative standard uncertainty (fraction).
struct ReferenceDocument: Decodable {
    var photo: String
    var region: String?
    var luminance: Double?
    var illuminanceVertical: Double?
    var relativeUncertainty: Double?
    var method: String?

    enum CodingKeys: String, CodingKey {
        case photo, region, luminance, illuminanceVertical = "illuminance_vertical", relativeUncertainty = "relative_uncertainty", method
    }

    func reference(fisheye: FisheyeSpec?) throws -> CalibrationReference {
        let u = relativeUncertainty ?? 0.01
        guard u.isFinite, u >= 0, u < 10 else { throw RequestError("reference \(photo): relative_uncertainty must be a fraction from 0 to 10") }
        if let lux = illuminanceVertical {
            guard region == nil, luminance == nil else {
                throw RequestError("reference \(photo): illuminance_vertical makes the image circle the reference: no region or luminance")
            }
            guard let fisheye else { throw RequestError("reference \(photo): illuminance_vertical needs the fisheye's projection and circle") }
            guard lux > 0, lux.isFinite else { throw RequestError("reference \(photo): illuminance_vertical must be positive") }
            return CalibrationReference(photo: photo, region: Region.wholeImage(), luminance: lux / Double.pi, relativeUncertainty: u,
                                        method: method ?? String(format: "vertical illuminance E_v = %.6g lx at the lens (L = E_v/π against Σ L cos θ ω/π)", lux),
                                        fisheye: fisheye)
        }
        guard let region, let luminance else { throw RequestError("reference \(photo): give region and luminance, or illuminance_vertical") }
        guard luminance > 0, luminance.isFinite else { throw RequestError("reference \(photo): luminance must be positive") }
        let parsed: Region
        do { parsed = try Region.parse(region) } catch let e as AnalysisError { throw RequestError(e.reason) }
        return CalibrationReference(photo: photo, region: parsed, luminance: luminance, relativeUncertainty: u, method: method ?? "spot meter")
    }
}

@_cdecl("sl_calibrate")
public func sl_calibrate(_ referencesJSON: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?,
                         _ json: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ err: UnsafeMutablePointer<CChar>?,
                         _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        json?.pointee = nil
        let text = try string(referencesJSON, "the references")
        let list: [ReferenceDocument]
        do { list = try JSONDecoder().decode([ReferenceDocument].self, from: Data(text.utf8)) } catch {
            throw RequestError("the references are not a JSON list of {photo, region, luminance, relative_uncertainty} or {photo, illuminance_vertical, ...}: \(error)")
        }
        guard !list.isEmpty else { throw RequestError("give at least one reference") }
        let document = try RequestDocument(json: options.map { try string($0, "the options") },
                                           allowed: ["demosaic", "digest", "max_memory", "max_pixels", "threads", "meter_uncertainty",
                                                     "light_source", "spectral_factors", "lens", "allow_other_lens"]
                                            .reduce(into: RequestDocument.fisheyeKeys) { $0.insert($1) })
        let lens = try document.fisheyeRequest()
        if lens?.circle == .detected { throw RequestError("calibrate takes the circle as \"x,y,r\" (or the inscribed one), not auto") }
        let references = try list.map { try $0.reference(fisheye: lens?.spec) }
        // light_source: what the references were lit by (not the scene's light of the develop options).
        let develop = try document.removing(["light_source"]).developOptions()
        let meter = try document.number("meter_uncertainty", in: 0...100).map { $0 / 100 } ?? 0.029
        var calibration = try withThreads(document) { try Pipeline.calibrate(references, develop: develop, meterRelativeUncertainty: meter) }
        calibration.lightSource = try document.string("light_source")
        for text in try document.strings("spectral_factors") ?? [] {
            guard let (name, factor) = CameraCalibration.SpectralFactor.parse(named: text) else {
                throw RequestError("option 'spectral_factors': '\(text)' is not NAME=F or NAME=F±u% with F > 0")
            }
            calibration.spectralFactors = (calibration.spectralFactors ?? [:]).merging([name: factor]) { $1 }
        }
        try allocated(String(decoding: try calibration.json(), as: UTF8.self), into: json)
    }
}

@_cdecl("sl_calibrate_lens")
public func sl_calibrate_lens(_ flatsJSON: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?,
                              _ json: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ err: UnsafeMutablePointer<CChar>?,
                              _ errlen: UInt) -> Int32 {
    status(err, errlen) {
        json?.pointee = nil
        let flats = try pathList(flatsJSON)
        let document = try RequestDocument(json: options.map { try string($0, "the options") },
                                           allowed: ["method", "cells", "max_residual", "center", "digest", "max_memory", "max_pixels", "threads"])
        var fit = LensFitOptions()
        if let method = try document.string("method") {
            guard let m = LensFitOptions.Method(rawValue: method) else { throw RequestError("option 'method': '\(method)' is not 'flat field' or 'sweep'") }
            fit.method = m
        }
        fit.develop = try document.developOptions()
        if let cells = try document.integer("cells", in: 4...1024) { fit.cellsAcross = cells }
        if let r = try document.number("max_residual", in: 0...100) { fit.maxResidual = r / 100 }
        if let center = try document.numbers("center") {
            guard center.count == 2, center.allSatisfy({ (0...1).contains($0) }) else {
                throw RequestError("option 'center': give [x, y], each from 0 to 1 (relative to the image)")
            }
            (fit.centerX, fit.centerY) = (center[0], center[1])
        }
        let lens = try withThreads(document) { try Pipeline.calibrateLens(captures: flats, options: fit) }
        try allocated(String(decoding: try lens.json(), as: UTF8.self), into: json)
    }
}
