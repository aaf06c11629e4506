"""Checks SceneLinear EXRs in several colour spaces against OpenColorIO.

Usage: check_color_spaces.py rec2020.exr other.exr...

For each other file: its header's chromaticities agree with its colorInteropID (the
primaries table below, and for D65 spaces OCIO's own CIE XYZ of the primaries); OCIO's
built-in studio config knows the interop ID; and OCIO's conversion of the Rec.2020 file's
pixels to that space equals the file's pixels within half-float rounding: per channel,
|ocio - ours| <= (sum_j |M_ij| |x_j| + |ours|) * 2^-11 + 2^-24. Prints one line per file:
"<id> max_error_over_tolerance=<r> pixels=<n> ok=<True|False>".
"""
import sys
import numpy as np
import OpenEXR
import PyOpenColorIO as ocio

PRIMARIES = {
    "lin_rec2020_scene": (0.708, 0.292, 0.170, 0.797, 0.131, 0.046, 0.3127, 0.3290),
    "lin_rec709_scene": (0.64, 0.33, 0.30, 0.60, 0.15, 0.06, 0.3127, 0.3290),
    "lin_ap1_scene": (0.713, 0.293, 0.165, 0.830, 0.128, 0.044, 0.32168, 0.33767),
    "lin_ap0_scene": (0.7347, 0.2653, 0.0, 1.0, 0.0001, -0.0770, 0.32168, 0.33767),
    "lin_ciexyzd65_scene": (1, 0, 0, 1, 0, 0, 1 / 3, 1 / 3),
}


def load(path):
    with OpenEXR.File(path, separate_channels=True) as f:
        h = {k: f.header()[k] for k in ("colorInteropID", "chromaticities")}
        ch = f.channels()
        rgb = np.stack([ch[c].pixels.astype(np.float32) for c in "RGB"], axis=-1)
        return h, rgb


config = ocio.Config.CreateFromBuiltinConfig("studio-config-latest")
src_header, src = load(sys.argv[1])
assert src_header["colorInteropID"] == "lin_rec2020_scene", src_header["colorInteropID"]
failed = False
for path in sys.argv[1:]:
    h, ours = load(path)
    cid = h["colorInteropID"]
    chroma = np.array(h["chromaticities"], dtype=np.float64)
    ok = np.allclose(chroma, PRIMARIES[cid], atol=1e-6)
    if config.getColorSpace(cid) is None:
        ok = False
    if PRIMARIES[cid][6:] == (0.3127, 0.3290):
        # OCIO's CIE XYZ (D65) of the unit primaries: their xy are the chromaticities.
        p = config.getProcessor(cid, "lin_ciexyzd65_scene").getDefaultCPUProcessor()
        unit = np.eye(3, dtype=np.float32).copy()
        p.applyRGB(unit)
        xy = [(v[0] / v.sum(), v[1] / v.sum()) for v in unit.astype(np.float64)]
        ok = ok and np.allclose(np.ravel(xy), chroma[:6], atol=2e-5)
    processor = config.getProcessor("lin_rec2020_scene", cid).getDefaultCPUProcessor()
    converted = src.reshape(-1, 3).copy()
    processor.applyRGB(converted)
    m = np.eye(3, dtype=np.float32)
    probe = m.copy()
    processor.applyRGB(probe)
    matrix = probe.T.astype(np.float64)  # columns: images of the unit vectors
    x = np.abs(src.reshape(-1, 3).astype(np.float64))
    y = ours.reshape(-1, 3).astype(np.float64)
    tolerance = (x @ np.abs(matrix).T + np.abs(y)) * 2.0 ** -11 + 2.0 ** -24
    finite = np.isfinite(y).all(axis=1) & np.isfinite(converted).all(axis=1)
    ratio = float((np.abs(converted.astype(np.float64) - y)[finite] / tolerance[finite]).max())
    ok = ok and ratio <= 1.0 and finite.sum() == len(y)
    failed |= not ok
    print(f"{cid} max_error_over_tolerance={ratio:.4f} pixels={len(y)} ok={ok}")
sys.exit(1 if failed else 0)
