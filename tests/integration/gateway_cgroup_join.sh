#!/usr/bin/env bash
# gateway_cgroup_join.sh - daemon mode's cgroup_join (issue 14): on the connection that holds a
# run, the launcher asks the daemon to move a process into the run's cgroup (cgroup v2 forbids
# the user the move itself: the common-ancestor rule); the daemon's parent moves only a process
# of the run's user that is in the run's network namespace. This machine has cgroup v1, where
# the daemon writes each controller folder's cgroup.procs; the v2 folders are test_gw_cgroup's
# (a fake root). Refused, with the daemon serving on: A's process outside the run's namespace,
# B's process, a join on a connection that holds no run, pid 1. Control: A's process in the
# namespace it registered is moved (its /proc/PID/cgroup names the run's folder), and removing
# the run when the connection closes ends it.
set -u
. "$(dirname "$0")/daemon/prelude.sh"
check "the host's nft table is installed" in_host "$W" nft install
daemon_start
check "the daemon starts as root in lab-host (--manage-nft)" daemon_ready

as_a unshare -Urn sleep 120 &
A_HOLDER=$!
as_a bash -c 'echo $$ >"$0"; exec sleep 120' "$T/a/out.pid" &
A_OUT_JOB=$!
as_b unshare -Urn sleep 120 &
B_HOLDER=$!
lab_on_exit bash -c 'kill "$0" "$1" "$2" 2>/dev/null; true' "$A_HOLDER" "$A_OUT_JOB" "$B_HOLDER"
lab_wait 5 test -s "$T/a/out.pid"
A_OUT=$(cat "$T/a/out.pid" 2>/dev/null)
[[ $A_OUT =~ ^[0-9]+$ ]] && lab_on_exit bash -c 'kill "$0" 2>/dev/null; true' "$A_OUT"
ANS=$(ns_of "$A_HOLDER") BNS=$(ns_of "$B_HOLDER")
check "A holds a namespace of A's own" test -n "$ANS"
check "A's other process runs as A" lab_wait 5 bash -c \
	'grep -Eq "^Uid:\s+$0\s" /proc/$1/status' "$A_UID" "$A_OUT"
check "B holds one of B's own" test -n "$BNS"

# joined TEXT CMD...: CMD's first line (the register) is ok and its last names TEXT
joined() {
	local text=$1 out
	shift
	out=$("$@") || return 2
	printf '%s\n' "$out"
	head -1 <<<"$out" | jq -e '.ok == true' >/dev/null || { lab_probe_error "the register failed"; return 2; }
	tail -1 <<<"$out" | grep -qF -- "$text"
}
refused() {
	local text=$1 out
	shift
	out=$("$@") || return 2
	printf '%s\n' "$out"
	tail -1 <<<"$out" | jq -e '.ok == false' >/dev/null && grep -qF -- "$text" <<<"$out"
}
check "A's process outside the run's namespace: refused" \
	joined "not in the run's network namespace" client_a join "$ANS" "$A_OUT"
check "B's process (in B's own namespace): refused as not A's" \
	joined "is not uid $A_UID's" client_a join "$ANS" "$BNS"
check "a join on a connection that holds no run: refused" \
	refused "only on the connection that registered the run" client_a join-only "$ANS"
check "pid 1: refused by the parser" refused "process id above 1" client_a join-only 1
check "the refused processes stayed where they were" bash -c \
	'! grep -q warden- /proc/$0/cgroup && ! grep -q warden- /proc/$1/cgroup' "$A_OUT" "$BNS"
check "the daemon kept serving" kill -0 "$GWPID"

echo "# control: A's own process in the namespace A registered"
CTL_HOLD=8 client_a join "$ANS" "$ANS" >"$T/join.out" 2>&1 &
JOINER=$!
check "the daemon answers both" lab_wait 10 bash -c '[[ $(wc -l <"$0") -ge 2 ]]' "$T/join.out"
sed 's/^/    | /' "$T/join.out"
check "the join is ok" bash -c 'tail -1 "$0" | jq -e ".ok == true"' "$T/join.out"
check "the process is in the run's memory cgroup (warden-<id>)" \
	grep -Eq '^[0-9]+:memory:.*/warden-crafted[0-9]+$' "/proc/$ANS/cgroup"
check "... and its pids one" grep -Eq '^[0-9]+:pids:.*/warden-crafted[0-9]+$' "/proc/$ANS/cgroup"
wait "$JOINER"
check "the connection closed: the run's removal ended what its cgroup held" \
	lab_wait 10 bash -c '! kill -0 "$0" 2>/dev/null' "$ANS"
check "control: the process outside is still running" kill -0 "$A_OUT"
daemon_stop
check "the daemon's log has no sanitizer report" bash -c \
	'! grep -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$0"' "$T/daemon.log"
lab_finish
