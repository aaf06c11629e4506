"""Merging brackets, illuminance at a fisheye camera, and simulated captures with known truth."""
import ctypes
import json
import os
from dataclasses import dataclass, field
from typing import Optional

from . import _native, errors
from .image import DEVELOP_OPTIONS, Image, _path_option, circle_spec, develop_options

MERGE_OPTIONS = ("reference", "ratio_tolerance", "saturation", "unchecked_ratios", "align", "align_range", "max_disagreement",
                 "frame_filters")


def merge(frames, **options):
    """Merges raw frames of one scene (a bracket, DNG paths) into an Image in memory, as
    `scenelinear merge` does: noise-optimal weights from each frame's NoiseProfile, clipped
    samples left out, exposure ratios checked on the pixels. The Image's `std()` is each
    pixel's standard deviation, its `clip_mask` the pixels clipped in every frame (lower
    bounds), `frames` the frames each pixel used and `merge_report` the report. Options: the
    develop options and reference (numbered from 1), ratio_tolerance (percent), saturation,
    unchecked_ratios, align, align_range, max_disagreement (percent), frame_filters (frames
    behind a filter: {frame number from 1: transmittance}, e.g. {1: "ND3±0.02"}, or the
    command line's "N=T" texts) and filter_factor (a filter in front of every frame)."""
    paths = [os.fspath(f) for f in frames]
    filters = options.get("frame_filters")
    if isinstance(filters, dict):
        options["frame_filters"] = [f"{int(n)}={t}" for n, t in filters.items()]
    unknown = sorted(set(options) - set(DEVELOP_OPTIONS) - set(MERGE_OPTIONS))
    if unknown:
        raise errors.UsageError(f"unknown option {unknown[0]!r}", 64)
    develop = develop_options({k: v for k, v in options.items() if k in DEVELOP_OPTIONS})
    request = {**develop, **{k: v for k, v in options.items() if k in MERGE_OPTIONS and v is not None}}
    handle = ctypes.c_void_p()
    _native.call("sl_merge", json.dumps(paths).encode(), _native.options_json(request), ctypes.byref(handle))
    image = Image._from_handle(handle, "merge of " + ", ".join(paths), "merge", develop)
    return image


@dataclass(frozen=True)
class Illuminance:
    """Illuminance at a fisheye camera (lux) with its standard uncertainty and 95 % interval;
    kind "lower-bound" when clipped pixels make it one (only `low95` then), with
    `lower_bound_share` the share of the value in those pixels."""
    file: str
    value: float
    kind: str
    standard_uncertainty: Optional[float]
    low95: Optional[float]
    high95: Optional[float]
    noise_uncertainty: Optional[float]
    scale_relative_uncertainty: Optional[float]
    lower_bound_share: float
    pixels: int
    solid_angle: float
    lens: dict
    document: dict = field(repr=False, compare=False)
    stray_light: Optional[dict] = None


def _illuminance(r):
    return Illuminance(file=r["file"], value=r["illuminance"], kind=r["kind"], standard_uncertainty=r.get("standardUncertainty"),
                       low95=r.get("low95"), high95=r.get("high95"), noise_uncertainty=r.get("noiseUncertainty"),
                       scale_relative_uncertainty=r.get("scaleRelativeUncertainty"), lower_bound_share=r.get("lowerBoundShare", 0.0),
                       pixels=r["pixels"], solid_angle=r["solidAngle"], lens=r["lens"], document=r, stray_light=r.get("strayLight"))


def illuminance(inputs, projection, fov=None, circle=None, stray_light=None, stray_light_angle=None, bright_source=None, **options):
    """E_v = Σ L · cos θ · ω over a circular fisheye image (`scenelinear illuminance`), in lux:
    `projection` (equidistant, equisolid, orthographic, stereographic), `fov` (degrees,
    default 180), `circle` ("x,y,r", (x, y, r) or "auto"); DNGs are developed in cd/m² (relative
    units are taken as luminance, as on the command line) or with `units="radiance"`.
    `stray_light` (percent), `stray_light_angle` (degrees), `bright_source` (× the median): the
    lens's stated stray light, as `--stray-light` (the result's `stray_light` dict). One
    Illuminance, or a list for a list of inputs."""
    single = isinstance(inputs, (str, os.PathLike))
    paths = [os.fspath(inputs)] if single else [os.fspath(p) for p in inputs]
    request = {**develop_options(options), "projection": projection, "fov": fov, "circle": circle_spec(circle),
               "stray_light": stray_light, "stray_light_angle": stray_light_angle, "bright_source": bright_source}
    text = _native.call_for_string("sl_illuminance", json.dumps(paths).encode(), _native.options_json(request))
    results = [_illuminance(r) for r in json.loads(text)["results"]]
    return results[0] if single else results


@dataclass(frozen=True)
class SimulatedCapture:
    """A simulated capture: its DNG frames, its truth files by role (truth-exr, truth-hdf5,
    expected-hdf5, record) and the truth record (scene, camera, patches)."""
    frames: tuple
    files: dict
    record: dict

    @property
    def dng(self):
        return self.frames[0]

    def truth(self):
        """The true scene-linear image (float32 (height, width, 3), in the decoder's output
        units of the reference exposure), from the truth EXR."""
        with Image(self.files["truth-exr"]) as img:
            return img.image()


def simulate(scene="grey-ramp", output=".", seed=None, size=(1024, 768), layout=None, noise=None, exposure_time=None,
             iso=None, bracket=None, name=None, capture_time=None, frame_filters=None):
    """Simulates a capture of `scene` (a built-in name, a scene .json, or a radiance map) with
    the project's camera model (`scenelinear simulate`), written into `output`: a DNG (or a
    bracket, `bracket` = stops, with `frame_filters` {frame number from 1: transmittance}
    photographed through a filter) and its truth. Returns a SimulatedCapture."""
    width, height = size
    if isinstance(frame_filters, dict):
        frame_filters = [f"{int(n)}={t}" for n, t in frame_filters.items()]
    request = {"scene": os.fspath(scene), "output": os.fspath(output), "seed": seed, "width": width, "height": height,
               "layout": layout, "noise": noise, "exposure_time": exposure_time, "iso": iso,
               "bracket": list(bracket) if bracket is not None else None, "name": name,
               "capture_time": capture_time, "frame_filters": frame_filters}
    document = json.loads(_native.call_for_string("sl_simulate", _native.options_json(request)))
    record_path = document["files"].get("record")
    record = json.load(open(record_path)) if record_path and os.path.exists(record_path) else {}
    return SimulatedCapture(tuple(document["frames"]), document["files"], record)


@dataclass(frozen=True)
class Calibration:
    """A camera's luminance calibration: K (`constant`, cd/m² per linear value at unit
    exposure) with its relative standard uncertainty (the fit's, inflated by the Birge ratio
    when the references scatter, and the meter's), the camera it was made with, and each
    reference. `document` is the calibration file's content (schema scenelinear.calibration/1);
    `write(path)` saves it for `calibration=` of the other functions."""
    constant: float
    relative_uncertainty: float
    fit_relative_uncertainty: float
    meter_relative_uncertainty: float
    birge_ratio: Optional[float]
    camera: dict
    references: tuple
    document: dict = field(repr=False, compare=False)
    text: str = field(repr=False, compare=False, default="")

    def write(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.text)


@dataclass(frozen=True)
class LensCalibration:
    """A lens's vignetting per camera channel (`scenelinear calibrate-lens`): V_c(r) = 1 + a1 r²
    + a2 r⁴ + a3 r⁶ in the image radius r (relative to the half-diagonal). `coefficients` per
    channel R, G, B, `covariance` (3×3 each), `residual_rms`, `f_number`, `camera`; `document`
    is the file's content (schema scenelinear.lens/1); `transmission(r)` gives V of each
    channel; `write(path)` saves it for `lens=` of the other functions."""
    coefficients: tuple
    covariance: tuple
    residual_rms: tuple
    f_number: float
    camera: dict
    document: dict
    text: str

    def transmission(self, r):
        """V_c(r) for each channel, at r (a number or an array): an array (..., 3)."""
        import numpy as np
        r2 = np.asarray(r, dtype=np.float64)[..., None] ** 2
        a = np.asarray(self.coefficients)
        return 1 + r2 * (a[:, 0] + r2 * (a[:, 1] + r2 * a[:, 2]))

    def write(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.text)


def calibrate_lens(flats, cells=None, max_residual=None, center=None, threads=None, sweep=False):
    """Fits the vignetting of the lens that took `flats` (flat-field DNGs; with `sweep=True`,
    captures of one small target at several positions across the field), as `scenelinear
    calibrate-lens [--sweep]` (docs/lens.md). `max_residual` in percent; `center` (x, y)
    relative to the image. Returns a LensCalibration."""
    options = {"cells": cells, "max_residual": max_residual, "center": list(center) if center is not None else None,
               "threads": threads, "method": "sweep" if sweep else None}
    text = _native.call_for_string("sl_calibrate_lens", json.dumps([os.fspath(f) for f in flats]).encode(),
                                   _native.options_json(options))
    d = json.loads(text)
    return LensCalibration(coefficients=tuple(tuple(c) for c in d["falloff"]["coefficients"]),
                           covariance=tuple(tuple(c) for c in d["covariance"]), residual_rms=tuple(d["residualRMS"]),
                           f_number=d["fNumber"], camera=d["camera"], document=d, text=text)


def calibrate(references, meter_uncertainty=2.9, projection=None, fov=None, circle=None, demosaic=None, threads=None,
              light_source=None, spectral_factors=None, lens=None, allow_other_lens=None):
    """Fits a camera's calibration constant K to reference luminances (`scenelinear
    calibrate`). `references`: dicts with `photo` and either `region` (a spec string or a
    (top, left, bottom, right) tuple) and `luminance` (cd/m², a spot meter's, or a grey
    card's ρ·E/π), or `illuminance_vertical` (lux at a fisheye's lens, with `projection`);
    `relative_uncertainty` (fraction, default 0.01) and `method` optional.
    `meter_uncertainty`: the meter's shared calibration uncertainty, percent. `light_source`:
    what the references were lit by; `spectral_factors`: factors for other kinds of light,
    {name: factor} or {name: (factor, relative uncertainty)} or the command line's
    "NAME=F±u%" texts (measurements pick one with light_source=). `lens`: a lens calibration
    whose vignetting is divided out of the references first (as measurements take it)."""
    if isinstance(spectral_factors, dict):
        spectral_factors = [f"{name}={v[0]}±{100 * v[1]}%" if isinstance(v, (tuple, list)) else f"{name}={v}"
                            for name, v in spectral_factors.items()]
    from .measure import region_specs
    items = []
    for r in references:
        item = {k: (os.fspath(v) if k == "photo" else v) for k, v in r.items()}
        if isinstance(item.get("region"), (tuple, list)):
            item["region"] = region_specs({"reference": item["region"]})[0]
        elif isinstance(item.get("region"), str) and "=" not in item["region"]:
            item["region"] = "reference=" + item["region"]
        items.append(item)
    options = {"meter_uncertainty": meter_uncertainty, "projection": projection, "fov": fov, "circle": circle_spec(circle),
               "demosaic": demosaic, "threads": threads, "light_source": light_source, "spectral_factors": spectral_factors,
               "lens": _path_option("lens", lens) if lens is not None else None, "allow_other_lens": allow_other_lens}
    text = _native.call_for_string("sl_calibrate", json.dumps(items).encode(), _native.options_json(options))
    d = json.loads(text)
    return Calibration(constant=d["constant"], relative_uncertainty=d["relativeUncertainty"],
                       fit_relative_uncertainty=d["fitRelativeUncertainty"], meter_relative_uncertainty=d["meterRelativeUncertainty"],
                       birge_ratio=d.get("birgeRatio"), camera=d["camera"], references=tuple(d["references"]), document=d, text=text)
