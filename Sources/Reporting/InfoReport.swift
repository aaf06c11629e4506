import Foundation
import Engine

/// What `scenelinear info` reports about a DNG: a readable summary and a JSON document.
public struct InfoReport: Encodable, Sendable {
    /// JSON schema identifier; bumped when fields change meaning or disappear.
    public let schema = "scenelinear.info/1"
    public let file: String
    public let fileSize: Int
    public let byteOrder: String
    public let bigTIFF: Bool
    public let metadata: DNGMetadata
    /// Index of the main raw image in `images`, if there is one.
    public let mainRawImage: String?
    /// The white point the conversion would use by default (nil when it cannot be computed).
    public let asShotWhite: WhiteSummary?
    public let images: [ImageIFD]
    /// How each semantic mask maps onto the converted image (layer name, sizes, MaskSubArea).
    public let semanticMasks: [MaskGeometry]
    /// Every tag of every IFD (only with `--tags`).
    public let tags: [TagListing]?
    /// The raw-data digest: absent, present (not compared), verified or mismatch.
    public let digest: DigestSummary
    /// The estimated peak memory of developing the main raw image by each route, bytes
    /// (`Pipeline.estimatedPeakBytes` and the masks' `Pipeline.maskBytes`; what `--max-memory`
    /// is checked against).
    public let memoryEstimates: [String: Int]?

    public struct DigestSummary: Encodable, Sendable {
        /// absent, present, verified or mismatch.
        public let state: String
        /// "NewRawImageDigest (51111)" or "RawImageDigest (50972)".
        public let tag: String?
        /// The digest the file records, lowercase hex.
        public let stored: String?
        /// The digest of the data, when it differs.
        public let computed: String?
        public var note: String?

        /// With a note when the file records an all-zero digest (treated as absent).
        public init(_ state: DigestState, allZero: [String]) {
            self.init(state)
            if case .absent = state, !allZero.isEmpty {
                note = "\(allZero.joined(separator: " and ")) recorded as sixteen zero bytes: treated as absent, as the DNG SDK does"
            }
        }

        public init(_ state: DigestState) {
            self.state = state.name
            switch state {
            case .absent: (tag, stored, computed, note) = (nil, nil, nil, nil)
            case .present(let t, let s, let reason): (tag, stored, computed, note) = (t.name, s, nil, reason)
            case .verified(let t, let d): (tag, stored, computed, note) = (t.name, d, nil, nil)
            case .mismatch(let t, let s, let c): (tag, stored, computed, note) = (t.name, s, c, nil)
            }
        }
    }

    public struct WhiteSummary: Encodable, Sendable {
        public let source: String
        public let xy: [Double]
        public let correlatedColorTemperature: Double
        public let cameraNeutral: [Double]
    }

    public struct TagListing: Encodable, Sendable {
        public let ifd: String
        public let tag: Int
        public let name: String
        public let type: String
        public let count: Int
        /// The first values (up to 16 numbers, or the text), or a note for blobs.
        public let value: String
    }

    /// - Parameter digest: the digest state found by `Pipeline.digestState(_:verify: true)`;
    ///   nil reports only whether the file records one.
    public init(dng: DNGFile, includeTags: Bool, digest: DigestState? = nil) {
        if let digest {
            self.digest = DigestSummary(digest, allZero: RawImageDigest.allZeroTags(dng))
        } else if let state = try? Pipeline.digestState(dng, verify: false) {
            self.digest = DigestSummary(state, allZero: RawImageDigest.allZeroTags(dng))
        } else {
            self.digest = DigestSummary(.absent)
        }
        file = dng.path
        fileSize = dng.file.count
        byteOrder = dng.byteOrder.name
        bigTIFF = dng.structure.isBigTIFF
        metadata = dng.metadata
        images = dng.images
        semanticMasks = MaskGeometry.describe(dng)
        let main = try? dng.mainRawImage()
        mainRawImage = main?.path
        memoryEstimates = main.map { raw in
            let masks = Pipeline.maskBytes(dng, raw: raw, options: DevelopOptions())
            return Dictionary(uniqueKeysWithValues: DevelopRoute.allCases.map {
                ($0.rawValue, Pipeline.adding(Pipeline.estimatedPeakBytes(raw, route: $0), masks))
            })
        }
        if let t = try? ColorTransform.make(metadata: dng.metadata, encoding: .linearRec2020, path: dng.path) {
            asShotWhite = WhiteSummary(source: t.whiteBalanceSource, xy: [t.whiteXY.x, t.whiteXY.y],
                                       correlatedColorTemperature: Chromaticity.correlatedColorTemperature(t.whiteXY),
                                       cameraNeutral: [t.cameraNeutral.x, t.cameraNeutral.y, t.cameraNeutral.z])
        } else {
            asShotWhite = nil
        }
        tags = includeTags ? Self.listTags(dng) : nil
    }

    static func listTags(_ dng: DNGFile) -> [TagListing] {
        let values = EntryValues(file: dng.file, order: dng.byteOrder)
        var out: [TagListing] = []
        for ifd in dng.structure.allIFDs {
            for e in ifd.entries {
                var value: String
                if !e.inBounds {
                    value = "(values at offset \(e.valueOffset) lie past the end of the file)"
                } else if e.type == .ascii {
                    value = (try? values.string(e, in: ifd.path)) ?? ""
                } else if e.type == .undefined && e.count > 16 {
                    value = "(\(e.count) bytes)"
                } else {
                    let numbers = (try? values.doubles(e, in: ifd.path)) ?? []
                    value = numbers.prefix(16).map { String(format6: $0) }.joined(separator: " ")
                    if e.count > 16 { value += " … (\(e.count) values)" }
                }
                out.append(TagListing(ifd: ifd.path, tag: Int(e.tag), name: Tag.name(e.tag), type: e.type.name,
                                      count: e.count, value: value))
            }
        }
        return out
    }

    /// The report as pretty-printed JSON with sorted keys.
    public func json() throws -> String {
        try ReportJSON.encode(self)
    }

    /// A human-readable summary.
    public var text: String {
        var lines: [String] = []
        func add(_ label: String, _ value: String) { lines.append(label.padding(toLength: 20, withPad: " ", startingAt: 0) + value) }
        let m = metadata
        add("File", "\(file) (\(fileSize) bytes, \(bigTIFF ? "BigTIFF" : "TIFF"), \(byteOrder))")
        add("DNG version", "\(m.dngVersion) (readers need \(m.dngBackwardVersion))")
        // Models often repeat the make ("Canon" + "Canon EOS Kiss X4"): show it once.
        let camera = [m.model?.hasPrefix(m.make ?? "\u{0}") == true ? nil : m.make, m.model].compactMap { $0 }.joined(separator: " ")
        add("Camera", camera + (m.uniqueCameraModel.map { " — \"\($0)\"" } ?? ""))
        var capture: [String] = []
        if let t = m.capture.exposureTime { capture.append(t < 1 ? "1/\(String(format6: (1 / t).rounded())) s" : "\(String(format6: t)) s") }
        if let f = m.capture.fNumber { capture.append("f/\(String(format6: f))") }
        if let iso = m.capture.iso { capture.append("ISO \(String(format6: iso))") }
        if let fl = m.capture.focalLength { capture.append("\(String(format6: fl)) mm") }
        if let d = m.capture.dateTimeOriginal {
            capture.append(d + (m.capture.subSecTimeOriginal.map { ".\($0)" } ?? "") + (m.capture.offsetTimeOriginal.map { " \($0)" } ?? ""))
        }
        if !capture.isEmpty { add("Capture", capture.joined(separator: ", ")) }
        if let g = m.capture.gps {
            add("Position", String(format: "%.6f° %@, %.6f° %@", abs(g.latitude), g.latitude < 0 ? "S" : "N", abs(g.longitude), g.longitude < 0 ? "W" : "E")
                + (g.altitude.map { String(format: ", %.1f m", $0) } ?? "") + " (GPS)")
        }
        add("Orientation", "\(m.orientation)")
        add("Baseline exposure", String(format: "%+.4f EV (offset %+.4f EV)", m.baselineExposure, m.baselineExposureOffset))
        let cal = m.calibration
        for (i, code) in cal.illuminants.enumerated() {
            let t = Chromaticity.temperature(ofIlluminant: code).map { " ≈ \(Int($0)) K" } ?? ""
            let fm = i < cal.forwardMatrices.count && cal.forwardMatrices[i] != nil ? " + ForwardMatrix\(i + 1)" : ""
            add(i == 0 ? "Colour calibration" : "", "ColorMatrix\(i + 1)\(fm) under illuminant \(code) (\(Self.illuminantName(code))\(t))")
        }
        if let n = cal.asShotNeutral { add("AsShotNeutral", n.map { String(format: "%.6g", $0) }.joined(separator: " ")) }
        if let xy = cal.asShotWhiteXY { add("AsShotWhiteXY", xy.map { String(format: "%.6g", $0) }.joined(separator: " ")) }
        if let w = asShotWhite {
            add("White point", String(format: "xy (%.4f, %.4f), %.0f K, from %@", w.xy[0], w.xy[1], w.correlatedColorTemperature, w.source))
        }
        switch digest.state {
        case "absent": add("Raw image digest", digest.note.map { "absent: \($0)" } ?? "absent (the file records none)")
        case "present": add("Raw image digest", "present: \(digest.tag ?? "") \(digest.stored ?? ""), not verified (--verify-digest)")
        case "verified": add("Raw image digest", "verified: \(digest.tag ?? "") \(digest.stored ?? "")")
        default: add("Raw image digest", "MISMATCH: \(digest.tag ?? "") records \(digest.stored ?? ""), the raw image data give \(digest.computed ?? "")")
        }
        lines.append("Images:")
        for image in images {
            let main = image.path == mainRawImage ? " (converted)" : ""
            let kind = image.sampleFormat == 3 ? " float" : image.sampleFormat == 2 ? " signed" : ""
            let bits = image.bitsPerSample.first.map { "\(image.samplesPerPixel)×\($0)-bit\(kind)" } ?? ""
            var where_ = ""
            if let l = image.layout {
                where_ = l.kind == .tiles ? ", \(l.offsets.count) tiles \(l.blockWidth)×\(l.blockHeight)" : ", \(l.offsets.count) strip(s)"
            }
            lines.append("  \(image.path.padding(toLength: 14, withPad: " ", startingAt: 0)) \(image.role)\(main): \(image.width)×\(image.height) \(bits) \(Photometric.name(image.photometric)), \(Compression.name(image.compression, raw: image.isRaw))\(where_)")
            if image.isRaw {
                var stage2: [String] = []
                if let t = image.linearizationTable {
                    let firstMax = t.firstIndex(of: t.max() ?? 0) ?? 0
                    stage2.append("LinearizationTable \(t.count) entries (reaches \(t.max() ?? 0) at index \(firstMax))")
                }
                stage2.append("BlackLevel " + image.blackLevel.map { String(format6: $0) }.joined(separator: " "))
                stage2.append("WhiteLevel " + image.whiteLevel.map { String(format6: $0) }.joined(separator: " "))
                stage2.append("ActiveArea \(image.activeArea)")
                lines.append("                 " + stage2.joined(separator: "; "))
                if let n = image.noiseProfile {
                    lines.append("                 NoiseProfile (variance = S·x + O): " + n.map { String(format: "%.6g", $0) }.joined(separator: " "))
                }
                if let cfa = image.cfa { lines.append("                 CFA \(cfa.repeatRows)×\(cfa.repeatCols) \(cfa.patternName)") }
                if let g = image.profileGainTableMap {
                    lines.append("                 ProfileGainTableMap \(g.pointsV)×\(g.pointsH)×\(g.pointsN) (rendering hint, not applied)")
                }
                if !image.opcodeListSizes.isEmpty {
                    lines.append("                 " + image.opcodeListSizes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value) bytes" }.joined(separator: ", "))
                }
            }
            if let name = image.semanticName {
                lines.append("                 SemanticName \(name)" + (image.semanticInstanceID.map { ", instance \($0)" } ?? ""))
            }
            if let g = semanticMasks.first(where: { $0.ifd == image.path }) { lines += Self.maskLines(g) }
        }
        if let tags {
            lines.append("Tags:")
            for t in tags {
                lines.append("  \(t.ifd.padding(toLength: 14, withPad: " ", startingAt: 0)) \(String(t.tag).padding(toLength: 6, withPad: " ", startingAt: 0)) \(t.name.padding(toLength: 28, withPad: " ", startingAt: 0)) \(t.type.padding(toLength: 10, withPad: " ", startingAt: 0)) \(String(t.count).padding(toLength: 6, withPad: " ", startingAt: 0)) \(t.value)")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The mapped geometry of a semantic mask: layer, mask space, area covered, output size.
    static func maskLines(_ g: MaskGeometry) -> [String] {
        let indent = "                 "
        var lines: [String] = []
        var space = "\(g.maskWidth)×\(g.maskHeight)"
        if let v = g.maskSubArea, v.count == 4 {
            space += g.maskSubAreaUse == "used"
                ? " at top \(v[0]), left \(v[1]) of a \(g.maskSpaceWidth)×\(g.maskSpaceHeight) mask space (MaskSubArea)"
                : " (MaskSubArea \(v.map(String.init).joined(separator: " ")) \(g.maskSubAreaUse))"
        } else if let v = g.maskSubArea {
            space += " (MaskSubArea \(v.map(String.init).joined(separator: " ")) \(g.maskSubAreaUse))"
        }
        var line = "layer mask.\(g.layer): \(space)"
        if g.coversWidth > 0 {
            let sx = Double(g.coversWidth) / Double(g.maskSpaceWidth), sy = Double(g.coversHeight) / Double(g.maskSpaceHeight)
            line += " → ActiveArea \(g.coversWidth)×\(g.coversHeight) (scale \(String(format6: sx)) × \(String(format6: sy)))"
        }
        if let w = g.outputWidth, let h = g.outputHeight {
            line += " → output \(w)×\(h)" + (g.outputOrientation.map { $0 == 1 ? "" : " (orientation \($0))" } ?? "")
        }
        lines.append(indent + line)
        return lines
    }

    static func illuminantName(_ code: Int) -> String {
        let names: [Int: String] = [
            0: "unknown", 1: "daylight", 2: "fluorescent", 3: "tungsten", 4: "flash", 9: "fine weather", 10: "cloudy",
            11: "shade", 12: "daylight fluorescent", 13: "day white fluorescent", 14: "cool white fluorescent",
            15: "white fluorescent", 16: "warm white fluorescent", 17: "standard light A", 18: "standard light B",
            19: "standard light C", 20: "D55", 21: "D65", 22: "D75", 23: "D50", 24: "ISO studio tungsten", 255: "other",
        ]
        return names[code] ?? "code \(code)"
    }
}

extension InfoReport {
    /// The report of the DNG at `path`, or of the DNG on standard input for "-" (read up to
    /// `standardInputLimit` bytes). With `verifyDigest` the raw image is decoded, within
    /// `options`' limits, and compared with the digest the file records.
    /// - Throws: the container's errors; `LimitError` for standard input past the limit or an
    ///   image over the limits; the decoder's errors when verifying.
    public static func make(path: String, includeTags: Bool, verifyDigest: Bool, options: DevelopOptions = DevelopOptions(),
                            standardInputLimit: Int) throws -> InfoReport {
        let dng: DNGFile
        if path == "-" {
            let data = try readStandardInput(limit: standardInputLimit)
            dng = try DNGFile(file: FileBytes(data: data, path: "<stdin>"))
        } else {
            dng = try DNGFile.open(path: path)
        }
        let digest = verifyDigest ? try Pipeline.digestState(dng, verify: true, options: options) : nil
        return InfoReport(dng: dng, includeTags: includeTags, digest: digest)
    }

    /// Whether the digest was verified and does not match the data (`DigestState.mismatch`).
    public var digestMismatch: Bool { digest.state == "mismatch" }

    /// Standard input, read up to `limit` bytes.
    /// - Throws: `LimitError` past the limit.
    static func readStandardInput(limit: Int) throws -> Data {
        var data = Data()
        while true {
            let chunk = FileHandle.standardInput.readData(ofLength: 1 << 20)
            if chunk.isEmpty { return data }
            guard data.count + chunk.count <= limit else {
                throw LimitError(path: "<stdin>", .standardInput(limit: limit))
            }
            data.append(chunk)
        }
    }
}
