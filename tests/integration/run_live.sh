#!/usr/bin/env bash
# run_live.sh - the command line over live runs (issue 15, item 3) in the lab, for root mode
# (root), rootless mode (user A, uid 1500 by default) and daemon mode (user A through the
# fixture's warden-gateway --manage-nft): `warden status` lists the run (JSON keys, the
# gateway's counters), `warden allowlist RUN` shows its allowlist, `remove NAME` cuts the run's
# open connection to NAME while its connection to a name still allowed stays up, and NAME's DNS
# and its old (synthetic) address are refused from then on, `add NAME` makes a denied name
# work, both audited (who, before, after) with the gateway's net.revoke; `warden kill RUN` ends
# it (143, run.kill and run.exit name who). User B (1501) neither sees nor kills nor changes
# A's runs, and A not root's (controls: the owner does). A run marked `started_by: mcp` gains
# no name here (refused, audited) and still loses one.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

if [[ ${LAB_AS_USER:-} == 1 ]]; then
	echo "SKIP: run_live.sh runs its users itself"
	exit 77
fi
lab_require_root
. "$SRC/tests/integration/daemon/fixture.sh"
PY=/usr/bin/python3
[[ -x $PY ]] || { echo "FAIL: python3 missing"; exit 1; }

cat >"$T/gateway.yaml" <<EOF
version: 1
resolvers: ["$LAB_DNS_V4"]
control: {path: "$SOCK"}
audit: {path: "$CENTRAL"}
EOF
install -m 0644 "$SRC/tests/integration/live_conns.py" "$T/live_conns.py"
cat >"$T/live.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/live_conns.py"]
network:
  allow:
    - {host: allowed.test, ports: [7]}
    - {host: other.test, ports: [7]}
EOF
chmod 0644 "$T/live.yaml"
RA=$T/root.jsonl # root's runs' audit log
DA=$T/a/daemon.jsonl # A's daemon-mode runs' audit log (A's rootless ones: $AA)

rw() { in_host "$W" "$@"; } # warden as root in lab-host
aw() { as_a "$W" "$@"; }    # ... as A
bw() { as_b "$W" "$@"; }    # ... as B
# last_run LOG: the id of the last run.start in LOG
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run // empty' "$1"; }
# last_echo FILE NAME: the last echo count FILE has for NAME (0: none yet)
last_echo() { awk -v n="$2" '$1 == "echo" && $2 == n { c = $3 } END { print c + 0 }' "$1"; }
# more_echoes FILE NAME N: NAME's connection echoed more than N times
more_echoes() { (($(last_echo "$1" "$2") > $3)); }
# status_has WHO ID JQ: `warden status --json` as WHO lists run ID and JQ holds of it
status_has() {
	local who=$1 id=$2 q=$3
	"$who" status --json | jq -e --arg id "$id" "[.runs[] | select(.id == \$id)] | length == 1
		and (.[0] | $q)"
}
# status_lacks WHO ID: WHO's `warden status --json` works and does not list ID
status_lacks() { "$1" status --json | jq -e --arg id "$2" 'all(.runs[]; .id != $id)'; }
# allow_has WHO ID RULE: `warden allowlist ID` as WHO prints RULE
allow_has() { "$1" allowlist "$2" | grep -qxF -- "$3"; }
# allow_is WHO ID WANT: `warden allowlist ID` as WHO prints exactly WANT
allow_is() { [[ $("$1" allowlist "$2") == "$3" ]]; }
# both_out CMD...: CMD's stdout and stderr, whatever its status (for lab_match)
both_out() { "$@" 2>&1; true; }
# alive_run ID: a live launcher records run ID (root sees every run)
alive_run() { status_has rw "$1" '.state == "running"'; }
gone_run() { status_lacks rw "$1"; }

# live_mode MODE WHO LOG: one run of MODE, its warden called through WHO (rw, aw)
live_mode() {
	local mode=$1 who=$2 log=$3 out=$T/out.$1 err=$T/err.$1 id pid n uid
	echo "# $mode mode"
	if [[ $who == rw ]]; then
		uid=0
		in_host "$W" run -q --audit-log "$log" -p "$T/live.yaml" -- \
			"$PY" "$T/live_conns.py" allowed.test:7 other.test:7 wild.test:7 \
			>"$out" 2>"$err" &
	elif [[ $mode == rootless ]]; then
		# ip netns exec: the embedded gateway resolves through the lab's resolv.conf
		uid=$A_UID
		in_host_user "$W" run -q --mode rootless --audit-log "$log" -p "$T/live.yaml" -- \
			"$PY" "$T/live_conns.py" allowed.test:7 other.test:7 wild.test:7 \
			>"$out" 2>"$err" &
	else
		uid=$A_UID
		as_a "$W" run -q --mode "$mode" --audit-log "$log" -p "$T/live.yaml" -- \
			"$PY" "$T/live_conns.py" allowed.test:7 other.test:7 wild.test:7 \
			>"$out" 2>"$err" &
	fi
	pid=$!
	if ! check "$mode: the run is up, both connections open (allowed.test, other.test)" \
		lab_wait 30 bash -c '[[ -n $(jq -r -s "[.[] | select(.action == \"run.start\")] | last | .run // empty" "$0") ]] &&
		grep -q "^open allowed.test" "$1" && grep -q "^open other.test" "$1"' "$log" "$out"; then
		tail -n 20 "$out" "$err" | sed 's/^/    | /'
		id=$(last_run "$log")
		[[ -z $id ]] || rw kill "$id"
		kill "$pid" 2>/dev/null
		wait "$pid"
		return
	fi
	id=$(last_run "$log")
	check "$mode: wild.test, not allowed, is refused" grep -q "^refused-dns wild.test" "$out"
	check "$mode: warden status lists the run: its mode, uid, state, command, policy" \
		status_has "$who" "$id" ".mode == \"$mode\" and .uid == $uid and .state == \"running\"
		and (.command | index(\"$T/live_conns.py\")) and .policy == \"$T/live.yaml\"
		and .policy_name == \"live.yaml\" and (.age_s | type == \"number\")
		and .started_by == \"\""
	check "$mode: ... and its gateway's counters: 2 open connections, bytes, denials" \
		status_has "$who" "$id" '.connections >= 2 and .bytes_up > 0 and .bytes_down > 0
		and .denied >= 1 and .counts_error == null'
	check "$mode: the table lists it too" lab_match "^${id} .* $mode +running" "$who" status
	check "$mode: root sees it (root: every run)" alive_run "$id"
	check "$mode: warden allowlist RUN shows both rules" \
		allow_is "$who" "$id" "allowed.test:7"$'\n'"other.test:7"

	# removal cuts the open connection to the name, the other one stays up
	n=$(last_echo "$out" allowed.test)
	check "$mode: allowlist RUN remove other.test" "$who" allowlist "$id" remove other.test
	check "$mode: the open connection to other.test is cut" \
		lab_wait 10 grep -q "^closed other.test" "$out"
	check "$mode: control: the connection to allowed.test stays up (it still echoes)" \
		lab_wait 10 more_echoes "$out" allowed.test $((n + 10))
	check "$mode: ... and was never closed" lab_no_match "^closed allowed.test" cat "$out"
	check "$mode: a new connection to other.test by name is refused (its DNS)" \
		lab_wait 10 grep -q "^refused-dns other.test" "$out"
	check "$mode: ... and to the address it had (a synthetic one) too" \
		lab_wait 10 grep -q "^refused-addr other.test" "$out"
	check "$mode: ... never reopened" lab_no_match "^reopened-addr other.test" cat "$out"
	check "$mode: allowlist shows allowed.test only" allow_is "$who" "$id" allowed.test:7
	check "$mode: the change is audited: who, what, before, after" jq -e -s --arg id "$id" \
		--argjson u "$uid" 'any(.[]; .run == $id and .action == "run.allowlist" and .allowed
		and .uid == $u and .resource == "other.test" and (.reason | contains(
		"before: [allowed.test:7, other.test:7]; after: [allowed.test:7]")))' "$log"
	local gwlog=$log
	[[ $mode == daemon ]] && gwlog=$CENTRAL
	check "$mode: the gateway audits the cut connection (net.revoke, other.test:7)" \
		jq -e -s --arg id "$id" 'any(.[]; .run == $id and .action == "net.revoke" and
		.allowed == false and .resource == "other.test" and .port == 7)' "$gwlog"
	check "$mode: ... and no revoke of allowed.test" jq -e -s --arg id "$id" \
		'all(.[]; .run != $id or .action != "net.revoke" or .resource != "allowed.test")' \
		"$gwlog"
	check_fails "$mode: removing a name not in the allowlist fails" \
		"$who" allowlist "$id" remove nothere.test
	check_fails "$mode: a name that is no name is refused" "$who" allowlist "$id" add 'a b'

	# addition makes a denied name work
	check "$mode: allowlist RUN add wild.test:7" "$who" allowlist "$id" add wild.test:7
	check "$mode: wild.test, refused before, now connects" \
		lab_wait 10 grep -q "^open wild.test" "$out"
	check "$mode: allowlist shows it" allow_has "$who" "$id" wild.test:7
	check "$mode: the addition is audited" jq -e -s --arg id "$id" 'any(.[]; .run == $id and
		.action == "run.allowlist" and .allowed and .resource == "wild.test:7")' "$log"
	check "$mode: adding it again changes nothing (and says so)" lab_match "already allowed" \
		"$who" allowlist "$id" add wild.test:7

	if [[ $who == aw ]]; then
		# another user: B neither sees, nor changes, nor kills A's run
		check "$mode: B's status works and does not list A's run" status_lacks bw "$id"
		check_fails --denied 2 "$mode: B cannot kill A's run" bw kill "$id"
		check_fails --denied 2 "$mode: B cannot change A's allowlist" \
			bw allowlist "$id" remove allowed.test
		check_fails --denied 2 "$mode: B cannot read A's allowlist" bw allowlist "$id"
		check "$mode: ... A's run is still running" alive_run "$id"
		n=$(last_echo "$out" allowed.test)
		check "$mode: ... and allowed.test still echoes" \
			lab_wait 10 more_echoes "$out" allowed.test $((n + 5))
		# root acts on A's run as A (its gateway, its audit log)
		check "$mode: root may change A's run: remove wild.test" \
			rw allowlist "$id" remove wild.test
		check "$mode: ... the connection to wild.test is cut" \
			lab_wait 10 grep -q "^closed wild.test" "$out"
		check "$mode: ... audited in A's log with root's uid" jq -e -s --arg id "$id" \
			'any(.[]; .run == $id and .action == "run.allowlist" and .uid == 0 and
			.resource == "wild.test")' "$log"
		check "$mode: ... and the file stays A's" bash -c \
			'[[ $(stat -c %u "/tmp/warden-$0/runs/$1/policy.yaml") == "$0" ]]' \
			"$A_UID" "$id"
	fi

	# kill: the owner ends the run
	check "$mode: warden kill RUN (by its owner)" "$who" kill "$id"
	wait "$pid"
	check_eq "$mode: the run exits 143 (killed)" 143 echo $?
	check "$mode: the program got SIGTERM first" grep -qx term "$out"
	check "$mode: run.kill names who killed it" jq -e -s --arg id "$id" --argjson u "$uid" \
		'any(.[]; .run == $id and .action == "run.kill" and (.reason |
		test("warden kill by uid " + ($u | tostring))) and .signal == 15)' "$log"
	check "$mode: run.exit says it was killed (143, signal 15, allowed false)" \
		jq -e -s --arg id "$id" 'any(.[]; .run == $id and .action == "run.exit" and
		.exit == 143 and .signal == 15 and .allowed == false and
		(.reason | test("killed by uid")))' "$log"
	check "$mode: the run is gone from status" lab_wait 10 gone_run "$id"
	check_fails --denied 2 "$mode: killing it again: no such run" "$who" kill "$id"
}

live_mode root rw "$RA"
live_mode rootless aw "$AA"

echo "# A cannot touch root's runs; a run started by warden mcp gains no name"
in_host "$W" run -q --audit-log "$RA" -p "$T/live.yaml" -- \
	"$PY" "$T/live_conns.py" allowed.test:7 wild.test:7 >"$T/out.mcp" 2>&1 &
mpid=$!
check "root's second run is up" lab_wait 30 grep -q "^open allowed.test" "$T/out.mcp"
mid=$(last_run "$RA")
check "A's status does not list root's run" status_lacks aw "$mid"
check_fails --denied 2 "A cannot kill root's run" aw kill "$mid"
check_fails --denied 2 "A cannot change root's run's allowlist" aw allowlist "$mid" add wild.test:7
check "... root's run is still up" alive_run "$mid"
# what h/15mcp's `warden mcp` will record for its runs (until then: marked by hand)
sed -i 's/^started_by=.*/started_by=mcp/' "/run/warden/runs/$mid/state"
check "status says started_by mcp" status_has rw "$mid" '.started_by == "mcp"'
check_fails --denied 1 "an addition to a run started by warden mcp is refused" \
	env XDG_STATE_HOME="$T/state" "$W" allowlist "$mid" add wild.test:7
check "... with the reason" lab_match "needs a person's approval" \
	both_out env XDG_STATE_HOME="$T/state" "$W" allowlist "$mid" add wild.test:7
check "... audited as refused" jq -e -s --arg id "$mid" 'any(.[]; .run == $id and
	.action == "run.allowlist" and .allowed == false and (.reason | test("approval")))' "$RA"
check "... wild.test stays refused" lab_no_match "^open wild.test" cat "$T/out.mcp"
# the same approval rule as warden mcp's: the refused addition is a pending request of the
# caller's approval store (here: $T/state, not root's home), applied once a person approves it
req=$(XDG_STATE_HOME=$T/state rw allowlist pending 2>/dev/null |
	awk -v r="$mid" '$2 == "wild.test:7" && $3 == r {print $1; exit}')
check "the refused addition is a pending request" test -n "$req"
check_fails --denied 1 "... --approved with the request still pending is refused" \
	env XDG_STATE_HOME="$T/state" "$W" allowlist "$mid" add wild.test:7 --approved "${req:-0}"
check_fails --denied 1 "... --approved with an id that is no request is refused" env \
	XDG_STATE_HOME="$T/state" "$W" allowlist "$mid" add wild.test:7 --approved 0123456789abcdef0123456789abcdef
check "... wild.test still refused" lab_no_match "^open wild.test" cat "$T/out.mcp"
check "a person approves it: warden allowlist approve ID" \
	env XDG_STATE_HOME="$T/state" "$W" allowlist approve "${req:-0}"
check "... and the run reaches wild.test now" lab_wait 10 grep -q "^open wild.test" "$T/out.mcp"
check "... audited with the approval" jq -e -s --arg id "$mid" 'any(.[]; .run == $id and
	.action == "run.allowlist" and .allowed == true and (.resource | test("wild.test")))' "$RA"
check "control: a removal from it works" rw allowlist "$mid" remove allowed.test
check "... and cuts its connection" lab_wait 10 grep -q "^closed allowed.test" "$T/out.mcp"
check "approve|deny|pending go to the approval store (pending runs)" rw allowlist pending
check "... and it is the store, not a stub" lab_no_match "not built yet" both_out rw allowlist pending
check "root kills it" rw kill "$mid"
wait "$mpid"
check_eq "... 143" 143 echo $?

echo "# a program that ignores SIGTERM: SIGKILL after the grace"
IA=$T/ignorer.jsonl
in_host "$W" run -q --audit-log "$IA" -- /bin/sh -c 'trap "" TERM; while :; do sleep 1; done' \
	>/dev/null 2>&1 &
ipid=$!
started() { [[ -n $(last_run "$IA") ]] && alive_run "$(last_run "$IA")"; }
check "the run is up" lab_wait 20 started
iid=$(last_run "$IA")
check "warden kill RUN" rw kill "$iid"
wait "$ipid"
check_eq "... it exits 137 (SIGKILL after the grace)" 137 echo $?
check "... run.exit says signal 9, killed" jq -e -s --arg id "$iid" 'any(.[]; .run == $id and
	.action == "run.exit" and .exit == 137 and .signal == 9 and .allowed == false)' "$IA"

echo "# daemon mode"
daemon_start
check "the daemon starts (--manage-nft)" daemon_ready
live_mode daemon aw "$DA"

echo "# bad input"
check_fails --denied 2 "status with an unknown option: 2" rw status --bogus
check_fails --denied 2 "kill without a run: 2" rw kill
check_fails --denied 2 "kill of no such run: 2" rw kill 0123456789ab
check_fails --denied 2 "allowlist RUN with a bad verb: 2" rw allowlist 0123456789ab frob x
check_fails --denied 2 "allowlist of no such run: 2" rw allowlist 0123456789ab
no_runs() { "$1" status --json | jq -e '.runs == []'; }
check "status --json with no runs: an empty list" no_runs rw
check "... as A too" no_runs aw
check "no process of A or B left" lab_wait 10 bash -c '[[ -z $(ours_left) ]]'
daemon_stop
lab_finish
