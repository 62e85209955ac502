#!/usr/bin/env bash
# tests/bench/stdio.sh - the cost of `warden run`'s stdio relay (launcher/run_stdio.c) and of
# telling the gateway the MCP tool calls in flight (docs/benchmarks.md "stdio relay").
#
# Usage: tests/bench/stdio.sh [--mib N] [--calls N] [--rounds N]   (as root; builds a lab)
#   throughput: N MiB (default 256) from a file through `cat` inside a run, the client's ends
#   pipes (`cat FILE | warden run -- cat | cat >/dev/null`), relayed and with
#   WARDEN_STDIO_RELAY=0 (direct inheritance), minus an empty run's time, median of the rounds;
#   mcp: N (default 2000) tools/call lines, each followed by its response, through `cat`
#   (the call starts, the echoed response ends it: two updates the gateway acknowledges), against
#   the same with tools/list (no update): the difference per call, and the relay's own mean
#   round trip per update (WARDEN_TIMING=1).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export WARDEN_BUILD_DIR=${WARDEN_BUILD_DIR:-$SRC/build/dev}
BUILD=$WARDEN_BUILD_DIR
export WARDEN_BIN=${WARDEN_BIN:-$BUILD/launcher/warden}
export WARDEN_GATEWAY_BIN=${WARDEN_GATEWAY_BIN:-$BUILD/gateway/warden-gateway}
MIB=256 CALLS=2000 ROUNDS=5
ARGS=("$@")
while (($#)); do
	case $1 in
	--mib) MIB=${2:?}; shift ;;
	--calls) CALLS=${2:?}; shift ;;
	--rounds) ROUNDS=${2:?}; shift ;;
	*) sed -n '4,12p' "$0"; exit 2 ;;
	esac
	shift
done
set -- "${ARGS[@]}"
. "$SRC/tests/lab/lib.sh"
lab_require_root
lab_need_run_tools
lab_up
T=$(lab_tmpdir wd-bench-stdio)
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
printf 'version: 1\n' >"$T/p.yaml"
head -c $((MIB << 20)) /dev/urandom >"$T/data"
python3 - "$T" "$CALLS" <<'EOF'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
with open(d + "/calls.jsonl", "w") as f, open(d + "/lists.jsonl", "w") as g:
    for i in range(n):
        # cat echoes the request (a server request: no change) and the response (it ends
        # the call): two updates per call
        f.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                            "params": {"name": "t", "arguments": {"i": i}}}) + "\n")
        g.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/list",
                            "params": {"name": "t", "arguments": {"i": i}}}) + "\n")
        for h in (f, g):
            h.write(json.dumps({"jsonrpc": "2.0", "id": i, "result": {}}) + "\n")
EOF
now() { date +%s%N; }
# one run: the nanoseconds of `cat IN | warden run -- cat | cat >/dev/null`
one() { # RELAY(1|0) INPUT
	local t0 t1
	t0=$(now)
	cat "$2" | WARDEN_STDIO_RELAY=$1 ip netns exec "$LAB_HOST_NS" "$WARDEN_BIN" run -q \
		--audit-log "$A" -p "$T/p.yaml" -- /bin/cat | cat >/dev/null
	t1=$(now)
	echo $((t1 - t0))
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
: >"$T/empty"
for relay in 1 0; do
	e=$(for _ in $(seq "$ROUNDS"); do one $relay "$T/empty"; done | median)
	f=$(for _ in $(seq "$ROUNDS"); do one $relay "$T/data"; done | median)
	awk -v r=$relay -v m="$MIB" -v e="$e" -v f="$f" 'BEGIN {
		printf "throughput %s: %d MiB in %.1f ms (empty run %.1f ms): %.0f MiB/s\n",
		r ? "relayed" : "direct  ", m, (f - e) / 1e6, e / 1e6, m / ((f - e) / 1e9) }'
done
# ping-pong: one call (or tools/list) and its response written, both echoed lines read back,
# then the next: the latency a client sees per call, with its two updates or none
pingpong() { # FILE -> ns per request/response pair
	WARDEN_TIMING=1 python3 - "$1" "$LAB_HOST_NS" "$WARDEN_BIN" "$A" "$T/p.yaml" <<'EOF'
import subprocess, sys, time
path, ns, w, a, pol = sys.argv[1:]
lines = open(path, "rb").read().splitlines(keepends=True)
p = subprocess.Popen(["ip", "netns", "exec", ns, w, "run", "-q", "--audit-log", a, "-p", pol,
                      "--", "/bin/cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, bufsize=0)
p.stdin.write(lines[0] + lines[1]); p.stdout.readline(); p.stdout.readline()  # warm
t0 = time.monotonic_ns()
for i in range(2, len(lines), 2):
    p.stdin.write(lines[i] + lines[i + 1])
    p.stdout.readline(); p.stdout.readline()
t1 = time.monotonic_ns()
p.stdin.close(); p.wait()
err = p.stderr.read().decode()
upd = [l for l in err.splitlines() if "mcp updates" in l]
print((t1 - t0) // ((len(lines) - 2) // 2), upd[0].split("timing: ")[1] if upd else "no updates")
EOF
}
for f in calls lists; do
	for _ in $(seq "$ROUNDS"); do pingpong "$T/$f.jsonl"; done | sort -n | sed -n "$(((ROUNDS + 1) / 2))p" |
		awk -v f=$f '{ printf "mcp ping-pong %s: %.0f us per request and response (%s)\n", f == "calls" ? "tools/call" : "tools/list", $1 / 1e3, substr($0, index($0, " ") + 1) }'
done
lab_finish
