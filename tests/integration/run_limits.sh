#!/usr/bin/env bash
# run_limits.sh - `warden run` limits and teardown in the lab: a memory hog is killed (limit
# event), a fork bomb hits pids.max and the host survives, the timeout ends a sleeper (124) and
# a program that ignores SIGTERM, and after 20 runs (some launchers killed with SIGKILL mid-run)
# plus `warden gc` no interface, namespace, set element, cgroup, state or process is left.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
lab_up

T=$(lab_tmpdir wd-run-limits)
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW
# the detached teardowns of finished runs are done: no run's state is owned by a live process
# and no teardown child (live: not a zombie) is still at work refilling the pool
teardowns_quiet() { lab_teardowns_quiet "$A"; }
teardowns_done() {
	lab_wait 20 teardowns_quiet
}
wr() { in_host "$W" run -q --audit-log "$A" "$@"; }
status_of() { "$@" >/dev/null 2>&1; echo $?; }
# pgrep sees every process of the machine, also other tests' sleeps: this test's sleep an extra
# 0.PID seconds (MARK), which makes their command lines its own (MARK_RE)
MARK=0.$$
MARK_RE="0\\.$$"
# none_left ERE: no process's command line matches ERE (pgrep exits 1); 2 when pgrep errs
none_left() {
	local rc=0
	pgrep -f "$1" >/dev/null || rc=$?
	case $rc in
	0) pgrep -af "$1" | sed 's/^/    left: /'; return 1 ;;
	1) return 0 ;;
	*) lab_probe_error "pgrep -f $1: exit $rc"; return 2 ;;
	esac
}

cat >"$T/limits.yaml" <<EOF
version: 1
limits:
  memory_mb: 64
  pids: 32
  timeout_s: 3
EOF
mech=$(in_host "$W" doctor 2>/dev/null | awk '$2 == "cgroups" {print $5}')
echo "# limits mechanism: ${mech:-unknown}"

echo "# limits"
check_eq "a memory hog is killed: 137" 137 status_of wr -p "$T/limits.yaml" -- \
	sh -c 'x=a; while :; do x=$x$x; done'
check "... with a limit.memory event" jq -e -s \
	'[.[] | select(.action == "limit.memory" and .limit == 67108864)] | length == 1' "$A"
check_eq "memory sampling (no cgroup): a memory hog is killed: 137" 137 status_of env \
	WARDEN_LIMITS=sampling ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" \
	-p "$T/limits.yaml" -- sh -c 'x=a; while :; do x=$x$x; done'
# (counts, so that a difference shows how many: run_as_user.sh's rows name them)
check_eq "... the audit says so" 1 jq -s '
	[.[] | select(.action == "run.start" and (.isolation | contains("pss-sampling")))] |
	length' "$A"
check_eq "... with a limit.memory event" 1 jq -s \
	'[.[] | select(.action == "limit.memory" and (.reason | contains("pss-sampling")))] |
	length' "$A"
# memory sampling counts a page shared by N forked processes once (PSS), not N times (RSS): a
# parent touches 64 MiB and forks 120 children that share it and live 5 s: under 256 MiB (their
# resident sizes summed were ~9 GiB: killed); the control, the same program whose children each
# also write 4 MiB of their own (480 MiB in all), is killed within the same 5 s, which shows the
# sampler looked while the children were there
cat >"$T/fork.yaml" <<EOF
version: 1
limits:
  memory_mb: 256
  timeout_s: 60
EOF
# the program's user (nobody for root's runs) reads it through the test's folder
chmod 0711 "$T"
mkdir -p "$T/py"
cat >"$T/py/forks.py" <<'EOF'
import os, sys, time
own = int(sys.argv[1])
shared = bytearray(64 << 20)
for i in range(0, len(shared), 4096):
    shared[i] = 1
kids = []
for _ in range(120):
    pid = os.fork()
    if pid == 0:
        mine = bytearray(own << 20)
        for i in range(0, len(mine), 4096):
            mine[i] = 1
        time.sleep(5)
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
print("done")
EOF
chmod 0755 "$T/py"
chmod 0644 "$T/py/forks.py"
sampled_run() {
	env WARDEN_LIMITS=sampling ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$T/pss.jsonl" \
		-p "$T/fork.yaml" --read "$T/py/forks.py" -- /usr/bin/python3 "$T/py/forks.py" "$1"
}
check_eq "memory sampling: 120 forked children sharing 64 MiB stay under 256 MiB" "done" \
	sampled_run 0
check_eq "... while the same children writing 4 MiB each (480 MiB) are killed: 137" 137 \
	status_of sampled_run 4
check_eq "... with one limit.memory event, for it (pss-sampling)" 1 jq -s \
	'[.[] | select(.action == "limit.memory" and (.reason | contains("pss-sampling")))] |
	length' "$T/pss.jsonl"
check "a fork bomb ends (pids.max, then the timeout)" bash -c \
	'ip netns exec "$0" "$1" run -q --audit-log "$2" -p "$3" -- \
	sh -c "b() { b | b & }; b; sleep 60 $4" >/dev/null 2>&1; [[ $? != 0 ]]' \
	"$LAB_HOST_NS" "$W" "$A" "$T/limits.yaml" "$MARK"
check_eq "... with a limit.pids event" 1 jq -s \
	'[.[] | select(.action == "limit.pids" and .limit == 32)] | length' "$A"
# the host survives: nothing of the bomb outlives its run (its shells' command line ends in
# "b; sleep 60 MARK"), and lab-host can still start 64 processes at once (twice the run's
# pids.max) as the user the bomb ran as
check "... and no process of the bomb is left" lab_wait 10 none_left "b; sleep 60 $MARK_RE\$"
prog_ids=$(lab_program_ids)
check "... and the host survives (it can still fork 64 processes at once as ${prog_ids%%:*})" \
	in_host setpriv --reuid="${prog_ids%%:*}" --regid="${prog_ids##*:}" --clear-groups \
	bash -c 'p=(); for i in $(seq 64); do sleep 10 & p+=("$!"); done; kill "${p[@]}"'
check_eq "a sleeper is stopped by the timeout: 124" 124 status_of wr -p "$T/limits.yaml" -- \
	sleep 60 "$MARK"
check_eq "a program ignoring SIGTERM is killed: 124" 124 status_of wr -p "$T/limits.yaml" -- \
	sh -c 'trap "" TERM; sleep 60 "$0" & while :; do wait; done' "$MARK"
check_eq "--timeout overrides the policy" 124 status_of wr --timeout 1 -- sleep 60 "$MARK"
# (the bomb's run ends by the timeout only when some of it outlives pids.max: on a loaded machine
# it may all die first, so its event is not counted on)
check "limit.time events: sleeper, TERM-ignorer, override (and the bomb's, if it lasted)" jq -e -s \
	'[.[] | select(.action == "limit.time")] | length == 3 or length == 4' "$A"
# A run's program is its command resolved with PATH: /usr/bin/sleep (the runs' checks once
# looked for "^sleep 3600\." and could not fail); a sleep its shell starts is "sleep".
check "no program of these runs is left" none_left "^(/usr/bin/)?sleep 60 $MARK_RE\$"
/usr/bin/sleep 60 "$MARK" &
ctl=$!
# the probe is only a control once the child has become sleep: on a loaded machine the fork
# still runs this shell's image for a while (its command line is then bash's)
check "control: the started sleep has exec'd" lab_wait 30 \
	bash -c '[[ $(readlink "/proc/$0/exe") == /usr/bin/sleep ]]' "$ctl"
check_fails "control: the same probe finds a /usr/bin/sleep 60 $MARK that runs" \
	none_left "^(/usr/bin/)?sleep 60 $MARK_RE\$"
kill "$ctl"
wait "$ctl" 2>/dev/null

echo "# teardown after 20 runs, some killed mid-run"
: >"$T/killed"
for i in $(seq 1 20); do
	if ((i % 4 == 0)); then
		# the launcher dies with SIGKILL while its program runs
		ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" -- sleep 3600.$i "$MARK" \
			>/dev/null 2>&1 &
		pid=$!
		check "control: run $i's program shows in pgrep (it is killed below)" \
			lab_wait 10 pgrep -f "^/usr/bin/sleep 3600\\.$i $MARK_RE\$"
		if ((i == 4)); then
			# positive controls for "nothing is left" below, while a run lives
			check "control: its embedded gateway shows in lab-host's processes" bash -c \
				'ip netns pids "$0" | xargs -r ps -o comm= -p | grep -q warden-gateway' "$LAB_HOST_NS"
			check "control: its launcher and bwrap show there" bash -c \
				'ip netns pids "$0" | xargs -r ps -o comm= -p | grep -Eq "bwrap|warden"' "$LAB_HOST_NS"
			live=$(jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A")
			check "control: its state folder is there" test -e "$LAB_RUNS_DIR/$live"
		fi
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		echo "$i" >>"$T/killed"
		# reclaimed here and now: any `warden run` or `warden gc` on the machine reclaims a dead
		# run's state, also one in another host namespace, which cannot delete its nft elements
		# in this one (they would stay, with no state left to find them: reported)
		check "warden gc in lab-host reclaims the killed run $i" in_host "$W" gc -q
	else
		wr -p "$T/limits.yaml" -- sh -c 'echo run' >/dev/null
	fi
done
check_eq "5 launchers were killed mid-run" 5 bash -c 'wc -l <"$0"' "$T/killed"
check "their programs died with them" lab_wait 10 none_left "^/usr/bin/sleep 3600\.[0-9]+ $MARK_RE\$"
check "the embedded gateways died with them" bash -c \
	'! ip netns pids "$0" | xargs -r ps -o comm= -p | grep -q warden-gateway' "$LAB_HOST_NS"
check "the background teardowns finish" teardowns_done
check "warden gc --pool cleans up (and drains the pool of ready networks)" in_host "$W" gc -q --pool
ids=$(jq -r -s '.[] | select(.action == "run.start") | .run' "$A")
check "20+ runs were audited" bash -c '(( $(wc -w <<<"$0") >= 20 ))' "$ids"
check "no interface is left in lab-host" lab_wait 5 lab_no_match '^wd-' in_host ip -br link
check "control: the same listing shows lab-host's veth-wan" lab_match '^veth-wan' in_host ip -br link
check_eq "no nft set element is left" 0 bash -c \
	'ip netns exec "$0" nft -j list set inet warden runs_if | jq "[.nftables[].set.elem // [] | .[]] | length"' \
	"$LAB_HOST_NS"
check "no run state is left" bash -c \
	'for id in $0; do [[ ! -e $LAB_RUNS_DIR/$id ]] || exit 1; done' "$ids"
check "no cgroup is left" bash -c \
	'for id in $0; do
		! find /sys/fs/cgroup /run/warden/cgroup -maxdepth 6 -name "warden-$id" 2>/dev/null |
			grep -q . || exit 1
		[[ ! -e /sys/fs/cgroup/warden/$id ]] || exit 1
	done' "$ids"
check "no namespace of these runs is left" bash -c \
	'for n in $(ip netns list | awk "/^wd-/ {print \$1}"); do
		ip -n "$n" link show eth0 2>/dev/null | grep -q "link-netns $0" && exit 1
	done; exit 0' "$LAB_HOST_NS"
check "no process is left in lab-host but the lab's own" bash -c \
	'! ip netns pids "$0" | xargs -r ps -o comm= -p | grep -Eq "bwrap|warden"' "$LAB_HOST_NS"
check "every killed run has a run.start (and the audit stays readable)" bash -c \
	'"$0" logs --audit-log "$1" --tail 5 >/dev/null' "$W" "$A"

lab_finish
