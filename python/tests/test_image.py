"""Reading: the arrays and metadata equal what the command line writes for the same file."""
import os

import numpy as np
import OpenEXR
import pytest

import scenelinear as sl

from conftest import CHART, GREY_RAMP, SUNSET, shared_dataset_dir


def exr_channels(path):
    with OpenEXR.File(path, separate_channels=True) as f:
        return {name: np.asarray(c.pixels) for name, c in f.channels().items()}


@pytest.mark.parametrize("path,options,flags", [
    (SUNSET, {}, []),
    (SUNSET, {"units": "luminance"}, ["--units", "luminance"]),
    (GREY_RAMP, {"color": "acescg", "exposure": "baseline"}, ["--color", "acescg", "--exposure", "baseline"]),
    (CHART, {"demosaic": "superpixel"}, ["--demosaic", "superpixel"]),
])
def test_image_equals_the_float_exr_of_convert(cli, tmp_path, path, options, flags):
    out = str(tmp_path / "out.exr")
    code, _, err = cli("convert", path, "-o", out, "--exr-type", "float", "--std", *flags)
    assert code == 0, err
    ch = exr_channels(out)
    with sl.open(path, **options) as img:
        a = img.image()
        assert a.dtype == np.float32 and a.shape == img.shape and a.flags.c_contiguous
        rgb = np.stack([ch["R"], ch["G"], ch["B"]], axis=-1)
        assert np.array_equal(a, rgb)
        std = np.stack([ch["std_R"], ch["std_G"], ch["std_B"]], axis=-1)
        assert np.array_equal(img.std(), std)
        assert np.array_equal(img.clip_mask, ch["mask_clipped"] > 0)


def test_out_receives_the_pixels_and_is_reused(tmp_path, cli):
    with sl.open(SUNSET) as img:
        expected, shape = img.image().copy(), img.shape
    buf = np.full(shape, np.nan, dtype=np.float32)
    with sl.open(SUNSET, out=buf) as img:
        assert img.image() is buf and buf.flags.writeable
        assert np.array_equal(buf, expected)
    exr = str(tmp_path / "s.exr")
    code, _, err = cli("convert", SUNSET, "-o", exr, "--exr-type", "float")
    assert code == 0, err
    buf[:] = -1
    with sl.open(exr, out=buf) as img:
        assert img.image() is buf
        assert np.array_equal(buf, expected)


@pytest.mark.parametrize("make,words", [
    (lambda s: np.empty((s[0], s[1] + 1, 3), np.float32), "of shape"),
    (lambda s: np.empty(s, np.float64), "float32, not float64"),
    (lambda s: np.empty((s[1], s[0], 3), np.float32).transpose(1, 0, 2), "C-contiguous"),
    (lambda s: np.broadcast_to(np.float32(0), s), "writeable"),
    (lambda s: [0.0], "a numpy array, not list"),
])
def test_out_that_cannot_take_the_image_is_refused(make, words):
    with sl.open(SUNSET) as img:
        shape = img.shape
    with pytest.raises(sl.UsageError) as e:
        sl.open(SUNSET, out=make(shape))
    assert SUNSET in str(e.value) and "out= must be" in str(e.value) and words in str(e.value)


def test_clip_mask_and_std_of_clipped_pixels(tmp_path):
    with sl.open(GREY_RAMP) as img:
        clipped = img.clip_mask
        assert clipped.dtype == bool and clipped.shape == img.shape[:2]
        assert clipped.sum() == img.metadata["clipped_pixels"] == 5377
        std, values = img.std(), img.image()
        assert np.all(std[clipped] == 0)
        assert np.all(std[~clipped & np.all(values > 0, axis=-1)] > 0)


def test_image_with_other_options_develops_again():
    with sl.open(SUNSET) as img:
        relative = img.image()
        absolute = img.image(units="luminance")
        factor = sl.open(SUNSET, units="luminance").metadata["exposure"]["factor"]
        assert factor == pytest.approx(388.8, rel=1e-6)
        np.testing.assert_allclose(absolute, relative * np.float32(factor), rtol=1e-6)


def test_metadata():
    with sl.open(SUNSET, units="luminance") as img:
        m = img.metadata
    assert m["schema"] == "scenelinear.image/1"
    assert (m["height"], m["width"], m["channels"]) == (384, 512, 3)
    assert m["color_encoding"] == "lin_rec2020_scene"
    assert m["exposure"]["mode"] == "luminance"
    assert m["exposure"]["relative_uncertainty"] == 0.25
    assert m["standard_deviation_source"] == "noise-profile"
    dng = m["provenance"]["dng"]
    assert dng["iso"] == 100 and dng["exposureTime"] == pytest.approx(0.01) and dng["fNumber"] == pytest.approx(1.8)
    assert len(dng["noiseProfile"]) in (2, 6)  # one (S, O) pair for every plane, or one per plane


def test_reads_our_exr_and_hdf5_back(cli, tmp_path):
    out = str(tmp_path / "s")
    code, _, err = cli("convert", SUNSET, "-o", out + "/", "--format", "exr,hdf5", "--exr-type", "float", "--hdf5-type", "float32")
    assert code == 0, err
    with sl.open(SUNSET) as dng:
        want = dng.image()
    for name in ("sunset.exr", "sunset.h5"):
        with sl.open(os.path.join(out, name)) as img:
            assert np.array_equal(img.image(), want)
            assert img.metadata["provenance"]["dng"]["iso"] == 100


def test_close_is_idempotent_and_a_closed_image_refuses():
    img = sl.open(SUNSET)
    img.close()
    img.close()
    assert img.closed
    with pytest.raises(sl.UsageError, match="closed"):
        img.image()


def test_to_xarray():
    xr = pytest.importorskip("xarray")
    with sl.open(SUNSET, units="luminance") as img:
        ds = img.to_xarray()
        assert isinstance(ds, xr.Dataset)
        assert ds["image"].dims == ("y", "x", "channel") and ds["image"].shape == (384, 512, 3)
        assert ds["image"].attrs["units"] == "cd m-2"
        assert ds["std"].attrs["units"] == "cd m-2"
        assert ds["clipped"].dtype == bool
        assert list(ds["channel"].values) == ["R", "G", "B"]
        assert np.array_equal(ds["image"].values, img.image())
        assert ds.attrs["exposure_mode"] == "luminance"


def test_real_camera_dng():
    path = os.path.join(shared_dataset_dir(), "real", "canon_kissx4_cfa14_uncompressed.dng")
    if not os.path.exists(path):
        pytest.skip(f"shared datasets not found ({path})")
    with sl.open(path) as img:
        assert img.shape[2] == 3 and img.shape[0] > 1000
        assert img.metadata["provenance"]["dng"]["model"].startswith("Canon")
        assert np.isfinite(img.image()).all()
