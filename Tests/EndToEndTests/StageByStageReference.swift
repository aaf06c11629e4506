import Foundation
@testable import Engine
import SceneLinearKit

/// A reference for the engine's tests: the stages composed one after the other, each over
/// the whole image (Stage 1 → OpcodeList1 → Stage 2 → OpcodeList2 → demosaicing →
/// OpcodeList3 → colour → crop, scale, orientation), from the stage functions themselves.
/// The engine, which runs the same stages region by region, must give the same bits.
enum StageByStageReference {
    static func develop(path: String, options: DevelopOptions = DevelopOptions()) throws -> DevelopedImage {
        let dng = try DNGFile.open(path: path)
        let (raw, main, notes) = try Pipeline.selectImage(dng, options: options)
        var processing = notes
        // The raw-data digest of the whole decoded image, against the engine's, fed block by block.
        let expectation = try Pipeline.digestExpectation(dng, raw: raw, main: main, options: options)
        let digester = try expectation?.makeDigester(dng)
        var stored = try RawDecoder.decode(dng, ifd: raw, limits: options.limits, digester: digester)
        let digestItems = try Pipeline.checkDigests(dng, raw: raw, main: main, expectation: expectation,
                                                    imageDigest: digester?.finish(), options: options)
        try Pipeline.applyOpcodeList1(dng: dng, raw: raw, to: &stored, clipping: options.opcodeClipping, notes: &processing)
        var linear = try Linearizer.linearize(stored, path: path)
        var trims: [Int: PixelRect] = [:]
        trims[2] = try Pipeline.applyOpcodeList(2, dng: dng, raw: raw, to: &linear, clipping: options.opcodeClipping, notes: &processing)
        var binning = 1
        var stage3: Stage3Image
        if raw.photometric == Photometric.cfa {
            stage3 = try Demosaicer.demosaic(linear, cfa: raw.cfa!, method: options.demosaic)
            processing.append(MetadataItem("demosaic", .text(options.demosaic.rawValue)))
            // A 2×2 pattern of the three colours is recorded for the raw-site measurements.
            let cfa = raw.cfa!
            if cfa.repeatRows == 2 && cfa.repeatCols == 2 && Set(cfa.pattern) == [0, 1, 2] {
                processing.append(MetadataItem("cfaPattern", .integers(cfa.pattern)))
            }
            if options.demosaic == .superpixel { binning = 2 }
        } else {
            stage3 = Stage3Image(linearRaw: linear)!
        }
        trims[3] = try Pipeline.applyOpcodeList3(dng: dng, raw: raw, to: &stage3, clipping: options.opcodeClipping, notes: &processing)
        let color = try ColorTransform.make(metadata: dng.metadata, encoding: options.encoding,
                                            whiteBalance: options.whiteBalance, path: path)
        let exposure = try Pipeline.exposureScaling(options.exposure, metadata: dng.metadata, path: path)
        var provenance = Pipeline.provenance(dng: dng, raw: raw, mapping: linear.mapping, color: color,
                                             sha256: SHA256Digest.hex(of: dng.file.data))
        provenance.processing = processing + digestItems
        let converted = ColorConversion.apply(color, exposure: exposure, to: stage3, provenance: provenance)
        let (geometryIFD, geometryBinning) = Pipeline.geometrySource(raw: raw, main: main, binning: binning)
        let plan = try ImageGeometry.plan(ifd: geometryIFD, orientation: dng.metadata.orientation, width: converted.width,
                                          height: converted.height, binning: geometryBinning, crop: options.crop,
                                          applyOrientation: options.applyOrientation, path: path)
        var image = ImageGeometry.apply(plan, to: converted)
        if options.includeMasks {
            image.masks = try Pipeline.semanticMasks(dng, raw: raw, stage3: converted, binning: binning, trims: trims, plan: plan,
                                                     options: options)
        }
        return DevelopedImage(image: image, dng: dng, rawIFD: raw, mapping: linear.mapping, color: color, geometry: plan,
                              timings: StageTimings())
    }
}
