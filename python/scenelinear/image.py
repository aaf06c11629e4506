"""Opening an image: a DNG developed to scene-linear light, or an EXR/HDF5 file written by
`scenelinear convert` or `merge`, as numpy arrays with its metadata."""
import ctypes
import json
import os
import weakref

import numpy as np

from . import _native, errors

#: The develop options `open` and `Image.image` take (the command line's long options).
DEVELOP_OPTIONS = ("units", "exposure", "calibration", "allow_other_camera", "settings_uncertainty", "filter_factor",
                   "spectral_uncertainty", "light_source", "lens", "allow_other_lens", "color", "demosaic", "crop", "orientation", "source", "masks", "digest",
                   "max_memory", "max_pixels", "threads")

_defaults = {}


def set_threads(n):
    """Threads each call may use (None: every core of the allocation, the default)."""
    if n is not None and (not isinstance(n, int) or n < 1):
        raise errors.UsageError(f"threads must be a positive whole number, not {n!r}", 64)
    _defaults["threads"] = n


def set_memory_limit(nbytes):
    """The memory one file may need at its peak, in bytes (None: three quarters of the machine's or allocation's)."""
    if nbytes is not None and (not isinstance(nbytes, int) or nbytes < 1):
        raise errors.UsageError(f"the memory limit must be a positive number of bytes, not {nbytes!r}", 64)
    _defaults["max_memory"] = nbytes


def develop_options(options):
    """`options` checked against DEVELOP_OPTIONS, on top of the module's defaults."""
    unknown = sorted(set(options) - set(DEVELOP_OPTIONS))
    if unknown:
        raise errors.UsageError(f"unknown option {unknown[0]!r} (known: {', '.join(DEVELOP_OPTIONS)})", 64)
    merged = dict(_defaults)
    merged.update({k: (_path_option(k, v) if v is not None else v) for k, v in options.items()})
    return {k: v for k, v in merged.items() if v is not None}


def _path_option(key, value):
    """A file option as the library reads it: `calibration` a path; `lens` a path, or a list
    of paths (calibrations of one lens at several apertures)."""
    if key == "calibration":
        return os.fspath(value)
    if key == "lens":
        return [os.fspath(p) for p in value] if isinstance(value, (list, tuple)) else os.fspath(value)
    return value


def circle_spec(circle):
    """A fisheye's image circle as the library reads it: "x,y,r" from an (x, y, r) tuple; a
    string ("x,y,r" or "auto") or None as given."""
    if isinstance(circle, (tuple, list)):
        return ",".join(repr(float(v)) for v in circle)
    return circle


def _open_handle(path, options):
    handle = ctypes.c_void_p()
    _native.call("sl_image_open", os.fsencode(path), _native.options_json(options), ctypes.byref(handle))
    return handle


def _is_dng(path):
    return not path.lower().endswith((".exr", ".h5", ".hdf5", ".hdr", ".pic"))


def _develop(path, options, out=None):
    """A DNG developed straight into numpy arrays (sl_develop): the handle (no pixels), the
    pixels (into `out` when given) and the clip mask (0/1)."""
    arrays = {}

    def allocate(_context, height, width, pixels, clip):
        try:
            arrays["pixels"] = np.empty((height, width, 3), dtype=np.float32) if out is None else _checked_out(out, (height, width, 3), path)
            arrays["clip"] = np.empty((height, width), dtype=np.uint8)
            pixels[0] = arrays["pixels"].ctypes.data_as(_native._float_p)
            clip[0] = arrays["clip"].ctypes.data_as(_native._uint8_p)
            return 0
        except BaseException as e:  # noqa: BLE001 - nothing may escape into the library's thread
            arrays["error"] = e
            return 1

    callback = _native.ALLOCATE(allocate)
    handle = ctypes.c_void_p()
    try:
        _native.call("sl_develop", os.fsencode(path), _native.options_json(options), callback, None, ctypes.byref(handle))
    except errors.SceneLinearError:
        if "error" in arrays:
            raise arrays["error"] from None
        raise
    return handle, arrays["pixels"], arrays["clip"]


def _checked_out(out, shape, path):
    """`out` when it can take the image: a writeable, C-contiguous float32 array of `shape`."""
    if not isinstance(out, np.ndarray):
        raise errors.UsageError(f"{path}: out= must be a numpy array, not {type(out).__name__}", 64)
    problems = [what for what, bad in (
        (f"of shape {shape}, not {out.shape}", out.shape != tuple(shape)),
        (f"float32, not {out.dtype}", out.dtype != np.float32),
        ("C-contiguous", not out.flags.c_contiguous),
        ("writeable", not out.flags.writeable)) if bad]
    if problems:
        raise errors.UsageError(f"{path}: out= must be " + ", ".join(problems), 64)
    return out


def _read_only(a):
    a.flags.writeable = False
    return a


class Image:
    """An image in memory. Use as a context manager, or call `close()`; the memory is also
    released when the object is collected."""

    def __init__(self, path, out=None, **options):
        self.path = os.fspath(path)
        self.options = develop_options(options)
        #: "file" (opened from a path), "merge" (a merged bracket) or "array" (from numpy arrays).
        self.kind = "file"
        if _is_dng(self.path):
            handle, pixels, clip = _develop(self.path, self.options, out)
            self._adopt(handle)
            self._pixels, self._clip = (pixels if out is not None else _read_only(pixels)), _read_only(clip.view(bool))
        else:
            self._adopt(_open_handle(self.path, self.options))
            if out is not None:
                _native.call("sl_image_read", self._handle, _checked_out(out, self.shape, self.path).ctypes.data_as(_native._float_p), out.size)
                self._pixels = out

    @classmethod
    def _from_handle(cls, handle, path, kind, options=None):
        self = cls.__new__(cls)
        self.path, self.kind, self.options = path, kind, options or {}
        self._adopt(handle)
        return self

    def _adopt(self, handle):
        self._handle = handle
        self._release = weakref.finalize(self, _native.lib().sl_image_release, handle)
        h, w, c = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        _native.lib().sl_image_shape(self._handle, ctypes.byref(h), ctypes.byref(w), ctypes.byref(c))
        self.shape = (h.value, w.value, c.value)
        self._metadata = None
        self._pixels = self._clip = self._std = None

    # -- lifetime --
    def close(self):
        """Releases the image (a second call does nothing); arrays already returned stay valid."""
        self._release()
        self._pixels = self._clip = self._std = None

    @property
    def closed(self):
        return not self._release.alive

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self.closed else f"{self.shape[0]}×{self.shape[1]}"
        return f"<scenelinear.Image {self.path!r} {state}>"

    def _live(self):
        if self.closed:
            raise errors.UsageError(f"{self.path}: the image is closed", 64)
        return self._handle

    # -- pixels --
    def image(self, **options):
        """The pixels, float32 (height, width, 3), in the units and colour asked for when the
        image was opened: the same read-only array at every call (`.copy()` it to modify).
        Options given here (units, color, exposure, demosaic, ...) develop the file again with
        them into a new array."""
        if options and develop_options(options) != self.options:
            if self.kind != "file":
                raise errors.UsageError(f"{self.path}: a {self.kind} image in memory cannot be developed again with other options", 64)
            with Image(self.path, **{**self.options, **options}) as other:
                return other.image()
        self._live()
        if self._pixels is None:
            out = np.empty(self.shape, dtype=np.float32)
            _native.call("sl_image_read", self._handle, out.ctypes.data_as(_native._float_p), out.size)
            self._pixels = _read_only(out)
        return self._pixels

    def std(self):
        """Each pixel's standard deviation of R, G and B, float32 (height, width, 3), read-only:
        the file's own layer (merge, convert --std), else the NoiseProfile's model at the
        pixel's value; 0 where the pixel is clipped. Raises UnsupportedError when there is
        neither."""
        self._live()
        if self._std is None:
            out = np.empty(self.shape, dtype=np.float32)
            if self.kind == "file" and _is_dng(self.path):
                pixels, clip = self.image(), self.clip_mask.view(np.uint8)
                _native.call("sl_image_std_of", self._handle, pixels.ctypes.data_as(_native._float_p),
                             clip.ctypes.data_as(_native._uint8_p), out.ctypes.data_as(_native._float_p), out.size)
            else:
                _native.call("sl_image_read_std", self._handle, out.ctypes.data_as(_native._float_p), out.size)
            self._std = _read_only(out)
        return self._std

    @property
    def clip_mask(self):
        """bool (height, width), read-only: True where a camera channel reached white (the
        pixel's values are lower bounds)."""
        self._live()
        if self._clip is None:
            out = np.empty(self.shape[:2], dtype=np.uint8)
            _native.call("sl_image_read_clip_mask", self._handle, out.ctypes.data_as(_native._uint8_p), out.size)
            self._clip = _read_only(out != 0)
        return self._clip

    def _pixel_handle(self):
        """A handle whose image holds the pixels, for what the library runs on them (a fisheye
        circle found in the image, mask regions): this one, or — a DNG developed into numpy
        arrays — the file developed again into the library's memory (the caller releases it)."""
        if not (self.kind == "file" and _is_dng(self.path)):
            return self._live(), None
        self._live()
        handle = _open_handle(self.path, self.options)
        return handle, handle

    @property
    def frames(self):
        """uint8 (height, width): for a merged bracket, the frames each pixel's least-covered channel used."""
        out = np.empty(self.shape[:2], dtype=np.uint8)
        _native.call("sl_image_read_frames", self._live(), out.ctypes.data_as(_native._uint8_p), out.size)
        return out

    @property
    def merge_report(self):
        """For a merged bracket, the merge's report (the "report" of `scenelinear merge --json`), else None."""
        return self.metadata.get("merge")

    @property
    def masks(self):
        """The semantic masks (sky, skin, ...) by layer name, float32 (height, width), 0…1."""
        out = {}
        for m in self.metadata["masks"]:
            a = np.empty(self.shape[:2], dtype=np.float32)
            _native.call("sl_image_read_mask", self._live(), m["name"].encode(), a.ctypes.data_as(_native._float_p), a.size)
            out[m["name"]] = a
        return out

    @property
    def metadata(self):
        """A dict (schema scenelinear.image/1): size, colour encoding, units, exposure scale
        and its uncertainty, masks, and provenance (camera, capture settings, processing)."""
        if self._metadata is None:
            out = ctypes.c_void_p()
            _native.call("sl_image_metadata", self._live(), ctypes.byref(out))
            self._metadata = json.loads(_native.take_string(out))
        return self._metadata

    def fisheye(self, projection, fov=None, circle=None):
        """A circular fisheye lens on this image: (theta, azimuth, solid_angle, lens) — each
        pixel's angle from the optical axis and azimuth (radians) and solid angle (sr),
        float32 (height, width), 0 outside the image circle; `lens` the lens found (a dict).
        `circle`: "x,y,r" or (x, y, r) in pixels, "auto" to find it, None for the inscribed one."""
        circle = circle_spec(circle)
        arrays = [np.empty(self.shape[:2], dtype=np.float32) for _ in range(3)]
        handle, temporary = self._pixel_handle()
        try:
            text = _native.call_for_string("sl_image_fisheye", handle,
                                           _native.options_json({"projection": projection, "fov": fov, "circle": circle}),
                                           *[a.ctypes.data_as(_native._float_p) for a in arrays], arrays[0].size)
        finally:
            if temporary is not None:
                _native.lib().sl_image_release(temporary)
        return (*arrays, json.loads(text))

    def with_masks(self, masks):
        """A new Image: this one with extra mask layers (a dict of name → (height, width)
        array: booleans, or weights 0…1), which regions name as "mask:<name>"."""
        shapes = {name: np.shape(values) for name, values in masks.items()}
        for name, shape in shapes.items():
            if shape != self.shape[:2]:
                raise errors.UsageError(f"mask {name!r} has shape {shape}; the image is {self.shape[:2]}", 64)
        handle, temporary = self._pixel_handle()
        made = None
        try:
            for name, values in masks.items():
                w = np.ascontiguousarray(values, dtype=np.float32)
                out = ctypes.c_void_p()
                _native.call("sl_image_with_mask", handle, str(name).encode(), w.ctypes.data_as(_native._float_p), w.size,
                             ctypes.byref(out))
                if made is not None:
                    made.close()
                made = Image._from_handle(out, self.path, self.kind if self.kind != "file" else "masked", self.options)
                handle = made._handle
        finally:
            if temporary is not None:
                _native.lib().sl_image_release(temporary)
        return made if made is not None else self

    def to_xarray(self, projection=None, fov=None, circle=None):
        """An xarray.Dataset: `image` and (when known) `std` on (y, x, channel), `clipped` on
        (y, x), CF-style `units`, the metadata in the attributes; with a fisheye `projection`
        (and `fov`, `circle`) also the coordinates `theta`, `azimuth` (radians) and
        `solid_angle` (sr) on (y, x)."""
        from .xarray_support import dataset
        ds = dataset(self)
        if projection is not None:
            theta, azimuth, omega, lens = self.fisheye(projection, fov, circle)
            ds = ds.assign_coords(theta=(("y", "x"), theta, {"units": "rad", "long_name": "angle from the optical axis"}),
                                  azimuth=(("y", "x"), azimuth, {"units": "rad", "long_name": "azimuth, counter-clockwise from +x"}),
                                  solid_angle=(("y", "x"), omega, {"units": "sr", "long_name": "solid angle of the pixel"}))
            ds.attrs["fisheye"] = json.dumps(lens, sort_keys=True)
        return ds


def from_array(pixels, clip_mask=None, std=None, units="relative", color="rec2020", name="array"):
    """An Image from numpy arrays (copied): `pixels` (height, width, 3) scene-linear values,
    optional `clip_mask` (height, width; True where the values are lower bounds) and `std`
    (height, width, 3: each pixel's standard deviation, which then gives the measurements'
    noise), in `units` (relative, luminance, radiance) and colour space `color`."""
    a = np.ascontiguousarray(pixels, dtype=np.float32)
    if a.ndim != 3 or a.shape[2] != 3:
        raise errors.UsageError(f"pixels must have shape (height, width, 3), not {a.shape}", 64)
    h, w = a.shape[:2]
    clip = None if clip_mask is None else np.ascontiguousarray(clip_mask, dtype=np.uint8)
    if clip is not None and clip.shape != (h, w):
        raise errors.UsageError(f"clip_mask must have shape {(h, w)}, not {clip.shape}", 64)
    s = None if std is None else np.ascontiguousarray(std, dtype=np.float32)
    if s is not None and s.shape != a.shape:
        raise errors.UsageError(f"std must have shape {a.shape}, not {s.shape}", 64)
    handle = ctypes.c_void_p()
    _native.call("sl_image_from_array", a.ctypes.data_as(_native._float_p), h, w,
                 None if clip is None else clip.ctypes.data_as(_native._uint8_p),
                 None if s is None else s.ctypes.data_as(_native._float_p),
                 _native.options_json({"name": name, "units": units, "color": color}), ctypes.byref(handle))
    return Image._from_handle(handle, name, "array")


def open(path, out=None, **options):  # noqa: A001 - the package's entry point mirrors the built-in
    """Opens a DNG (developed with `options`: units, exposure, calibration, color, demosaic,
    crop, orientation, source, masks, threads, max_memory, ...), or an EXR, HDF5 or Radiance
    .hdr file written by scenelinear. `out`, a writeable C-contiguous float32 array of the
    image's shape, receives the pixels (and is what `image()` returns): one array reused from
    file to file spares the fresh memory a new array costs on every call."""
    return Image(path, out=out, **options)
