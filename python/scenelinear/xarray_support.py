"""Images as xarray Datasets, and the `scenelinear` xarray engine."""
import json

import numpy as np

def cf_units(metadata):
    """The CF `units` attribute of an image's values."""
    mode = metadata["exposure"]["mode"]
    return {"luminance": "cd m-2", "radiance": "W sr-1 m-2"}.get(mode, "1")


def dataset(image):
    """`image` (an open scenelinear.Image) as an xarray.Dataset."""
    import xarray as xr
    meta = image.metadata
    units = cf_units(meta)
    h, w, _ = image.shape
    variables = {
        "image": (("y", "x", "channel"), image.image(), {"units": units, "long_name": "scene-linear " + meta["color_encoding"]}),
        "clipped": (("y", "x"), image.clip_mask, {"long_name": "a camera channel reached white: the values are lower bounds"}),
    }
    if meta["has_standard_deviation"]:
        variables["std"] = (("y", "x", "channel"), image.std(),
                            {"units": units, "long_name": "standard deviation (" + meta["standard_deviation_source"] + ")"})
    for name, mask in image.masks.items():
        variables["mask_" + name] = (("y", "x"), mask, {"units": "1", "long_name": "semantic mask " + name})
    attrs = {
        "source": meta["path"],
        "software": meta["provenance"]["software"],
        "color_encoding": meta["color_encoding"],
        "units": units,
        "exposure_mode": meta["exposure"]["mode"],
        "exposure_factor": meta["exposure"]["factor"],
        "metadata": json.dumps(meta, sort_keys=True),
    }
    if meta["exposure"].get("relative_uncertainty") is not None:
        attrs["scale_relative_uncertainty"] = meta["exposure"]["relative_uncertainty"]
    capture = capture_time(meta)
    if capture is not None:
        attrs["capture_time"] = str(capture)
    coords = {"y": np.arange(h), "x": np.arange(w), "channel": ["R", "G", "B"]}
    return xr.Dataset(variables, coords=coords, attrs=attrs)


def capture_time(meta):
    """The capture time (numpy datetime64, local time of the camera) from the DNG's EXIF, or None."""
    text = meta["provenance"]["dng"].get("dateTimeOriginal")
    if not isinstance(text, str) or len(text) < 19:
        return None
    try:
        return np.datetime64(text[:10].replace(":", "-") + "T" + text[11:19])
    except ValueError:
        return None
