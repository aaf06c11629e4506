#!/usr/bin/env python3
"""Wall time of `scenelinear convert` with the raw-data digest verified (the default) and
with it skipped (--skip-digest), runs interleaved so that load on the machine affects both
alike. Prints the best and median time of each and the overhead of the check.

Usage: benchmarks/digest_cost.py [--runs 9] [--binary .build/release/scenelinear] DNG...
"""
import argparse, os, statistics, subprocess, tempfile, time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('files', nargs='+')
    ap.add_argument('--runs', type=int, default=9)
    ap.add_argument('--binary', default='.build/release/scenelinear')
    args = ap.parse_args()
    out = os.path.join(tempfile.mkdtemp(prefix='scenelinear-digest-'), 'out.exr')
    print('| file | digest check | best | median | overhead (median) |')
    print('|---|---|---|---|---|')
    for f in args.files:
        times = {'verified': [], 'skipped': []}
        for _ in range(args.runs):
            for mode, extra in (('verified', []), ('skipped', ['--skip-digest'])):
                start = time.perf_counter()
                subprocess.run([args.binary, 'convert', f, '-o', out] + extra, check=True, capture_output=True)
                times[mode].append(time.perf_counter() - start)
        med = {k: statistics.median(v) for k, v in times.items()}
        for mode in ('skipped', 'verified'):
            over = '' if mode == 'skipped' else f"{100 * (med['verified'] / med['skipped'] - 1):+.1f} %"
            print(f"| {os.path.basename(f)} | {mode} | {min(times[mode]):.3f} s | {med[mode]:.3f} s | {over} |")


if __name__ == '__main__':
    main()
