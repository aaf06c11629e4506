"""Concurrency: calls release the GIL (the library is loaded as a ctypes.CDLL, whose calls do),
and calls from several threads at once give the same results as one after another."""
import ctypes
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import scenelinear as sl
from scenelinear import _native

from conftest import CHART, GREY_RAMP, SKY, SUNSET


def test_library_calls_release_the_gil():
    lib = _native.lib()
    assert type(lib) is ctypes.CDLL
    assert lib._func_flags_ & ctypes._FUNCFLAG_PYTHONAPI == 0  # a PyDLL would keep the GIL


def read(path, threads=None):
    with sl.open(path, threads=threads) as img:
        return img.image(), img.std()


def test_threads_give_the_sequential_results():
    paths = [SUNSET, GREY_RAMP, CHART, SUNSET]
    alone = [read(p, threads=1) for p in paths]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(read, paths))
    for (a, s), (b, t) in zip(alone, together):
        assert np.array_equal(a, b) and np.array_equal(s, t)
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda p: sl.stats(p, regions=[SKY]).document, [SUNSET, SUNSET]))
    assert results[0] == results[1]


def test_one_image_read_from_several_threads():
    with sl.open(SUNSET) as img:
        want = img.image()
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda _: img.image(), range(8)))
    assert all(np.array_equal(g, want) for g in got)
