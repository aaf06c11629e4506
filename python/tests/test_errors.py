"""Bad input raises the exception of its category, naming the file; no input crashes the interpreter."""
import ctypes
import errno
import os
import random
import subprocess
import sys

import pytest

import scenelinear as sl

from conftest import CHART, GREY_RAMP, SUNSET, shared_dataset_dir


def test_missing_file(tmp_path):
    path = str(tmp_path / "nothing.dng")
    with pytest.raises(sl.InputUnreadableError) as e:
        sl.open(path)
    assert path in str(e.value) and e.value.code == 10 and isinstance(e.value, OSError)


def test_failures_name_their_file_and_system_error(tmp_path):
    missing = str(tmp_path / "nothing.dng")
    with pytest.raises(sl.InputUnreadableError) as e:
        sl.open(missing)
    assert e.value.errno == errno.ENOENT and e.value.strerror == os.strerror(errno.ENOENT)
    assert e.value.filename == e.value.path == missing
    # A directory is not a regular file: no system call failed, so no errno.
    with pytest.raises(sl.InputUnreadableError) as e:
        sl.open(str(tmp_path))
    assert e.value.errno is None and e.value.filename == str(tmp_path) and "not a regular file" in str(e.value)
    # Not an OSError: the file is named all the same.
    bad = tmp_path / "text.dng"
    bad.write_text("hello, not a TIFF file at all")
    with pytest.raises(sl.NotDNGError) as e:
        sl.open(bad)
    assert e.value.path == str(bad) and not isinstance(e.value, OSError)
    # The details belong to the thread's last call: a success clears them.
    sl.open(SUNSET).close()
    code, path = ctypes.c_int32(7), ctypes.create_string_buffer(64)
    assert sl._native.lib().sl_error_details(ctypes.byref(code), path, 64) == 0 and code.value == 0 and path.value == b""


def test_not_a_dng(tmp_path):
    path = tmp_path / "text.dng"
    path.write_text("hello, not a TIFF file at all")
    with pytest.raises(sl.NotDNGError) as e:
        sl.open(path)
    assert str(path) in str(e.value) and e.value.code == 11


def test_truncated(tmp_path):
    path = tmp_path / "cut.dng"
    path.write_bytes(open(SUNSET, "rb").read()[:200_000])
    with pytest.raises(sl.SceneLinearError) as e:
        sl.open(path)
    assert str(path) in str(e.value) and e.value.code in (12, 13)


def test_real_truncated_proraw():
    path = os.path.join(shared_dataset_dir(), "real", "iphone12pro_proraw_header_only.dng")
    if not os.path.exists(path):
        pytest.skip(f"shared datasets not found ({path})")
    with pytest.raises(sl.TruncatedError, match="past end of file"):
        sl.open(path)


def test_usage_errors():
    with pytest.raises(sl.UsageError, match="unknown option 'colour'"):
        sl.open(SUNSET, colour="rec2020")
    with pytest.raises(sl.UsageError, match="unknown value 'lab'"):
        sl.open(SUNSET, color="lab")
    with pytest.raises(sl.UsageError, match="both scale the values"):
        sl.open(SUNSET, units="luminance", exposure="baseline")
    with pytest.raises(ValueError):
        sl.stats(SUNSET, regions={"far": "0,0,5000,5000"})
    with pytest.raises(sl.UsageError):
        sl.set_threads(0)


def test_limit(tmp_path):
    with pytest.raises(sl.LimitExceededError, match="too large"):
        sl.open(SUNSET, max_pixels=1000)


CORPUS_RUNNER = r"""
import sys, scenelinear as sl
ok = failed = 0
for path in sys.argv[1:]:
    try:
        with sl.open(path) as img:
            img.image(); img.clip_mask
        ok += 1
    except sl.SceneLinearError as e:
        assert path in str(e) or e.code == 64, (path, str(e))
        failed += 1
print(ok, failed)
"""


def damaged_copies(directory, seed=7):
    """Truncations and seeded byte flips of the repository's DNGs (the bundled sample and the
    simulated captures: LinearRaw and CFA-free ProRAW-style files with lossless JPEG tiles)."""
    rng = random.Random(seed)
    sources = [SUNSET, CHART, GREY_RAMP]
    out = []
    for s, source in enumerate(sources):
        data = open(source, "rb").read()
        for k in range(10):
            cut = directory / f"{s}-cut{k}.dng"
            cut.write_bytes(data[: rng.randrange(8, len(data))])
            out.append(str(cut))
        for k in range(22):
            b = bytearray(data)
            # Damage the structure near the start (header, IFDs, tables) and anywhere.
            for _ in range(rng.randrange(1, 8)):
                at = rng.randrange(0, min(len(b), 4096)) if rng.random() < 0.7 else rng.randrange(0, len(b))
                b[at] = rng.randrange(256)
            flip = directory / f"{s}-flip{k}.dng"
            flip.write_bytes(bytes(b))
            out.append(str(flip))
    return out


def test_damaged_files_never_crash_the_interpreter(tmp_path):
    files = damaged_copies(tmp_path)
    r = subprocess.run([sys.executable, "-c", CORPUS_RUNNER, *files], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    ok, failed = map(int, r.stdout.split())
    assert ok + failed == len(files) == 96
    assert failed > 30  # most of the damage is found and reported


def test_exposure_takes_relative_scalings_only():
    with pytest.raises(sl.UsageError, match="absolute units are the option 'units'"):
        sl.open(SUNSET, exposure="luminance")
