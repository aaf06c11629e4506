#!/usr/bin/env python3
"""Mutation storm: damaged copies of DNGs through `scenelinear convert`.

Each mutant is one DNG with one change: a byte flipped inside the main raw image's data
(`flip-data`), a byte flipped anywhere (`flip-any`), a truncation (`truncate`), or a tile
or strip offset or byte count overwritten (`offset`). Each is converted with a time limit
and the outcome is checked:

- no crash (a signal, or exit 1, the internal-error code) and no hang (time limit);
- the exit code is 0 or one of the documented failure codes (10-17);
- a failed conversion leaves no file in its output directory; a successful one leaves
  exactly the EXR asked for;
- a mutant whose change lies inside the raw image data converts with exit 0 only if its
  pixels equal those of the untouched file (the change reached no covered sample, e.g.
  the padding of an edge tile): never an image made from changed raw data.

Usage:
  benchmarks/mutation_storm.py [--count 300] [--seed 1] [--timeout 120] [--json out.json]
                               [--binary .build/release/scenelinear] DNG...
Prints a summary table (Markdown) and exits 1 if any check failed.
"""
import argparse, json, os, random, shutil, subprocess, sys, tempfile, time

import numpy as np
import OpenEXR
import tifffile

FAILURE_CODES = {10, 11, 12, 13, 14, 15, 16, 17}


def raw_blocks(path):
    """Offsets and byte counts of the main raw image (NewSubFileType 0, CFA or LinearRaw)."""
    with tifffile.TiffFile(path) as tif:
        pages = []

        def walk(page):
            pages.append(page)
            for sub in getattr(page, 'pages', None) or []:
                walk(sub)

        for page in tif.pages:
            walk(page)
        for page in pages:
            if page.subfiletype == 0 and page.photometric.value in (32803, 34892):
                tags = page.tags
                offsets_tag = tags.get(324) or tags.get(273)
                counts_tag = tags.get(325) or tags.get(279)
                return (list(page.dataoffsets), list(page.databytecounts),
                        offsets_tag.valueoffset, counts_tag.valueoffset, offsets_tag.dtype, tif.byteorder)
    raise SystemExit(f"{path}: no main raw image found")


def pixels(exr_path):
    f = OpenEXR.File(exr_path)
    channels = f.channels()
    return {name: np.asarray(ch.pixels).tobytes() for name, ch in channels.items()}


def convert(binary, src, out_dir, timeout):
    os.makedirs(out_dir, exist_ok=True)
    start = time.monotonic()
    try:
        p = subprocess.run([binary, 'convert', src, '-o', os.path.join(out_dir, 'out.exr'), '--exr-compression', 'none'],
                           capture_output=True, text=True, timeout=timeout)
        code, err = p.returncode, p.stderr.strip()
    except subprocess.TimeoutExpired:
        code, err = 'timeout', ''
    return code, err, time.monotonic() - start


def mutate(data, kind, info, rng):
    offsets, counts, off_table, count_table, dtype, order = info
    b = bytearray(data)
    if kind == 'flip-data':
        i = rng.randrange(len(offsets))
        at = offsets[i] + rng.randrange(max(1, counts[i]))
        b[at] ^= rng.randrange(1, 256)
        return bytes(b), True, f"block {i} byte {at}"
    if kind == 'flip-any':
        at = rng.randrange(len(b))
        b[at] ^= rng.randrange(1, 256)
        inside = any(o <= at < o + c for o, c in zip(offsets, counts))
        return bytes(b), inside, f"byte {at}"
    if kind == 'truncate':
        n = rng.randrange(8, len(b))
        return bytes(b[:n]), False, f"cut at {n}"
    # 'offset': overwrite one entry of the block offset or byte-count array.
    i = rng.randrange(len(offsets))
    size = 8 if '8' in str(dtype) or 'Q' in str(dtype) else 4 if ('4' in str(dtype) or 'I' in str(dtype) or 'L' in str(dtype)) else 2
    table = rng.choice([off_table, count_table])
    at = table + i * size
    value = rng.choice([0, 1, len(b) - 1, len(b) + rng.randrange(1, 1 << 20), rng.randrange(0, 1 << (8 * size))])
    value %= 1 << (8 * size)
    b[at:at + size] = value.to_bytes(size, 'little' if order == '<' else 'big')
    return bytes(b), False, f"{'offset' if table == off_table else 'byte count'} {i} := {value}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('files', nargs='+')
    ap.add_argument('--count', type=int, default=300)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--timeout', type=float, default=120)
    ap.add_argument('--binary', default='.build/release/scenelinear')
    ap.add_argument('--json')
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix='scenelinear-storm-')
    kinds = ['flip-data'] * 5 + ['flip-any'] * 2 + ['truncate'] * 2 + ['offset']
    results, failures = [], []
    try:
        reference = {}
        for f in args.files:
            code, err, _ = convert(args.binary, f, os.path.join(work, 'ref'), args.timeout)
            if code != 0:
                raise SystemExit(f"{f}: the untouched file does not convert (exit {code}): {err}")
            reference[f] = pixels(os.path.join(work, 'ref', 'out.exr'))
            shutil.rmtree(os.path.join(work, 'ref'))
        infos = {f: raw_blocks(f) for f in args.files}
        for n in range(args.count):
            f = args.files[n % len(args.files)]
            kind = rng.choice(kinds)
            data, inside, what = mutate(open(f, 'rb').read(), kind, infos[f], rng)
            src = os.path.join(work, f"m{n}.dng")
            with open(src, 'wb') as fh:
                fh.write(data)
            out_dir = os.path.join(work, f"o{n}")
            code, err, seconds = convert(args.binary, src, out_dir, args.timeout)
            left = sorted(os.listdir(out_dir))
            problem = None
            if code == 'timeout':
                problem = 'hang'
            elif code < 0 or code == 1:
                problem = f'crash (exit {code})'
            elif code != 0 and code not in FAILURE_CODES:
                problem = f'unexpected exit {code}'
            elif code != 0 and left:
                problem = f'partial output {left}'
            elif code != 0 and src not in err:
                problem = 'error does not name the file'
            elif code == 0 and left != ['out.exr']:
                problem = f'outputs {left}'
            identical = None
            if code == 0 and not problem:
                identical = pixels(os.path.join(out_dir, 'out.exr')) == reference[f]
                if inside and not identical:
                    problem = 'converted changed raw data with exit 0'
            results.append({'file': os.path.basename(f), 'kind': kind, 'what': what, 'insideRawData': inside,
                            'exit': code, 'identicalPixels': identical, 'seconds': round(seconds, 3),
                            'error': err[:300], 'problem': problem})
            if problem:
                failures.append(results[-1])
                print(f"FAIL {os.path.basename(f)} {kind} {what}: {problem} {err[:200]}", file=sys.stderr)
            os.remove(src)
            shutil.rmtree(out_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    by_exit = {}
    for r in results:
        by_exit[str(r['exit'])] = by_exit.get(str(r['exit']), 0) + 1
    inside = [r for r in results if r['insideRawData']]
    print(f"| mutants | {len(results)} (seed {args.seed}, {len(args.files)} files) |")
    print("|---|---|")
    for k in sorted(set(r['kind'] for r in results)):
        print(f"| {k} | {sum(r['kind'] == k for r in results)} |")
    print(f"| exit codes | {', '.join(f'{k}: {v}' for k, v in sorted(by_exit.items()))} |")
    print(f"| changed inside raw data | {len(inside)}: {sum(r['exit'] == 13 for r in inside)} exit 13, "
          f"{sum(r['exit'] == 0 for r in inside)} exit 0 with identical pixels, "
          f"{sum(r['exit'] not in (0, 13) for r in inside)} other failures |")
    print(f"| digest mismatches (exit 13 naming the digest) | {sum('digest mismatch' in r['error'] for r in results)} |")
    print(f"| longest conversion | {max(r['seconds'] for r in results):.2f} s |")
    print(f"| problems (crash, hang, partial output, exit 0 on changed data) | {len(failures)} |")
    if args.json:
        with open(args.json, 'w') as fh:
            json.dump({'results': results, 'failures': failures}, fh, indent=1)
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
