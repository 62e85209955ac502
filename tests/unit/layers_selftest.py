#!/usr/bin/env python3
"""layers_selftest.py - layers.py can fail: it is run on small planted trees.

Usage: layers_selftest.py [LAYERS_PY]   (CTest unit.layers_selftest)

Each case writes a tiny source tree (folders named as the product's), compiles it with cc
into the build layout layers.py reads (BUILD/<folder>/libwd_<folder>.a, an executable's
objects under BUILD/<folder>/CMakeFiles/<target>.dir/), runs layers.py on it and wants its
exit status and a line naming what was planted:
  a clean tree passes (the positive control beside every planted fault), a circle of calls
  (a.o and b.o call each other) fails naming both files, a circle of includes, a folder that
  calls or includes one above it, an executable's object that calls a folder it may not, run/
  reaching a gateway internal (and run/ using gateway/proto/proto.h passes), gateway/ev.h
  knowing a component, three verbs calling round; and the check's own errors: an unknown
  folder, an unknown library, nm missing are exit 2, never a pass.
Exit 0 when every case behaves, 1 otherwise; the last line is PASS or FAIL.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "layers.py")

# a clean tree: common/ at the bottom, policy/ over it, gateway/ with a library, proto/ and
# an executable, run/ using only gateway/proto/proto.h
CLEAN = {
    "common/common.h": "int wd_a(void);\nint wd_b(void);\n",
    "common/a.c": '#include "common/common.h"\nint wd_a(void) { return 1; }\n',
    "common/b.c": '#include "common/common.h"\nint wd_b(void) { return wd_a() + 1; }\n',
    "policy/policy.h": '#include "common/common.h"\nint policy_p(void);\n',
    "policy/p.c": '#include "policy/policy.h"\nint policy_p(void) { return wd_b(); }\n',
    "gateway/addr.h": "struct gw_addr { int a; };\n",
    "gateway/ev.h": '#include "gateway/addr.h"\nint gw_ev(void);\n',
    "gateway/ev.c": '#include "gateway/ev.h"\nint gw_ev(void) { return 2; }\n',
    "gateway/tcp.h": '#include "gateway/ev.h"\nint gw_tcp(void);\n',
    "gateway/tcp.c": '#include "gateway/tcp.h"\n#include "policy/policy.h"\n'
                     "int gw_tcp(void) { return gw_ev() + policy_p(); }\n",
    "gateway/proto/proto.h": "int proto_name(void);\n",
    "gateway/proto/name.c": '#include "gateway/proto/proto.h"\nint proto_name(void) { return 3; }\n',
    "gateway/main.c": '#include "gateway/tcp.h"\nint main(void) { return gw_tcp(); }\n',
    "run/run.h": "int run_go(void);\n",
    "run/go.c": '#include "run/run.h"\n#include "gateway/proto/proto.h"\n#include "policy/policy.h"\n'
                "int run_go(void) { return proto_name() + policy_p(); }\n",
}
PROTO = ["proto/name.c"]
EXES = {"gateway/warden-gateway": ["main.c"]}


def build(root, files, extra_libs=()):
    src, bld = os.path.join(root, "src"), os.path.join(root, "build")
    for name, text in files.items():
        p = os.path.join(src, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as fh:
            fh.write(text)

    def objs(folder, names, outdir):
        out = []
        for n in names:
            if not os.path.exists(os.path.join(src, folder, n)):
                continue
            o = os.path.join(outdir, n + ".o")
            os.makedirs(os.path.dirname(o), exist_ok=True)
            subprocess.run(["cc", "-c", "-I", src, os.path.join(src, folder, n), "-o", o],
                           check=True)
            out.append(o)
        return out

    exe = {f"{t.split('/')[0]}/{n}" for t, ns in EXES.items() for n in ns}
    for folder in sorted({f.split("/")[0] for f in files}):
        names = sorted(f.split("/", 1)[1] for f in files
                       if f.startswith(folder + "/") and f.count("/") == 1 and f.endswith(".c")
                       and f not in exe)
        os.makedirs(os.path.join(bld, folder), exist_ok=True)
        o = objs(folder, names, os.path.join(bld, folder, "CMakeFiles", f"wd_{folder}.dir"))
        if o:  # ar members are basenames, as CMake's are
            subprocess.run(["ar", "rcs", os.path.join(bld, folder, f"libwd_{folder}.a")] + o,
                           check=True)
    o = objs("gateway", PROTO, os.path.join(bld, "gateway", "CMakeFiles", "wd_proto.dir"))
    subprocess.run(["ar", "rcs", os.path.join(bld, "gateway", "libwd_proto.a")] + o, check=True)
    for target, names in EXES.items():
        folder, t = target.split("/")
        objs(folder, names, os.path.join(bld, folder, "CMakeFiles", f"{t}.dir"))
    for lib in extra_libs:
        shutil.copy(os.path.join(bld, "common", "libwd_common.a"), os.path.join(bld, lib))
    return bld, src


def run(bld, src, env=None):
    p = subprocess.run([sys.executable, LAYERS, bld, src], capture_output=True, text=True,
                       env=env)
    return p.returncode, p.stdout + p.stderr


def case(name, want_rc, want_text, edits, extra_libs=(), env=None, drop=()):
    files = dict(CLEAN)
    files.update(edits)
    for d in drop:
        files.pop(d)
    with tempfile.TemporaryDirectory(prefix="layers-selftest-") as root:
        bld, src = build(root, files, extra_libs)
        rc, out = run(bld, src, env)
    ok = rc == want_rc and all(t in out for t in want_text)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {rc} (want {want_rc})")
    if not ok:
        print("  wanted: " + " | ".join(want_text))
        print("  " + out.replace("\n", "\n  "))
    return ok


def main():
    if not os.path.exists(LAYERS):
        print(f"layers_selftest: no {LAYERS}")
        print("layers_selftest: ERROR")
        return 2
    if not shutil.which("cc") or not shutil.which("ar"):
        print("layers_selftest: cc or ar missing: cannot plant objects")
        print("layers_selftest: ERROR")
        return 2
    results = [
        case("a clean tree passes (the positive control)", 0, ["layers: PASS"], {}),
        case("a.o and b.o call each other: a circle of calls", 1,
             ["common/: a circle of calls (2 files): common/a.c <-> common/b.c", "FAIL"],
             {"common/a.c": '#include "common/common.h"\n'
                            "int wd_a(void) { return wd_b() - 1; }\n"
                            "int wd_c(void) { return 1; }\n",
              "common/b.c": '#include "common/common.h"\nint wd_c(void);\n'
                            "int wd_b(void) { return wd_c() + 1; }\n"}),
        case("two headers include each other: a circle of includes", 1,
             ["common/: a circle of includes (2 files): common/x.h <-> common/y.h"],
             {"common/x.h": '#ifndef X\n#define X\n#include "common/y.h"\n#endif\n',
              "common/y.h": '#ifndef Y\n#define Y\n#include "common/x.h"\n#endif\n'}),
        case("common/ calls up into policy/", 1,
             ["common/ may not use policy/: common/b.c calls policy/p.c"],
             {"common/b.c": "int policy_p(void);\nint wd_b(void) { return policy_p(); }\n"}),
        case("policy/ includes a header of run/", 1,
             ["policy/ may not use run/: policy/p.c includes run/run.h"],
             {"policy/p.c": '#include "policy/policy.h"\n#include "run/run.h"\n'
                            "int policy_p(void) { return wd_b(); }\n"}),
        case("policy/ exports a name without its prefix", 1,
             ["policy/: policy/p.c exports p_extra without the policy_ prefix"],
             {"policy/p.c": '#include "policy/policy.h"\n'
                            "int p_extra(void) { return 1; }\n"
                            "int policy_p(void) { return wd_b(); }\n"}),
        case("gateway/'s executable calls run/", 1,
             ["gateway/ may not use run/: gateway/main.c calls run/go.c"],
             {"gateway/main.c": "int run_go(void);\nint main(void) { return run_go(); }\n"}),
        case("run/ calls a gateway internal (not gateway/proto)", 1,
             ["run/ may not use gateway/: run/go.c calls gateway/tcp.c"],
             {"run/go.c": "int gw_tcp(void);\nint run_go(void) { return gw_tcp(); }\n"}),
        case("run/ includes a gateway internal header", 1,
             ["run/ may not use gateway/: run/go.c includes gateway/tcp.h"],
             {"run/go.c": '#include "gateway/tcp.h"\nint run_go(void) { return 0; }\n'}),
        case("gateway/ev.h knows a component", 1,
             ["gateway/: gateway/ev.h includes gateway/tcp.h: the bottom knows no component"],
             {"gateway/ev.h": '#ifndef EV\n#define EV\n#include "gateway/addr.h"\n'
                              '#include "gateway/tcp.h"\nint gw_ev(void);\n#endif\n',
              "gateway/tcp.h": '#ifndef TCP\n#define TCP\n#include "gateway/ev.h"\n'
                               "int gw_tcp(void);\n#endif\n"}),
        case("three verbs calling round (launcher/) fail: no circle is waived", 1,
             ["launcher/: a circle of calls (3 files)"],
             {"launcher/cmd_allowlist.c": "int l_b(void);\nint l_a(void) { return l_b(); }\n",
              "launcher/cmd_allowlist_approve.c":
                  "int l_c(void);\nint l_b(void) { return l_c(); }\n",
              "launcher/cmd_gc.c": "int l_a(void);\nint l_c(void) { return l_a(); }\n"}),
        case("a folder the table does not name is an error", 2,
             ["extra/: a folder the table does not name", "ERROR"],
             {"extra/e.c": "int e(void) { return 0; }\n"}),
        case("a library the table does not name is an error", 2,
             ["libwd_extra.a: a library the table does not name", "ERROR"], {},
             extra_libs=["common/libwd_extra.a"]),
        case("nm missing is an error, never a pass", 2, ["ERROR"], {},
             env=dict(os.environ, PATH="/nonexistent")),
    ]
    bad = results.count(False)
    print(f"layers_selftest: {len(results) - bad} of {len(results)} cases behave")
    print("layers_selftest: FAIL" if bad else "layers_selftest: PASS")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
