#!/usr/bin/env bash
# tests/bench/files.sh - what recording file accesses costs a run (issue 16, docs/files.md):
# a program that opens N granted files (python3: open + read + close each), and `git status`
# in a tree of N committed files (an lstat per file), under `warden run` with each candidate
# mechanism:
#
#   off        audit.files: off (no recorder, the default: the baseline)
#   denied     audit.files: denied (seccomp user notification)
#   all        audit.files: all (the same mechanism, every access kept)
#   strace     audit.files: off, the program under `strace -f -qq -e trace=%file -o /dev/null`
#              inside the sandbox (the Go seed's mechanism)
#   fanotify   audit.files: off, a fanotify listener (FAN_REPORT_DFID_NAME, FAN_MARK_FILESYSTEM,
#              FAN_OPEN|FAN_OPEN_EXEC) on the tree's filesystem, outside the sandbox, as root
#
# Reported: the median wall time of the whole `warden run` (hyperfine), and the median of the
# program's own loop time (python3 measures it with time.perf_counter and prints it), per
# candidate, with the ratio to off. Root mode in the lab's host namespace; --as-user also as
# the lab's unprivileged user (rootless mode; fanotify cannot run there).
#
# Usage: tests/bench/files.sh [--files N] [--runs N] [--as-user]    (as root; prints markdown)
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${WARDEN_BUILD_DIR:-$SRC/build/bench}
W=${WARDEN_BIN:-$BUILD/launcher/warden}
export WARDEN_GATEWAY_BIN=${WARDEN_GATEWAY_BIN:-$BUILD/gateway/warden-gateway}
N=10000
RUNS=10
AS_USER=0
ARGS=("$@")
while (($#)); do
	case $1 in
	--files) N=${2:?}; shift ;;
	--runs) RUNS=${2:?}; shift ;;
	--as-user) AS_USER=1 ;;
	*) sed -n '20p' "$0" | sed 's/^# //'; exit 2 ;;
	esac
	shift
done
set -- "${ARGS[@]}"
. "$SRC/tests/lab/lib.sh"
lab_require_root
for t in hyperfine python3 git strace jq cc; do
	command -v "$t" >/dev/null || { echo "files.sh: $t is missing" >&2; exit 1; }
done
lab_up
export WARDEN_POOL=0
D=$(mktemp -d /tmp/warden-bench-files.XXXXXX)
[[ -n ${KEEP_BENCH:-} ]] || lab_on_exit rm -rf "$D"
chmod 0755 "$D"
# the helper from the build tree (tests/bench/CMakeLists.txt), else compiled here
if [[ -x $BUILD/tests/bench/fanotify_count ]]; then
	cp "$BUILD/tests/bench/fanotify_count" "$D/fanotify_count"
else
	cc -O2 -D_GNU_SOURCE -o "$D/fanotify_count" "$SRC/tests/bench/fanotify_count.c" || exit 1
fi

python3 -c '
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.txt" % i), "w") as f:
        f.write("file %d\n" % i)' "$D/tree" "$N"
git -C "$D/tree" init -q && git -C "$D/tree" add -A &&
	git -C "$D/tree" -c user.email=bench@warden -c user.name=bench commit -qm tree
cat >"$D/open.py" <<'EOF'
import os, sys, time
root = sys.argv[1]
paths = [os.path.join(d, f) for d, _, fs in os.walk(root) if ".git" not in d for f in fs]
t = time.perf_counter()
n = 0
for p in paths:
    with open(p) as f:
        n += len(f.read())
print("%.3f %d %d" % ((time.perf_counter() - t) * 1000, len(paths), n))
EOF
chmod -R a+rX "$D"
for m in off denied all; do
	printf 'version: 1\nfilesystem:\n  read: ["%s"]\naudit:\n  files: %s\n' "$D" "$m" >"$D/$m.yaml"
done
if ((AS_USER)); then
	lab_user || exit 1
	chown -R "$LAB_USER_UID:$LAB_USER_GID" "$D"
fi

# cmd CANDIDATE WORKLOAD: the measured command line
cmd()
{
	local pol=$D/off.yaml pre=
	case $1 in
	denied | all) pol=$D/$1.yaml ;;
	strace) pre="/usr/bin/strace -f -qq -e trace=%file -o /dev/null" ;;
	esac
	case $2 in
	open) echo "$W run -q --audit-log $D/audit-$1.jsonl -p $pol -- $pre /usr/bin/python3 $D/open.py $D/tree" ;;
	git) echo "$W run -q --audit-log $D/audit-$1.jsonl -p $pol -- $pre /usr/bin/git -c safe.directory=* -c core.checkStat=minimal -C $D/tree status --porcelain" ;;
	esac
}
run_in() { if ((AS_USER)); then in_host_user "$@"; else in_host "$@"; fi; }
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A WALL LOOP
CANDS="off denied all strace fanotify"
((AS_USER)) && CANDS="off denied all strace"
# the program's own loop time: the candidates but fanotify interleaved run by run (the
# machine is shared: a drift in its load then falls on all of them alike)
for ((i = 0; i < RUNS; i++)); do
	for c in off denied all strace; do
		run_in $(cmd "$c" open) | awk '{print $1}' >>"$D/loop-$c"
	done
done
for c in off denied all strace; do LOOP[$c]=$(median <"$D/loop-$c"); done
for c in $CANDS; do
	fpid=
	if [[ $c == fanotify ]]; then
		coproc FAN { exec "$D/fanotify_count" "$D/tree"; }
		fpid=$FAN_PID
		read -r ready <&"${FAN[0]}"
		[[ $ready == ready ]] || { echo "fanotify_count did not start" >&2; exit 1; }
		# fanotify's loop time, each run next to one without it (the listener marks the
		# whole filesystem, so it cannot be interleaved with the others)
		for ((i = 0; i < RUNS; i++)); do
			run_in $(cmd fanotify open) | awk '{print $1}' >>"$D/loop-fanotify"
		done
		LOOP[fanotify]=$(median <"$D/loop-fanotify")
	fi
	for w in open git; do
		line=$(cmd "$c" "$w")
		run_in hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$D/hf.json" "$line" >/dev/null 2>"$D/hf.err" ||
			{ echo "hyperfine failed for $c/$w: $(tail -n 3 "$D/hf.err")" >&2; exit 1; }
		WALL[$c/$w]=$(jq -r '.results[0].median * 1000' "$D/hf.json")
	done
	if [[ -n $fpid ]]; then
		kill -TERM "$fpid"
		read -r FAN_EVENTS <&"${FAN[0]}"
		wait "$fpid"
	fi
done

mode=root
((AS_USER)) && mode=rootless
echo "files.sh: $N files, $RUNS runs per candidate, $mode mode, $(nproc) CPUs, load $LOAD0 before, $(cut -d' ' -f1-3 /proc/loadavg) after, commit $(git -C "$SRC" rev-parse --short HEAD)"
echo
echo "| candidate | open.py loop ms (× off) | warden run open.py ms (× off) | warden run git status ms (× off) |"
echo "|---|---|---|---|"
for c in $CANDS; do
	awk -v c="$c" -v l="${LOOP[$c]}" -v l0="${LOOP[off]}" -v o="${WALL[$c/open]}" \
		-v o0="${WALL[off/open]}" -v g="${WALL[$c/git]}" -v g0="${WALL[off/git]}" \
		'BEGIN { printf "| %s | %.1f (%.2f) | %.1f (%.2f) | %.1f (%.2f) |\n", c, l, l / l0, o, o / o0, g, g / g0 }'
done
[[ -n ${FAN_EVENTS:-} ]] && echo && echo "fanotify events counted: $FAN_EVENTS"
for c in denied all; do
	echo "file events written by $c: $(jq -s '[.[] | select(.type == "file")] | length' "$D/audit-$c.jsonl")"
done
LAB_FINISHED=1
