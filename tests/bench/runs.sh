#!/usr/bin/env bash
# tests/bench/runs.sh - many concurrent runs on one daemon: N `warden run -- sleep` of one
# unprivileged user through one `warden-gateway --manage-nft` (daemon mode) in the lab, started
# one after another and all alive at once. Kept per run: its WARDEN_TIMING stages (network:
# the daemon's plumbing, register, the whole launch until exec). Sampled every STEP runs: the
# daemon worker's RSS and descriptors, the runs' processes' RSS, the host's available memory,
# the runs' veths in lab-host and the elements of the host table's runs_if set. It stops at the
# first run that does not start (and says why: that is how far it goes). Then every launcher
# gets SIGTERM and the script checks that each ended and that no veth or set element is left.
# Not in CI (docs/benchmarks.md "Scale and endurance").
#
# Usage (as root): tests/bench/runs.sh [N [STEP]]   (default 1000 runs, sampled every 100)
#   The samples: tests/bench/results/runs-DATE.tsv, the stages: runs-DATE-stages.tsv;
#   WARDEN_BUILD_DIR/WARDEN_BIN name the build (as for the integration tests).
set -u
N=${1:-1000}
STEP=${2:-100}
[[ $N =~ ^[1-9][0-9]*$ && $STEP =~ ^[1-9][0-9]*$ ]] || { echo "usage: runs.sh [N [STEP]]" >&2; exit 2; }
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
RESULTS=$SRC/tests/bench/results
. "$SRC/tests/lab/lib.sh" "$@"
lab_require_root
. "$SRC/tests/integration/daemon/fixture.sh"
DATE=$(date -u +%Y-%m-%dT%H%M%SZ)
OUT=$RESULTS/runs-$DATE.tsv
STAGES=$RESULTS/runs-$DATE-stages.tsv
mkdir -p "$RESULTS" "$T/r"
NOFILE_MAX=$(ulimit -Hn)
[[ $NOFILE_MAX == unlimited ]] && NOFILE_MAX=1048576

# room for N held control connections of one user (one per daemon-mode run) and the calls
# beside them: one uid may hold at most half of control's share (gw_fd_share()), so the share
# is twice that; without it, run 532 of one user is refused its `list` (the check stage)
cat >"$T/gateway.yaml" <<EOF
version: 1
resolvers: ["$LAB_DNS_V4"]
control: {path: "$SOCK", connections: $((2 * N + 128)), connections_per_user: $((N + 32))}
audit: {path: "$CENTRAL"}
EOF
cat >"$T/p.yaml" <<EOF
version: 1
network:
  allow:
    - {host: allowed.test, ports: [80]}
EOF
chmod 0644 "$T/p.yaml"

say() { printf '[runs %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
in_host "$W" nft install || { echo "FAIL: nft install"; exit 1; }
setsid nsenter --net="/run/netns/$LAB_HOST_NS" prlimit --nofile="$NOFILE_MAX:$NOFILE_MAX" \
	"$GW" --config "$T/gateway.yaml" --manage-nft --control-group warden </dev/null \
	>>"$T/daemon.log" 2>&1 &
GWPID=$!
daemon_ready || { echo "FAIL: the daemon did not start"; exit 1; }
worker() {
	local p last=
	for p in $(pgrep -s "$GWPID"); do last=$p; done
	echo "$last"
}
WPID=$(worker)
say "daemon $GWPID, worker $WPID, RLIMIT_NOFILE $NOFILE_MAX; $N runs of user $A_NAME"

PIDS=()
# sample I: one line of OUT
sample() {
	local rss_runs links elems
	# proportional set sizes: the pages the runs' processes share (the binaries, libc) once
	rss_runs=$(for p in $(pgrep -u "$A_UID"); do cat "/proc/$p/smaps_rollup" 2>/dev/null; done |
		awk '/^Pss:/ {s += $2} END {print s + 0}')
	links=$(ip -n "$LAB_HOST_NS" -o link show | grep -c ': wd-')
	elems=$(ip netns exec "$LAB_HOST_NS" nft -j list set inet warden runs_if 2>/dev/null |
		jq '[.nftables[] | select(.set) | .set.elem // [] | length] | add // 0')
	printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" \
		"$(awk '/^VmRSS/ {print $2}' "/proc/$WPID/status")" \
		"$(find "/proc/$WPID/fd" -mindepth 1 -maxdepth 1 | wc -l)" "$rss_runs" \
		"$(awk '/^MemAvailable/ {print $2}' /proc/meminfo)" "$links" "$elems" >>"$OUT"
}
printf 'runs\tworker_rss_kib\tworker_fds\truns_pss_kib\tmem_available_kib\tveths\truns_if_elements\n' >"$OUT"
printf 'run\tnetwork_ms\tregister_ms\tlaunch_ms\n' >"$STAGES"
sample 0
started=0 why=
for ((i = 1; i <= N; i++)); do
	e=$T/r/$i.err
	t0=$EPOCHREALTIME
	nsenter --net="/run/netns/$LAB_HOST_NS" setpriv --reuid="$A_UID" --regid="$A_GID" \
		--init-groups env -i HOME="$A_HOME" USER="$A_NAME" LOGNAME="$A_NAME" \
		PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 WARDEN_GATEWAY_BIN="$GW" \
		WD_DAEMON_TEST_MARK="$T" WARDEN_TIMING=1 \
		"$W" run -q --audit-log "$T/a/run-$i.jsonl" -p "$T/p.yaml" -- sleep 3600 \
		</dev/null >/dev/null 2>"$e" &
	PIDS+=($!)
	# up once its program was started (the exec stamp), given up after 60 s or its end
	for ((k = 0; k < 6000; k++)); do
		grep -q 'timing: exec' "$e" 2>/dev/null && break
		kill -0 "${PIDS[-1]}" 2>/dev/null || break
		sleep 0.01
	done
	if ! grep -q 'timing: exec' "$e"; then
		why="run $i did not start: $(grep -v timing "$e" | head -n 3 | tr '\n' ' ')"
		break
	fi
	started=$i
	awk -v i="$i" -v t="$(awk -v a="$EPOCHREALTIME" -v b="$t0" 'BEGIN {print (a - b) * 1000}')" \
		'/timing: network/ {n = $(NF - 1)} /timing: register/ {r = $(NF - 1)}
		 END {printf "%d\t%s\t%s\t%.1f\n", i, n, r, t}' "$e" >>"$STAGES"
	((i == 1 || i % STEP == 0)) &&
		say "run $i: $(grep -o "timing: .*" "$e" | awk '{printf "%s %s, ", $2, $3}')"
	((i % STEP == 0)) && { sample "$i"; say "$i runs up"; }
done
((started % STEP)) && sample "$started"
say "in all $started runs up${why:+; then $why}"
# where the runs' memory is: PSS by program (the launcher, bwrap, the program), KiB
say "PSS by program: $(for p in $(pgrep -u "$A_UID"); do
	printf '%s ' "$(cat "/proc/$p/comm" 2>/dev/null)"
	awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0
done | awk 'NF == 2 {s[$1] += $2; n[$1]++} END {for (k in s) printf "%s: %d processes, %d KiB (%d each); ", k, n[k], s[k], s[k] / n[k]}')"
# every launcher asked to stop; each must end (bounded wait), then nothing may be left
for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
t0=$SECONDS
for p in "${PIDS[@]}"; do
	while kill -0 "$p" 2>/dev/null && ((SECONDS - t0 < 300)); do sleep 0.2; done
done
left=0
for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && left=$((left + 1)); done
say "stopped in $((SECONDS - t0)) s; launchers left: $left"
# the daemon takes each run's veth, nft elements and cgroup away as its connection closes: how
# fast, sampled every 10 s (at most 10 minutes)
t0=$SECONDS
while [[ -n $(wd_links) ]] && ((SECONDS - t0 < 600)); do
	say "teardown: $(wd_links | wc -l) veths left after $((SECONDS - t0)) s"
	sleep 10
done
say "teardown: $(wd_links | wc -l) veths left after $((SECONDS - t0)) s"
sample -1
say "after: $(tail -n 1 "$OUT"); the daemon's worker $WPID $(kill -0 "$WPID" 2>/dev/null && echo runs || echo "is gone"), now $(worker)"
daemon_alive=1
if ! kill -0 "$GWPID" 2>/dev/null; then
	daemon_alive=0
	wait "$GWPID"
	say "the daemon ended with status $?"
	GWPID=
fi
# the daemon's own words (its log is removed with the lab)
grep -v '^$' "$T/daemon.log" | tail -n 20 | sed 's/^/[daemon] /' >&2
python3 - "$OUT" "$STAGES" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
st = list(csv.DictReader(open(sys.argv[2]), delimiter='\t'))
print('runs\tworker RSS KiB\tworker fds\truns PSS KiB\tMemAvailable KiB\tveths\truns_if')
for r in rows:
    print('\t'.join(r.values()))
def med(a, b, k):
    v = [float(r[k]) for r in st[a:b] if r[k]]
    return round(statistics.median(v), 2) if v else None
n = len(st)
if n >= 10:
    for k in ('network_ms', 'register_ms', 'launch_ms'):
        print(f'{k}: runs 1-10 median {med(0, 10, k)}, runs {n - 9}-{n} median {med(n - 10, n, k)}')
EOF
echo "runs: $started of $N started${why:+ ($why)}; samples in $OUT"
check_eq "every run started" "$N" echo "$started"
check_eq "every launcher ended after SIGTERM" 0 echo "$left"
check_eq "the daemon outlived the teardown of its runs" 1 echo "$daemon_alive"
check "no veth of a run is left" no_wd_links
check_eq "no element is left in runs_if" 0 bash -c 'tail -n 1 "$0" | cut -f7' "$OUT"
lab_finish
