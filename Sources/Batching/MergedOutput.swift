import Engine
import Foundation
import ImageCore
import Measuring
import Reporting
import Merging

/// A merged bracket written in its format — what `merge -o` and a study's kept sets write:
/// EXR with a standard deviation channel per colour and `merge_frames`, HDF5 with `/merge`
/// (and `/fisheye` for a fisheye), a Radiance picture with its lower bounds (a fisheye's square
/// picture with its view).
public struct MergedOutput: Sendable {
    public var exrType: EXRPixelType = .float
    public var exrLayout: EXRLayout = .flat
    public var hdf5Type: HDF5SampleType = .float32

    public init() {}

    /// Writes `merged` (its standard deviations are moved out into the file) and returns the
    /// picture's lower bounds for `.hdr`.
    public func write(_ merged: inout MergedBracket, format: OutputFormat, to path: String, lens: FisheyeLens?) throws -> RadianceLowerBounds? {
        switch format {
        case .exr:
            try writeEXR(&merged, to: path)
        case .hdf5:
            var groups = [Self.mergeGroup(merged)]
            if let lens { groups.append(Pipeline.fisheyeGroup(FisheyeGeometry(lens: lens, width: merged.image.width, height: merged.image.height))) }
            var options = HDF5Options()
            options.sampleType = hdf5Type
            try HDF5File.write(merged.image, to: path, options: options, groups: groups)
        case .hdr:
            if let lens { return try Pipeline.writeFisheyeRadiance(merged.image, lens: lens, to: path) }
            return try RadianceFile.write(merged.image, to: path)
        }
        return nil
    }

    /// The EXR: R, G, B, the clip mask, a standard deviation channel per colour and merge_frames.
    func writeEXR(_ merged: inout MergedBracket, to path: String) throws {
        let n = merged.image.width * merged.image.height
        var options = EXROptions()
        options.pixelType = exrType
        options.layout = exrLayout
        var channels = EXRAuxiliaryChannel.standardDeviations(merged.standardDeviation.samples, pixels: n, layout: exrLayout)
        // The interleaved deviations are freed once split into their channels.
        merged.standardDeviation.samples = []
        let frames = merged.frames
        channels.append(EXRAuxiliaryChannel(name: "merge_frames",
                                            values: LargeBuffer.make(Float.self, count: n) { range, out in
                                                for i in range { out[i] = Float(frames[i]) }
                                            }))
        do {
            try EXRFile.write(merged.image, to: path, options: options, auxiliary: channels)
        } catch is HalfRangeError {
            throw OutputError(path: path, reason: "values beyond half's range (65504): write --exr-type float")
        }
    }

    /// `/merge`: the standard deviations and frame counts on the image's dimensions.
    public static func mergeGroup(_ merged: MergedBracket) -> HDF5Group {
        let image = merged.image
        return HDF5Group(name: "merge", attributes: [
            MetadataItem("description", .text("merge of \(merged.report.frames.count) raw frames; /clip_mask marks lower bounds (clipped in every frame)")),
            MetadataItem("reference_frame", .integer(merged.report.reference + 1)),
        ], datasets: [
            HDF5Dataset(imageLayer: "std", width: image.width, height: image.height, channels: 3, values: .floats(merged.standardDeviation.samples),
                        attributes: [MetadataItem("description", .text("standard deviation of each channel of /image (noise), same units"))]),
            HDF5Dataset(imageLayer: "frames", width: image.width, height: image.height, values: .bytes(merged.frames),
                        attributes: [MetadataItem("description", .text("frames used by the pixel's least-covered channel (0: lower bound)"))]),
        ])
    }
}
