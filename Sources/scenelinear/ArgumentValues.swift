import Analysis
import ArgumentParser
import Foundation
import SceneLinearKit

// The typed values of the options. Each is parsed once, when the command line is read; a
// value that does not parse is a usage error (exit 64) whose message quotes it:
// "The value 'x' is invalid for '--option <value>': <what is expected>".

extension EXRCompression: ExpressibleByArgument {}
extension CropMode: ExpressibleByArgument {}
extension DemosaicMethod: ExpressibleByArgument {}
extension ImageSource: ExpressibleByArgument {}
extension EXRPixelType: ExpressibleByArgument {}
extension EXRLayout: ExpressibleByArgument {}
extension HDF5SampleType: ExpressibleByArgument {}
extension FisheyeProjection: ExpressibleByArgument {}

/// `--exposure` takes the relative scalings only; absolute units are `--units`.
extension ExposureMode: ExpressibleByArgument {
    public init?(argument: String) {
        guard let mode = ExposureMode(rawValue: argument), !mode.isAbsolute else { return nil }
        self = mode
    }

    public static var allValueStrings: [String] { ["none", "baseline", "normalized"] }
}

extension RatioStatistic: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument {
        case "mean": self = .mean
        case "median": self = .median
        default: return nil
        }
    }

    public static var allValueStrings: [String] { ["mean", "median"] }
}

extension ValueUnits: ExpressibleByArgument {}

extension ColorChoice: ExpressibleByArgument {}

/// The quantity of a radiance ratio.
enum RatioQuantity: String, ExpressibleByArgument, CaseIterable {
    case y = "Y", r = "R", g = "G", b = "B"
}

/// `report --format`: html, markdown (or md) or pdf, in any case.
struct ReportFormatChoice: ExpressibleByArgument {
    var format: AnalysisReport.Format

    init?(argument: String) {
        let name = argument.lowercased()
        guard let format = AnalysisReport.Format(rawValue: name == "md" ? "markdown" : name) else { return nil }
        self.format = format
    }

    static var allValueStrings: [String] { AnalysisReport.Format.allCases.map(\.rawValue) }
    var defaultValueDescription: String { format.rawValue }
}

/// A frame (index from 0) taken through a filter.
struct FrameFilter {
    var frame: Int
    var filter: FilterFactor
}

/// A light source's spectral factor (`calibrate --spectral-factor`).
struct NamedSpectralFactor {
    var name: String
    var factor: CameraCalibration.SpectralFactor
}

/// The parsers of the values given as text, each throwing what is expected of the value.
enum ArgumentValue {
    /// `--white-balance`: as-shot (or asshot), d50, d55, d65, or a chromaticity x,y.
    static func whiteBalance(_ text: String) throws -> WhiteBalance {
        guard let balance = WhiteBalance(parsing: text) else {
            throw ValidationError("give as-shot, d50, d55, d65 or a chromaticity x,y (e.g. 0.3127,0.3290)")
        }
        return balance
    }

    /// `--filter-factor`: a transmittance or an optical density, with an optional ±u.
    static func filterFactor(_ text: String) throws -> FilterFactor {
        do { return try FilterFactor.parse(text) } catch { throw ValidationError(error.reason) }
    }

    /// `--frame-filter`: N=T[±u], a frame numbered from 1 and its filter's transmittance.
    static func frameFilter(_ text: String) throws -> FrameFilter {
        do {
            let (frame, filter) = try FilterFactor.parseFrame(text)
            return FrameFilter(frame: frame, filter: filter)
        } catch {
            throw ValidationError(error.reason)
        }
    }

    /// `--spectral-factor`: NAME=F[±u%] (u in percent; 0 when not given).
    static func spectralFactor(_ text: String) throws -> NamedSpectralFactor {
        guard let (name, factor) = CameraCalibration.SpectralFactor.parse(named: text) else {
            throw ValidationError("give NAME=F or NAME=F±u% (e.g. LED=0.93±2%): a light source's name and the positive factor K is multiplied by under it")
        }
        return NamedSpectralFactor(name: name, factor: factor)
    }

    /// `--circle`: x,y,r (pixels, r > 0) or auto.
    static func imageCircle(_ text: String) throws -> FisheyeCircle {
        guard let circle = FisheyeCircle(parsing: text) else {
            throw ValidationError("give x,y,r (the centre and radius in output pixels, r > 0) or auto")
        }
        return circle
    }

    /// A positive whole number with an optional K, M or G suffix: × `base`, base², base³.
    static func count(_ text: String, base: Int) throws -> Int {
        var digits = text.trimmingCharacters(in: .whitespaces)
        var factor = 1
        if let last = digits.last?.uppercased(), let power = ["K": 1, "M": 2, "G": 3][last] {
            digits.removeLast()
            factor = (0..<power).reduce(1) { r, _ in r * base }
        }
        guard let n = Int(digits), n > 0, n <= Int.max / factor else {
            throw ValidationError("give a positive whole number with an optional K, M or G suffix")
        }
        return n * factor
    }

    /// `--max-pixels`: K, M, G are 10³, 10⁶, 10⁹.
    static func pixelCount(_ text: String) throws -> Int { try count(text, base: 1000) }

    /// `--max-memory`: K, M, G are KiB, MiB, GiB.
    static func byteCount(_ text: String) throws -> Int { try count(text, base: 1024) }

    /// Comma-separated percentiles, each 0…100 (an empty text: none).
    static func percentiles(_ text: String) throws -> Percentiles {
        let values = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard values.allSatisfy({ $0 != nil && (0...100).contains($0!) }) else {
            throw ValidationError("give numbers between 0 and 100, comma-separated")
        }
        return Percentiles(values: values.map { $0! })
    }

    /// A percentage 0 ≤ p < 1000 (a trailing % allowed), as a fraction.
    static func percentage(_ text: String) throws -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "%", with: "")
        guard let v = Double(trimmed), v >= 0, v < 1000 else {
            throw ValidationError("give a percentage from 0 to 1000")
        }
        return v / 100
    }

    /// `--ratio`: numerator/denominator.
    static func ratio(_ text: String) throws -> RatioPair {
        let parts = text.split(separator: "/").map(String.init)
        guard parts.count == 2 else { throw ValidationError("give numerator/denominator") }
        return RatioPair(numerator: parts[0], denominator: parts[1])
    }

    /// `--region`: a region as `Region.parse` reads it.
    static func region(_ text: String) throws -> Region {
        do { return try Region.parse(text) } catch let e as AnalysisError { throw ValidationError(e.reason) }
    }

    /// `--format` of convert: comma-separated exr, hdf5 (or h5), hdr; repeats dropped.
    static func outputFormats(_ text: String) throws -> OutputFormats {
        var out: [OutputFormat] = []
        for name in text.split(separator: ",") {
            let key = name.trimmingCharacters(in: .whitespaces).lowercased()
            guard let f = OutputFormat(rawValue: key == "h5" ? "hdf5" : key) else {
                throw ValidationError("unknown format '\(name)' (use exr, hdf5, hdr)")
            }
            if !out.contains(f) { out.append(f) }
        }
        guard !out.isEmpty else { throw ValidationError("it names no format (use exr, hdf5, hdr)") }
        return OutputFormats(formats: out)
    }

    /// `--shard`: i/n with 0 ≤ i < n.
    static func shard(_ text: String) throws -> Shard {
        guard let shard = Shard.parse(text) else { throw ValidationError("give i/n with 0 ≤ i < n") }
        return shard
    }

    /// `--range`: low,high, finite, low < high.
    static func range(_ text: String) throws -> ClosedRange<Double> {
        let v = numbers(text)
        guard v.count == 2, v.allSatisfy(\.isFinite), v[0] < v[1] else {
            throw ValidationError("give low,high (finite numbers) with low < high")
        }
        return v[0]...v[1]
    }

    /// `--size`: WIDTHxHEIGHT, 16…20000 each.
    static func imageSize(_ text: String) throws -> ImageSize {
        let parts = text.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts.allSatisfy({ (16...20000).contains($0) }) else {
            throw ValidationError("give WIDTHxHEIGHT, 16...20000 each")
        }
        return ImageSize(width: parts[0], height: parts[1])
    }

    /// `--bracket`: comma-separated exposure offsets in stops, each within ±30.
    static func bracketStops(_ text: String) throws -> BracketStops {
        let stops = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !stops.isEmpty, stops.allSatisfy({ $0 != nil && $0!.isFinite && abs($0!) <= 30 }) else {
            throw ValidationError("give comma-separated exposure offsets in stops, each within ±30 (e.g. -4,0,4)")
        }
        return BracketStops(stops: stops.map { $0! })
    }

    /// The numbers of a comma-separated list (those that parse).
    private static func numbers(_ text: String) -> [Double] {
        text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    }
}

/// A ratio of two named regions (or patches).
struct RatioPair: Sendable, Equatable {
    var numerator: String
    var denominator: String
    var pair: (String, String) { (numerator, denominator) }
}

/// An image size in pixels.
struct ImageSize: Sendable, Equatable {
    var width: Int
    var height: Int
}

/// Percentiles to report (a list given as one value).
struct Percentiles: Sendable, Equatable {
    var values: [Double]
}

/// The output formats of convert, in the order given.
struct OutputFormats: Sendable, Equatable {
    var formats: [OutputFormat]
}

/// Exposure offsets of a simulated bracket, in stops.
struct BracketStops: Sendable, Equatable {
    var stops: [Double]
}
