"""The xarray engine: registered, opens a DNG with units, stacks a folder along capture time."""
import numpy as np
import pytest

import scenelinear as sl

from conftest import SUNSET

xr = pytest.importorskip("xarray")


def test_engine_is_registered_and_opens_a_dng():
    assert "scenelinear" in xr.backends.list_engines()
    ds = xr.open_dataset(SUNSET, engine="scenelinear", units="luminance")
    assert ds["image"].dims == ("y", "x", "channel") and ds["image"].attrs["units"] == "cd m-2"
    with sl.open(SUNSET, units="luminance") as img:
        assert np.array_equal(ds["image"].values, img.image())
    assert np.isnat(ds["time"].values)  # the simulated sunset records no capture time
    ds = xr.open_dataset(SUNSET, engine="scenelinear", drop_variables=["std"])
    assert "std" not in ds


def test_folder_stacks_along_capture_time(tmp_path):
    times = ["2026:06:21 12:10:00", "2026:06:21 12:00:00", "2026:06:21 12:05:00"]
    for i, t in enumerate(times):
        sl.simulate("sunset", output=tmp_path, size=(64, 48), seed=i, name=f"shot{i}", capture_time=t)
    ds = sl.open_mfdataset(tmp_path, units="luminance")
    assert ds["image"].dims == ("time", "y", "x", "channel") and ds.sizes["time"] == 3
    assert list(ds["time"].values.astype("datetime64[m]").astype(str)) == ["2026-06-21T12:00", "2026-06-21T12:05", "2026-06-21T12:10"]
    assert ds["image"].attrs["units"] == "cd m-2"
    nested = xr.open_mfdataset(sorted(str(p) for p in tmp_path.glob("*.dng")), engine="scenelinear", combine="nested",
                               concat_dim="time")
    assert nested.sizes["time"] == 3
