import ExchangeCore
import ImageCore

/// Maps a `SceneLinearImage`'s description (encoding, exposure, provenance) to EXR header
/// attributes and back.
///
/// Names: standard `chromaticities`, `colorInteropID`, `expTime`, `aperture`, `isoSpeed`,
/// `capDate`; everything else is prefixed `sceneLinear:` (the pipeline's record), `dng:`
/// (one attribute per `provenance.dng` item) or `processing:` (one per
/// `provenance.processing` item): text → string, number → double, integer → int,
/// numbers/integers → floatvector. Because EXR has no integer or double vectors and
/// readers commonly list attributes sorted by name, `sceneLinear:dngItems` and
/// `sceneLinear:processingItems` list the items' `key:kind` in order, so the reader
/// restores order and kinds. Integers outside the
/// 32-bit range are stored as doubles; number and integer arrays as 32-bit floats (the
/// only EXR vector), so those round-trip to `Float` precision.
enum EXRMetadata {
    static let prefix = "sceneLinear:"
    static let dngPrefix = "dng:"
    static let processingPrefix = "processing:"

    /// `acesContainer`: the file meets SMPTE ST 2065-4 (ACES2065-1, uncompressed half
    /// scanline R, G, B[, A] only), so `acesImageContainerFlag` is set.
    static func attributes(for image: some SceneLinearDescription, acesContainer: Bool = false) -> [(String, EXRAttributeValue)] {
        var out: [(String, EXRAttributeValue)] = []
        let p = image.provenance
        if let space = image.encoding.colorSpace {
            // The chromaticities and the interop ID always name the same space.
            out.append(("chromaticities", .chromaticities(space.chromaticities.map(Float.init))))
            out.append(("adoptedNeutral", .v2f([Float(space.adoptedWhite.x), Float(space.adoptedWhite.y)])))
        }
        out.append(("colorInteropID", .string(image.encoding.colorInteropID)))
        if acesContainer { out.append(("acesImageContainerFlag", .int(1))) }
        out.append((prefix + "sourceFile", .string(p.sourceFile)))
        out.append((prefix + "sourceSHA256", .string(p.sourceSHA256)))
        out.append((prefix + "software", .string(p.software)))
        out.append((prefix + "sourceIFD", .string(p.sourceIFD)))
        out.append((prefix + "colorSpace", .string(image.encoding.rawValue)))
        out.append((prefix + "units", .string(image.exposure.mode.unitsText)))
        out.append((prefix + "exposureScaling", .string(image.exposure.mode.rawValue)))
        out.append((prefix + "exposureFactor", .double(image.exposure.factor)))
        if let source = image.exposure.source { out.append((prefix + "scaleSource", .string(source))) }
        if let u = image.exposure.relativeUncertainty { out.append((prefix + "scaleRelativeUncertainty", .double(u))) }
        // The standard attribute: cd/m² of RGB (1, 1, 1), consistent with the pixels.
        if let white = image.exposure.mode.whiteLuminance { out.append(("whiteLuminance", .float(Float(white)))) }
        out.append((prefix + "whiteBalance", .string(p.whiteBalanceSource)))
        out.append((prefix + "whiteXY", p.whiteXY.count == 2 ? .v2d(p.whiteXY) : .floatVector(p.whiteXY.map(Float.init))))
        out.append((prefix + "cameraNeutral",
                    p.cameraNeutral.count == 3 ? .v3d(p.cameraNeutral) : .floatVector(p.cameraNeutral.map(Float.init))))
        out.append((prefix + "cameraToOutput",
                    p.cameraToOutput.count == 9 ? .m33d(p.cameraToOutput) : .floatVector(p.cameraToOutput.map(Float.init))))

        if !image.masks.isEmpty {
            out.append((prefix + "masks", .string(image.masks.map(\.name).joined(separator: ","))))
            for layer in image.masks {
                out.append((prefix + "mask." + layer.name, .string(layer.semanticName)))
                out.append((prefix + "mask." + layer.name + ".instanceID", .string(layer.instanceID)))
                out.append((prefix + "mask." + layer.name + ".sourceIFD", .string(layer.sourceIFD)))
            }
        }

        appendItems(p.dng, prefix: dngPrefix, listName: prefix + "dngItems", to: &out)
        appendItems(p.processing, prefix: processingPrefix, listName: prefix + "processingItems", to: &out)

        if let v = firstNumber(p.dngValue("exposureTime")) { out.append(("expTime", .float(Float(v)))) }
        if let v = firstNumber(p.dngValue("fNumber")) { out.append(("aperture", .float(Float(v)))) }
        if let v = firstNumber(p.dngValue("iso")) { out.append(("isoSpeed", .float(Float(v)))) }
        if case .text(let date)? = p.dngValue("dateTimeOriginal"), CaptureDate.isExifDateTime(date) {
            out.append(("capDate", .string(date)))
            if case .text(let offset)? = p.dngValue("offsetTimeOriginal"), let seconds = utcOffsetSeconds(offset) {
                out.append(("utcOffset", .float(Float(seconds))))
            }
        }
        // OpenEXR's standard camera and lens attributes (ImfStandardAttributes).
        if case .text(let s)? = p.dngValue("make") { out.append(("cameraMake", .string(s))) }
        if case .text(let s)? = p.dngValue("model") { out.append(("cameraModel", .string(s))) }
        if case .text(let s)? = p.dngValue("cameraSerialNumber") { out.append(("cameraSerialNumber", .string(s))) }
        if case .text(let s)? = p.dngValue("lensModel") { out.append(("lensModel", .string(s))) }
        if let v = firstNumber(p.dngValue("focalLength")) { out.append(("nominalFocalLength", .float(Float(v)))) }
        let owner = [p.dngValue("copyright"), p.dngValue("artist")].compactMap { v -> String? in
            if case .text(let s)? = v { return s }
            return nil
        }.first
        if let owner { out.append(("owner", .string(owner))) }
        if case .text(let s)? = p.dngValue("imageDescription") { out.append(("comments", .string(s))) }
        return out
    }

    /// OpenEXR's `utcOffset` (UTC minus local time, in seconds) of an EXIF offset such as
    /// "+02:00" (local = UTC + 2 h → −7200); nil when the text is not ±HH:MM.
    static func utcOffsetSeconds(_ offset: String) -> Double? {
        let c = Array(offset.utf8)
        guard c.count == 6, c[0] == 43 || c[0] == 45, c[3] == 58,
              let h = Int(String(decoding: c[1...2], as: UTF8.self)), let m = Int(String(decoding: c[4...5], as: UTF8.self)),
              h <= 14, m < 60 else { return nil }
        let local = Double(h * 3600 + m * 60) * (c[0] == 45 ? -1 : 1)
        return -local
    }

    /// Appends one attribute per item (text → string, number → double, integer → int,
    /// arrays → floatvector) and a `key:kind,...` list that restores order and kinds.
    private static func appendItems(_ items: [MetadataItem], prefix itemPrefix: String, listName: String,
                                    to out: inout [(String, EXRAttributeValue)]) {
        var kinds: [String] = []
        for item in items {
            let name = itemPrefix + item.key
            switch item.value {
            case .text(let s):
                out.append((name, .string(s)))
                kinds.append("\(item.key):text")
            case .number(let d):
                out.append((name, .double(d)))
                kinds.append("\(item.key):number")
            case .integer(let i):
                out.append((name, Int32(exactly: i) != nil ? .int(i) : .double(Double(i))))
                kinds.append("\(item.key):integer")
            case .numbers(let a):
                out.append((name, .floatVector(a.map(Float.init))))
                kinds.append("\(item.key):numbers")
            case .integers(let a):
                out.append((name, .floatVector(a.map(Float.init))))
                kinds.append("\(item.key):integers")
            }
        }
        if !items.isEmpty || itemPrefix == dngPrefix {
            out.append((listName, .string(kinds.joined(separator: ","))))
        }
    }

    private static func firstNumber(_ value: MetadataValue?) -> Double? {
        switch value {
        case .number(let d)?: return d
        case .integer(let i)?: return Double(i)
        case .numbers(let a)?: return a.first
        case .integers(let a)?: return a.first.map(Double.init)
        default: return nil
        }
    }

    /// The semantic mask layers of a file: every channel `mask_<name>` or `mask.<name>.Y`
    /// except the clip mask, and `A` as the `transparency` layer when `sceneLinear:masks`
    /// lists it, in the order of `sceneLinear:masks` (others after it, by name), with the
    /// URN, instance ID and source IFD from `sceneLinear:mask.<name>[.instanceID|.sourceIFD]`.
    static func maskLayers(_ contents: EXRContents) -> [SemanticMaskLayer] {
        func string(_ name: String) -> String? {
            if case .string(let s)? = contents.attributes[name] { return s }
            return nil
        }
        let listed = string(prefix + "masks")?.split(separator: ",").map(String.init)
        var channelOf: [String: String] = [:]
        for channel in contents.channels.keys {
            if channel == EXRFile.clipMaskChannel(.flat) || channel == EXRFile.clipMaskChannel(.layers) { continue }
            if channel.hasPrefix("mask_"), channel.count > 5 {
                channelOf[String(channel.dropFirst(5))] = channel
            } else if channel.hasPrefix("mask."), channel.hasSuffix(".Y"), channel.count > 7 {
                channelOf[String(channel.dropFirst(5).dropLast(2))] = channel
            }
        }
        if contents.channels["A"] != nil, listed?.contains(EXRFile.alphaLayer) == true {
            channelOf[EXRFile.alphaLayer] = "A"
        }
        var names = channelOf.keys.sorted()
        if let listed {
            let present = Set(names)
            names = listed.filter(present.contains) + names.filter { !listed.contains($0) }
        }
        return names.compactMap { name in
            guard let channel = channelOf[name], let values = contents.channels[channel] else { return nil }
            return SemanticMaskLayer(name: name, semanticName: string(prefix + "mask." + name) ?? "",
                                     instanceID: string(prefix + "mask." + name + ".instanceID") ?? "",
                                     sourceIFD: string(prefix + "mask." + name + ".sourceIFD") ?? "",
                                     values: ImageBuffer(width: contents.width, height: contents.height, channels: 1, samples: values))
        }
    }

    /// Rebuilds encoding, exposure and provenance from a header.
    ///
    /// - Throws: `ExchangeError` (`.unsupportedFeature`) when the header says nothing about
    ///   the colour encoding.
    static func describe(_ attributes: [String: EXRAttributeValue], path: String)
        throws -> (ColorEncoding, ExposureScaling, ImageProvenance) {
        func string(_ name: String) -> String? {
            if case .string(let s)? = attributes[name] { return s }
            return nil
        }
        func doubles(_ name: String) -> [Double] {
            switch attributes[name] {
            case .v2d(let a)?, .v3d(let a)?, .m33d(let a)?, .m44d(let a)?: return a
            case .floatVector(let a)?, .v2f(let a)?, .v3f(let a)?, .m33f(let a)?, .m44f(let a)?: return a.map(Double.init)
            case .double(let d)?: return [d]
            case .float(let f)?: return [Double(f)]
            default: return []
            }
        }

        let encoding: ColorEncoding
        if let s = string(prefix + "colorSpace"), let e = ColorEncoding(rawValue: s) {
            encoding = e
        } else if let id = string("colorInteropID"), let e = ColorEncoding(rawValue: id), e != .cameraNative {
            encoding = e
        } else if case .chromaticities(let c)? = attributes["chromaticities"],
                  let e = ColorEncoding.allCases.first(where: { $0.colorSpace.map { $0.chromaticities.map(Float.init) == c } ?? false }) {
            encoding = e
        } else {
            throw ExchangeError(path: path, operation: "readSceneLinear",
                                message: "the header names no colour encoding (no \(prefix)colorSpace, colorInteropID or Rec.2020 chromaticities)",
                                category: .unsupportedFeature)
        }

        var exposure = ExposureScaling.none
        if let m = string(prefix + "exposureScaling"), let mode = ExposureMode(rawValue: m) {
            exposure.mode = mode
        }
        if let f = doubles(prefix + "exposureFactor").first { exposure.factor = f }
        exposure.source = string(prefix + "scaleSource")
        exposure.relativeUncertainty = doubles(prefix + "scaleRelativeUncertainty").first

        let provenance = ImageProvenance(
            sourceFile: string(prefix + "sourceFile") ?? "",
            sourceSHA256: string(prefix + "sourceSHA256") ?? "",
            software: string(prefix + "software") ?? "",
            sourceIFD: string(prefix + "sourceIFD") ?? "",
            whiteBalanceSource: string(prefix + "whiteBalance") ?? "",
            whiteXY: doubles(prefix + "whiteXY"),
            cameraNeutral: doubles(prefix + "cameraNeutral"),
            cameraToOutput: doubles(prefix + "cameraToOutput"),
            dng: items(attributes, prefix: dngPrefix, listName: prefix + "dngItems"),
            processing: items(attributes, prefix: processingPrefix, listName: prefix + "processingItems"))
        return (encoding, exposure, provenance)
    }

    /// The attributes named `itemPrefix + key` as metadata items, in the order and with the
    /// kinds recorded in `listName` (sorted by key, kinds guessed from the EXR types, when absent).
    private static func items(_ attributes: [String: EXRAttributeValue], prefix itemPrefix: String,
                              listName: String) -> [MetadataItem] {
        var listed: [(String, String?)] = []
        if case .string(let list)? = attributes[listName] {
            for entry in list.split(separator: ",") {
                let parts = entry.split(separator: ":", maxSplits: 1).map(String.init)
                if parts.count == 2 { listed.append((parts[0], parts[1])) }
            }
        } else {
            listed = attributes.keys.filter { $0.hasPrefix(itemPrefix) }.sorted()
                .map { (String($0.dropFirst(itemPrefix.count)), nil) }
        }
        var items: [MetadataItem] = []
        for (key, kind) in listed {
            guard let value = attributes[itemPrefix + key] else { continue }
            let metadata: MetadataValue?
            switch (value, kind) {
            case (.string(let s), _): metadata = .text(s)
            case (.int(let i), "number"): metadata = .number(Double(i))
            case (.int(let i), _): metadata = .integer(i)
            case (.double(let d), "integer"): metadata = Int(exactly: d).map { .integer($0) } ?? .number(d)
            case (.double(let d), _): metadata = .number(d)
            case (.float(let f), _): metadata = .number(Double(f))
            case (.floatVector(let a), "integers"):
                metadata = a.allSatisfy({ Int(exactly: $0) != nil }) ? .integers(a.map { Int($0) }) : .numbers(a.map(Double.init))
            case (.floatVector(let a), _): metadata = .numbers(a.map(Double.init))
            default: metadata = nil
            }
            if let metadata { items.append(MetadataItem(key, metadata)) }
        }
        return items
    }
}
