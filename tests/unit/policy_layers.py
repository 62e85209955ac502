#!/usr/bin/env python3
"""policy_layers.py - policy/'s object files call each other one way (no circle) and export
only policy_-prefixed names: read from `nm -A` on libwd_policy.a. With --selftest, a planted
circle (two objects that call each other) must be found: proof that the check can fail.
Usage: policy_layers.py LIBWD_POLICY.a"""
import collections
import subprocess
import sys


def graph(rows):
    """rows: (object, kind, symbol) -> (edges obj -> {obj: [symbols]}, exported symbols)"""
    defs, undefs, exported = {}, collections.defaultdict(set), []
    for obj, kind, sym in rows:
        if kind == "U":
            undefs[obj].add(sym)
        elif kind in "TDRB":
            defs[sym] = obj
            exported.append((obj, sym))
    edges = collections.defaultdict(lambda: collections.defaultdict(list))
    for obj, syms in undefs.items():
        for s in syms:
            if s in defs and defs[s] != obj:
                edges[obj][defs[s]].append(s)
    return edges, exported


def circles(edges):
    index, low, stack, on, found, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(set(edges) | {w for e in edges.values() for w in e}):
        if v not in index:
            visit(v)
    return found


def nm_rows(lib):
    out = subprocess.run(["nm", "-A", lib], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        obj = parts[0].split(":")[1]
        if len(parts) >= 3:
            rows.append((obj, parts[-2], parts[-1]))
        elif len(parts) == 2:
            rows.append((obj, parts[1], ""))
    return rows


def main():
    planted = [("a.o", "T", "policy_a"), ("a.o", "U", "policy_b"),
               ("b.o", "T", "policy_b"), ("b.o", "U", "policy_a")]
    if not circles(graph(planted)[0]):
        print("ERROR - the check misses a planted circle a.o <-> b.o")
        return 2
    print("ok - a planted circle a.o <-> b.o is found")
    edges, exported = graph(nm_rows(sys.argv[1]))
    if not edges:
        print("ERROR - no calls between objects read (nm failed?)")
        return 2
    failed = 0
    for comp in circles(edges):
        failed += 1
        print("FAIL - circle: " + ", ".join(comp))
        for a in comp:
            for b in comp:
                if b in edges.get(a, {}):
                    print(f"  {a} -> {b}: {', '.join(sorted(edges[a][b]))}")
    for obj, sym in exported:
        if not sym.startswith("policy_"):
            failed += 1
            print(f"FAIL - {obj} exports {sym} without the policy_ prefix")
    if not failed:
        print(f"ok - {len(edges)} objects call others, one way; every export is policy_*")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
