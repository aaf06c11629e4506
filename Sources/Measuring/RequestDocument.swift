import Analysis
import Engine
import Foundation

/// A request given as a JSON object of option names and values — the command line's long
/// options with `_` for `-` (`{"units": "luminance", "demosaic": "superpixel"}`) — for
/// callers that are not the command line (the C interface, docs/python.md). Unknown names,
/// wrong types and out-of-range values are refused (`RequestError`, exit category usage).
public struct RequestDocument: Sendable {
    /// The options that shape how an image is developed or read.
    public static let developKeys: Set<String> = [
        "units", "exposure", "calibration", "allow_other_camera", "settings_uncertainty", "filter_factor", "spectral_uncertainty",
        "light_source", "lens", "allow_other_lens", "color", "demosaic", "crop",
        "orientation", "source", "masks", "digest", "max_memory", "max_pixels", "threads",
    ]
    /// A circular fisheye lens: `projection`, `fov` (degrees) and `circle` ("x,y,r" in output
    /// pixels, or "auto" where the measurement finds it).
    public static let fisheyeKeys: Set<String> = ["projection", "fov", "circle"]
    /// A fisheye lens's stated stray light (`strayLightRequest`).
    public static let strayLightKeys: Set<String> = ["stray_light", "stray_light_angle", "bright_source"]
    /// The options of a measurement (`stats`, `histogram`, `ratio`), besides `developKeys`.
    public static let analysisKeys: Set<String> = [
        "regions", "percentiles", "bins_per_stop", "linear", "range", "ratios", "quantity", "statistic",
        "stray_light", "stray_light_angle", "bright_source",
    ]

    let values: [String: any Sendable]

    /// Parses `json` (empty or nil: no options), accepting the names in `allowed`.
    public init(json: String?, allowed: Set<String>) throws {
        guard let json, !json.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            values = [:]
            return
        }
        guard let object = try? JSONDecoder().decode([String: Value].self, from: Data(json.utf8)) else {
            throw RequestError("the options are not a JSON object of option names and values: \(json.prefix(200))")
        }
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw RequestError("unknown option '\(unknown)' (known: \(allowed.sorted().joined(separator: ", ")))")
        }
        values = object.compactMapValues { value in
            if case .null = value { return nil }
            return value.plain
        }
    }

    /// A JSON value: true/false, a number, a string or a list of them.
    enum Value: Decodable {
        case bool(Bool), number(Double), string(String), list([Value]), null

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() { self = .null }
            else if let b = try? c.decode(Bool.self) { self = .bool(b) }
            else if let d = try? c.decode(Double.self) { self = .number(d) }
            else if let s = try? c.decode(String.self) { self = .string(s) }
            else { self = .list(try c.decode([Value].self)) }
        }

        var plain: any Sendable {
            switch self {
            case .bool(let b): return b
            case .number(let d): return d
            case .string(let s): return s
            case .list(let a): return a.map(\.plain)
            case .null: return "null"
            }
        }
    }

    /// The document without `keys` (options a verb reads itself before the shared ones).
    public func removing(_ keys: Set<String>) -> RequestDocument {
        RequestDocument(values: values.filter { !keys.contains($0.key) })
    }

    private init(values: [String: any Sendable]) { self.values = values }

    // MARK: Typed values

    /// Whether the document gives `key`.
    public func has(_ key: String) -> Bool { values[key] != nil }

    public func string(_ key: String) throws -> String? {
        guard let v = values[key] else { return nil }
        guard let s = v as? String else { throw RequestError("option '\(key)' must be a string") }
        return s
    }

    public func bool(_ key: String) throws -> Bool? {
        guard let v = values[key] else { return nil }
        guard let b = v as? Bool else { throw RequestError("option '\(key)' must be true or false") }
        return b
    }

    public func number(_ key: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let v = values[key] else { return nil }
        guard let d = v as? Double, d.isFinite, range.contains(d) else {
            throw RequestError("option '\(key)' must be a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return d
    }

    public func integer(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let d = try number(key, in: Double(range.lowerBound)...Double(range.upperBound)) else { return nil }
        guard d == d.rounded() else { throw RequestError("option '\(key)' must be a whole number") }
        return Int(d)
    }

    public func strings(_ key: String) throws -> [String]? {
        guard let v = values[key] else { return nil }
        guard let a = v as? [any Sendable], let s = a as? [String] else { throw RequestError("option '\(key)' must be a list of strings") }
        return s
    }

    public func numbers(_ key: String) throws -> [Double]? {
        guard let v = values[key] else { return nil }
        guard let a = v as? [any Sendable], let d = a as? [Double], d.allSatisfy(\.isFinite) else {
            throw RequestError("option '\(key)' must be a list of numbers")
        }
        return d
    }

    public func choice<T: RawRepresentable & CaseIterable>(_ key: String, _: T.Type) throws -> T? where T.RawValue == String {
        guard let s = try string(key) else { return nil }
        guard let value = T(rawValue: s) else {
            throw RequestError("option '\(key)': unknown value '\(s)' (use \(T.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return value
    }

    // MARK: Requests

    /// The thread count asked for (`threads`), nil for the default.
    public func threads() throws -> Int? { try integer("threads", in: 1...Parallel.maxThreads) }

    /// Develop options: units and calibration, colour, demosaicing, crop, orientation,
    /// image source, semantic masks, digest policy and limits.
    /// - Parameter absoluteByDefault: a measurement whose values must be absolute
    ///   (illuminance): relative units, given or by default, are luminance.
    public func developOptions(absoluteByDefault: Bool = false) throws -> DevelopOptions {
        var options = DevelopOptions()
        let units = try choice("units", ValueUnits.self) ?? .relative
        let calibration = try string("calibration")
        if units == .relative, !absoluteByDefault, calibration != nil {
            throw RequestError("calibration gives an absolute scale: use it with units luminance or radiance")
        }
        let exposure = try choice("exposure", ExposureMode.self) ?? .none
        guard !exposure.isAbsolute else {
            throw RequestError("option 'exposure': use none, baseline or normalized (absolute units are the option 'units')")
        }
        try options.setUnits(units, exposure: exposure,
                             calibration: try calibration.map(CameraCalibration.read),
                             allowOtherCamera: try bool("allow_other_camera") ?? false,
                             settingsUncertainty: try number("settings_uncertainty", in: 0...999.999).map { $0 / 100 },
                             filter: try filterFactor(), spectral: try spectralTerm(), absoluteByDefault: absoluteByDefault)
        // One calibration file, or several of one lens at different apertures.
        options.lens = try LensCalibration.read((try? strings("lens")) ?? string("lens").map { [$0] } ?? [])
        options.allowOtherLens = try bool("allow_other_lens") ?? false
        if let color = try choice("color", ColorChoice.self) { options.encoding = color.encoding }
        if let demosaic = try choice("demosaic", DemosaicMethod.self) { options.demosaic = demosaic }
        if let crop = try choice("crop", CropMode.self) { options.crop = crop }
        if let orientation = try bool("orientation") { options.applyOrientation = orientation }
        if let source = try choice("source", ImageSource.self) { options.source = source }
        if let masks = try bool("masks") { options.includeMasks = masks }
        if let digest = try choice("digest", DigestPolicy.self) { options.digest = digest }
        if let bytes = try integer("max_memory", in: 1...Int(Int64.max / 2)) { options.maxMemoryBytes = bytes }
        if let pixels = try integer("max_pixels", in: 1...(1 << 40)) { options.limits.maxPixels = pixels }
        return options
    }

    /// The filter asked for (`filter_factor`: a transmittance as a number, or text as the
    /// command line's `--filter-factor`).
    func filterFactor() throws -> FilterFactor? {
        guard let value = values["filter_factor"] else { return nil }
        let text: String
        if let n = value as? Double { text = String(n) } else if let s = value as? String { text = s } else {
            throw RequestError("option 'filter_factor': expected a transmittance (a number, or text such as \"0.001±3%\" or \"ND3\")")
        }
        do { return try FilterFactor.parse(text) } catch { throw RequestError("option 'filter_factor': \(error)") }
    }

    /// The spectral term asked for (`spectral_uncertainty` in percent, or `light_source`).
    func spectralTerm() throws -> SpectralTerm? {
        let u = try number("spectral_uncertainty", in: 0...99.999), source = try string("light_source")
        if u != nil && source != nil { throw RequestError("spectral_uncertainty and light_source both give the spectral term: give one") }
        return u.map { .stated($0 / 100) } ?? source.map { .lightSource($0) }
    }

    /// The fisheye lens asked for (`projection`, `fov`, `circle`), nil without a projection.
    public func fisheyeRequest() throws -> FisheyeLensRequest? {
        guard let projection = try choice("projection", FisheyeProjection.self) else {
            if values["fov"] != nil || values["circle"] != nil {
                throw RequestError("fov and circle describe a fisheye lens: they need projection")
            }
            return nil
        }
        let fov = try number("fov", in: 1e-6...projection.maximumFieldOfView) ?? 180
        var circle = FisheyeCircle.inscribed
        if let text = try string("circle") {
            guard let parsed = FisheyeCircle(parsing: text) else {
                throw RequestError("option 'circle': give \"x,y,r\" (the centre and radius in output pixels, r > 0) or \"auto\"")
            }
            circle = parsed
        }
        return FisheyeLensRequest(projection: projection, fieldOfView: fov, circle: circle)
    }

    /// The stated stray light: `stray_light` (percent), `stray_light_angle` (degrees),
    /// `bright_source` (× the median); nil without `stray_light`.
    public func strayLightRequest() throws -> StrayLightRequest? {
        guard let percent = try number("stray_light", in: 0...99.999) else {
            if has("stray_light_angle") || has("bright_source") {
                throw RequestError("options 'stray_light_angle' and 'bright_source' describe the stray light: they need 'stray_light'")
            }
            return nil
        }
        let request = StrayLightRequest(fraction: percent / 100, angle: try number("stray_light_angle", in: 1e-6...90) ?? StrayLightRequest.defaultAngle,
                                        threshold: try number("bright_source", in: 1.000001...1e300) ?? StrayLightRequest.defaultThreshold)
        if let problem = request.problem { throw RequestError(problem) }
        return request
    }

    /// A measurement: regions (the command line's `name=spec`), percentiles, histogram bins,
    /// ratios (`numerator/denominator`) and their quantity and statistic, on top of
    /// `developOptions`.
    public func analysisRequest() throws -> AnalysisRequest {
        var r = AnalysisRequest()
        r.develop = try developOptions()
        r.regions = try (strings("regions") ?? []).map { text in
            do { return try Region.parse(text) } catch let e as AnalysisError { throw RequestError(e.reason) }
        }
        if try bool("masks") == nil { r.develop.includeMasks = r.regions.contains(where: \.isMask) }
        if let lens = try fisheyeRequest() {
            guard lens.circle != .detected else {
                throw RequestError("circle auto is found in each image by illuminance and merge only: give the circle as \"x,y,r\"")
            }
            r.fisheye = lens.spec
        }
        r.strayLight = try strayLightRequest()
        if r.strayLight != nil && r.fisheye == nil { throw RequestError("option 'stray_light' needs the fisheye's 'projection' (its angles)") }
        if let p = try numbers("percentiles") {
            guard p.allSatisfy({ (0...100).contains($0) }) else { throw RequestError("option 'percentiles': give numbers between 0 and 100") }
            r.percentiles = p
        }
        let linear = try integer("linear", in: 1...100_000)
        let binsPerStop = try integer("bins_per_stop", in: 1...64)
        var range: ClosedRange<Double>?
        if let bounds = try numbers("range") {
            guard bounds.count == 2, bounds[0] < bounds[1] else { throw RequestError("option 'range' must be [low, high] with low < high") }
            if linear == nil, bounds.contains(where: { abs($0) > 160 }) {
                throw RequestError("option 'range': EV bounds must lie within -160...160")
            }
            range = bounds[0]...bounds[1]
        }
        if linear != nil || binsPerStop != nil || range != nil {
            r.histogram = HistogramOptions(scale: linear == nil ? .log2 : .linear, binsPerStop: binsPerStop ?? 4,
                                           linearBins: linear ?? 256, range: range)
        }
        if let quantity = try string("quantity") {
            guard ["Y", "R", "G", "B"].contains(quantity) else { throw RequestError("option 'quantity': use Y, R, G or B") }
            r.ratioQuantity = quantity
        }
        if let statistic = try string("statistic") {
            switch statistic {
            case "mean": r.ratioStatistic = .mean
            case "median": r.ratioStatistic = .median
            default: throw RequestError("option 'statistic': use mean or median")
            }
        }
        // Ratios: those named; an empty list, the first two regions (as `ratio` does); none
        // without the option (as `stats` and `histogram`).
        if let ratios = try strings("ratios"), !ratios.isEmpty {
            r.ratios = try ratios.map { text in
                let parts = text.split(separator: "/").map(String.init)
                guard parts.count == 2 else { throw RequestError("option 'ratios': give numerator/denominator, not '\(text)'") }
                return (parts[0], parts[1])
            }
        } else if try strings("ratios") != nil, r.regions.count >= 2 {
            r.ratios = [(r.regions[0].name, r.regions[1].name)]
        }
        return r
    }
}
