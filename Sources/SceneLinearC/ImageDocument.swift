import Foundation
import SceneLinearKit

/// An image's metadata as the C interface hands it out (schema scenelinear.image/1,
/// docs/python.md): size, colour encoding, units and scale with its uncertainty, masks, and
/// the provenance (camera, capture settings and processing) with plain JSON values.
struct ImageDocument: Encodable {
    let schema = "scenelinear.image/1"
    let path: String
    let height: Int, width: Int, channels: Int
    let colorEncoding: String
    let units: String
    let exposure: ExposureScaling
    let hasClipMask: Bool
    let clippedPixels: Int
    let hasStandardDeviation: Bool
    let standardDeviationSource: String?
    let masks: [Mask]
    let provenance: Provenance

    struct Mask: Encodable {
        let name: String, semanticName: String, instanceID: String
    }

    struct Provenance: Encodable {
        let sourceFile: String, sourceSHA256: String, software: String, sourceIFD: String
        let whiteBalanceSource: String
        let whiteXY: [Double], cameraNeutral: [Double], cameraToOutput: [Double]
        let dng: [String: Plain], processing: [String: Plain]
    }

    /// A metadata value as plain JSON: a string, a number or a list of numbers.
    struct Plain: Encodable {
        let value: MetadataValue
        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch value {
            case .text(let s): try c.encode(s)
            case .number(let d): try c.encode(d)
            case .numbers(let a): try c.encode(a)
            case .integer(let i): try c.encode(i)
            case .integers(let a): try c.encode(a)
            }
        }
    }

    /// The merge's report (the command line's `merge --json` "report"), kept as written.
    let mergeReport: String?

    private enum CodingKeys: String, CodingKey {
        case schema, path, height, width, channels, colorEncoding, units, exposure, hasClipMask, clippedPixels, hasStandardDeviation
        case standardDeviationSource, masks, provenance
    }

    init(_ h: ImageHandle) {
        mergeReport = h.mergeReport
        let image = h.image
        path = h.path
        height = h.height
        width = h.width
        channels = 3
        colorEncoding = image.encoding.rawValue
        units = image.exposure.mode.unitSymbol.isEmpty ? "relative" : image.exposure.mode.unitSymbol
        exposure = image.exposure
        hasClipMask = image.clipMask != nil || !h.holdsPixels
        clippedPixels = h.clippedPixels
        let model = AnalysisInput.noiseModel(for: image) != nil
        hasStandardDeviation = h.deviation != nil || model
        standardDeviationSource = h.deviation != nil ? "layer" : model ? "noise-profile" : nil
        masks = h.masks.map { Mask(name: $0.name, semanticName: $0.semanticName, instanceID: $0.instanceID) }
        let p = image.provenance
        func dictionary(_ items: [MetadataItem]) -> [String: Plain] {
            Dictionary(items.map { ($0.key, Plain(value: $0.value)) }, uniquingKeysWith: { _, last in last })
        }
        provenance = Provenance(sourceFile: p.sourceFile, sourceSHA256: p.sourceSHA256, software: p.software, sourceIFD: p.sourceIFD,
                                whiteBalanceSource: p.whiteBalanceSource, whiteXY: p.whiteXY, cameraNeutral: p.cameraNeutral,
                                cameraToOutput: p.cameraToOutput, dng: dictionary(p.dng), processing: dictionary(p.processing))
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let text = String(decoding: try encoder.encode(self), as: UTF8.self)
        guard let mergeReport else { return text }
        return "{\"merge\":" + mergeReport + "," + text.dropFirst()
    }
}
