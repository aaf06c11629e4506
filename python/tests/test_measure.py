"""Measurements: every result equals the command line's --json document for the same inputs."""
import math

import numpy as np
import pytest

import scenelinear as sl

from conftest import GREY_RAMP, SKY, SUN, SUNSET


def same_document(result, cli_document):
    """The FileResult's document is the command line's entry, to the last bit (the file names aside)."""
    got = dict(result.document)
    want = dict(cli_document["files"][0])
    assert got.pop("file") == want.pop("file")
    assert got == want


@pytest.mark.parametrize("flags,options", [
    ([], {}),
    (["--units", "luminance"], {"units": "luminance"}),
    (["--demosaic", "superpixel", "--percentiles", "10,50,90"], {"demosaic": "superpixel", "percentiles": (10, 50, 90)}),
])
def test_stats_equal_the_command_line(cli_json, flags, options):
    want = cli_json("stats", SUNSET, "--region", SKY, "--region", SUN, *flags)
    got = sl.stats(SUNSET, regions=[SKY, SUN], **options)
    same_document(got, want)
    y = want["files"][0]["regions"][0]["measurement"]["channels"]["Y"]
    sky = got["sky"].Y
    assert sky.mean.value == y["mean"] and sky.median.value == y["median"] and sky.count == y["count"]
    budgets = want["files"][0]["regions"][0].get("budgets")
    if budgets:
        b = budgets[0]
        assert (sky.mean.low95, sky.mean.high95, sky.mean.standard_uncertainty) == (b["low95"], b["high95"], b["standardUncertainty"])
        assert [i.name for i in sky.mean.budget] == [i["name"] for i in b["items"]]
    else:
        se = y["meanStandardError"]
        assert sky.mean.standard_uncertainty == se
        assert sky.mean.low95 == y["mean"] - 1.959963984540054 * se


def test_regions_as_a_dict_of_specs_and_pixel_tuples(cli_json):
    want = cli_json("stats", GREY_RAMP, "--region", "a=10,20,50,100")
    got = sl.stats(GREY_RAMP, regions={"a": (10, 20, 50, 100)})
    same_document(got, want)
    assert got["a"].pixels == 40 * 80


def test_histogram_equals_the_command_line(cli_json):
    want = cli_json("histogram", SUNSET, "--region", SKY, "--bins-per-stop", "8")
    got = sl.histogram(SUNSET, regions=[SKY], bins_per_stop=8)
    same_document(got, want)
    h = got["sky"].histogram
    assert len(h.edges) == len(h.counts["Y"]) + 1 and sum(h.counts["Y"]) == h.pixels
    want = cli_json("histogram", SUNSET, "--linear", "32", "--range", "0,0.5")
    same_document(sl.histogram(SUNSET, linear=32, range=(0, 0.5)), want)


def test_ratio_equals_the_command_line(cli_json):
    want = cli_json("ratio", SUNSET, "--region", SKY, "--region", SUN)
    got = sl.ratio(SUNSET, regions=[SKY, SUN])
    same_document(got, want)
    (r,) = got.ratios
    assert (r.numerator, r.denominator, r.kind) == ("sky", "sun", "value")
    assert r.low95 < 0.12 < r.high95  # the scene's sky has 12 % of the sun's radiance
    want = cli_json("ratio", SUNSET, "--region", SKY, "--region", SUN, "--ratio", "sun/sky", "--statistic", "median")
    same_document(sl.ratio(SUNSET, regions=[SKY, SUN], ratios=["sun/sky"], statistic="median"), want)


def test_lower_bounds_are_reported_as_bounds():
    r = sl.stats(GREY_RAMP)
    y = r["image"].Y
    assert r["image"].clipped_pixels > 0
    assert y.maximum.kind == "lower-bound" and y.maximum.is_bound


def test_several_files_and_opened_images(cli_json):
    results = sl.stats([SUNSET, GREY_RAMP])
    assert [r.file for r in results] == [SUNSET, GREY_RAMP]
    with sl.open(SUNSET, units="luminance") as img:
        got = sl.stats(img, regions=[SKY])
    same_document(got, cli_json("stats", SUNSET, "--region", SKY, "--units", "luminance"))


def test_failed_file_raises_with_its_name(tmp_path):
    bad = tmp_path / "bad.dng"
    bad.write_bytes(b"II*\x00" + b"\x00" * 100)
    with pytest.raises(sl.SceneLinearError) as e:
        sl.stats([SUNSET, str(bad)])
    assert str(bad) in str(e.value)


def test_closed_loop_truth_inside_the_interval():
    """The simulated sunset's sky patch (truth.json: rows 31–114, columns 41–204), 4 pixels in
    from its edges: its true mean luminance (truth.exr) inside the 95 % interval."""
    with sl.open(SUNSET.replace(".dng", ".truth.exr")) as truth:
        patch = truth.image()[35:111, 45:201]
    region = {"patch": (35, 45, 111, 201)}
    true_mean = float(np.mean(patch.astype(np.float64) @ np.array([0.2627, 0.6780, 0.0593])))
    est = sl.stats(SUNSET, regions=region)["patch"].Y.mean
    assert est.low95 <= true_mean <= est.high95, (est, true_mean)
    assert math.isfinite(est.standard_uncertainty) and est.standard_uncertainty > 0
