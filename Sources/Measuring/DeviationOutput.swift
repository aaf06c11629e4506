import Analysis
import Engine
import Foundation

/// The per-pixel standard deviation layer of a single frame (`convert --std`): σ of R, G
/// and B from the DNG NoiseProfile, in the layout `merge` writes, so that every measurement
/// of the file (and any other reader) has its noise without the camera's model.
public struct StandardDeviationError: SceneLinearFailure, Equatable {
    public let path: String
    public var file: String? { path }
    public var description: String {
        "\(path): the DNG has no usable NoiseProfile (tag 51041), so no standard deviation layer can be made (--std)"
    }
    public var category: FailureCategory { .unsupportedFeature }
}

extension Pipeline {
    /// σ of each output channel per pixel, interleaved RGB: √(variance) of the NoiseProfile's
    /// model at the pixel's value (`NoiseModel.Kernel.pixelVariance(ofOutput:gain:)`: never 0
    /// for an unclipped pixel; lens-shading gains included), 0 where the pixel is clipped (a lower bound has no noise to speak of, as in a
    /// merge). For a demosaiced CFA image it is the σ of a raw sample of that value: sums over
    /// regions carry the correlation (`DeviationLayer`).
    /// - Throws: `StandardDeviationError` when the image has no noise model.
    public static func standardDeviationLayer(of image: SceneLinearImage, path: String) throws -> [Float] {
        var out = [Float](repeating: 0, count: 3 * image.width * image.height)
        try image.pixels.samples.withUnsafeBufferPointer { px in
            try out.withUnsafeMutableBufferPointer { o in
                if let clip = image.clipMask {
                    try clip.withUnsafeBufferPointer { try standardDeviationLayer(of: image, values: px, clipMask: $0, path: path, into: o) }
                } else {
                    try standardDeviationLayer(of: image, values: px, clipMask: nil, path: path, into: o)
                }
            }
        }
        return out
    }

    /// `standardDeviationLayer` of `values` (interleaved RGB, and their clip mask) held
    /// elsewhere — the image's own pixels need not be in `image`, whose provenance, exposure
    /// and colour give the noise model — written into `out` (3 floats a pixel).
    public static func standardDeviationLayer(of image: SceneLinearImage, values px: UnsafeBufferPointer<Float>,
                                              clipMask: UnsafeBufferPointer<UInt8>?, path: String,
                                              into out: UnsafeMutableBufferPointer<Float>) throws {
        // The model of the image's own channels (its own camera → output matrix), whatever its colour space.
        guard let model = AnalysisInput.noiseModel(for: image) else { throw StandardDeviationError(path: path) }
        let kernel = NoiseModel.Kernel(model)
        let n = px.count / 3
        for i in 0..<n {
            guard clipMask.map({ $0[i] == 0 }) ?? true else {
                for c in 0..<3 { out[3 * i + c] = 0 }
                continue
            }
            let rgb = SIMD3(Double(px[3 * i]), Double(px[3 * i + 1]), Double(px[3 * i + 2]))
            let v = kernel.pixelVariance(ofOutput: rgb, gain: model.pixelGains.map { Double($0[i]) } ?? 1)
            for c in 0..<3 { out[3 * i + c] = Float(v[c].squareRoot()) }
        }
    }

    /// The provenance items a file with a standard deviation layer records: where the layer
    /// is and the per-camera-plane factor its region sums take (`DeviationLayer`).
    public static func deviationProvenance(_ image: SceneLinearImage, channels: String) -> [MetadataItem] {
        [MetadataItem("standardDeviationLayer", .text("\(channels): per-pixel standard deviation of R, G, B (noise), same units as the image")),
         MetadataItem("standardDeviationRegionScale", .numbers(regionScale(image)))]
    }

    /// The factor per camera plane on the variance of a region's sum (`DeviationLayer`).
    static func regionScale(_ image: SceneLinearImage) -> [Double] {
        let s = DeviationLayer.samplingScale(image)
        return [s.x, s.y, s.z]
    }

    /// Writes `image` with its standard deviation layer `deviation` (interleaved RGB): EXR
    /// channels `std_R`, `std_G`, `std_B` (`std.R`, … with the `.layers` layout), HDF5 dataset
    /// `/noise/std` [H, W, 3] (on the image's dimension scales). (A Radiance picture cannot
    /// hold it: write it with `Pipeline.export(_:format:to:)`.)
    public static func export(_ image: SceneLinearImage, deviation: [Float], format: OutputFormat, to path: String,
                              options: ExportOptions, hdf5Groups: [HDF5Group] = []) throws {
        var image = image
        let n = image.width * image.height
        switch format {
        case .exr:
            let layout = options.exr.layout
            let channels = EXRAuxiliaryChannel.standardDeviations(deviation, pixels: n, layout: layout)
            image.provenance.processing += deviationProvenance(image, channels: channels.map(\.name).joined(separator: ", "))
            try EXRFile.write(image, to: path, options: options.exr, auxiliary: channels)
        case .hdf5:
            image.provenance.processing += deviationProvenance(image, channels: "/noise/std")
            let group = HDF5Group(name: "noise", attributes: [
                MetadataItem("description", .text("per-pixel noise of /image from the DNG NoiseProfile (convert --std)")),
            ], datasets: [
                HDF5Dataset(imageLayer: "std", width: image.width, height: image.height, channels: 3, values: .floats(deviation), attributes: [
                    MetadataItem("description", .text("standard deviation of each channel of /image (noise), same units; 0 where /clip_mask is set")),
                    MetadataItem("region_sum_scale", .numbers(regionScale(image))),
                    MetadataItem("correlation", .text("pixels of a LinearRaw or superpixel image are independent; a demosaiced CFA "
                                                      + "image's pixels share raw samples: the variance of a region's sum is that of its "
                                                      + "raw samples, each camera plane's scaled by region_sum_scale (docs/photometry.md)")),
                ]),
            ])
            try HDF5File.write(image, to: path, options: options.hdf5, groups: hdf5Groups + [group])
        case .hdr:
            preconditionFailure("a Radiance picture has no standard deviation layer")
        }
    }
}
