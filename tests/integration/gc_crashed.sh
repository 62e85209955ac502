#!/usr/bin/env bash
# gc_crashed.sh - a launcher killed with SIGKILL (issue 27, item 12): its program dies with it,
# its audit log ends without run.exit, and the next `warden` invocation of any verb writes the
# missing run.exit with "crashed": true from the run's record, exactly once: again, by `warden
# gc`, by `warden status`, and by eight invocations at once. Root mode and rootless (as the lab
# user). Positive controls: a run that ends normally has one run.exit without "crashed"; a live
# run's launcher is not taken for dead (no run.exit while it lives). Then root mode's leftovers
# that stay by design (the pool's holders, the `inet warden` table, in the lab's namespace):
# `warden status` shows them, `warden gc --all` refuses while a run is live and removes them
# when none is.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
command -v setpriv >/dev/null || { echo "FAIL: setpriv is missing"; exit 1; }
lab_user || { echo "FAIL: no unprivileged test user (useradd failed)"; exit 1; }
lab_up

T=$(mktemp -d /tmp/wd-gc-crashed-XXXXXX)
lab_on_exit rm -rf "$T"
chmod 0755 "$T"
install -d -m 0700 -o "$LAB_USER_UID" -g "$LAB_USER_GID" "$T/user"
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
P=$SRC/deploy/examples/minimal.yaml
USER_RUNS=/tmp/warden-$LAB_USER_UID/runs

# as MODE CMD...: CMD in lab-host as root (root) or as the lab user (rootless)
as() { local m=$1; shift; if [[ $m == root ]]; then in_host "$@"; else in_host_user "$@"; fi; }
log_of() { if [[ $1 == root ]]; then echo "$T/root.jsonl"; else echo "$T/user/audit.jsonl"; fi; }
runs_of() { if [[ $1 == root ]]; then echo /run/warden/runs; else echo "$USER_RUNS"; fi; }
# exits LOG ID [crashed]: how many run.exit the log has for run ID (with "crashed": true)
exits()
{
	[[ -f $1 ]] || { lab_probe_error "no audit log $1"; return 2; }
	jq -s --arg id "$2" --arg c "${3:-}" '[.[] | select(.run == $id and .action == "run.exit"
		and ($c == "" or .crashed == true))] | length' "$1"
}
# launcher_of MODE MARK: the pid in the record of the live run whose command has MARK
launcher_of()
{
	local f
	for f in "$(runs_of "$1")"/*/state; do
		[[ -f $f ]] && grep -q -- "$2" "$f" && sed -n 's/^pid=//p' "$f" && return 0
	done
	return 1
}
id_of() { jq -r -s --arg m "$2" '[.[] | select(.action == "run.start" and
	(.command | any(. == $m)))] | last | .run // empty' "$1"; }
alive() { kill -0 "$1" 2>/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }
# prog_pid MARK: the program of a run, `sleep MARK` (pgrep sees only this script's pid
# namespace; the launcher's and bwrap's command lines end with the same words)
prog_pid()
{
	local p
	for p in $(pgrep -x sleep); do
		[[ $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) == *" $1 " ]] && echo "$p" && return 0
	done
	return 1
}

for mode in root rootless; do
	A=$(log_of $mode)
	# control: a run that ends normally has one run.exit, not a crashed one
	check "$mode: a normal run exits 0" as $mode "$W" run -q --audit-log "$A" -p "$P" -- /bin/true
	NID=$(jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A")
	check_eq "$mode: control: a normal run has one run.exit" 1 exits "$A" "$NID"
	check_eq "$mode: control: ... and it does not say crashed" 0 exits "$A" "$NID" crashed

	# a live run; its launcher killed with SIGKILL
	MARK=$((3000 + RANDOM % 1000))
	as $mode "$W" run -q --audit-log "$A" -p "$P" -- sleep "$MARK" </dev/null >/dev/null 2>&1 &
	BG=$!
	check "$mode: the run's program is running" lab_wait 20 prog_pid "$MARK"
	L=$(launcher_of $mode "\"$MARK\"]" || true)
	SP=$(prog_pid "$MARK")
	ID=$(id_of "$A" "$MARK")
	check "$mode: its launcher's pid is in its record" test -n "$L"
	check "$mode: its id is in run.start" test -n "$ID"
	check "$mode: control: a verb while the launcher lives" as $mode "$W" status
	check_eq "$mode: control: ... writes no run.exit of a live run" 0 exits "$A" "$ID"
	kill -9 "${L:-0}"
	wait "$BG" 2>/dev/null
	check "$mode: the launcher is gone" lab_wait 10 gone "${L:-0}"
	check "$mode: the program died with its launcher" lab_wait 10 gone "${SP:-0}"
	check_eq "$mode: the log has no run.exit of the killed run yet" 0 exits "$A" "$ID"
	check "$mode: any verb (version) runs" as $mode "$W" version
	check_eq "$mode: ... and wrote the missing run.exit, crashed" 1 exits "$A" "$ID" crashed
	check "$mode: warden status runs" as $mode "$W" status
	check "$mode: warden gc runs" as $mode "$W" gc -q
	check_eq "$mode: ... and neither wrote it again" 1 exits "$A" "$ID"
	check_eq "$mode: the crashed run.exit: not allowed, the launcher's pid, why" \
		"false $L true" jq -r -s --arg id "$ID" '.[] | select(.run == $id and
		.action == "run.exit") | "\(.allowed) \(.pid) \(.reason | test("SIGKILL"))"' "$A"
	check "$mode: gc removed the killed run's record" \
		bash -c '! grep -qs -- "$1" "$0"/*/state' "$(runs_of $mode)" "\"$MARK\"]"

	# two (eight) invocations at once write it once: the lock
	MARK=$((4000 + RANDOM % 1000))
	as $mode "$W" run -q --audit-log "$A" -p "$P" -- sleep "$MARK" </dev/null >/dev/null 2>&1 &
	BG=$!
	check "$mode: a second run's program is running" lab_wait 20 prog_pid "$MARK"
	L=$(launcher_of $mode "\"$MARK\"]" || true)
	ID=$(id_of "$A" "$MARK")
	kill -9 "${L:-0}"
	wait "$BG" 2>/dev/null
	check "$mode: its launcher is gone" lab_wait 10 gone "${L:-0}"
	pids=()
	for i in 1 2 3 4 5 6 7 8; do
		as $mode "$W" version >/dev/null 2>&1 &
		pids+=($!)
	done
	ok=0
	for p in "${pids[@]}"; do wait "$p" && ok=$((ok + 1)); done
	check_eq "$mode: eight verbs at once all ran" 8 echo "$ok"
	check_eq "$mode: ... and wrote one run.exit, crashed" 1 exits "$A" "$ID" crashed
	check_eq "$mode: ... and no other" 1 exits "$A" "$ID"
done

# --- what stays between runs by design (root mode, in the lab's host namespace): the pool's
# networks with their holder processes, and the `inet warden` table
check "a root run with a pool of 2 exits 0" in_host env WARDEN_POOL=2 "$W" run -q \
	--audit-log "$T/root.jsonl" -p "$P" -- /bin/true
holders() { in_host "$W" status --json | jq '[.pool[] | select(.alive)] | length'; }
pool_ready() { [[ $(holders) -ge 2 ]]; }
check "the pool fills: warden status --json lists two networks with live holders" lab_wait 30 pool_ready
check "warden status shows the holders" lab_match '^pool: 2 networks, 2 held by warden-pool processes' \
	in_host "$W" status
check "... and the table" lab_match '^nft: table inet warden installed' in_host "$W" status
check "control: the holders run" test -n "$(pgrep -x warden-pool)"
check "control: the table is in the lab's host namespace" in_host nft list table inet warden
# a live root-mode run: --all refuses and removes nothing
MARK=$((5000 + RANDOM % 1000))
in_host env WARDEN_POOL=0 "$W" run -q --audit-log "$T/root.jsonl" -p "$P" -- sleep "$MARK" \
	</dev/null >/dev/null 2>&1 &
BG=$!
check "a live run's program is running" lab_wait 20 prog_pid "$MARK"
check_fails --denied 1 "warden gc --all refuses while a root-mode run is live" in_host "$W" gc --all
gc_all_says() { in_host "$W" gc --all 2>&1 | grep -q "$1"; }
check "... and says why" gc_all_says "root-mode run is live"
check "... the table is still there" in_host nft list table inet warden
check "... holders too" test -n "$(pgrep -x warden-pool)"
ID=$(id_of "$T/root.jsonl" "$MARK")
check "the live run is stopped (warden kill)" in_host "$W" kill "$ID"
wait "$BG" 2>/dev/null
no_runs() { [[ $(in_host "$W" status --json | jq '.runs | length') == 0 ]]; }
check "no run is live (its teardown done)" lab_wait 30 no_runs
check "warden gc --all removes the rest" gc_all_says "nft table inet warden removed"
pool_len() { in_host "$W" status --json | jq '.pool | length'; }
check_eq "... the pool is empty" 0 pool_len
no_holders() { [[ -z $(pgrep -x warden-pool) ]]; }
check "... no holder process is left" lab_wait 10 no_holders
check_fails "... the table is gone from the lab's host namespace" in_host nft list table inet warden
check "... warden status shows neither" lab_no_match '^(pool|nft):' in_host "$W" status

# the event as the schema says (the field is declared, a boolean)
check_eq "the schema declares crashed as a boolean" boolean \
	jq -r '.properties.crashed.type' "$SRC/docs/audit-event.schema.json"

lab_finish
