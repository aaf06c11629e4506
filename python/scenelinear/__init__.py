"""SceneLinear in Python: DNG raw photos (Apple ProRAW first) as scene-linear numpy arrays,
with their noise, clipping and metadata, and the measurements of the `scenelinear` command
line — in-process, through the library's C interface. See docs/python.md.

    import scenelinear as sl
    with sl.open("photo.dng", units="luminance") as img:
        L = img.image()                      # float32 (height, width, 3), cd/m²
    r = sl.stats("photo.dng", regions={"sky": "0%,0%,30%,100%"}, units="luminance")
    print(r["sky"].Y.mean)                   # value, kind, standard uncertainty, 95 % interval
"""
from .errors import (BracketMismatchError, CalibrationMismatchError, CorruptDataError, InputUnreadableError,  # noqa: F401
                     InternalError, LimitExceededError, NotDNGError, OutputError, SceneLinearError,
                     TemporaryFailureError, TruncatedError, UnsupportedError, UnsupportedVersionError, UsageError)
from .capture import (Calibration, Illuminance, LensCalibration, SimulatedCapture, calibrate, calibrate_lens,  # noqa: F401
                      illuminance, merge, simulate)
from .image import Image, from_array, open, set_memory_limit, set_threads  # noqa: F401
from .measure import (BudgetItem, ChannelStatistics, Estimate, FileResult, Histogram, Ratio, RegionResult,  # noqa: F401
                      histogram, ratio, stats)

__version__ = "0.1.0"


def open_mfdataset(paths, **options):
    """Many files as one xarray.Dataset along `time` (see scenelinear.xarray_backend)."""
    from .xarray_backend import open_mfdataset as open_many
    return open_many(paths, **options)


def library_version():
    """The version of the loaded library ("scenelinear 0.1.0")."""
    from . import _native
    return _native.version()
