#!/usr/bin/env bash
# tests/bench/trace.sh - what `warden trace` costs a program (issue 16, docs/trace.md): three
# workloads, each under `warden run` (a policy that grants what it needs; audit.files off, the
# default) and under `warden trace` (the learning sandbox, every access recorded, the trace
# written), in the lab's host namespace, root mode:
#
#   git      `git status --porcelain` in a repository of --files N committed files (an lstat
#            per file, then the index)
#   npm      `npm ls --offline` in a project with a hand-made node_modules of --packages N
#            packages (each a package.json and an index.js; no network, no registry)
#   python   `python3 -c 'import json'` (the interpreter's start-up: the most common small
#            program, its imports the watched calls)
#
# Reported: the median wall time of the whole command (hyperfine, --runs N after 2 warm-ups),
# run and trace side by side in one hyperfine call per workload, and the ratio. Never a test:
# speed is measured here, asserted nowhere. --as-user: the same as the lab's unprivileged
# user (rootless mode).
#
# Usage: tests/bench/trace.sh [--files N] [--packages N] [--runs N] [--as-user]   (as root)
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${WARDEN_BUILD_DIR:-$SRC/build/bench}
W=${WARDEN_BIN:-$BUILD/launcher/warden}
export WARDEN_GATEWAY_BIN=${WARDEN_GATEWAY_BIN:-$BUILD/gateway/warden-gateway}
N=3000
NPKG=300
RUNS=10
AS_USER=0
ARGS=("$@")
while (($#)); do
	case $1 in
	--files) N=${2:?}; shift ;;
	--packages) NPKG=${2:?}; shift ;;
	--runs) RUNS=${2:?}; shift ;;
	--as-user) AS_USER=1 ;;
	*) sed -n '19p' "$0" | sed 's/^# //'; exit 2 ;;
	esac
	shift
done
set -- "${ARGS[@]}"
. "$SRC/tests/lab/lib.sh"
lab_require_root
for t in hyperfine python3 git npm node jq; do
	command -v "$t" >/dev/null || { echo "trace.sh: $t is missing" >&2; exit 1; }
done
[[ -x $W && -x $WARDEN_GATEWAY_BIN ]] || { echo "trace.sh: warden is not built in $BUILD" >&2; exit 1; }
lab_up
export WARDEN_POOL=0
# not in /tmp: a trace's sandbox has a /tmp of its own, the host's is not visible there
D=$(mktemp -d /var/tmp/warden-bench-trace.XXXXXX)
[[ -n ${KEEP_BENCH:-} ]] || lab_on_exit rm -rf "$D"
chmod 0755 "$D"
mkdir -p "$D/home" "$D/state" "$D/out"

# the repository: N files in folders of 100, committed
python3 -c '
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.txt" % i), "w") as f:
        f.write("file %d\n" % i)' "$D/repo" "$N"
git -C "$D/repo" init -q && git -C "$D/repo" add -A &&
	git -C "$D/repo" -c user.email=bench@warden -c user.name=bench commit -qm tree || exit 1
# the npm project: NPKG packages in node_modules, every one a dependency of the project
python3 -c '
import json, os, sys
root, n = sys.argv[1], int(sys.argv[2])
deps = {}
for i in range(n):
    name = "pkg-%04d" % i
    d = os.path.join(root, "node_modules", name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "package.json"), "w") as f:
        json.dump({"name": name, "version": "1.0.%d" % i, "main": "index.js"}, f)
    with open(os.path.join(d, "index.js"), "w") as f:
        f.write("module.exports = %d;\n" % i)
    deps[name] = "1.0.%d" % i
with open(os.path.join(root, "package.json"), "w") as f:
    json.dump({"name": "bench", "version": "1.0.0", "dependencies": deps}, f)' "$D/proj" "$NPKG"
chmod -R a+rX "$D"
# the cwd of every command is writable by the program (the trace's is, a run's is its grant)
chown 65534:65534 "$D/out"
if ((AS_USER)); then
	lab_user || exit 1
	chown -R "$LAB_USER_UID:$LAB_USER_GID" "$D"
fi
# in_lab CMD...: CMD in lab-host, as root or (--as-user) as the lab's user; HOME and
# XDG_STATE_HOME the bench's
in_lab()
{
	if ((AS_USER)); then
		ip netns exec "$LAB_HOST_NS" setpriv --reuid="$LAB_USER_UID" --regid="$LAB_USER_GID" \
			--init-groups env -i HOME="$D/home" XDG_STATE_HOME="$D/state" USER="$LAB_USER" \
			PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 WARDEN_POOL=0 \
			WARDEN_GATEWAY_BIN="$WARDEN_GATEWAY_BIN" "$@"
	else
		HOME=$D/home XDG_STATE_HOME=$D/state in_host "$@"
	fi
}
cat >"$D/run.yaml" <<EOF
version: 1
filesystem:
  read: ["$D/repo", "$D/proj"]
  write: ["$D/out"]
EOF
# the workloads (hyperfine -N splits a command line into words as a shell would, quotes too)
declare -A WCMD=(
	[git]="/usr/bin/git -c safe.directory=* -c core.checkStat=minimal -C $D/repo status --porcelain"
	[npm]="/usr/bin/npm ls --offline --prefix $D/proj --no-update-notifier"
	[python]="/usr/bin/python3 -c 'import json'"
)
WORK="git npm python"
# cmdline MODE WORKLOAD: the measured command line
cmdline()
{
	case $1 in
	run) echo "$W run -q --audit-log $D/audit.jsonl -p $D/run.yaml -- ${WCMD[$2]}" ;;
	trace) echo "$W trace -q --audit-log $D/audit.jsonl -o $D/out/$2.jsonl -- ${WCMD[$2]}" ;;
	esac
}
# a control that each workload works under both (a benchmark of a failing command is nothing)
for w in $WORK; do
	for m in run trace; do
		(cd "$D/out" && eval "in_lab $(cmdline "$m" "$w")") \
			>/dev/null 2>"$D/err" ||
			{ echo "trace.sh: $w under warden $m fails: $(tail -n 5 "$D/err")" >&2; exit 1; }
	done
done

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A MED
for w in $WORK; do
	# one hyperfine call per workload: the runs of `warden run` in a block, then those of
	# `warden trace` (the machine is shared: the load is given before and after)
	(cd "$D/out" && in_lab hyperfine -N --warmup 2 \
		--runs "$RUNS" --export-json "$D/hf-$w.json" \
		"$(cmdline run "$w")" "$(cmdline trace "$w")") >/dev/null 2>"$D/hf.err" ||
		{ echo "hyperfine failed for $w: $(tail -n 3 "$D/hf.err")" >&2; exit 1; }
	MED[run/$w]=$(jq -r '.results[0].median * 1000' "$D/hf-$w.json")
	MED[trace/$w]=$(jq -r '.results[1].median * 1000' "$D/hf-$w.json")
done
# what the traces recorded (the last one of each workload)
declare -A EV
for w in $WORK; do
	EV[$w]=$(jq -s '[.[] | select(.type == "file")] | length' "$D/out/$w.jsonl")
done

mode=root
((AS_USER)) && mode=rootless
echo "trace.sh: git $N files, npm $NPKG packages, $RUNS runs each, $mode mode, $(nproc) CPUs, load $LOAD0 before, $(cut -d' ' -f1-3 /proc/loadavg) after, commit $(git -C "$SRC" rev-parse --short HEAD)"
echo
echo "| workload | \`warden run\` ms | \`warden trace\` ms | × run | file lines in the trace |"
echo "|---|---|---|---|---|"
for w in $WORK; do
	awk -v w="$w" -v r="${MED[run/$w]}" -v t="${MED[trace/$w]}" -v e="${EV[$w]}" \
		'BEGIN { printf "| %s | %.1f | %.1f | %.2f | %s |\n", w, r, t, t / r, e }'
done
LAB_FINISHED=1
