import DNGContainer
import Foundation
import ImageCore

/// Which crop the output gets.
public enum CropMode: String, CaseIterable, Sendable, Codable {
    /// DefaultCropOrigin/Size (50719, 50720) and then DefaultUserCrop (51125): what the
    /// photographer framed.
    case user
    /// DefaultCropOrigin/Size only: the camera maker's usable image area.
    case `default`
    /// The whole ActiveArea.
    case none
}

/// The geometry of the output, decided from the DNG tags once, before any pixel moves.
///
/// Coordinates: `crop` is in pixels of the image the geometry is applied to (the Stage 3
/// image over the ActiveArea; half size after superpixel binning), top-left origin, before
/// orientation. Output coordinates — the ones users give regions in — are those of the final
/// image: after crop, scale and orientation.
public struct GeometryPlan: Sendable, Equatable {
    /// The kept rectangle of the input.
    public var crop: PixelRect
    /// Size after DefaultScale (before orientation).
    public var scaledWidth: Int
    public var scaledHeight: Int
    /// EXIF orientation applied (1 = none).
    public var orientation: Int
    public var cropMode: CropMode

    /// The output size after orientation.
    public var outputWidth: Int { Self.swapsAxes(orientation) ? scaledHeight : scaledWidth }
    public var outputHeight: Int { Self.swapsAxes(orientation) ? scaledWidth : scaledHeight }

    public static func swapsAxes(_ orientation: Int) -> Bool { orientation >= 5 && orientation <= 8 }

    /// Whether DefaultScale resamples the cropped image (else the plan only crops and turns,
    /// each output pixel a copy of one input pixel).
    public var resamples: Bool { crop.width != scaledWidth || crop.height != scaledHeight }

    /// The plan that changes nothing.
    public static func identity(width: Int, height: Int) -> GeometryPlan {
        GeometryPlan(crop: PixelRect(width: width, height: height), scaledWidth: width, scaledHeight: height,
                     orientation: 1, cropMode: .none)
    }

    /// The items recorded in every output's provenance.
    public var processingItems: [MetadataItem] {
        [MetadataItem("cropMode", .text(cropMode.rawValue)),
         MetadataItem("crop", .integers([crop.top, crop.left, crop.bottom, crop.right])),
         MetadataItem("scaledSize", .integers([scaledWidth, scaledHeight])),
         MetadataItem("orientation", .integer(orientation))]
    }
}

/// Why the geometry tags could not be used.
public struct GeometryError: SceneLinearFailure, Equatable {
    public let path: String
    public var file: String? { path }
    public let reason: String
    public var category: FailureCategory { .corruptData }
    public var description: String { "\(path): invalid crop or scale tags: \(reason)" }
}

/// DefaultCrop, DefaultUserCrop, DefaultScale and Orientation (DNG 1.7.1, tags 50718–50720,
/// 51125, 274).
public enum ImageGeometry {
    /// Works out the output geometry.
    ///
    /// - Parameters:
    ///   - ifd: the raw IFD (its crop and scale tags are relative to the ActiveArea, in raw pixels).
    ///   - orientation: IFD 0's Orientation, 1–8 (others are treated as 1).
    ///   - width, height: the size of the image the plan applies to (the ActiveArea, or half of it
    ///     after superpixel binning).
    ///   - binning: 1, or 2 for a half-size (superpixel) image: crop tags are divided by it.
    ///   - crop: which crop to apply; `applyOrientation`: whether to rotate/mirror.
    /// - Throws: `GeometryError` when the crop lies outside the image or is empty.
    public static func plan(ifd: ImageIFD, orientation: Int, width: Int, height: Int, binning: Int = 1,
                            crop mode: CropMode = .user, applyOrientation: Bool = true, path: String) throws -> GeometryPlan {
        var crop = PixelRect(width: width, height: height)
        var sx = 1.0, sy = 1.0
        if mode != .none {
            let origin = ifd.defaultCropOrigin ?? [0, 0]
            let size = ifd.defaultCropSize ?? [Double(ifd.activeArea.width), Double(ifd.activeArea.height)]
            guard origin.count == 2, size.count == 2, origin.allSatisfy({ $0 >= 0 }), size.allSatisfy({ $0 > 0 }) else {
                throw GeometryError(path: path, reason: "DefaultCropOrigin \(origin) / DefaultCropSize \(size)")
            }
            let b = Double(binning)
            let left = Int((origin[0] / b).rounded()), top = Int((origin[1] / b).rounded())
            let right = min(width, left + Int((size[0] / b).rounded())), bottom = min(height, top + Int((size[1] / b).rounded()))
            crop = PixelRect(top: top, left: left, bottom: bottom, right: right)
            guard !crop.isEmpty, PixelRect(width: width, height: height).contains(crop) else {
                throw GeometryError(path: path, reason: "the default crop \(crop) is empty or outside the \(width)×\(height) image")
            }
            if mode == .user, let user = ifd.defaultUserCrop {
                guard user.count == 4, user[0] >= 0, user[1] >= 0, user[2] <= 1, user[3] <= 1, user[0] < user[2], user[1] < user[3] else {
                    throw GeometryError(path: path, reason: "DefaultUserCrop \(user) is not within 0...1 with top < bottom, left < right")
                }
                let w = Double(crop.width), h = Double(crop.height)
                crop = PixelRect(top: crop.top + Int((user[0] * h).rounded()), left: crop.left + Int((user[1] * w).rounded()),
                                 bottom: crop.top + Int((user[2] * h).rounded()), right: crop.left + Int((user[3] * w).rounded()))
                guard !crop.isEmpty else { throw GeometryError(path: path, reason: "DefaultUserCrop leaves no pixels") }
            }
            if let scale = ifd.defaultScale {
                guard scale.count == 2, scale.allSatisfy({ $0 > 0 && $0 <= 16 }) else {
                    throw GeometryError(path: path, reason: "DefaultScale \(scale)")
                }
                sx = scale[0]
                sy = scale[1]
            }
        }
        let o = applyOrientation && (1...8).contains(orientation) ? orientation : 1
        return GeometryPlan(crop: crop, scaledWidth: max(1, Int((Double(crop.width) * sx).rounded())),
                            scaledHeight: max(1, Int((Double(crop.height) * sy).rounded())), orientation: o, cropMode: mode)
    }

    /// Applies `plan` to an image of `channels` interleaved samples: crop, resample to the
    /// scaled size (bilinear, only when DefaultScale is not 1), then orientation.
    public static func apply<T: BinaryFloatingPoint & Sendable>(_ plan: GeometryPlan, to image: ImageBuffer<T>) -> ImageBuffer<T> {
        var out = crop(image, to: plan.crop)
        if out.width != plan.scaledWidth || out.height != plan.scaledHeight {
            out = resample(out, width: plan.scaledWidth, height: plan.scaledHeight)
        }
        return orient(out, plan.orientation)
    }

    /// Applies `plan` to a per-pixel mask: crop, nearest-neighbour scale, orientation.
    public static func apply(_ plan: GeometryPlan, toMask mask: ImageBuffer<UInt8>) -> ImageBuffer<UInt8> {
        var out = crop(mask, to: plan.crop)
        if out.width != plan.scaledWidth || out.height != plan.scaledHeight {
            let w = plan.scaledWidth, h = plan.scaledHeight
            var samples = [UInt8](repeating: 0, count: w * h * out.channels)
            for y in 0..<h {
                let sy = min(out.height - 1, y * out.height / h)
                for x in 0..<w {
                    let sx = min(out.width - 1, x * out.width / w)
                    for c in 0..<out.channels { samples[(y * w + x) * out.channels + c] = out[sy, sx, c] }
                }
            }
            out = ImageBuffer(width: w, height: h, channels: out.channels, samples: samples)
        }
        return orient(out, plan.orientation)
    }

    /// Applies `plan` to a scene-linear image, its clip mask and its semantic masks, and records it.
    public static func apply(_ plan: GeometryPlan, to image: SceneLinearImage) -> SceneLinearImage {
        guard plan != .identity(width: image.width, height: image.height) else {
            var same = image
            same.provenance.processing += plan.processingItems
            return same
        }
        let pixels = apply(plan, to: image.pixels)
        let mask = image.clipMask.map {
            apply(plan, toMask: ImageBuffer(width: image.width, height: image.height, channels: 1, samples: $0)).samples
        }
        var provenance = image.provenance
        provenance.processing += plan.processingItems
        // Semantic masks share the image's grid, so they take the same crop, scale and orientation.
        let masks = image.masks.map { layer -> SemanticMaskLayer in
            var moved = layer
            moved.values = apply(plan, to: layer.values)
            return moved
        }
        return SceneLinearImage(pixels: pixels, clipMask: mask, encoding: image.encoding, exposure: image.exposure,
                                provenance: provenance, masks: masks)
    }

    static func crop<T>(_ image: ImageBuffer<T>, to rect: PixelRect) -> ImageBuffer<T> {
        if rect == PixelRect(width: image.width, height: image.height) { return image }
        let c = image.channels
        var samples: [T] = []
        samples.reserveCapacity(rect.width * rect.height * c)
        for y in rect.top..<rect.bottom {
            let start = (y * image.width + rect.left) * c
            samples.append(contentsOf: image.samples[start..<(start + rect.width * c)])
        }
        return ImageBuffer(width: rect.width, height: rect.height, channels: c, samples: samples)
    }

    /// Bilinear resampling with pixel centres aligned ((x + 0.5) · in / out − 0.5).
    static func resample<T: BinaryFloatingPoint & Sendable>(_ image: ImageBuffer<T>, width: Int, height: Int) -> ImageBuffer<T> {
        let c = image.channels
        var samples = [T](repeating: 0, count: width * height * c)
        let fx = Double(image.width) / Double(width), fy = Double(image.height) / Double(height)
        for y in 0..<height {
            let syf = max(0, min(Double(image.height - 1), (Double(y) + 0.5) * fy - 0.5))
            let y0 = Int(syf), y1 = min(image.height - 1, y0 + 1), wy = syf - Double(y0)
            for x in 0..<width {
                let sxf = max(0, min(Double(image.width - 1), (Double(x) + 0.5) * fx - 0.5))
                let x0 = Int(sxf), x1 = min(image.width - 1, x0 + 1), wx = sxf - Double(x0)
                for ch in 0..<c {
                    let a = Double(image[y0, x0, ch]) * (1 - wx) + Double(image[y0, x1, ch]) * wx
                    let b = Double(image[y1, x0, ch]) * (1 - wx) + Double(image[y1, x1, ch]) * wx
                    samples[(y * width + x) * c + ch] = T(a * (1 - wy) + b * wy)
                }
            }
        }
        return ImageBuffer(width: width, height: height, channels: c, samples: samples)
    }

    /// Where pixel (x, y) of a `width` × `height` image lands once rotated/mirrored by EXIF
    /// `orientation` (1–8).
    @inline(__always)
    public static func orientedPosition(x: Int, y: Int, width w: Int, height h: Int, orientation: Int) -> (x: Int, y: Int) {
        switch orientation {
        case 1: return (x, y)
        case 2: return (w - 1 - x, y)
        case 3: return (w - 1 - x, h - 1 - y)
        case 4: return (x, h - 1 - y)
        case 5: return (y, x)
        case 6: return (h - 1 - y, x)
        case 7: return (h - 1 - y, w - 1 - x)
        default: return (y, w - 1 - x) // 8
        }
    }

    /// Rotates/mirrors by EXIF orientation (TIFF tag 274): the result is the image as it
    /// should be displayed.
    public static func orient<T>(_ image: ImageBuffer<T>, _ orientation: Int) -> ImageBuffer<T> {
        guard orientation != 1 else { return image }
        let w = image.width, h = image.height, c = image.channels
        let swap = GeometryPlan.swapsAxes(orientation)
        let ow = swap ? h : w, oh = swap ? w : h
        var samples = image.samples // same count; every slot is overwritten below
        image.samples.withUnsafeBufferPointer { src in
            samples.withUnsafeMutableBufferPointer { dst in
                for y in 0..<h {
                    for x in 0..<w {
                        let (nx, ny) = orientedPosition(x: x, y: y, width: w, height: h, orientation: orientation)
                        let from = (y * w + x) * c, to = (ny * ow + nx) * c
                        for ch in 0..<c { dst[to + ch] = src[from + ch] }
                    }
                }
            }
        }
        return ImageBuffer(width: ow, height: oh, channels: c, samples: samples)
    }
}
