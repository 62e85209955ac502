#!/usr/bin/env python3
"""docker_launch.py - the timing half of tests/bench/docker_launch.sh: runs each case of a plan
N times, interleaved (a b c a b c ...), and prints per case the median, p90 and min wall time,
the medians of `warden run`'s WARDEN_TIMING stages (run/report.c run_stamp) and of a multi-step
case's steps; writes them, every single value and the plan, to a JSON file. Never judges a
time: a command that fails (a non-zero status) ends the bench with its error (exit 1).

usage: docker_launch.py PLAN.json OUT.json|-

PLAN: {"runs": N, "warmup": N, "meta": {...}, "cases": [{"key", "label", "cmd",
"steps": [[argv...], ...], "parts": [names] (optional, one per step)}, ...], "ratios": [[KEY,
KEY], ...] (optional)}. A step's "{id}" is replaced by the first step's output (stripped):
`docker create` prints the container's id. A ratio is the median of the per-round ratios (round
r of one case over round r of the other: a slow drift of the load cancels out).
"""
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

STAMP = re.compile(r'warden run: timing: (\S+)\s+([0-9.]+) ms')


def run_case(case):
    """Runs the steps of one case once: (wall ms, [step ms], {stage: ms})."""
    ident = ''
    parts, stages = [], {}
    t0 = time.perf_counter()
    for i, argv in enumerate(case['steps']):
        argv = [a.replace('{id}', ident) for a in argv]
        t = time.perf_counter()
        r = subprocess.run(argv, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE if i == 0 else subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, check=False)
        parts.append((time.perf_counter() - t) * 1000)
        if r.returncode != 0:
            tail = ' | '.join(r.stderr.strip().splitlines()[-3:])
            sys.exit(f"docker_launch: {case['key']}: `{' '.join(argv)}` exited "
                     f"{r.returncode}: {tail}")
        if i == 0 and len(case['steps']) > 1:
            ident = r.stdout.strip()
            if not re.fullmatch(r'[0-9a-f]{12,64}', ident):
                sys.exit(f"docker_launch: {case['key']}: no container id from "
                         f"`{' '.join(argv)}`: {ident!r}")
        for line in r.stderr.splitlines():
            m = STAMP.match(line)
            if m:
                stages[m.group(1)] = stages.get(m.group(1), 0.0) + float(m.group(2))
    return (time.perf_counter() - t0) * 1000, parts, stages


def p90(vals):
    """The 90th percentile, nearest rank (of 15 values: the 14th smallest)."""
    s = sorted(vals)
    return s[max(0, math.ceil(0.9 * len(s)) - 1)]


def summary(case, rec):
    wall = [r[0] for r in rec]
    out = {'label': case['label'], 'cmd': case['cmd'], 'wall_ms': [round(v, 2) for v in wall],
           'median_ms': round(statistics.median(wall), 2), 'p90_ms': round(p90(wall), 2),
           'min_ms': round(min(wall), 2), 'max_ms': round(max(wall), 2),
           'mean_ms': round(statistics.mean(wall), 2)}
    if case.get('parts'):
        out['parts_median_ms'] = {n: round(statistics.median(r[1][i] for r in rec), 2)
                                  for i, n in enumerate(case['parts'])}
    names = []
    for r in rec:
        names += [n for n in r[2] if n not in names]
    if names:
        # a stage missing from a run (it did not happen there) counts as 0 ms in it
        out['stages_median_ms'] = {n: round(statistics.median(r[2].get(n, 0.0) for r in rec), 3)
                                   for n in names}
        # what no stamp covers: warden's exec and start-up before `begin`, its exit after
        # `handoff`, and the bench's fork and wait
        out['outside_stamps_median_ms'] = round(
            statistics.median(r[0] - sum(r[2].values()) for r in rec), 2)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split('\n\n')[1])
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    cases, n = plan['cases'], int(plan['runs'])
    load0 = os.getloadavg()
    for _ in range(int(plan.get('warmup', 2))):
        for c in cases:
            run_case(c)
    recs = {c['key']: [] for c in cases}
    for _ in range(n):
        for c in cases:
            recs[c['key']].append(run_case(c))
    load1 = os.getloadavg()
    res = {'meta': dict(plan.get('meta', {}), runs=n, warmup=int(plan.get('warmup', 2)),
                        order=[c['key'] for c in cases],
                        loadavg_before=[round(x, 2) for x in load0],
                        loadavg_after=[round(x, 2) for x in load1]),
           'cases': {c['key']: summary(c, recs[c['key']]) for c in cases},
           'ratios': {f'{a}/{b}': round(statistics.median(
               x[0] / y[0] for x, y in zip(recs[a], recs[b])), 3)
               for a, b in plan.get('ratios', [])}}
    print(f"{n} runs per case, interleaved, after {res['meta']['warmup']} warm-up rounds; "
          f"load {load0[0]:.2f} before, {load1[0]:.2f} after; ms")
    print(f"{'case':<16}{'median':>9}{'p90':>9}{'min':>9}  command")
    for c in cases:
        s = res['cases'][c['key']]
        print(f"{c['key']:<16}{s['median_ms']:>9.1f}{s['p90_ms']:>9.1f}{s['min_ms']:>9.1f}  "
              f"{c['cmd']}")
    for c in cases:
        s = res['cases'][c['key']]
        if 'parts_median_ms' in s:
            print(f"{c['key']} steps (median ms): " +
                  ', '.join(f'{k} {v:.1f}' for k, v in s['parts_median_ms'].items()))
        if 'stages_median_ms' in s:
            print(f"{c['key']} stages (median ms, WARDEN_TIMING=1): " +
                  ', '.join(f'{k} {v:.2f}' for k, v in s['stages_median_ms'].items()) +
                  f"; outside the stamps {s['outside_stamps_median_ms']:.1f}")
    if res['ratios']:
        print('per-round ratios (median): ' +
              ', '.join(f'{k} {v:.2f}' for k, v in res['ratios'].items()))
    if sys.argv[2] != '-':
        with open(sys.argv[2], 'w') as f:
            json.dump(res, f, indent=1)
            f.write('\n')


if __name__ == '__main__':
    main()
