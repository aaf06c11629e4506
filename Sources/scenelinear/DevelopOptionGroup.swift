import ArgumentParser
import SceneLinearKit

/// `--demosaic`, of every command that develops CFA images.
struct DemosaicOption: ParsableArguments {
    @Option(help: "CFA demosaicing of DNG inputs: rcd (edge-aware, the default), bilinear, or superpixel (2×2 binning to half size, no interpolated values: the choice for radiometry). merge's standard deviations are exact for superpixel and LinearRaw images, upper bounds for interpolated channels.")
    var demosaic: DemosaicMethod = Demosaicer.defaultMethod

    func apply(to options: inout DevelopOptions) {
        options.demosaic = demosaic
    }
}

/// `--exposure`, the relative scaling of convert, merge and the analysis commands.
struct ExposureOption: ParsableArguments {
    @Option(help: "Exposure scaling of relative values from DNGs: none (1.0 = sensor white; for merge, the reference frame's units), baseline (× 2^(BaselineExposure + BaselineExposureOffset), of the reference frame for merge) or normalized (× f-number² / (exposure time · ISO/100): proportional to scene radiance; not for merge). Absolute units are --units.")
    var exposure: ExposureMode = .none
}

/// `--source`: the raw or the enhanced image of a DNG.
struct SourceImageOption: ParsableArguments {
    @Option(help: "Image of a DNG to develop or measure: raw (the main raw image) or enhanced (the DNG 1.6 enhanced image, NewSubFileType 16, where the file has one, else the raw image, noted in the output; it has no NoiseProfile, so its measurements have no uncertainties).")
    var source: ImageSource = .raw
}

/// How convert and merge develop their image: colour, crop, orientation, demosaicing and
/// exposure scaling.
struct DevelopOptionGroup: ParsableArguments {
    @Option(help: "Output colour (all linear, scene-referred, never clipped): rec2020 (Rec.2020, D65; lin_rec2020_scene), acescg (ACES AP1; lin_ap1_scene), aces2065-1 (ACES AP0; lin_ap0_scene), rec709 (Rec.709/sRGB primaries, D65; lin_rec709_scene), xyz-d65 (CIE XYZ, D65 white; lin_ciexyzd65_scene) or camera (white-balanced camera RGB, no matrix).")
    var color: ColorChoice = .rec2020

    @Option(help: "Crop: user (DefaultCrop then DefaultUserCrop), default (DefaultCrop only) or none (the whole ActiveArea).")
    var crop: CropMode = .user

    @Flag(help: "Keep the sensor orientation instead of rotating/mirroring by the Orientation tag.")
    var noOrientation = false

    @OptionGroup var demosaicOption: DemosaicOption

    @OptionGroup var exposureOption: ExposureOption

    var exposure: ExposureMode { exposureOption.exposure }

    /// Sets colour, crop, orientation and demosaicing (the exposure goes through `UnitOptions`).
    func apply(to options: inout DevelopOptions) {
        options.encoding = color.encoding
        options.crop = crop
        options.applyOrientation = !noOrientation
        demosaicOption.apply(to: &options)
    }
}
