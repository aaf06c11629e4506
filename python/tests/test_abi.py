"""The C interface: what the header declares is what the library exports, and wrong
arguments get a status, never a crash."""
import ctypes
import os
import re
import subprocess

import scenelinear
from scenelinear import _native

from conftest import REPO, SUNSET, require_tool


def header_functions():
    text = open(os.path.join(REPO, "Sources", "SceneLinearC", "scenelinear.h")).read()
    return set(re.findall(r"^\s*(?:int32_t|void|const char \*)\s+\*?(sl_\w+)\(", text, re.M))


def test_header_matches_exports_and_bindings():
    require_tool("nm")
    out = subprocess.run(["nm", "-D", "--defined-only", _native.library_path()], capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if re.search(r" T sl_\w+$", line)}
    declared = header_functions()
    assert len(declared) == 25
    assert exported == declared
    assert set(_native.SIGNATURES) == declared


def test_version():
    assert _native.lib().sl_abi_version() == _native.ABI_VERSION == 1
    assert scenelinear.library_version() == "scenelinear 0.1.0"
    small = ctypes.create_string_buffer(4)
    assert _native.lib().sl_version(small, 4) == 64
    assert _native.lib().sl_version(None, 64) == 64


def test_null_and_wrong_arguments_return_usage_status():
    lib = _native.lib()
    err = ctypes.create_string_buffer(256)
    handle = ctypes.c_void_p()
    assert lib.sl_image_open(None, None, ctypes.byref(handle), err, 256) == 64
    assert b"path is NULL" in err.value
    assert lib.sl_image_open(SUNSET.encode(), None, None, err, 256) == 64
    assert lib.sl_image_shape(None, None, None, None) == 64
    assert lib.sl_image_read(None, None, 0, err, 256) == 64
    assert lib.sl_image_metadata(None, None, err, 256) == 64
    assert lib.sl_analyze(None, None, None, err, 256) == 64
    assert lib.sl_analyze(b"not json", None, None, err, 256) == 64
    assert b"not a non-empty JSON list" in err.value
    lib.sl_image_release(None)
    lib.sl_string_free(None)
    assert lib.sl_image_open(SUNSET.encode(), b'{"units": 3}', ctypes.byref(handle), err, 256) == 64
    assert b"option 'units' must be a string" in err.value
    assert lib.sl_image_open(SUNSET.encode(), b'{"colour": "rec2020"}', ctypes.byref(handle), err, 256) == 64
    assert b"unknown option 'colour'" in err.value
    assert not handle.value


def test_buffer_of_the_wrong_size_is_refused():
    from scenelinear.image import _open_handle
    lib = _native.lib()
    handle = _open_handle(SUNSET, {})
    try:
        err = ctypes.create_string_buffer(256)
        small = (ctypes.c_float * 10)()
        assert lib.sl_image_read(handle, small, 10, err, 256) == 64
        assert b"holds 10 elements; the image needs 589824" in err.value
        assert lib.sl_image_read(handle, None, 589824, err, 256) == 64
    finally:
        lib.sl_image_release(handle)


def test_develop_into_caller_memory():
    lib = _native.lib()
    err = ctypes.create_string_buffer(256)
    handle = ctypes.c_void_p()
    refuse = _native.ALLOCATE(lambda *_: 1)
    assert lib.sl_develop(SUNSET.encode(), None, refuse, None, ctypes.byref(handle), err, 256) == 64
    assert "did not provide buffers for 384 × 512 pixels" in err.value.decode() and not handle.value
    assert lib.sl_develop(SUNSET.encode(), None, ctypes.cast(None, _native.ALLOCATE), None, ctypes.byref(handle), err, 256) == 64
    with scenelinear.open(SUNSET) as img:
        a = img.image()
        assert a is img.image() and not a.flags.writeable
        # The handle holds no pixels: they are in numpy's buffer only.
        assert lib.sl_image_read(img._handle, a.ctypes.data_as(_native._float_p), a.size, err, 256) == 64
        assert b"developed into the caller's memory" in err.value


def test_error_message_is_cut_at_a_character_boundary():
    lib = _native.lib()
    name = "/nonexistent/" + "é" * 40 + ".dng"
    handle = ctypes.c_void_p()
    for size in range(1, 40):
        err = ctypes.create_string_buffer(size)
        assert lib.sl_image_open(name.encode(), None, ctypes.byref(handle), err, size) == 10
        err.value.decode("utf-8")  # never a broken sequence
        assert len(err.value) < size
