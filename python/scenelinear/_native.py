"""The SceneLinear library loaded through its C interface (scenelinear.h) with ctypes.

Loaded on first use, not at import: `import scenelinear` stays cheap. The library is looked
for in $SCENELINEAR_LIB, then beside this package (scenelinear/lib/libSceneLinearC.so, where
`pip install` puts it). ctypes releases the GIL around every call, so calls from several
Python threads run in parallel.
"""
import ctypes
import json
import os
import threading

from . import errors

ABI_VERSION = 1
_ERR_LEN = 4096
_lock = threading.Lock()
_lib = None

c_char_p = ctypes.c_char_p
c_size_t = ctypes.c_size_t
c_int32 = ctypes.c_int32
c_int64 = ctypes.c_int64
c_void_p = ctypes.c_void_p
_float_p = ctypes.POINTER(ctypes.c_float)
_uint8_p = ctypes.POINTER(ctypes.c_uint8)
_str_out = ctypes.POINTER(ctypes.c_void_p)
ALLOCATE = ctypes.CFUNCTYPE(c_int32, c_void_p, c_int64, c_int64, ctypes.POINTER(_float_p), ctypes.POINTER(_uint8_p))

# name: (restype, argtypes), as scenelinear.h declares them.
SIGNATURES = {
    "sl_abi_version": (c_int32, []),
    "sl_version": (c_int32, [c_char_p, c_size_t]),
    "sl_image_open": (c_int32, [c_char_p, c_char_p, ctypes.POINTER(c_void_p), c_char_p, c_size_t]),
    "sl_image_release": (None, [c_void_p]),
    "sl_image_shape": (c_int32, [c_void_p, ctypes.POINTER(c_int64), ctypes.POINTER(c_int64), ctypes.POINTER(c_int64)]),
    "sl_image_read": (c_int32, [c_void_p, _float_p, c_size_t, c_char_p, c_size_t]),
    "sl_image_read_std": (c_int32, [c_void_p, _float_p, c_size_t, c_char_p, c_size_t]),
    "sl_image_read_clip_mask": (c_int32, [c_void_p, _uint8_p, c_size_t, c_char_p, c_size_t]),
    "sl_image_read_mask": (c_int32, [c_void_p, c_char_p, _float_p, c_size_t, c_char_p, c_size_t]),
    "sl_image_metadata": (c_int32, [c_void_p, _str_out, c_char_p, c_size_t]),
    "sl_analyze": (c_int32, [c_char_p, c_char_p, _str_out, c_char_p, c_size_t]),
    "sl_image_analyze": (c_int32, [c_void_p, c_char_p, _str_out, c_char_p, c_size_t]),
    "sl_image_from_array": (c_int32, [_float_p, c_int64, c_int64, _uint8_p, _float_p, c_char_p, ctypes.POINTER(c_void_p),
                                      c_char_p, c_size_t]),
    "sl_merge": (c_int32, [c_char_p, c_char_p, ctypes.POINTER(c_void_p), c_char_p, c_size_t]),
    "sl_image_read_frames": (c_int32, [c_void_p, _uint8_p, c_size_t, c_char_p, c_size_t]),
    "sl_illuminance": (c_int32, [c_char_p, c_char_p, _str_out, c_char_p, c_size_t]),
    "sl_simulate": (c_int32, [c_char_p, _str_out, c_char_p, c_size_t]),
    "sl_image_fisheye": (c_int32, [c_void_p, c_char_p, _float_p, _float_p, _float_p, c_size_t, _str_out, c_char_p, c_size_t]),
    "sl_image_with_mask": (c_int32, [c_void_p, c_char_p, _float_p, c_size_t, ctypes.POINTER(c_void_p), c_char_p, c_size_t]),
    "sl_develop": (c_int32, [c_char_p, c_char_p, ALLOCATE, c_void_p, ctypes.POINTER(c_void_p), c_char_p, c_size_t]),
    "sl_image_std_of": (c_int32, [c_void_p, _float_p, _uint8_p, _float_p, c_size_t, c_char_p, c_size_t]),
    "sl_calibrate": (c_int32, [c_char_p, c_char_p, _str_out, c_char_p, c_size_t]),
    "sl_calibrate_lens": (c_int32, [c_char_p, c_char_p, _str_out, c_char_p, c_size_t]),
    "sl_string_free": (None, [c_void_p]),
    "sl_error_details": (c_int32, [ctypes.POINTER(c_int32), c_char_p, c_size_t]),
}


def library_path():
    """Where the library is loaded from."""
    given = os.environ.get("SCENELINEAR_LIB")
    if given:
        return given
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "libSceneLinearC.so")


def lib():
    """The loaded library (loaded, checked and declared once)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            path = library_path()
            if not os.path.exists(path):
                raise ImportError(f"the SceneLinear library is not at {path}: install the package with "
                                  "`pip install ./python` (it builds the library), or set SCENELINEAR_LIB")
            # The Swift runtime's crash reporter looks for a helper a wheel does not ship;
            # without it a crash is reported by the interpreter as usual.
            os.environ.setdefault("SWIFT_BACKTRACE", "enable=no")
            handle = ctypes.CDLL(path)
            for name, (restype, argtypes) in SIGNATURES.items():
                function = getattr(handle, name)
                function.restype = restype
                function.argtypes = argtypes
            version = handle.sl_abi_version()
            if version != ABI_VERSION:
                raise ImportError(f"{path} has C interface version {version}; this package needs {ABI_VERSION}")
            _lib = handle
    return _lib


def options_json(options):
    """The options as the JSON object the library reads (None values left out)."""
    return json.dumps({k: v for k, v in options.items() if v is not None}).encode()


def call(name, *args):
    """Calls `name` with an error buffer appended; raises the matching exception on failure."""
    err = ctypes.create_string_buffer(_ERR_LEN)
    status = getattr(lib(), name)(*args, err, _ERR_LEN)
    if status != 0:
        raise errors.from_status(status, err.value.decode("utf-8", "replace"), *error_details())


def error_details():
    """The file and system error number of this thread's last failure (sl_error_details)."""
    code, path = c_int32(), ctypes.create_string_buffer(_ERR_LEN)
    lib().sl_error_details(ctypes.byref(code), path, _ERR_LEN)
    return os.fsdecode(path.value), code.value


def call_for_string(name, *args):
    """Calls `name`, whose last argument before the error buffer is a `char **`; returns the text."""
    out = c_void_p()
    try:
        call(name, *args, ctypes.byref(out))
    except Exception:
        take_string(out)
        raise
    return take_string(out)


def take_string(pointer):
    """The text of a string the library allocated, released."""
    if not pointer.value:
        return None
    try:
        return ctypes.string_at(pointer.value).decode("utf-8")
    finally:
        lib().sl_string_free(pointer.value)


def version():
    buffer = ctypes.create_string_buffer(64)
    if lib().sl_version(buffer, 64) != 0:
        raise errors.InternalError("the library's version does not fit 64 bytes", 1)
    return buffer.value.decode()
