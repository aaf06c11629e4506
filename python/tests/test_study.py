"""A study run by the command line (`sequence -o STUDY`) read as a researcher reads it: the
time series opened by xarray (netCDF-4 through h5netcdf) with a decoded `time` coordinate and
units, the CSV's header with units, E_v's lower bound marked as such."""
import csv
import json
import os

import numpy as np
import pytest

SKY = {"name": "sky", "width": 160, "height": 160, "background": [0, 0, 0], "elements": [
    {"type": "sky", "name": "sky", "rgb": [0.45, 0.5, 0.6], "projection": "equidistant", "fov": 180, "model": "cie-overcast",
     "sun": [30, 60, 4], "sunRGB": [60, 58, 52]}]}


@pytest.fixture(scope="module")
def study(cli, tmp_path_factory):
    base = tmp_path_factory.mktemp("study")
    frames = base / "in"
    for k, (sun_radius, sun) in enumerate([(4, 60), (4, 60), (0.5, 2.4e5)]):
        scene = dict(SKY)
        scene["elements"] = [dict(SKY["elements"][0], sun=[30, 60, sun_radius], sunRGB=[sun, 0.96 * sun, 0.87 * sun])]
        path = base / f"scene{k}.json"
        path.write_text(json.dumps(scene))
        code, _, err = cli("simulate", "--scene", str(path), "--bracket=-8,-4,0", "--name", f"s{k}", "--seed", str(20 + k),
                           "--capture-time", f"2026:06:21 10:{5 * k:02d}:00", "--capture-offset", "+02:00", "-o", str(frames), "-q")
        assert code == 0, err
    out = base / "study"
    code, stdout, err = cli("sequence", str(frames), "-o", str(out), "--projection", "equidistant", "--site", "48.1,11.6,520",
                            "--region", "zenith=45%,45%,55%,55%", "--json")
    assert code == 0, err
    return out, json.loads(stdout)


def test_xarray_opens_the_time_series(study):
    xr = pytest.importorskip("xarray")
    out, document = study
    assert document["schema"] == "scenelinear.study/1" and document["measured"] == 3
    with xr.open_dataset(out / "timeseries.h5", engine="h5netcdf") as ds:
        assert ds.sizes["time"] == 3 and np.issubdtype(ds["time"].dtype, np.datetime64)
        assert str(ds["time"].values[0]).startswith("2026-06-21T08:00:00")
        assert ds["E_v"].attrs["units"] == "lx" and ds["sun_elevation"].attrs["units"] == "degree"
        kinds = ds["E_v_kind"].attrs["flag_meanings"].split()
        kind = [kinds[int(k)] for k in ds["E_v_kind"].values]
        assert kind == ["value", "value", "lower_bound"]
        # A bound has no upper end; the values' intervals bracket them.
        assert np.isnan(ds["E_v_high95"].values[2]) and ds["E_v_low95"].values[2] <= ds["E_v"].values[2]
        assert np.all(ds["E_v_low95"].values[:2] < ds["E_v"].values[:2]) and np.all(ds["E_v"].values[:2] < ds["E_v_high95"].values[:2])
        masks = dict(zip(ds["qc_flags"].attrs["flag_meanings"].split(), ds["qc_flags"].attrs["flag_masks"]))
        assert int(ds["qc_flags"].values[2]) & int(masks["clipped_in_every_frame"]) and int(ds["qc_flags"].values[0]) == 0
        # The zenith region: a cd/m² value with its interval in every set (the sun is elsewhere).
        assert ds["L_zenith"].attrs["units"] == "cd m-2" and np.all(np.isfinite(ds["L_zenith"].values))
        assert np.all(ds["L_zenith_low95"].values < ds["L_zenith"].values) and np.all(ds["L_zenith"].values < ds["L_zenith_high95"].values)
        assert 40 < float(ds["sun_elevation"].values[0]) < 50 and float(ds["sun_elevation"].values[2]) > float(ds["sun_elevation"].values[0])


def test_the_csv_states_its_units(study):
    out, _ = study
    with open(out / "timeseries.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3 and "E_v [lx]" in rows[0] and "sun_elevation [deg]" in rows[0] and "L_zenith [cd/m²]" in rows[0]
    assert [r["L_zenith_kind"] for r in rows] == ["value"] * 3
    assert [r["E_v_kind"] for r in rows] == ["value", "value", "lower-bound"] and rows[2]["E_v_high95 [lx]"] == ""
    assert "clipped-in-every-frame" in rows[2]["flags"]
    with open(out / "sets.jsonl") as f:
        assert len([json.loads(line) for line in f]) == 3


def test_a_killed_study_resumes_without_redoing_its_sets(study, tmp_path):
    """SIGKILL once the first set's line is in the manifest; the rerun measures only the rest."""
    import signal
    import subprocess
    import time
    from conftest import cli_path
    out, _ = study
    frames = out.parent / "in"
    target = tmp_path / "killed"
    p = subprocess.Popen([cli_path(), "sequence", str(frames), "-o", str(target), "--projection", "equidistant", "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    manifest = target / "sets.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None:
        if manifest.exists() and manifest.read_text().count("\n") >= 1:
            break
        time.sleep(0.005)
    p.send_signal(signal.SIGKILL)
    p.wait()
    done = [json.loads(line) for line in manifest.read_text().splitlines() if line.strip()]
    assert 1 <= len(done) <= 3 and all(r["status"] == "ok" for r in done)
    rerun = subprocess.run([cli_path(), "sequence", str(frames), "-o", str(target), "--projection", "equidistant", "--json"],
                           capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    document = json.loads(rerun.stdout)
    assert document["skipped"] == len(done) and document["measured"] == 3 - len(done)
    assert len(document["sets"]) == 3 and not list(target.glob(".*partial*"))


def test_a_watched_folder_measures_sets_as_they_arrive(study, tmp_path):
    """`sequence --watch`: the three sets copied into a live folder one by one are measured as
    each completes (the last once no frame is settling); SIGTERM ends the watcher with 143 and
    leaves the manifest and the time series whole."""
    import shutil
    import signal
    import subprocess
    import time
    from conftest import cli_path
    out, _ = study
    frames = sorted((out.parent / "in").glob("*.dng"))
    live, target = tmp_path / "live", tmp_path / "watched"
    live.mkdir()
    p = subprocess.Popen([cli_path(), "sequence", str(live), "-o", str(target), "--projection", "equidistant", "--watch", "0.5",
                          "--settle", "1", "--no-glare"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    manifest = target / "sets.jsonl"

    def recorded():
        return [json.loads(line) for line in manifest.read_text().splitlines()] if manifest.exists() else []

    try:
        for k in range(3):
            for f in frames:
                if f.name.startswith(f"s{k}_"):
                    shutil.copy(f, live / f.name)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len(recorded()) < k + 1:
                assert p.poll() is None, p.stderr.read()
                time.sleep(0.1)
            assert len(recorded()) == k + 1, f"set {k + 1} not measured"
    finally:
        p.send_signal(signal.SIGTERM)
        stdout, stderr = p.communicate(timeout=30)
    assert p.returncode == 143, stderr
    records = recorded()
    assert [r["status"] for r in records] == ["ok"] * 3 and len({r["id"] for r in records}) == 3
    assert records[2]["illuminanceKind"] == "lower-bound"
    with open(target / "timeseries.csv", newline="") as f:
        assert len(list(csv.DictReader(f))) == 3
    assert "measured 1 sets" in stdout and not list(target.glob(".*partial*"))
