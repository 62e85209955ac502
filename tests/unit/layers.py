#!/usr/bin/env python3
"""layers.py - the product's folders and files call and include each other one way.

Usage: layers.py BUILD_DIR SOURCE_DIR [--print [FOLDER]]

The house's rule (ARCHITECTURE.md, section 1, "Folders"): each folder is one library and
uses only the folders below it. This checks, on a built tree:

  within each folder   no circle among its files, in two graphs:
                         calls     file A -> file B when A's object uses a global symbol
                                   B's object defines (nm on the folder's libraries and on
                                   the objects of its executables: every call, every address
                                   of a function or object taken across files);
                         includes  file A -> file B for every #include "FOLDER/B" in A;
  between folders      arrows only to folders the table below lets it use (the table's
                       rows are bottom first, and a row names only folders listed before
                       it), in both graphs: symbols one folder's objects take from another
                       folder's library, and #include "OTHER/..." lines;
  per-folder rules     FOLDER_RULES (gateway/: ev.h and ev.c know no component);
                       EXPORT_PREFIX (policy/ exports only policy_* names).

Which libraries exist is read from BUILD_DIR (BUILD_DIR/<folder>/libwd_*.a, one per folder,
LIBS names the others); a folder of the table that is not there yet is simply absent. A
folder of SOURCE_DIR or a library of BUILD_DIR that the table does not name is an error: a
new folder is put in the table (and in ARCHITECTURE.md) first.

Exit status 0 when all holds, 1 with every circle and every wrong arrow printed (a circle
names its files), 2 when the check could not run (nm missing, no objects, an unknown folder
or library, a table that contradicts itself): a test error, never a pass. --print also prints
each folder's arrows, bottom first (docs/gateway-house.md is `--print gateway`), and the
arrows between folders. Prints a closing line for CTest either way.
"""
import collections
import os
import re
import subprocess
import sys

# ---------------------------------------------------------------------------------------
# THE TABLE. Keep it the same as ARCHITECTURE.md's (section 1, "Folders"), bottom first:
# a folder may use only the folders its row names, and a row names only folders above it
# here. "gateway:proto" is the one part of gateway/ that the launcher's side may use: the
# pure protocol parsers (libwd_proto, header gateway/proto/proto.h); run/ and launcher/
# talk to a gateway over its control socket, never through its internals.
# Two places differ from ARCHITECTURE.md's row order, because the code needs them:
#   conf/ is above audit/, nft/ and netns/: a gateway config names audit sinks (audit/'s
#         parser), and its translations conf -> fw_config and conf -> pool config call
#         nft/'s fw_config_defaults() and fill netns/'s pool config;
#   trace/ and recorder/ are below run/: run/ starts the recorder for a run and, in learn
#         mode, writes the trace; the recorder writes trace records (enum trace_op,
#         trace_op_name() of trace/file.h) and reads policy/'s types.
TABLE = [
    ("common", []),
    ("policy", ["common"]),
    ("audit", ["common"]),
    ("netns", ["common"]),
    ("nft", ["common"]),
    ("conf", ["policy", "audit", "netns", "nft", "common"]),
    ("sandbox", ["common"]),
    ("gateway", ["policy", "conf", "audit", "common"]),
    ("trace", ["policy", "common"]),
    ("recorder", ["sandbox", "audit", "trace", "policy", "common"]),
    ("run", ["common", "policy", "audit", "netns", "nft", "conf", "sandbox",
             "gateway:proto", "trace", "recorder"]),
    ("mcp", ["run", "audit", "policy", "trace", "common"]),
    ("launcher", ["common", "policy", "audit", "netns", "nft", "conf", "sandbox",
                  "gateway:proto", "run", "trace", "recorder", "mcp"]),
]
# A part of a folder that another may use alone: its headers and its sources' prefix.
PARTS = {
    "gateway:proto": {"headers": {"gateway/proto/proto.h"}, "prefix": "gateway/proto/"},
}
# Libraries that are not libwd_<folder>.a: library -> (folder, where its sources are).
LIBS = {
    "libwd_proto.a": ("gateway", "gateway/proto/"),
    # the part of conf/ that uses netns/ and nft/ (the gateway worker links wd_conf alone)
    "libwd_conf_host.a": ("conf", "conf/"),
}
# Top-level folders that are not the product.
NOT_PRODUCT = {"tests", "deploy", "docs", "build"}

# ---------------------------------------------------------------------------------------
# WAIVERS: arrows the table does not allow, each allowed here by name with its reason, and
# circles (none: issue 26 removed the last ones). A circle is waived when all its files are in
# one waived circle (one that grows fails); an arrow "FILE -> FOLDER" is waived exactly; a
# waiver that no longer matches anything is reported as stale.
WAIVED = {
    "circles": [],
    "arrows": {
        # the privileged parent image (warden-gateway: parent.c; the worker image does not
        # contain it and maps no libnl/libnftnl) is the gateway's one process that plumbs a
        # daemon-mode run: netns/ for the veth, nft/ for the run's elements. run/'s root mode
        # does the same for its own runs with its own code: sharing one module is left for
        # later (docs/house.md, "Run plumbing twice").
        "gateway/parent.c -> netns",
        "gateway/parent.c -> nft",
        # the NFLOG prefixes the ruleset gives its log rules (FW_NFLOG_PREFIX_*), read from
        # nft/nft.h's #defines: a header's names, no code of nft/ (the worker links none)
        "gateway/udplog.c -> nft",
    },
}
# ---------------------------------------------------------------------------------------


def gateway_bottom(folder, calls, incs):
    """gateway/: the bottom stays the bottom: ev.h and ev.c include no gateway header but
    addr.h and poller.h (and ev.h); the poller's files (poller.h, poll_*.c: the system's
    poller under ev.c) include no gateway header but poller.h."""
    out = []
    for f in ("gateway/ev.h", "gateway/ev.c"):
        mine = {t for t in incs.get(f, set()) if t.startswith("gateway/")}
        extra = mine - {"gateway/addr.h", "gateway/ev.h", "gateway/poller.h"}
        if extra:
            out.append(f"{f} includes {', '.join(sorted(extra))}: the bottom knows no component")
    for f in sorted(incs):
        if f != "gateway/poller.h" and not f.startswith("gateway/poll_"):
            continue
        mine = {t for t in incs.get(f, set()) if t.startswith("gateway/")}
        extra = mine - {"gateway/poller.h"}
        if extra:
            out.append(f"{f} includes {', '.join(sorted(extra))}: the poller knows no other gateway file")
    return out


FOLDER_RULES = {"gateway": [gateway_bottom]}

# Folders whose libraries export only names with these prefixes (nm: every defined global).
EXPORT_PREFIX = {"policy": ("policy_",)}

NAME = "layers"


def error(msg):
    """the check could not run: exit 2, never a pass"""
    print(f"{NAME}: {msg}")
    print(f"{NAME}: ERROR")
    sys.exit(2)


def check_table():
    """the table's rows name only known folders, each listed before the row"""
    seen = set()
    for folder, uses in TABLE:
        for u in uses:
            base = u.split(":")[0]
            if u not in PARTS and ":" in u:
                error(f"the table's row {folder} names an unknown part {u}")
            if base not in seen:
                error(f"the table's row {folder} uses {u}, which is not below it")
        seen.add(folder)


def sources(src, folder):
    """every .c and .h under SOURCE/folder, as folder/relative paths"""
    out = []
    for root, dirs, files in os.walk(os.path.join(src, folder)):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(root, f), src))
    return out


def product_folders(src):
    out = []
    for d in sorted(os.listdir(src)):
        p = os.path.join(src, d)
        if d.startswith(".") or d in NOT_PRODUCT or not os.path.isdir(p):
            continue
        if os.path.exists(os.path.join(p, "CMakeCache.txt")):
            continue  # a build folder inside the source tree
        if sources(src, d):
            out.append(d)
    return out


def nm(path):
    """(member, kind, symbol) of every symbol of a library or object, from nm"""
    try:
        out = subprocess.run(["nm", "-A", path], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        error(f"nm {path}: {e}")
    rows = []
    for line in out.splitlines():
        # lib.a:member.c.o: ADDR K sym   or   file.o: ADDR K sym (an object alone)
        m = re.match(r"^(.*?\.o):\s*(?:[0-9a-fA-F]+)?\s+([A-Za-z])\s+(\S+)$", line)
        if not m:
            continue
        member = m.group(1)
        if path.endswith(".a"):
            member = member[len(path) + 1:] if member.startswith(path + ":") else member
        rows.append((os.path.basename(member), m.group(2), m.group(3)))
    return rows


def member_source(member, folder, prefix, srcs):
    """the source file an object came from: NAME.c.o -> the one FOLDER/.../NAME.c"""
    name = member[:-2] if member.endswith(".o") else member
    cands = [s for s in srcs if os.path.basename(s) == name]
    under = [s for s in cands if s.startswith(prefix)]
    if len(under) == 1:
        return under[0]
    if len(cands) == 1:
        return cands[0]
    error(f"object {member} of {folder}/ matches {len(cands)} sources ({', '.join(cands)})")
    return None


def objects(build, src, folders, table):
    """unit -> list of (file, kind, symbol): one unit per library and per executable.

    Each folder's libraries (BUILD/folder/libwd_*.a) and the objects of its other targets
    (BUILD/folder/CMakeFiles/TARGET.dir/*.o, the executables' mains). Returns
    ({unit: rows}, {unit: folder}, {unit: is_library})."""
    units, owner, islib = {}, {}, {}
    for folder in folders:  # a build folder left from a source folder that is gone: not read
        bdir = os.path.join(build, folder)
        if not os.path.isdir(bdir):
            continue
        srcs = sources(src, folder)
        libs = sorted(f for f in os.listdir(bdir) if f.startswith("libwd_") and f.endswith(".a"))
        for lib in libs:
            if lib in LIBS:
                lf, prefix = LIBS[lib]
            else:
                lf, prefix = lib[len("libwd_"):-2], folder + "/"
            if lf != folder or lf not in table:
                error(f"{folder}/{lib}: a library the table does not name (tests/unit/layers.py)")
            rows = [(member_source(m, folder, prefix, srcs), k, s)
                    for m, k, s in nm(os.path.join(bdir, lib))]
            unit = f"{folder}/{lib}"
            units[unit], owner[unit], islib[unit] = rows, folder, True
        cm = os.path.join(bdir, "CMakeFiles")
        if not os.path.isdir(cm):
            continue
        for t in sorted(os.listdir(cm)):
            if not t.endswith(".dir") or f"lib{t[:-4]}.a" in libs:
                continue
            rows = []
            for root, dirs, files in os.walk(os.path.join(cm, t)):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(".o"):
                        rel = os.path.relpath(os.path.join(root, f), os.path.join(cm, t))
                        s = os.path.join(folder, rel[:-2])
                        if s not in srcs:
                            error(f"object {os.path.join(root, f)} has no source {s}")
                        rows += [(s, k, sym) for _, k, sym in nm(os.path.join(root, f))]
            if rows:
                unit = f"{folder}/{t[:-4]}"
                units[unit], owner[unit], islib[unit] = rows, folder, False
    return units, owner, islib


def call_arrows(units, owner, islib):
    """file -> set of files whose global symbols it uses (any folder). An executable's
    objects are resolved against their own executable first, then the libraries; a
    library's against the libraries."""
    libdefs = {}
    for u, rows in units.items():
        if islib[u]:
            for f, k, s in rows:
                if k.isupper() and k not in "UVW":
                    libdefs.setdefault(s, f)
    graph = collections.defaultdict(set)
    for u, rows in units.items():
        own = {} if islib[u] else {s: f for f, k, s in rows if k.isupper() and k not in "UVW"}
        for f, k, s in rows:
            graph[f]
            if k != "U":
                continue
            t = own.get(s) or libdefs.get(s)
            if t and t != f:
                graph[f].add(t)
    return graph


def include_arrows(src, folders):
    """file -> set of product files it includes ("FOLDER/..." lines)"""
    graph = {}
    for folder in folders:
        for name in sources(src, folder):
            deps = set()
            with open(os.path.join(src, name), encoding="utf-8") as fh:
                for line in fh:
                    m = re.match(r'\s*#\s*include\s+"([a-z_]+)/([^"]+)"', line)
                    if m and m.group(1) in folders:
                        t = f"{m.group(1)}/{m.group(2)}"
                        if t != name:
                            deps.add(t)
            graph[name] = deps
    return graph


def circles(graph):
    """the strongly connected components of more than one node (Tarjan)"""
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
    """each node's height: 0 for a node that uses nothing, else 1 + its highest use"""
    memo = {}

    def h(v):
        if v not in memo:
            memo[v] = 0
            memo[v] = 1 + max((h(w) for w in graph.get(v, ()) if w in graph), default=-1)
        return memo[v]

    return {v: h(v) for v in graph}


def folder_of(f):
    return f.split("/", 1)[0]


def allowed(frm, target, kind, table):
    """may a file of folder frm use file target (a header when kind is includes)?"""
    tf = folder_of(target)
    if tf == frm:
        return True
    for u in table[frm]:
        if u == tf:
            return True
        if u in PARTS and u.split(":")[0] == tf:
            p = PARTS[u]
            if kind == "includes" and target in p["headers"]:
                return True
            if kind == "calls" and target.startswith(p["prefix"]) and target.endswith(".c"):
                return True
    return False


def main():
    args = [a for a in sys.argv[1:]]
    if len(args) < 2:
        print(__doc__)
        error("usage: layers.py BUILD_DIR SOURCE_DIR [--print [FOLDER]]")
    build, src = args[0], args[1]
    show, show_only = False, None
    if len(args) > 2:
        if args[2] != "--print" or len(args) > 4:
            error(f"unknown arguments: {' '.join(args[2:])}")
        show = True
        show_only = args[3] if len(args) == 4 else None
    check_table()
    table = dict(TABLE)
    folders = product_folders(src)
    for f in folders:
        if f not in table:
            error(f"{f}/: a folder the table does not name; put it in tests/unit/layers.py's "
                  "TABLE (and ARCHITECTURE.md)")
    units, owner, islib = objects(build, src, folders, table)
    built = set(owner.values())
    for f in folders:
        if f not in built and any(s.endswith(".c") for s in sources(src, f)):
            error(f"{f}/ has sources but no library or object in {build}: build first")
    if not units:
        error(f"no objects in {build}")
    cg, ig = call_arrows(units, owner, islib), include_arrows(src, folders)

    bad, notes, waived_used = [], [], set()
    for folder in folders:
        for kind, g in (("calls", cg), ("includes", ig)):
            sub = {f: {t for t in ts if folder_of(t) == folder}
                   for f, ts in g.items() if folder_of(f) == folder}
            for c in circles(sub):
                w = next((i for i, wc in enumerate(WAIVED["circles"]) if set(c) <= wc), None)
                line = f"{folder}/: a circle of {kind} ({len(c)} files): {' <-> '.join(c)}"
                if w is None:
                    bad.append(line)
                else:
                    waived_used.add(w)
                    notes.append("WAIVED " + line)
        for rule in FOLDER_RULES.get(folder, []):
            bad += [f"{folder}/: {m}" for m in rule(folder, cg, ig)]
    for u, rows in units.items():
        want = EXPORT_PREFIX.get(owner[u])
        if not want or not islib[u]:
            continue
        for f, k, sym in rows:
            if k in "TDRB" and not sym.startswith(want):
                bad.append(f"{owner[u]}/: {f} exports {sym} without the {'/'.join(want)} prefix")
    arrows = collections.defaultdict(set)
    used_arrow_waivers = set()
    for kind, g in (("calls", cg), ("includes", ig)):
        for f in sorted(g):
            frm = folder_of(f)
            for t in sorted(g[f]):
                tf = folder_of(t)
                if tf == frm:
                    continue
                arrows[frm].add(tf)
                if allowed(frm, t, kind, table):
                    continue
                key = f"{f} -> {tf}"
                line = f"{frm}/ may not use {tf}/: {f} {kind} {t}"
                if key in WAIVED["arrows"]:
                    used_arrow_waivers.add(key)
                    notes.append("WAIVED " + line)
                else:
                    bad.append(line)
    for i, wc in enumerate(WAIVED["circles"]):
        if i not in waived_used:
            notes.append(f"stale waiver (no such circle now, remove it): {sorted(wc)}")
    for key in sorted(WAIVED["arrows"] - used_arrow_waivers):
        notes.append(f"stale waiver (no such arrow now, remove it): {key}")

    for line in bad:
        print(f"{NAME}: {line}")
    for line in notes:
        print(f"{NAME}: {line}")
    if show:
        for folder in folders:
            if show_only and folder != show_only:
                continue
            pre = folder + "/"
            for kind, g in (("calls", cg), ("includes", ig)):
                sub = {f[len(pre):]: {t[len(pre):] for t in ts if t.startswith(pre)}
                       for f, ts in g.items() if f.startswith(pre)}
                if kind == "calls":
                    sub = {f: ts for f, ts in sub.items() if f.endswith(".c")}
                lv = levels(sub)
                width = max((len(f) for f in sub), default=0)
                print(f"{pre} {kind} (bottom first):")
                for f in sorted(sub, key=lambda v: (lv[v], v)):
                    print(f"  {lv[f]:2} {f:{width}} -> {', '.join(sorted(sub[f])) or '-'}")
        if not show_only:
            print("folders (bottom first):")
            for folder, _ in TABLE:
                if folder in folders:
                    print(f"  {folder:9} -> {', '.join(sorted(arrows[folder])) or '-'}")
    nobj = len({f for rows in units.values() for f, _, _ in rows})
    nsrc = sum(len(sources(src, f)) for f in folders)
    print(f"{NAME}: {len(folders)} folders, {nobj} objects, {nsrc} sources, "
          f"{len(bad)} problems, {len(notes)} notes")
    print(f"{NAME}: FAIL" if bad else f"{NAME}: PASS")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
