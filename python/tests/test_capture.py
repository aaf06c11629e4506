"""Merging, illuminance, arrays and simulation: the same numbers as the command line, and the
simulator's truth inside the intervals."""
import json
import math
import os

import numpy as np
import OpenEXR
import pytest

import scenelinear as sl

from conftest import SKY, SUNSET


@pytest.fixture(scope="module")
def bracket(tmp_path_factory):
    """A simulated bracket of the sky-with-sun scene, 3 frames 4 EV apart, 256×192, LinearRaw."""
    out = tmp_path_factory.mktemp("bracket")
    capture = sl.simulate("sky-sun", output=out, size=(256, 192), bracket=(-4, 0, 4), seed=11)
    assert len(capture.frames) == 3 and all(os.path.exists(f) for f in capture.frames)
    return capture


def exr_channels(path):
    with OpenEXR.File(path, separate_channels=True) as f:
        return {name: np.asarray(c.pixels) for name, c in f.channels().items()}


def test_merge_equals_the_command_line(cli, bracket, tmp_path):
    out = str(tmp_path / "m.exr")
    code, stdout, err = cli("merge", *bracket.frames, "-o", out, "--json")
    assert code == 0, err
    document = json.loads(stdout)
    ch = exr_channels(out)
    with sl.merge(bracket.frames) as m:
        assert m.kind == "merge"
        assert np.array_equal(m.image(), np.stack([ch["R"], ch["G"], ch["B"]], axis=-1))
        assert np.array_equal(m.std(), np.stack([ch["std_R"], ch["std_G"], ch["std_B"]], axis=-1))
        assert np.array_equal(m.clip_mask, ch["mask_clipped"] > 0)
        assert np.array_equal(m.frames, ch["merge_frames"].astype(np.uint8))
        assert m.merge_report == document["report"]
        assert m.metadata["standard_deviation_source"] == "layer"
        # Measured in memory: the same numbers as the command line measuring the merged file.
        want = cli_stats(cli, out)
        got = sl.stats(m, regions=[SKY])
        for key in ("regions", "ratios", "width", "height", "noiseSource"):
            assert got.document[key] == want["files"][0][key], key


def cli_stats(cli, path):
    code, stdout, err = cli("stats", path, "--region", SKY, "--json")
    assert code == 0, err
    return json.loads(stdout)


def test_merge_truth_inside_the_interval(bracket):
    """The merged sky (truth.json's sky patch, 3 pixels in): true mean inside the 95 % interval from the merge's σ."""
    sky = next(p for p in bracket.record["patches"] if p["name"] == "sky")["rect"]
    top, left, bottom, right = sky["top"] + 3, sky["left"] + 3, sky["bottom"] - 3, sky["right"] - 3
    truth = bracket.truth()[top:bottom, left:right].astype(np.float64) @ np.array([0.2627, 0.6780, 0.0593])
    with sl.merge(bracket.frames) as m:
        est = sl.stats(m, regions={"sky": (top, left, bottom, right)})["sky"].Y.mean
    assert est.low95 <= truth.mean() <= est.high95, (est, truth.mean())


def test_merge_refuses_a_single_frame_and_bad_options(bracket):
    with pytest.raises(sl.BracketMismatchError):
        sl.merge(bracket.frames[:1])
    with pytest.raises(sl.UsageError, match="saturation"):
        sl.merge(bracket.frames, saturation=3)
    with pytest.raises(sl.UsageError, match="unknown option"):
        sl.merge(bracket.frames, weights="flat")
    with sl.merge(bracket.frames) as m:
        with pytest.raises(sl.UsageError, match="cannot be developed again"):
            m.image(units="luminance")


def test_illuminance_equals_the_command_line(cli, bracket):
    frame = bracket.frames[0]
    code, stdout, err = cli("illuminance", frame, "--projection", "equisolid", "--json")
    assert code == 0, err
    want = json.loads(stdout)["results"][0]
    got = sl.illuminance(frame, projection="equisolid")
    assert got.document == want
    assert (got.value, got.kind, got.low95) == (want["illuminance"], want["kind"], want.get("low95"))
    with pytest.raises(sl.UsageError, match="fisheye"):
        sl.illuminance(frame, projection="fisheye")
    # Relative units are taken as luminance, as on the command line.
    assert sl.illuminance(frame, projection="equisolid", units="relative").document == want


def test_arrays_measured_with_their_std():
    rng = np.random.default_rng(3)
    pixels = np.full((64, 80, 3), 0.25, dtype=np.float32)
    std = np.full_like(pixels, 0.01)
    noisy = pixels + rng.normal(0, 0.01, pixels.shape).astype(np.float32)
    r = sl.stats(sl.from_array(noisy, std=std), regions={"all": (0, 0, 64, 80)})
    y = r["all"].Y
    assert y.mean.value == pytest.approx(float((noisy.astype(np.float64) @ [0.2627, 0.6780, 0.0593]).mean()), rel=1e-6)
    # σ of the mean of Y over 5120 pixels with independent channels of σ 0.01.
    expected = 0.01 * np.sqrt(0.2627 ** 2 + 0.6780 ** 2 + 0.0593 ** 2) / np.sqrt(64 * 80)
    assert y.mean.standard_uncertainty == pytest.approx(expected, rel=1e-6)
    clip = np.zeros((64, 80), dtype=bool)
    clip[0, 0] = True
    r = sl.stats(sl.from_array(noisy, clip_mask=clip), regions={"all": (0, 0, 64, 80)})
    assert r["all"].clipped_pixels == 1 and r["all"].Y.maximum.kind in ("lower-bound", "value")
    r = sl.stats(noisy)  # a bare array: no noise known
    assert r["image"].Y.mean.standard_uncertainty is None
    with pytest.raises(sl.UsageError, match="shape"):
        sl.from_array(np.zeros((4, 4)))


def test_simulated_capture_closed_loop(tmp_path):
    capture = sl.simulate("sunset", output=tmp_path, size=(320, 240), seed=5)
    assert capture.record["schema"].startswith("scenelinear.simulation")
    with sl.open(capture.dng) as img:
        assert img.shape == (240, 320, 3)
    ratio = sl.ratio(capture.dng, regions=[SKY, "sun=38%,69%,46%,75%"])
    (r,) = ratio.ratios
    assert r.low95 <= 0.12 <= r.high95


def test_array_regions_equal_rectangles():
    rows, cols = slice(31 + 4, 115 - 4), slice(41 + 4, 205 - 4)
    with sl.open(SUNSET) as img:
        mask = np.zeros(img.shape[:2], dtype=bool)
        mask[rows, cols] = True
        by_mask = sl.stats(img, regions={"sky": mask})["sky"]
    by_rect = sl.stats(SUNSET, regions={"sky": (35, 45, 111, 201)})["sky"]
    assert by_mask.pixels == by_rect.pixels == 76 * 156
    for q in "RGBY":
        a, b = by_mask.channels[q], by_rect.channels[q]
        assert a.mean.value == pytest.approx(b.mean.value, rel=1e-12)
        assert a.mean.standard_uncertainty == pytest.approx(b.mean.standard_uncertainty, rel=1e-9)
        assert a.median.value == b.median.value
    weights = sl.stats(SUNSET, regions={"half": np.full((384, 512), 0.5, dtype=np.float32)})["half"]
    assert weights.Y.weight == pytest.approx(0.5 * 384 * 512)
    with pytest.raises(sl.UsageError, match="shape"):
        sl.stats(SUNSET, regions={"bad": np.ones((3, 3), dtype=bool)})


def test_fisheye_coordinates_equal_the_command_line(cli, bracket, tmp_path):
    h5py = pytest.importorskip("h5py")
    frame = bracket.frames[1]
    out = str(tmp_path / "e.h5")
    code, _, err = cli("illuminance", frame, "--projection", "equisolid", "-o", out, "-q")
    assert code == 0, err
    with h5py.File(out) as f:
        theta, azimuth, omega = (f["fisheye/" + k][()] for k in ("theta", "azimuth", "solid_angle"))
    with sl.open(frame, units="luminance") as img:
        ds = img.to_xarray(projection="equisolid")
        t, a, w, lens = img.fisheye("equisolid")
    assert np.array_equal(t, theta) and np.array_equal(a, azimuth) and np.array_equal(w, omega)
    assert ds["theta"].dims == ("y", "x") and ds["solid_angle"].attrs["units"] == "sr"
    assert float(w.astype(np.float64).sum()) == pytest.approx(2 * np.pi, rel=1e-3)
    assert lens["projection"] == "equisolid" and lens["radius"] == 96
    # Statistics per steradian: the command line's numbers.
    r = sl.stats(frame, regions=["all=0,0,192,256"], projection="equisolid", units="luminance")
    code, stdout, err = cli("stats", frame, "--region", "all=0,0,192,256", "--projection", "equisolid", "--units", "luminance",
                            "--json")
    assert code == 0, err
    assert r.document["regions"] == json.loads(stdout)["files"][0]["regions"]


def test_calibrate_equals_the_command_line(cli, tmp_path):
    out = str(tmp_path / "camera.json")
    code, stdout, err = cli("calibrate", SUNSET, "--region", SKY, "--luminance", "34.5", "-o", out, "--json")
    assert code == 0, err
    want = json.loads(stdout)
    got = sl.calibrate([{"photo": SUNSET, "region": SKY, "luminance": 34.5}])
    # The time of making ("created", to the second) may fall on either side of a second.
    assert {k: v for k, v in got.document.items() if k != "created"} == {k: v for k, v in want.items() if k != "created"}
    assert got.constant == want["constant"] and got.relative_uncertainty == want["relativeUncertainty"]
    got.write(tmp_path / "mine.json")
    with sl.open(SUNSET, units="luminance", calibration=tmp_path / "mine.json") as img:
        assert img.metadata["exposure"]["source"].startswith("calibration")
    with pytest.raises(sl.UsageError, match="luminance must be positive"):
        sl.calibrate([{"photo": SUNSET, "region": SKY, "luminance": -1}])
    with pytest.raises(sl.UsageError, match="illuminance_vertical needs"):
        sl.calibrate([{"photo": SUNSET, "illuminance_vertical": 5000}])


def test_radiance_picture_with_its_lower_bounds(cli, bracket, tmp_path):
    frame = bracket.frames[2]  # the longest exposure: the sun clipped
    out = str(tmp_path / "f.hdr")
    code, _, err = cli("convert", frame, "-o", out, "--units", "luminance", "-q")
    assert code == 0, err
    with sl.open(frame, units="luminance") as dng, sl.open(out) as hdr:
        assert hdr.metadata["exposure"]["mode"] == "radiance"
        # Radiance's units: luminance = 179 × Y; RGBE keeps 3 significant digits or so.
        y = lambda a: a.astype(np.float64) @ np.array([0.2627, 0.6780, 0.0593])
        np.testing.assert_allclose(179 * y(hdr.image()).mean(), y(dng.image()).mean(), rtol=0.01)
        assert hdr.clip_mask.sum() == dng.clip_mask.sum() > 0
        assert np.array_equal(hdr.clip_mask, dng.clip_mask)


def test_radiance_picture_measured(cli, tmp_path):
    out = str(tmp_path / "s.hdr")
    code, _, err = cli("convert", SUNSET, "-o", out, "--units", "luminance", "-q")
    assert code == 0, err
    by_hdr = sl.stats(out, regions=[SKY])["sky"].Y.mean
    by_dng = sl.stats(SUNSET, regions=[SKY], units="luminance")["sky"].Y.mean
    # Radiance's units (W·sr⁻¹·m⁻²: luminance ÷ 179), RGBE's 8-bit mantissas.
    assert 179 * by_hdr.value == pytest.approx(by_dng.value, rel=0.005)
    with sl.open(out) as img:
        assert sl.stats(img, regions=[SKY])["sky"].Y.mean.value == by_hdr.value


def test_frames_behind_a_filter_equal_the_command_line(cli, tmp_path):
    """A bracket whose two short frames were photographed through a 10-stop ND filter: the
    merge told so equals the command line's, the filtered frames are reported with their
    transmittance, and a transmittance twice the true one is reported as misstated."""
    nd10 = 2.0 ** -10
    sim = sl.simulate("sky-sun", output=tmp_path, seed=5, size=(256, 192), bracket=[-8, -2, -6, 0],
                      frame_filters={1: nd10, 2: nd10})
    assert [f.get("filterTransmittance") for f in sim.record["bracket"]] == [nd10, nd10, None, None]
    out = str(tmp_path / "m.exr")
    code, stdout, err = cli("merge", *sim.frames, "-o", out, "--json", "--units", "luminance", "--unchecked-ratios",
                            "--frame-filter", f"1={nd10}±3%", "--frame-filter", f"2={nd10}±3%")
    assert code == 0, err
    report = json.loads(stdout)["report"]
    with sl.merge(sim.frames, units="luminance", unchecked_ratios=True,
                  frame_filters={1: f"{nd10}±3%", 2: f"{nd10}±3%"}) as m:
        assert m.merge_report == report
        assert np.array_equal(m.image(), np.stack([exr_channels(out)[c] for c in "RGB"], axis=-1))
    assert report["frames"][0]["filterTransmittance"] == nd10 and report["reference"] == 2
    with sl.merge(sim.frames, units="luminance", unchecked_ratios=True, frame_filters=[f"1={2 * nd10}", f"2={2 * nd10}"]) as m:
        assert m.merge_report["frames"][1]["exposureSource"] == "measured"
    with pytest.raises(sl.UsageError, match="frame_filters"):
        sl.merge(sim.frames, frame_filters={7: 0.01})
    with pytest.raises(sl.UsageError, match="transmittance"):
        sl.open(sim.frames[2], units="luminance", filter_factor=1000)


def test_light_source_factors_equal_the_command_line(cli, tmp_path):
    """A calibration recording the light of its references and a factor for LED light; a
    measurement under LED light picks the factor: the same numbers as the command line's,
    the value 0.9 × the daylight one, the item "spectral mismatch" in the budget."""
    out = str(tmp_path / "camera.json")
    code, stdout, err = cli("calibrate", SUNSET, "--region", SKY, "--luminance", "34.5", "-o", out, "--json",
                            "--light-source", "daylight", "--spectral-factor", "LED=0.9±3%")
    assert code == 0, err
    want = json.loads(stdout)
    got = sl.calibrate([{"photo": SUNSET, "region": SKY, "luminance": 34.5}], light_source="daylight",
                       spectral_factors={"LED": (0.9, 0.03)})
    assert {k: v for k, v in got.document.items() if k != "created"} == {k: v for k, v in want.items() if k != "created"}
    assert want["lightSource"] == "daylight" and want["spectralFactors"]["LED"] == {"factor": 0.9, "relativeUncertainty": 0.03}
    code, stdout, err = cli("stats", SUNSET, "--region", SKY, "--units", "luminance", "--calibration", out,
                            "--light-source", "LED", "--json")
    assert code == 0, err
    cli_doc = json.loads(stdout)["files"][0]
    led = sl.stats(SUNSET, regions=[SKY], units="luminance", calibration=out, light_source="LED")
    assert led.document["regions"] == cli_doc["regions"]
    daylight = sl.stats(SUNSET, regions=[SKY], units="luminance", calibration=out)
    budget = led.document["regions"][0]["budgets"][0]
    assert any(i["name"] == "spectral mismatch" and i["relative"] == 0.03 for i in budget["items"])
    plain = daylight.document["regions"][0]["budgets"][0]
    assert abs(budget["value"] / plain["value"] - 0.9) < 1e-6  # the pixels are float32
    assert any(s.startswith("spectral mismatch") for s in plain["notIncluded"])
    with pytest.raises(sl.UsageError, match="no spectral factor for 'sodium'"):
        sl.stats(SUNSET, regions=[SKY], units="luminance", calibration=out, light_source="sodium")


def test_lens_calibration_equals_the_command_line(cli, tmp_path):
    """Flat fields through a simulated lens losing 45/40/35 % at the corners: sl.calibrate_lens
    gives the command line's file (but its time), recovers the fall-off, and an image opened
    with lens= is the command line's conversion with --lens, bit for bit."""
    cam = tmp_path / "cam.json"
    cam.write_text(json.dumps({"vignetting": {"family": "even-polynomial", "centerX": 0.5, "centerY": 0.5,
                                              "coefficients": [[-0.5, 0, 0.05], [-0.45, 0, 0.05], [-0.3, -0.1, 0.05]]}}))
    scene = tmp_path / "flat.json"
    scene.write_text(json.dumps({"name": "flat", "width": 320, "height": 240, "background": [0.45, 0.45, 0.45], "elements": []}))
    code, _, err = cli("simulate", "--scene", str(scene), "--camera", str(cam), "-o", str(tmp_path), "--name", "flat", "-q")
    assert code == 0, err
    flat = str(tmp_path / "flat.dng")
    out = str(tmp_path / "lens.json")
    code, stdout, err = cli("calibrate-lens", flat, "-o", out, "--json")
    assert code == 0, err
    want = json.loads(stdout)
    got = sl.calibrate_lens([flat])
    assert {k: v for k, v in got.document.items() if k != "created"} == {k: v for k, v in want.items() if k != "created"}
    v = got.transmission([0.0, 1.0])
    assert np.allclose(v[0], 1) and np.allclose(v[1], [0.55, 0.60, 0.65], atol=0.005), v
    exr = str(tmp_path / "c.exr")
    code, _, err = cli("convert", flat, "-o", exr, "--lens", out, "--exr-type", "float", "-q")
    assert code == 0, err
    with sl.open(flat, lens=out) as img:
        assert np.array_equal(img.image(), np.stack([exr_channels(exr)[c] for c in "RGB"], axis=-1))
        corrected = img.image()
    with sl.open(flat, lens=[out]) as img:  # a list of one calibration: the same
        assert np.array_equal(img.image(), corrected)
    # Corrected, the flat is flat: the corners within 1 % of the centre.
    centre, corner = corrected[110:130, 150:170].mean(), corrected[:8, :8].mean()
    assert abs(corner / centre - 1) < 0.01, (corner, centre)
    # K from a corner of the flat field: the lens's correction brings it to the centre's.
    corner = {"photo": flat, "region": (0, 0, 16, 16), "luminance": 100.0}
    centre = {"photo": flat, "region": (112, 152, 128, 168), "luminance": 100.0}
    k_corner = sl.calibrate([corner], lens=out).constant
    k_centre = sl.calibrate([centre], lens=out).constant
    assert abs(k_corner / k_centre - 1) < 0.01 and sl.calibrate([corner]).constant > 1.5 * k_centre
    with pytest.raises(sl.CalibrationMismatchError, match="not a uniform flat field"):
        sl.calibrate_lens([SUNSET])


def test_lens_sweep_equals_the_command_line(cli, tmp_path):
    """A sweep of a small disc over seven positions through the same lens: sl.calibrate_lens(...,
    sweep=True) gives `calibrate-lens --sweep`'s file (but its time) and V(0.6) near the
    truth; six positions are refused as too few."""
    cam = tmp_path / "cam.json"
    cam.write_text(json.dumps({"vignetting": {"family": "even-polynomial", "centerX": 0.5, "centerY": 0.5,
                                              "coefficients": [[-0.5, 0, 0.05], [-0.45, 0, 0.05], [-0.3, -0.1, 0.05]]}}))
    dngs = []
    for k, (r, angle) in enumerate([(0, 0), (0.15, 0), (0.3, 90), (0.45, 180), (0.6, 0), (0.7, 36.87), (0.8, 216.87)]):
        d, a = 400 * r, math.radians(angle)
        scene = tmp_path / f"s{k}.json"
        scene.write_text(json.dumps({"name": "sweep", "width": 320, "height": 240, "background": [0.002] * 3, "elements": [
            {"type": "disk", "name": "lamp", "center": [(320 + d * math.cos(a)) / 640, (240 + d * math.sin(a)) / 480],
             "radius": 0.025, "rgb": [0.7, 0.7, 0.7]}]}))
        code, _, err = cli("simulate", "--scene", str(scene), "--camera", str(cam), "-o", str(tmp_path), "--name", f"s{k}",
                           "--seed", str(k + 1), "-q")
        assert code == 0, err
        dngs.append(str(tmp_path / f"s{k}.dng"))
    code, stdout, err = cli("calibrate-lens", "--sweep", *dngs, "-o", str(tmp_path / "lens.json"), "--json")
    assert code == 0, err
    want = json.loads(stdout)
    got = sl.calibrate_lens(dngs, sweep=True)
    assert {k: v for k, v in got.document.items() if k != "created"} == {k: v for k, v in want.items() if k != "created"}
    assert got.document["method"] == "sweep" and got.document["cells"] == 7
    v = got.transmission([0.6])
    assert np.allclose(v[0], [1 - 0.5 * 0.36 + 0.05 * 0.6 ** 6, 1 - 0.45 * 0.36 + 0.05 * 0.6 ** 6,
                              1 - 0.3 * 0.36 - 0.1 * 0.6 ** 4 + 0.05 * 0.6 ** 6], atol=0.01), v
    with pytest.raises(sl.CalibrationMismatchError, match="at least 7 positions"):
        sl.calibrate_lens(dngs[:6], sweep=True)


def lamp_dome(cli, tmp_path, noise):
    """A dim overcast dome (256 px, equidistant) with a disc of radius 3° just below white,
    through a lens spreading 2 % of every pixel's light about it: the DNG's path."""
    cam = tmp_path / "cam.json"
    cam.write_text(json.dumps({"sensitivityOffset": 0, "noise": noise, "strayLight": {"fraction": 0.02, "radius": 0.05}}))
    scene = tmp_path / "dome.json"
    scene.write_text(json.dumps({"name": "dome", "width": 256, "height": 256, "background": [0, 0, 0], "elements": [
        {"type": "sky", "name": "sky", "rgb": [0.0009, 0.001, 0.0012], "projection": "equidistant", "fov": 180,
         "model": "cie-overcast", "sun": [30, 60, 3], "sunRGB": [0.8, 0.8, 0.75]}]}))
    code, _, err = cli("simulate", "--scene", str(scene), "--camera", str(cam), "-o", str(tmp_path), "--name", "dome", "-q")
    assert code == 0, err
    return str(tmp_path / "dome.dng")


def test_stray_light_equals_the_command_line(cli, tmp_path):
    """A dim dome with a bright disc through a lens spreading 2 % of its light: sl.illuminance
    with stray_light= gives `illuminance --stray-light`'s result (the sources, the flagged
    pixels, the bound, the widened interval); the angle without the share is refused."""
    dng = lamp_dome(cli, tmp_path, noise=True)
    code, stdout, err = cli("illuminance", dng, "--projection", "equidistant", "--stray-light", "2", "--bright-source", "100", "--json")
    assert code == 0, err
    want = json.loads(stdout)["results"][0]
    got = sl.illuminance(dng, "equidistant", stray_light=2, bright_source=100)
    assert got.document == want
    assert got.stray_light["sources"] == 1 and got.stray_light["flaggedPixels"] > 0 and got.stray_light["bound"] > 0
    plain = sl.illuminance(dng, "equidistant")
    assert plain.stray_light is None and got.value == plain.value
    assert abs(got.low95 - (plain.low95 - got.stray_light["bound"])) < 1e-9 * got.value
    code, _, err = cli("illuminance", dng, "--projection", "equidistant", "--stray-light-angle", "5")
    assert code == 64 and "--stray-light" in err
    with pytest.raises(sl.UsageError, match="stray_light"):
        sl.illuminance(dng, "equidistant", bright_source=100)


def test_region_stray_light_equals_the_command_line(cli, tmp_path):
    """`stats --projection ... --stray-light` and sl.stats(..., stray_light=) give one document
    (every region's strayLight part); an image in memory measured with the same options gives
    the same parts; stray light without a projection is refused."""
    dng = lamp_dome(cli, tmp_path, noise=False)
    code, stdout, err = cli("stats", dng, "--projection", "equidistant", "--units", "luminance", "--stray-light", "2",
                            "--bright-source", "100", "--json")
    assert code == 0, err
    want = json.loads(stdout)["files"][0]["regions"][0]
    got = sl.stats(dng, projection="equidistant", units="luminance", stray_light=2, bright_source=100)
    part = got.document["regions"][0]["strayLight"]
    assert part == want["strayLight"] and part["sourcePixels"] > 0 and part["flaggedPixels"] > 0
    with sl.open(dng, units="luminance") as img:
        pixels = img.image()
    held = sl.stats(pixels, projection="equidistant", stray_light=2, bright_source=100).document["regions"][0]["strayLight"]
    assert (held["sourcePixels"], held["flaggedPixels"]) == (part["sourcePixels"], part["flaggedPixels"])
    assert abs(held["bound"] - part["bound"]) <= 1e-3 * part["bound"] and abs(held["flaggedShare"] - part["flaggedShare"]) < 1e-4
    code, _, err = cli("stats", dng, "--stray-light", "2")
    assert code == 64 and "--projection" in err
    with pytest.raises(sl.UsageError, match="projection"):
        sl.stats(dng, units="luminance", stray_light=2)
