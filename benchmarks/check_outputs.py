#!/usr/bin/env python3
"""Checks the outputs of one benchmark round (run by bench.py in its own process, so that the
harness stays small and the children's peak memory is theirs alone).

Usage: check_outputs.py JOB.json — JOB names scenelinear's uncompressed HDF5 output
("reference"), the peers' outputs ("peers": {name: path}; .tiff, .exr, or the DNG for the
tifffile Stage-1 decode) and pairs of scenelinear outputs written with 1 and 2 threads
("pairs": {variant: [path1, path2]}). Prints JSON: each peer's shape and the correlation of
its picture with scenelinear's (4×4 block means of the channel average; the Stage-1 codes go
through the DNG's LinearizationTable first), and for each pair whether the files are equal
byte for byte and, if not, what differs."""
import filecmp
import json
import sys

import h5py
import numpy as np

RAW_PHOTOMETRIC = (34892, 32803)
WRITE_TIME_ATTRIBUTES = {"/@created"}  # documented: ISO 8601 time of writing


def block_mean(a, block=4):
    h, w = a.shape[0] // block * block, a.shape[1] // block * block
    a = a[:h, :w]
    return a.reshape(h // block, block, w // block, block).mean(axis=(1, 3))


def channel_mean(a):
    a = np.asarray(a, dtype=np.float32)
    return a.mean(axis=2) if a.ndim == 3 else a


def correlation(reference, picture):
    if reference.shape[:2] != picture.shape[:2]:
        return None
    a, b = block_mean(channel_mean(reference)), block_mean(channel_mean(picture))
    return float(np.corrcoef(a.ravel(), b.ravel())[0, 1])


def read_exr(path):
    import OpenEXR
    with OpenEXR.File(path) as f:
        channels = f.channels()
        if "RGB" in channels:
            return np.asarray(channels["RGB"].pixels)
        return np.stack([np.asarray(channels[c].pixels) for c in ("R", "G", "B")], axis=2)


def stage1_codes(path):
    import tifffile
    with tifffile.TiffFile(path) as tif:
        queue = list(tif.pages)
        while queue:
            page = queue.pop(0)
            if int(page.photometric) in RAW_PHOTOMETRIC:
                codes = page.asarray()
                tag = page.tags.get(50712)  # LinearizationTable
                table = np.asarray(tag.value, dtype=np.float32) if tag is not None else None
                return codes, table
            if page.pages is not None:
                queue.extend(page.pages)
    raise SystemExit(f"{path}: no raw IFD")


def referent_names(f, value):
    """Object references (the dimension scales' DIMENSION_LIST and REFERENCE_LIST) by the
    names of the objects they point to, the scales' back references as a set (their order
    is the order the scales were attached in): the references themselves are file addresses."""
    def name(v):
        if isinstance(v, h5py.Reference):
            return f[v].name if v else None
        if isinstance(v, np.void):  # a compound: (dataset reference, dimension)
            return tuple(name(v[field]) for field in v.dtype.names)
        if isinstance(v, np.ndarray):
            return tuple(name(x) for x in v.ravel())
        return v.item() if isinstance(v, np.generic) else v
    array = np.asarray(value)
    names = [name(v) for v in (array.ravel() if array.shape else [array[()]])]
    return sorted(names, key=repr) if array.dtype.names else names


def same_attribute(a, b, x, y):
    ax, ay = np.asarray(x), np.asarray(y)
    if ax.dtype == object or ax.dtype.names or ay.dtype == object or ay.dtype.names:
        return ax.shape == ay.shape and referent_names(a, x) == referent_names(b, y)
    return np.array_equal(ax, ay)


def compare_hdf5(path_a, path_b):
    differences, times_differ, write_time = [], False, []
    with h5py.File(path_a, "r") as a, h5py.File(path_b, "r") as b:
        names_a, names_b = [], []
        a.visit(names_a.append)
        b.visit(names_b.append)
        if names_a != names_b:
            differences.append("object names")
        for name in ["/"] + [n for n in names_a if n in b]:
            oa, ob = a[name], b[name]
            if set(oa.attrs) != set(ob.attrs):
                differences.append(f"{name}: attribute names")
            for key in oa.attrs:
                if key in ob.attrs and not same_attribute(a, b, oa.attrs[key], ob.attrs[key]):
                    label = f"{name}@{key}" if name != "/" else f"/@{key}"
                    (write_time if label in WRITE_TIME_ATTRIBUTES else differences).append(label)
            if isinstance(oa, h5py.Dataset):
                if oa.dtype != ob.dtype or oa.shape != ob.shape or not np.array_equal(oa[()], ob[()]):
                    differences.append(f"{name}: data")
            if h5py.h5o.get_info(oa.id).mtime != h5py.h5o.get_info(ob.id).mtime:
                times_differ = True
    return {"contentIdentical": not differences, "differences": differences[:10],
            "writeTimeAttributesDiffer": write_time, "objectTimesDiffer": times_differ}


def main():
    with open(sys.argv[1]) as f:
        job = json.load(f)
    with h5py.File(job["reference"], "r") as h:
        reference = h["image"][()]
    result = {"outputShape": list(reference.shape), "peers": {}, "pairs": {}}
    for name, path in job["peers"].items():
        if path.endswith(".tiff"):
            import tifffile
            picture = tifffile.imread(path)
        elif path.endswith(".exr"):
            picture = read_exr(path)
        else:
            codes, table = stage1_codes(path)
            picture = np.take(table, codes) if table is not None else codes
        result["peers"][name] = {"shape": list(picture.shape), "dtype": str(picture.dtype),
                                 "nonzero": bool(np.any(picture)), "r": correlation(reference, picture)}
    for variant, (one, two) in job["pairs"].items():
        entry = {"bytesIdentical": filecmp.cmp(one, two, shallow=False)}
        if not entry["bytesIdentical"]:
            if one.endswith(".h5"):
                entry.update(compare_hdf5(one, two))
            else:
                pa, pb = read_exr(one), read_exr(two)
                entry["contentIdentical"] = bool(np.array_equal(pa.view(np.uint16), pb.view(np.uint16)))
        result["pairs"][variant] = entry
    print(json.dumps(result))


if __name__ == "__main__":
    main()
