"""The package's build backend: builds the SceneLinear C library with SwiftPM (product
SceneLinearC of the repository one level up), copies it and its header into scenelinear/,
then lets setuptools make the wheel.

config_settings (pip install --config-settings KEY=VALUE):
  swift-build-config  release (default) or debug: the SwiftPM configuration to build.
  swift-build-args    more arguments for `swift build`, split as a shell would (`make test`
                      gives its own build's flags and scratch directory, so nothing is rebuilt).
  library             a library already built, to copy instead of building.
  bundle-runtime      true: copy the Swift runtime libraries the library needs (those under
                      the toolchain's directory, found by ldd) beside it and make every copy
                      find the others by RUNPATH $ORIGIN alone (patchelf), so the wheel runs
                      where no Swift toolchain is installed (`make wheel`). The system
                      libraries (libtiff, HDF5, OpenEXR, libjxl, ... from Debian) are not bundled.
"""
import os
import shutil
import shlex
import subprocess

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403 - the other hooks as setuptools has them

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.environ.get("SCENELINEAR_REPO", os.path.dirname(HERE))


def _setting(config_settings, key, default=None):
    return (config_settings or {}).get(key) or default


def _native_library(config_settings):
    """Builds (or takes) libSceneLinearC.so and puts it in scenelinear/lib/."""
    given = _setting(config_settings, "library")
    if given is None:
        config = _setting(config_settings, "swift-build-config", "release")
        if config not in ("release", "debug"):
            raise RuntimeError(f"swift-build-config must be release or debug, not {config!r}")
        swift = shutil.which("swift")
        if swift is None:
            raise RuntimeError("building the scenelinear package needs the Swift toolchain (`swift` on PATH): "
                               "the package calls the SceneLinear library, which is written in Swift")
        extra = shlex.split(_setting(config_settings, "swift-build-args", ""))
        build = [swift, "build", "-c", config, "--package-path", REPO] + extra
        subprocess.run(build + ["--product", "SceneLinearC"], check=True)
        bin_path = subprocess.run(build + ["--show-bin-path"], check=True,
                                  capture_output=True, text=True).stdout.strip()
        given = os.path.join(bin_path, "libSceneLinearC.so")
    lib_dir = os.path.join(HERE, "scenelinear", "lib")
    os.makedirs(lib_dir, exist_ok=True)
    shutil.copy2(given, os.path.join(lib_dir, "libSceneLinearC.so"))
    shutil.copy2(os.path.join(REPO, "Sources", "SceneLinearC", "scenelinear.h"), os.path.join(HERE, "scenelinear", "scenelinear.h"))
    for stale in os.listdir(lib_dir):
        if stale != "libSceneLinearC.so":
            os.remove(os.path.join(lib_dir, stale))
    if _setting(config_settings, "bundle-runtime", "false") == "true":
        _bundle_runtime(lib_dir)


def _bundle_runtime(lib_dir):
    """The Swift runtime libraries beside libSceneLinearC.so, every RUNPATH set to $ORIGIN."""
    patchelf = shutil.which("patchelf")
    if patchelf is None:
        raise RuntimeError("bundle-runtime needs patchelf (Debian package patchelf)")
    ours = os.path.join(lib_dir, "libSceneLinearC.so")
    toolchain = os.path.dirname(os.path.dirname(os.path.realpath(shutil.which("swift") or "/")))
    listing = subprocess.run(["ldd", ours], check=True, capture_output=True, text=True).stdout
    copied = []
    for line in listing.splitlines():
        parts = line.split("=>")
        if len(parts) != 2:
            continue
        path = parts[1].split("(")[0].strip()
        if path.startswith(toolchain + os.sep):
            target = os.path.join(lib_dir, os.path.basename(path))
            shutil.copy2(path, target)
            copied.append(target)
    if not copied:
        raise RuntimeError(f"no Swift runtime library under {toolchain} in `ldd {ours}`")
    for library in [ours] + copied:
        subprocess.run([patchelf, "--set-rpath", "$ORIGIN", library], check=True)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _native_library(config_settings)
    return _setuptools.build_wheel(wheel_directory, None, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _native_library(config_settings)
    return _setuptools.build_editable(wheel_directory, None, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError("the scenelinear package is built from the repository (pip install ./python); it has no sdist")
