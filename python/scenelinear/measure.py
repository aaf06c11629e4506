"""Measurements: statistics, histograms and radiance ratios of regions, as typed results.

Each function runs the same measurement as the command line (`scenelinear stats`,
`histogram`, `ratio`) in-process and returns its `--json` document (schema
scenelinear.analysis/1) as dataclasses: every number is the document's, to the last bit;
`FileResult.document` keeps the document itself.
"""
import ctypes
import json
import os

import numpy as np
from dataclasses import dataclass, field
from typing import Optional

from . import _native, errors
from .image import DEVELOP_OPTIONS, Image, develop_options

Z95 = 1.959963984540054


@dataclass(frozen=True)
class BudgetItem:
    """One line of an uncertainty budget: a relative standard uncertainty (k = 1) and where it comes from."""
    name: str
    relative: float
    note: str


@dataclass(frozen=True)
class Estimate:
    """A statistic with its uncertainty.

    kind: "value", "lower-bound" (clipped pixels: the truth is at least the value),
    "upper-bound", "undetermined" or "clipping-unknown". standard_uncertainty is k = 1;
    low95/high95 the 95 % interval (a bound has only its one end, None for the other). With
    absolute units the interval and budget are the command line's budget (noise and the
    scale's uncertainty); in relative units the interval is value ± 1.96 standard errors
    (noise only), None without a NoiseProfile.
    """
    value: float
    kind: str
    standard_uncertainty: Optional[float]
    low95: Optional[float]
    high95: Optional[float]
    budget: tuple = ()
    not_included: tuple = ()

    @property
    def is_bound(self):
        return self.kind in ("lower-bound", "upper-bound")


@dataclass(frozen=True)
class Percentile:
    percentile: float
    value: float
    kind: str


@dataclass(frozen=True)
class ChannelStatistics:
    """Statistics of one quantity (R, G, B or luminance Y) over a region."""
    quantity: str
    count: int
    weight: float
    mean: Estimate
    median: Estimate
    minimum: Estimate
    maximum: Estimate
    standard_deviation: Estimate
    percentiles: tuple


@dataclass(frozen=True)
class Histogram:
    """Counts per bin (`edges` has one more entry than each count list), and what fell outside the bins."""
    scale: str
    edges: tuple
    counts: dict
    below: dict
    above: dict
    zero: dict
    negative: dict
    clipped: int
    pixels: int


@dataclass(frozen=True)
class DynamicRange:
    kind: str
    robust_stops: Optional[float]
    stops_above_noise_floor: Optional[float]
    noise_floor: Optional[float]
    low_percentile: float
    high_percentile: float


@dataclass(frozen=True)
class RegionResult:
    name: str
    pixels: int
    clipped_pixels: int
    negative_pixels: int
    non_finite_pixels: int
    channels: dict
    dynamic_range: DynamicRange
    histogram: Optional[Histogram]
    mean_from_raw_sites: bool

    @property
    def Y(self):
        """Luminance (or relative luminance) statistics."""
        return self.channels["Y"]


@dataclass(frozen=True)
class Ratio:
    """A radiance ratio numerator / denominator with its 95 % interval (kind says when it is a bound)."""
    numerator: str
    denominator: str
    quantity: str
    statistic: str
    value: Optional[float]
    kind: str
    relative_standard_error: Optional[float]
    low95: Optional[float]
    high95: Optional[float]
    explanation: str


@dataclass(frozen=True)
class FileResult:
    """The measurements of one file."""
    file: str
    width: int
    height: int
    color_space: str
    units: str
    exposure_scaling: str
    exposure_factor: float
    scale_source: Optional[str]
    scale_relative_uncertainty: Optional[float]
    noise_model: bool
    noise_source: Optional[str]
    regions: dict
    ratios: tuple
    document: dict = field(repr=False, compare=False)

    def __getitem__(self, name):
        return self.regions[name]


def _estimate(channel, stat, budget=None):
    value = channel.get(stat)
    kind = channel.get(stat + "Kind", channel.get("kind", "value")) if stat != "mean" else channel.get("kind", "value")
    if budget is not None:
        return Estimate(budget["value"], budget["kind"], budget["standardUncertainty"], budget.get("low95"), budget.get("high95"),
                        tuple(BudgetItem(i["name"], i["relative"], i["note"]) for i in budget["items"]),
                        tuple(budget["notIncluded"]))
    se = channel.get(stat + "StandardError")
    low = high = None
    if se is not None and value is not None and kind != "undetermined":
        if kind != "upper-bound":
            low = value - Z95 * se
        if kind != "lower-bound":
            high = value + Z95 * se
    return Estimate(value, kind, se, low, high)


def _channel(q, c, budgets):
    def budget(stat):
        for b in budgets or ():
            if b["quantity"] == q and b["statistic"] == stat:
                return b
        return None
    return ChannelStatistics(
        quantity=q, count=c["count"], weight=c["weight"],
        mean=_estimate(c, "mean", budget("mean")), median=_estimate(c, "median", budget("median")),
        minimum=_estimate(c, "minimum"), maximum=_estimate(c, "maximum"),
        standard_deviation=_estimate(c, "standardDeviation"),
        percentiles=tuple(Percentile(p["percentile"], p["value"], p["kind"]) for p in c.get("percentiles", [])))


def _region(r):
    m = r["measurement"]
    d = r["dynamicRange"]
    h = r.get("histogram")
    histogram = None
    if h is not None:
        histogram = Histogram(h["scale"], tuple(h["edges"]), h["counts"], h["below"], h["above"], h["zero"], h["negative"],
                              h["clipped"], h["pixels"])
    return RegionResult(
        name=r["name"], pixels=m["pixels"], clipped_pixels=m["clippedPixels"], negative_pixels=m["negativePixels"],
        non_finite_pixels=r.get("nonFinitePixels", 0),
        channels={q: _channel(q, c, r.get("budgets")) for q, c in m["channels"].items()},
        dynamic_range=DynamicRange(d["kind"], d.get("robustStops"), d.get("stopsAboveNoiseFloor"), d.get("noiseFloor"),
                                   d["lowPercentile"], d["highPercentile"]),
        histogram=histogram, mean_from_raw_sites=r.get("meanFromRawSites", False))


def _ratio(r):
    return Ratio(r["numerator"], r["denominator"], r["quantity"], r["statistic"], r.get("ratio"), r["kind"],
                 r.get("relativeStandardError"), r.get("low95"), r.get("high95"), r.get("explanation", ""))


def file_result(f):
    """A FileResult from one entry of a scenelinear.analysis/1 document (raises for an entry with an error)."""
    if f.get("error"):
        raise errors.from_category(f.get("errorCategory", "internal-error"), f["error"])
    return FileResult(
        file=f["file"], width=f["width"], height=f["height"], color_space=f["colorSpace"], units=f["units"],
        exposure_scaling=f["exposureScaling"], exposure_factor=f["exposureFactor"], scale_source=f.get("scaleSource"),
        scale_relative_uncertainty=f.get("scaleRelativeUncertainty"), noise_model=f["noiseModel"],
        noise_source=f.get("noiseSource"), regions={r["name"]: _region(r) for r in f["regions"]},
        ratios=tuple(_ratio(r) for r in f["ratios"]), document=f)


def region_specs(regions):
    """Regions as the command line writes them: "name=spec" strings, or a dict of name →
    spec, the spec a 2-D array (booleans or weights 0…1: measured on the developed pixels,
    see `stats`), a string ("10%,10%,30%,50%", "mask:sky", "poly:x1,y1,...") or a
    (top, left, bottom, right) tuple of whole pixels (rows top to bottom − 1, columns left to
    right − 1, as on the command line and in numpy slices)."""
    if regions is None:
        return []
    if isinstance(regions, str):
        regions = [regions]
    if isinstance(regions, dict):
        out = []
        for name, spec in regions.items():
            if isinstance(spec, (tuple, list)):
                if len(spec) != 4 or not all(isinstance(v, int) for v in spec):
                    raise errors.UsageError(f"region {name!r}: give (top, left, bottom, right) in whole pixels, not {spec!r}", 64)
                spec = ",".join(str(v) for v in spec)
            out.append(f"{name}={spec}")
        return out
    return [str(r) for r in regions]


def _inputs(inputs):
    """Paths (str, PathLike, Image opened from a file, or a list of them) and the develop options an Image was opened with."""
    single = isinstance(inputs, (str, os.PathLike, Image))
    items = [inputs] if single else list(inputs)
    paths, options = [], None
    for item in items:
        if isinstance(item, Image):
            paths.append(item.path)
            if options is not None and options != item.options:
                raise errors.UsageError("images opened with different options cannot be measured in one call", 64)
            options = item.options
        else:
            paths.append(os.fspath(item))
    return single, paths, options or {}


def _split_develop(options):
    """The develop options, and the rest (the measurement's)."""
    develop = {k: v for k, v in options.items() if k in DEVELOP_OPTIONS}
    return develop, {k: v for k, v in options.items() if k not in DEVELOP_OPTIONS}


def _is_radiance(path):
    """A Radiance picture: measured in memory (the command line's measurements read DNG, EXR and HDF5)."""
    return path.lower().endswith((".hdr", ".pic"))


def _mask_regions(regions):
    """Regions given as arrays (boolean or weights), split from those given as specs."""
    if not isinstance(regions, dict):
        return regions, {}
    arrays = {k: v for k, v in regions.items() if hasattr(v, "__array__") and getattr(v, "ndim", 0) == 2}
    return {k: v for k, v in regions.items() if k not in arrays}, arrays


def analyze(inputs, options, regions=None):
    """Runs the measurement and returns the scenelinear.analysis/1 document (raising for the first failed file)."""
    specs, arrays = _mask_regions(regions)
    if arrays:
        return True, _analyze_with_masks(inputs, specs, arrays, options)
    options = {"regions": region_specs(specs), **options}
    if isinstance(inputs, Image) and inputs.kind != "file" or hasattr(inputs, "__array__"):
        return True, _analyze_in_memory(inputs, options)
    if isinstance(inputs, Image) and _is_radiance(inputs.path):
        return True, _analyze_in_memory(inputs, options, allow_file=True)
    if isinstance(inputs, (str, os.PathLike)) and _is_radiance(os.fspath(inputs)):
        develop, rest = _split_develop(options)
        with Image(inputs, **develop) as image:
            return True, _analyze_in_memory(image, rest, allow_file=True)
    single, paths, image_options = _inputs(inputs)
    merged = dict(image_options)
    develop, rest = _split_develop(options)
    merged.update(develop_options(develop))
    merged.update({k: v for k, v in rest.items() if v is not None})
    out = ctypes.c_void_p()
    err = ctypes.create_string_buffer(4096)
    status = _native.lib().sl_analyze(json.dumps(paths).encode(), _native.options_json(merged), ctypes.byref(out), err, 4096)
    text = _native.take_string(out)
    if status != 0 and text is None:
        raise errors.from_status(status, err.value.decode("utf-8", "replace"))
    return single, json.loads(text)


def _analyze_with_masks(inputs, specs, arrays, options):
    """Regions given as arrays: the image (opened here from a path) with them as mask
    layers, measured in memory (its developed pixels)."""
    develop, rest = _split_develop(options)
    if isinstance(inputs, (str, os.PathLike)):
        with Image(inputs, **develop) as image:
            return _analyze_with_masks(image, specs, arrays, rest)
    if not isinstance(inputs, Image):
        from .image import from_array
        with from_array(inputs) as image:
            return _analyze_with_masks(image, specs, arrays, rest)
    names = {name: f"region_{i}" for i, name in enumerate(arrays)}
    with inputs.with_masks({names[n]: np.asarray(a, dtype=np.float32) for n, a in arrays.items()}) as masked:
        all_specs = region_specs(specs) + [f"{n}=mask:{names[n]}" for n in arrays]
        return _analyze_in_memory(masked, {"regions": all_specs, **rest}, allow_file=True)


def _analyze_in_memory(image, options, allow_file=False):
    """A merged image, or numpy pixels, measured as they are (sl_image_analyze)."""
    develop = sorted(k for k, v in options.items() if k in DEVELOP_OPTIONS and k != "threads" and v is not None)
    if develop:
        raise errors.UsageError(f"option {develop[0]!r} develops a DNG: an image in memory is measured as it is", 64)
    if not isinstance(image, Image):
        from .image import from_array
        with from_array(image) as made:
            return _analyze_in_memory(made, options)
    if image.kind == "file" and not allow_file:
        raise errors.InternalError("an image opened from a file is measured by its path", 1)
    merged = {k: v for k, v in options.items() if v is not None}
    if "threads" not in merged and "threads" in image.options:
        merged["threads"] = image.options["threads"]
    text = _native.call_for_string("sl_image_analyze", image._live(), _native.options_json(merged))
    return json.loads(text)


def _results(single, document):
    results = [file_result(f) for f in document["files"]]
    return results[0] if single and len(results) == 1 else results


def stats(inputs, regions=None, percentiles=(1, 5, 25, 75, 95, 99), **options):
    """Statistics of R, G, B and Y per region (`scenelinear stats`): mean and median with
    their uncertainties, percentiles, spread, clipping, dynamic range. `inputs`: a path, an
    opened Image, or a list of them; `regions`: see `region_specs` (none: the whole image);
    `options`: develop options for DNG inputs, and `projection`, `fov`, `circle` for a
    fisheye (statistics per steradian). A region given as an array is measured on the
    developed image (a CFA file's means then come from its demosaiced pixels, not from its
    raw sites as by path). One FileResult, or a list for a list."""
    single, document = analyze(inputs, {"percentiles": list(percentiles), **options}, regions)
    return _results(single, document)


def histogram(inputs, regions=None, bins_per_stop=4, linear=None, range=None, **options):  # noqa: A002
    """Histograms of R, G, B and Y per region (`scenelinear histogram`): EV bins
    (`bins_per_stop`) or `linear` bins, over `range` (low, high) or an automatic one."""
    single, document = analyze(inputs, {"percentiles": [], "bins_per_stop": bins_per_stop, "linear": linear,
                                        "range": list(range) if range is not None else None, **options}, regions)
    return _results(single, document)


def ratio(inputs, regions, ratios=None, quantity="Y", statistic="mean", **options):
    """Radiance ratios between regions with 95 % intervals (`scenelinear ratio`): `ratios`
    as "numerator/denominator" names (default: the first two regions)."""
    single, document = analyze(inputs, {"percentiles": [], "ratios": list(ratios or []), "quantity": quantity,
                                        "statistic": statistic, **options}, regions)
    return _results(single, document)
