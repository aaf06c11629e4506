import Foundation
import Engine
import Reporting

/// The document `convert --json` prints (schema scenelinear.convert/1): the same shape for
/// one input and a batch (docs/cli.md, docs/schemas/convert.schema.json).
package struct ConvertDocument: Encodable {
    var schema = "scenelinear.convert/1"
    var software = SceneLinearVersion.software
    var files: [ConvertedFile]
    var converted: Int
    var skipped: Int
    var failed: Int
    /// A batch's manifest; null for one input.
    var manifest: String?
    /// A batch's shard, i/n; null for one input.
    var shard: String?

    enum CodingKeys: String, CodingKey {
        case schema, software, files, converted, skipped, failed, manifest, shard
    }

    package init(files: [ConvertedFile], converted: Int, skipped: Int, failed: Int, manifest: String? = nil, shard: String? = nil) {
        self.files = files
        self.converted = converted
        self.skipped = skipped
        self.failed = failed
        self.manifest = manifest
        self.shard = shard
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(software, forKey: .software)
        try c.encode(files, forKey: .files)
        try c.encode(converted, forKey: .converted)
        try c.encode(skipped, forKey: .skipped)
        try c.encode(failed, forKey: .failed)
        // Always present: null for one input.
        try c.encode(manifest, forKey: .manifest)
        try c.encode(shard, forKey: .shard)
    }

    /// Prints the document on stdout.
    package func print() {
        if let text = try? ReportJSON.encode(self) { Swift.print(text) }
    }
}

/// One input of the document: what was written, what was made (one input), or why it failed.
package struct ConvertedFile: Encodable {
    var input: String
    /// "ok" or "failed".
    var status: String
    var outputs: [ConvertOutput] = []
    var sourceSHA256: String?
    var error: String?
    var errorCategory: String?
    var exitCode: Int?
    var rawIFD: String?
    var width: Int?
    var height: Int?
    var colorSpace: String?
    var colorInteropID: String?
    var exposureScaling: String?
    var exposureFactor: Double?
    var whiteBalance: String?
    var whiteXY: [Double]?
    var clippedPixels: Int?
    /// top, left, bottom, right.
    var crop: [Int]?
    var orientation: Int?
    var masks: [Mask]?
    /// The digest check: "digest" (verified, absent, not checked, mismatch, ignored) and its details.
    var digest: [String: String]?
    var timings: Timings?

    struct Mask: Encodable {
        var name: String
        var semanticName: String
        var instanceID: String
        var sourceIFD: String
    }

    struct Timings: Encodable {
        var container: Double
        var hash: Double
        var develop: Double
        var export: [String: Double]
    }

    package init(input: String, status: String, outputs: [ConvertOutput] = []) {
        self.input = input
        self.status = status
        self.outputs = outputs
    }

    /// A converted input: its outputs and what the conversion made (`timings` with --timings).
    package init(input: String, converted d: ConvertedImage, outputs: [ConvertOutput], timings: Bool) {
        let image = d.description
        self.init(input: input, status: "ok", outputs: outputs)
        sourceSHA256 = image.provenance.sourceSHA256
        rawIFD = d.rawIFD.path
        width = image.width
        height = image.height
        colorSpace = image.encoding.rawValue
        colorInteropID = image.encoding.colorInteropID
        exposureScaling = image.exposure.mode.rawValue
        exposureFactor = image.exposure.factor
        whiteBalance = image.provenance.whiteBalanceSource
        whiteXY = image.provenance.whiteXY
        clippedPixels = d.clippedPixelCount
        crop = [d.geometry.crop.top, d.geometry.crop.left, d.geometry.crop.bottom, d.geometry.crop.right]
        orientation = d.geometry.orientation
        masks = image.masks.map { Mask(name: $0.name, semanticName: $0.semanticName, instanceID: $0.instanceID, sourceIFD: $0.sourceIFD) }
        let digestItems = image.provenance.processing.filter { $0.key.hasPrefix("digest") || $0.key.hasPrefix("originalRawFileDigest") }
        digest = Dictionary(digestItems.map { ($0.key, $0.value.description) }, uniquingKeysWith: { a, _ in a })
        if timings {
            let t = d.timings
            self.timings = Timings(container: t.container, hash: t.hash, develop: t.develop, export: t.export)
        }
    }

    /// An input that failed with `failure` (nil when it stopped for another reason) and `exitCode`.
    package init(input: String, failure: (any SceneLinearFailure)?, exitCode: Int32) {
        self.init(input: input, status: "failed")
        error = failure?.description
        errorCategory = failure?.category.name
        self.exitCode = Int(exitCode)
    }

    /// A batch input as the manifest records it (a failed one from `failed`, when it failed).
    package init(batchRecord r: ManifestRecord) {
        self.init(input: r.input, status: r.status == "ok" ? "ok" : "failed", outputs: r.outputs.map(ConvertOutput.init))
        if !r.inputSHA256.isEmpty { sourceSHA256 = r.inputSHA256 }
        error = r.error
        errorCategory = r.errorCategory
        exitCode = r.exitCode.map(Int.init)
    }
}

/// An output file of the document.
package struct ConvertOutput: Encodable {
    var format: String
    /// "-" for standard output.
    var path: String
    /// A batch output's SHA-256, from the manifest.
    var sha256: String?
    /// A Radiance picture's lower bounds.
    var lowerBounds: RadianceLowerBounds?
    /// This output is the lower-bound mask of that picture.
    var maskOf: String?

    package init(format: String, path: String, sha256: String? = nil, lowerBounds: RadianceLowerBounds? = nil, maskOf: String? = nil) {
        self.format = format
        self.path = path
        self.sha256 = sha256
        self.lowerBounds = lowerBounds
        self.maskOf = maskOf
    }

    /// A batch output as the manifest records it.
    package init(_ o: ManifestRecord.Output) {
        self.init(format: o.format, path: o.path, sha256: o.sha256, lowerBounds: o.lowerBounds, maskOf: o.maskOf)
    }

    /// The entries of a written file: a Radiance picture with its lower bounds, then its
    /// mask, if written.
    package static func entries(_ w: WrittenOutput) -> [ConvertOutput] {
        let path = w.path
        guard let bounds = w.lowerBounds else { return [ConvertOutput(format: w.format.rawValue, path: path)] }
        var entries = [ConvertOutput(format: w.format.rawValue, path: path, lowerBounds: bounds)]
        if let mask = bounds.mask { entries.append(ConvertOutput(format: "hdr", path: mask, maskOf: path)) }
        return entries
    }

    /// The text line: "wrote x.hdr (hdr)", "wrote x.clip.hdr (lower-bound mask of x.hdr)".
    package var wroteLine: String {
        if let maskOf { return "wrote \(path) (lower-bound mask of \(maskOf))" }
        return "wrote \(path) (\(format))"
    }
}
