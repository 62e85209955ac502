#!/usr/bin/env python3
"""gw_layers.py - the gateway's files call and include each other one way.

Usage: gw_layers.py LIBWD_GATEWAY.a GATEWAY_SOURCE_DIR [--print]

Two graphs, both must be free of circles:
  calls     file A -> file B when A's object uses a global symbol B's object
            defines (nm on the library: every function call, every address of a
            function or object taken across files);
  includes  file A -> header B for every #include "gateway/B" in A.
And the bottom stays the bottom: ev.h and ev.c include no gateway header but
addr.h (and ev.h).

Exit status 0 when all holds, 1 with the circles (or the offending includes)
printed; 2 when a tool could not run (a test error, never a pass). --print
also prints every file's arrows, bottom first (docs/gateway-house.md is made
from it). Prints a closing line for CTest either way.
"""
import collections
import os
import re
import subprocess
import sys


def calls(lib, src):
    """file -> set of files whose symbols it uses, from nm."""
    try:
        out = subprocess.run(["nm", "-A", lib], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"gw_layers: nm {lib}: {e}")
        print("gw_layers: ERROR")
        sys.exit(2)
    defs, uses = {}, collections.defaultdict(set)
    names = set()
    for line in out.splitlines():
        m = re.match(r"^.*?:([^:/]+)\.o:\s*(?:[0-9a-fA-F]+)?\s+([A-Za-z])\s+(\S+)$", line)
        if not m:
            continue
        member, kind, sym = m.groups()
        name = member
        if not os.path.exists(os.path.join(src, member)) and os.path.exists(
            os.path.join(src, "proto", member)
        ):
            name = "proto/" + member
        names.add(name)
        if kind == "U":
            uses[name].add(sym)
        elif kind.isupper():
            defs[sym] = name
    if not names:
        print(f"gw_layers: no objects in {lib}")
        print("gw_layers: ERROR")
        sys.exit(2)
    graph = {n: set() for n in names}
    for f, syms in uses.items():
        for s in syms:
            t = defs.get(s)
            if t and t != f:
                graph[f].add(t)
    return graph


def includes(src):
    """file -> set of gateway headers it includes (proto/ is one leaf: proto/proto.h)."""
    graph = {}
    for d in ("", "proto"):
        for f in sorted(os.listdir(os.path.join(src, d))):
            if not f.endswith((".c", ".h")):
                continue
            name = os.path.join(d, f) if d else f
            deps = set()
            with open(os.path.join(src, name), encoding="utf-8") as fh:
                for line in fh:
                    m = re.match(r'\s*#\s*include\s+"gateway/([^"]+)"', line)
                    if m and m.group(1) != name:
                        deps.add(m.group(1))
            graph[name] = deps
    return graph


def circles(graph):
    """the strongly connected components of more than one node (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def levels(graph):
    """each node's height: 0 for a node that uses nothing, else 1 + its highest use."""
    memo = {}

    def h(v):
        if v not in memo:
            memo[v] = 0
            memo[v] = 1 + max((h(w) for w in graph.get(v, ()) if w in graph), default=-1)
        return memo[v]

    return {v: h(v) for v in graph}


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        print("gw_layers: ERROR")
        return 2
    lib, src = sys.argv[1], sys.argv[2]
    show = "--print" in sys.argv[3:]
    bad = 0
    cg, ig = calls(lib, src), includes(src)
    for kind, g in (("calls", cg), ("includes", ig)):
        for c in circles(g):
            print(f"gw_layers: a circle of {kind}: {' <-> '.join(c)}")
            bad = 1
    for f in ("ev.h", "ev.c"):
        extra = ig.get(f, set()) - {"addr.h", "ev.h"}
        if extra:
            print(f"gw_layers: {f} includes {', '.join(sorted(extra))}: the bottom knows no component")
            bad = 1
    if show and not bad:
        lv = levels(cg)
        print("calls (bottom first):")
        for f in sorted(cg, key=lambda v: (lv[v], v)):
            print(f"  {lv[f]:2} {f:14} -> {', '.join(sorted(cg[f])) or '-'}")
        lv = levels(ig)
        print("includes (bottom first):")
        for f in sorted(ig, key=lambda v: (lv[v], v)):
            print(f"  {lv[f]:2} {f:18} -> {', '.join(sorted(ig[f])) or '-'}")
    print(f"gw_layers: {len(cg)} objects, {len(ig)} sources, {'circles found' if bad else 'no circle'}")
    print("gw_layers: FAIL" if bad else "gw_layers: PASS")
    return bad


if __name__ == "__main__":
    sys.exit(main())
