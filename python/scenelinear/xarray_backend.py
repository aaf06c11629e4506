"""The `scenelinear` xarray engine: xr.open_dataset(path, engine="scenelinear") for DNGs and
for the EXR/HDF5 files scenelinear writes; each dataset carries its capture time as a scalar
`time` coordinate, so that a folder stacks along time:

    xr.open_mfdataset(paths, engine="scenelinear", combine="nested", concat_dim="time")

(or scenelinear.open_mfdataset(folder), which also sorts the files by capture time). The
pixels are read when the dataset is opened (no lazy loading).
"""
import glob
import os

import numpy as np
from xarray.backends import BackendEntrypoint

from .image import Image
from .xarray_support import capture_time, dataset

OPTIONS = ("units", "exposure", "calibration", "allow_other_camera", "color", "demosaic", "crop", "orientation", "source",
           "masks", "threads", "max_memory")


def open_one(path, drop_variables=None, **options):
    with Image(path, **{k: v for k, v in options.items() if v is not None}) as img:
        ds = dataset(img)
        t = capture_time(img.metadata)
    ds = ds.assign_coords(time=np.datetime64(t, "ns") if t is not None else np.datetime64("NaT", "ns"))
    ds["time"].attrs["long_name"] = "capture time (EXIF DateTimeOriginal, the camera's local time)"
    if drop_variables:
        ds = ds.drop_vars([v for v in drop_variables if v in ds.variables])
    return ds


class SceneLinearBackend(BackendEntrypoint):
    description = "DNG raw photos developed to scene-linear light, and SceneLinear's EXR/HDF5 files"
    url = "https://github.com/ (docs/python.md in the SceneLinear repository)"
    open_dataset_parameters = ("filename_or_obj", "drop_variables") + OPTIONS

    def open_dataset(self, filename_or_obj, *, drop_variables=None, units=None, exposure=None, calibration=None,
                     allow_other_camera=None, color=None, demosaic=None, crop=None, orientation=None, source=None,
                     masks=None, threads=None, max_memory=None):
        return open_one(os.fspath(filename_or_obj), drop_variables, units=units, exposure=exposure, calibration=calibration,
                        allow_other_camera=allow_other_camera, color=color, demosaic=demosaic, crop=crop,
                        orientation=orientation, source=source, masks=masks, threads=threads, max_memory=max_memory)

    def guess_can_open(self, filename_or_obj):
        try:
            return os.fspath(filename_or_obj).lower().endswith(".dng")
        except TypeError:
            return False


def open_mfdataset(paths, **options):
    """Opens many files (a folder's .dng files, a glob pattern, or a list) as one Dataset
    stacked along `time`, sorted by capture time (files without one keep their order, after
    the others)."""
    import xarray as xr
    if isinstance(paths, (str, os.PathLike)):
        p = os.fspath(paths)
        paths = sorted(glob.glob(os.path.join(p, "*.dng"))) if os.path.isdir(p) else sorted(glob.glob(p))
    datasets = [open_one(os.fspath(p), **options) for p in paths]
    if not datasets:
        raise FileNotFoundError(f"no files to open: {paths!r}")
    order = sorted(range(len(datasets)), key=lambda i: (np.isnat(datasets[i]["time"].values), datasets[i]["time"].values, i))
    return xr.concat([datasets[i] for i in order], dim="time", combine_attrs="drop_conflicts")
