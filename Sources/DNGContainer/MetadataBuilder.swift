import ImageCore

/// Turns raw IFD entries into the typed metadata model, reading each tag once and
/// checking types and bounds.
struct MetadataBuilder {
    let values: EntryValues
    let file: FileBytes

    // MARK: small typed accessors

    private func ints(_ ifd: IFD, _ tag: UInt16) throws(ContainerError) -> [Int]? {
        guard let e = ifd.entry(tag) else { return nil }
        return try values.integers(e, in: ifd.path)
    }

    private func int(_ ifd: IFD, _ tag: UInt16) throws(ContainerError) -> Int? {
        guard let v = try ints(ifd, tag) else { return nil }
        guard let first = v.first else {
            throw .corrupt(path: file.path, ifd: ifd.path, reason: "\(Tag.name(tag)) has no value")
        }
        return first
    }

    private func doubles(_ ifd: IFD, _ tag: UInt16) throws(ContainerError) -> [Double]? {
        guard let e = ifd.entry(tag) else { return nil }
        return try values.doubles(e, in: ifd.path)
    }

    private func double(_ ifd: IFD, _ tag: UInt16) throws(ContainerError) -> Double? {
        guard let v = try doubles(ifd, tag) else { return nil }
        guard let first = v.first else {
            throw .corrupt(path: file.path, ifd: ifd.path, reason: "\(Tag.name(tag)) has no value")
        }
        return first
    }

    private func finite(_ ifd: IFD, _ tag: UInt16) throws(ContainerError) -> [Double]? {
        guard let v = try doubles(ifd, tag) else { return nil }
        guard v.allSatisfy(\.isFinite) else {
            throw .corrupt(path: file.path, ifd: ifd.path, reason: "\(Tag.name(tag)) holds a non-finite value (zero denominator?)")
        }
        return v
    }

    /// The first value of a rendering hint, or `nil` when absent or not a finite number
    /// (writers use 0/0 for "undefined").
    private func hint(_ ifd: IFD, _ tag: UInt16) throws(ContainerError) -> Double? {
        guard let v = try double(ifd, tag), v.isFinite else { return nil }
        return v
    }

    /// A text tag's value; an empty string counts as absent.
    private func string(_ ifd: IFD, _ tag: UInt16) throws(ContainerError) -> String? {
        guard let e = ifd.entry(tag) else { return nil }
        let s = try values.string(e, in: ifd.path)
        return s.isEmpty ? nil : s
    }

    private func bytes(_ ifd: IFD, _ tag: UInt16) throws(ContainerError) -> [UInt8]? {
        guard let e = ifd.entry(tag) else { return nil }
        return try values.bytes(e, in: ifd.path)
    }

    // MARK: IFD 0

    func camera(_ ifd0: IFD) throws(ContainerError) -> DNGMetadata {
        guard let versionEntry = ifd0.entry(Tag.dngVersion) else { throw .notDNG(path: file.path) }
        let version = try values.integers(versionEntry, in: ifd0.path)
        guard version.count == 4 else {
            throw .corrupt(path: file.path, ifd: ifd0.path, reason: "DNGVersion has \(version.count) values, expected 4")
        }
        let backward = try ints(ifd0, Tag.dngBackwardVersion) ?? [version[0], version[1], 0, 0]
        guard backward.count == 4 else {
            throw .corrupt(path: file.path, ifd: ifd0.path, reason: "DNGBackwardVersion has \(backward.count) values, expected 4")
        }
        let supported = DNGFile.supportedBackwardVersion
        if backward.lexicographicallyPrecedes(supported) == false && backward != supported {
            throw .unsupportedVersion(path: file.path, backwardVersion: backward.map(String.init).joined(separator: "."),
                                      supported: supported.map(String.init).joined(separator: "."))
        }
        let exif = ifd0.exif
        // Capture settings: IFD 0 (TIFF-EP) first, then the EXIF IFD; 0 or 0/0 means unknown.
        func exifDouble(_ tag: UInt16) throws(ContainerError) -> Double? {
            var v = try hint(ifd0, tag)
            if v == nil, let e = exif { v = try hint(e, tag) }
            guard let value = v, value > 0 else { return nil }
            return value
        }
        func exifString(_ tag: UInt16) throws(ContainerError) -> String? {
            if let v = try string(ifd0, tag) { return v }
            if let e = exif { return try string(e, tag) }
            return nil
        }
        let capture = CaptureSettings(
            exposureTime: try exifDouble(Tag.exposureTime), fNumber: try exifDouble(Tag.fNumber),
            iso: try exifDouble(Tag.isoSpeedRatings), focalLength: try exifDouble(Tag.focalLength),
            dateTimeOriginal: try exifString(Tag.dateTimeOriginal), lensModel: try exifString(Tag.lensModel),
            offsetTimeOriginal: (try? exifString(Tag.offsetTimeOriginal)) ?? nil,
            artist: (try? string(ifd0, Tag.artist)) ?? nil, copyright: (try? string(ifd0, Tag.copyright)) ?? nil,
            imageDescription: (try? string(ifd0, Tag.imageDescription)) ?? nil,
            cameraSerialNumber: ((try? string(ifd0, Tag.cameraSerialNumber)) ?? nil) ?? ((try? exifString(Tag.bodySerialNumber)) ?? nil),
            subSecTimeOriginal: (try? exifString(Tag.subSecTimeOriginal)) ?? nil,
            gps: ifd0.gps.flatMap { try? position($0) } ?? nil)

        return DNGMetadata(
            dngVersion: version.map(String.init).joined(separator: "."),
            dngBackwardVersion: backward.map(String.init).joined(separator: "."),
            make: try string(ifd0, Tag.make), model: try string(ifd0, Tag.model),
            uniqueCameraModel: try string(ifd0, Tag.uniqueCameraModel), software: try string(ifd0, Tag.software),
            orientation: try int(ifd0, Tag.orientation) ?? 1,
            baselineExposure: try hint(ifd0, Tag.baselineExposure) ?? 0,
            baselineExposureOffset: try hint(ifd0, Tag.baselineExposureOffset) ?? 0,
            baselineNoise: try hint(ifd0, Tag.baselineNoise), baselineSharpness: try hint(ifd0, Tag.baselineSharpness),
            noiseReductionApplied: try hint(ifd0, Tag.noiseReductionApplied),
            colorimetricReference: try int(ifd0, Tag.colorimetricReference) ?? 0,
            defaultBlackRender: try int(ifd0, Tag.defaultBlackRender),
            profileToneCurvePoints: ifd0.entry(Tag.profileToneCurve).map { $0.count / 2 },
            calibration: try calibration(ifd0), capture: capture)
    }

    /// GPSLatitudeRef/GPSLatitude (1, 2), GPSLongitudeRef/GPSLongitude (3, 4) as degrees,
    /// minutes and seconds, GPSAltitudeRef/GPSAltitude (5, 6); nil without a whole, finite,
    /// in-range latitude and longitude.
    private func position(_ gps: IFD) throws(ContainerError) -> GPSPosition? {
        func angle(_ refTag: UInt16, _ tag: UInt16, negative: String) throws(ContainerError) -> Double? {
            guard let dms = try doubles(gps, tag), dms.count == 3, dms.allSatisfy({ $0.isFinite && $0 >= 0 }),
                  let ref = try string(gps, refTag) else { return nil }
            let value = dms[0] + dms[1] / 60 + dms[2] / 3600
            return ref.uppercased().hasPrefix(negative) ? -value : value
        }
        guard let lat = try angle(1, 2, negative: "S"), let lon = try angle(3, 4, negative: "W"), abs(lat) <= 90, abs(lon) <= 180 else { return nil }
        var altitude = try hint(gps, 6)
        if let a = altitude, let below = try int(gps, 5), below == 1 { altitude = -a }
        return GPSPosition(latitude: lat, longitude: lon, altitude: altitude)
    }

    private func calibration(_ ifd0: IFD) throws(ContainerError) -> ColorCalibration {
        var c = ColorCalibration()
        let sets: [(UInt16, UInt16, UInt16, UInt16, UInt16, UInt16)] = [
            (Tag.calibrationIlluminant1, Tag.colorMatrix1, Tag.cameraCalibration1, Tag.forwardMatrix1, Tag.reductionMatrix1, Tag.illuminantData1),
            (Tag.calibrationIlluminant2, Tag.colorMatrix2, Tag.cameraCalibration2, Tag.forwardMatrix2, Tag.reductionMatrix2, Tag.illuminantData2),
            (Tag.calibrationIlluminant3, Tag.colorMatrix3, Tag.cameraCalibration3, Tag.forwardMatrix3, Tag.reductionMatrix3, Tag.illuminantData3),
        ]
        for (illuminantTag, cmTag, ccTag, fmTag, rmTag, dataTag) in sets {
            guard let cm = try finite(ifd0, cmTag) else { break }
            // CalibrationIlluminant1 defaults to 0 (unknown) when ColorMatrix1 is present alone.
            c.illuminants.append(try int(ifd0, illuminantTag) ?? 0)
            c.colorMatrices.append(cm)
            c.cameraCalibrations.append(try finite(ifd0, ccTag))
            c.forwardMatrices.append(try finite(ifd0, fmTag))
            c.reductionMatrices.append(try finite(ifd0, rmTag))
            c.illuminantData.append(try bytes(ifd0, dataTag))
        }
        c.analogBalance = try finite(ifd0, Tag.analogBalance)
        c.asShotNeutral = try finite(ifd0, Tag.asShotNeutral)
        c.asShotWhiteXY = try finite(ifd0, Tag.asShotWhiteXY)
        c.cameraCalibrationSignature = try string(ifd0, Tag.cameraCalibrationSignature)
        c.profileCalibrationSignature = try string(ifd0, Tag.profileCalibrationSignature)
        c.profileName = try string(ifd0, Tag.profileName)
        return c
    }

    // MARK: image IFDs

    func image(_ ifd: IFD) throws(ContainerError) -> ImageIFD {
        let path = ifd.path
        let width = try int(ifd, Tag.imageWidth) ?? 0
        let height = try int(ifd, Tag.imageLength) ?? 0
        guard width > 0, height > 0, width <= 1 << 20, height <= 1 << 20 else {
            throw .corrupt(path: file.path, ifd: path, reason: "image size \(width)×\(height) is impossible")
        }
        let spp = try int(ifd, Tag.samplesPerPixel) ?? 1
        guard (1...16).contains(spp) else {
            throw .corrupt(path: file.path, ifd: path, reason: "SamplesPerPixel \(spp) is impossible")
        }
        var bits = try ints(ifd, Tag.bitsPerSample) ?? [1]
        if bits.count == 1, spp > 1 { bits = Array(repeating: bits[0], count: spp) }
        let sampleFormat = try int(ifd, Tag.sampleFormat) ?? 1
        let photometric = try int(ifd, Tag.photometricInterpretation) ?? -1
        // TIFF's default of 1 bit per sample would decode a raw image's data as something
        // else entirely; the DNG specification requires the tag for raw IFDs.
        if (photometric == Photometric.cfa || photometric == Photometric.linearRaw) && !ifd.has(Tag.bitsPerSample) {
            throw .corrupt(path: file.path, ifd: path, reason: "a raw image without BitsPerSample (required)")
        }
        let newSubFileType = try int(ifd, Tag.newSubFileType) ?? 0

        // Data layout: tiles or strips.
        var layout: DataLayout?
        if let offsets = try ints(ifd, Tag.tileOffsets) {
            let counts = try ints(ifd, Tag.tileByteCounts) ?? []
            layout = DataLayout(kind: .tiles, blockWidth: try int(ifd, Tag.tileWidth) ?? 0,
                                blockHeight: try int(ifd, Tag.tileLength) ?? 0, offsets: offsets, byteCounts: counts)
        } else if let offsets = try ints(ifd, Tag.stripOffsets) {
            let counts = try ints(ifd, Tag.stripByteCounts) ?? []
            let rows = min(try int(ifd, Tag.rowsPerStrip) ?? height, height)
            layout = DataLayout(kind: .strips, blockWidth: width, blockHeight: rows, offsets: offsets, byteCounts: counts)
        } else if let offset = try int(ifd, Tag.jpegInterchangeFormat) {
            let length = try int(ifd, Tag.jpegInterchangeFormatLength) ?? 0
            layout = DataLayout(kind: .strips, blockWidth: width, blockHeight: height, offsets: [offset], byteCounts: [length])
        }

        // Stage 2 tags with their DNG defaults.
        var table: [UInt16]?
        if let t = try ints(ifd, Tag.linearizationTable) {
            guard !t.isEmpty, t.count <= 65536, t.allSatisfy({ (0...65535).contains($0) }) else {
                throw .corrupt(path: file.path, ifd: path, reason: "LinearizationTable has \(t.count) entries or values outside 0...65535")
            }
            table = t.map { UInt16($0) }
        }
        let repeatDim = try ints(ifd, Tag.blackLevelRepeatDim) ?? [1, 1]
        let black = try finite(ifd, Tag.blackLevel) ?? [0]
        let defaultWhite = bits.map { sampleFormat == 3 ? 1.0 : Double((1 << min($0, 32)) - 1) }
        var white = try finite(ifd, Tag.whiteLevel) ?? defaultWhite
        if white.count == 1, spp > 1 { white = Array(repeating: white[0], count: spp) }
        let area = try ints(ifd, Tag.activeArea) ?? [0, 0, height, width]
        guard area.count == 4 else {
            throw .corrupt(path: file.path, ifd: path, reason: "ActiveArea has \(area.count) values, expected 4")
        }
        let masked = try ints(ifd, Tag.maskedAreas) ?? []
        let maskedAreas = stride(from: 0, to: masked.count - 3, by: 4).map {
            PixelRect(top: masked[$0], left: masked[$0 + 1], bottom: masked[$0 + 2], right: masked[$0 + 3])
        }

        var cfa: CFADescription?
        if let dims = try ints(ifd, Tag.cfaRepeatPatternDim), let pattern = try ints(ifd, Tag.cfaPattern) {
            cfa = CFADescription(repeatRows: dims.first ?? 0, repeatCols: dims.count > 1 ? dims[1] : 0,
                                 pattern: pattern, planeColors: try ints(ifd, Tag.cfaPlaneColor) ?? [0, 1, 2],
                                 layout: try int(ifd, Tag.cfaLayout) ?? 1)
        }

        var opcodeSizes: [String: Int] = [:]
        for (name, tag) in [("OpcodeList1", Tag.opcodeList1), ("OpcodeList2", Tag.opcodeList2), ("OpcodeList3", Tag.opcodeList3)] {
            if let e = ifd.entry(tag) { opcodeSizes[name] = e.byteCount }
        }

        return ImageIFD(
            path: path, newSubFileType: newSubFileType, role: ImageRole(newSubFileType: newSubFileType),
            width: width, height: height, samplesPerPixel: spp, bitsPerSample: bits, sampleFormat: sampleFormat,
            compression: try int(ifd, Tag.compression) ?? 1, photometric: photometric,
            planarConfiguration: try int(ifd, Tag.planarConfiguration) ?? 1, predictor: try int(ifd, Tag.predictor) ?? 1,
            fillOrder: try int(ifd, Tag.fillOrder) ?? 1, layout: layout,
            linearizationTable: table, blackLevelRepeatDim: repeatDim, blackLevel: black,
            blackLevelDeltaH: try finite(ifd, Tag.blackLevelDeltaH), blackLevelDeltaV: try finite(ifd, Tag.blackLevelDeltaV),
            whiteLevel: white, activeArea: PixelRect(top: area[0], left: area[1], bottom: area[2], right: area[3]),
            maskedAreas: maskedAreas, linearResponseLimit: try double(ifd, Tag.linearResponseLimit),
            defaultCropOrigin: try finite(ifd, Tag.defaultCropOrigin), defaultCropSize: try finite(ifd, Tag.defaultCropSize),
            defaultScale: try finite(ifd, Tag.defaultScale), defaultUserCrop: try finite(ifd, Tag.defaultUserCrop),
            cfa: cfa, noiseProfile: try finite(ifd, Tag.noiseProfile), opcodeListSizes: opcodeSizes,
            semanticName: try string(ifd, Tag.semanticName), semanticInstanceID: try string(ifd, Tag.semanticInstanceID),
            maskSubArea: try ints(ifd, Tag.maskSubArea), profileGainTableMap: try gainTableMap(ifd))
    }

    /// Reads the ProfileGainTableMap header (DNG 1.6, tag 52525). The specification stores
    /// it big-endian; a table whose header only makes sense little-endian is read that way.
    private func gainTableMap(_ ifd: IFD) throws(ContainerError) -> GainTableMapInfo? {
        guard let raw = try bytes(ifd, Tag.profileGainTableMap) else { return nil }
        guard raw.count >= 64 else {
            throw .corrupt(path: file.path, ifd: ifd.path, reason: "ProfileGainTableMap is \(raw.count) bytes, shorter than its 64-byte header")
        }
        for order in [ByteOrder.bigEndian, .littleEndian] {
            let info: GainTableMapInfo? = raw.withUnsafeBytes { buffer in
                let r = EndianReader(raw: buffer, order: order)
                let v = Int(r.u32(0)), h = Int(r.u32(4)), n = Int(r.u32(40))
                guard v >= 1, h >= 1, n >= 1, v <= 65536, h <= 65536, n <= 65536 else { return nil }
                let (vh, o1) = v.multipliedReportingOverflow(by: h)
                let (vhn, o2) = vh.multipliedReportingOverflow(by: n)
                guard !o1, !o2, 64 + 4 * vhn == raw.count else { return nil }
                let weights = (0..<5).map { Double(Float(bitPattern: r.u32(44 + 4 * $0))) }
                return GainTableMapInfo(
                    pointsV: v, pointsH: h, spacingV: Double(bitPattern: r.u64(8)), spacingH: Double(bitPattern: r.u64(16)),
                    originV: Double(bitPattern: r.u64(24)), originH: Double(bitPattern: r.u64(32)), pointsN: n,
                    inputWeights: weights, byteCount: raw.count, byteOrder: order == .bigEndian ? "big-endian" : "little-endian")
            }
            if let info { return info }
        }
        throw .corrupt(path: file.path, ifd: ifd.path, reason: "ProfileGainTableMap header does not match its size (\(raw.count) bytes)")
    }
}
