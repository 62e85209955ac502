#!/usr/bin/env bash
# logs_cli.sh - `warden logs` end to end on a hand-written JSONL log: table, --json,
# filters, --tail, corrupt lines, missing/unreadable logs, usage errors, --follow.
# Needs no root and no lab. WARDEN_BIN is the warden binary (CTest sets it).
set -u
# the lab's assertions (no lab is built): a probe that cannot run is an ERROR, not a pass
. "$(dirname "$0")/../lab/lib.sh"
W=${WARDEN_BIN:?WARDEN_BIN must point at the warden binary}
T=$(mktemp -d /tmp/wd-logs-cli-XXXXXX)
L=$T/audit.jsonl
follower=

cleanup() {
	if [ -n "$follower" ]; then
		kill "$follower" 2>/dev/null
		wait "$follower" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT

# wait_for FILE PATTERN: until PATTERN shows up in FILE (bounded; not a timing assertion)
wait_for() {
	for _ in $(seq 1 200); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "  (gave up waiting for '$2' in $1)"
	return 1
}
n=0
ev() { # ev RUN TYPE ACTION ALLOWED RESOURCE REASON [EXTRA-JSON]
	n=$((n + 1))
	printf '{"ts":"2026-11-29T10:14:%02d.123456Z","run":"%s","type":"%s","action":"%s","allowed":%s,"resource":"%s","reason":"%s"%s}\n' \
		"$((10 + n % 50))" "$1" "$2" "$3" "$4" "$5" "$6" "${7:-}"
}

{
	ev r1 run run.start true "npx server" "" ',"command":["npx","server"],"pid":42'
	ev r1 dns dns.query true api.github.com "allowed by rule 1" ',"qtype":"A"'
	echo 'this line is not json'
	ev r1 net net.connect false evil.test "no rule allows evil.test" ',"port":443,"dst":"10.0.0.9"'
	printf '{"ts":"2026-11-29T10:15:00Z","run":"r2","ty'
	echo
	ev r2 dns dns.query false '\u001b[31mred.test' "not in policy"
	ev r2 run run.exit true "npx server" "exited 0" ',"exit":0,"duration_ms":12'
} >"$L"
chmod 600 "$L"
valid=$(grep -c '"allowed"' "$L")

# --help
out=$("$W" logs --help)
check "--help exits 0 and shows usage" test $? -eq 0
check "--help names every option" bash -c '[[ "$1" == *--tail* && "$1" == *--follow* && "$1" == *--json* && "$1" == *--run* && "$1" == *--denied* && "$1" == *--audit-log* ]]' _ "$out"

# the table
"$W" logs --audit-log "$L" >"$T/table" 2>"$T/table.err"
check "table: exit 0" test $? -eq 0
check "table: a header and one row per valid event" test "$(wc -l <"$T/table")" -eq $((valid + 1))
check "table: header names the columns" grep -q '^TIME (UTC) .*RUN .*TYPE .*ACTION .*RESOURCE .*REASON$' "$T/table"
check "table: denied connect shows DENY and host:port" grep -q 'r1 .*net .*net.connect .*DENY .*evil.test:443 .*no rule allows evil.test' "$T/table"
check "table: time is shown in UTC to the millisecond" grep -q '^2026-11-29 10:14:..\.123 ' "$T/table"
check "table: columns are aligned" test "$(awk '{print index($0, "  r")}' "$T/table" | sed 1d | sort -u | wc -l)" -eq 1
check "table: terminal escapes in a resource are shown, not sent" bash -c '! grep -q $'"'"'\x1b'"'"' "$1" && grep -q "\\\\x1b\[31mred.test" "$1"' _ "$T/table"
check "corrupt lines are reported once on stderr" test "$(cat "$T/table.err")" = "warden logs: skipped 2 corrupt lines"

# --json gives the log's own lines, unchanged
"$W" logs --audit-log "$L" --json >"$T/json" 2>/dev/null
check "--json prints the raw valid lines" cmp -s "$T/json" <(grep '"allowed"' "$L")

# filters
"$W" logs --audit-log "$L" --run r2 --json >"$T/r2" 2>/dev/null
check "--run keeps only that run" bash -c '[ "$(wc -l <"$1")" -eq 2 ] && ! grep -q "\"run\":\"r1\"" "$1"' _ "$T/r2"
check "control: the same grep finds r1 without --run" grep -q '"run":"r1"' "$T/json"
"$W" logs --audit-log "$L" --denied >"$T/denied" 2>/dev/null
check "--denied keeps only denials" bash -c '[ "$(sed 1d "$1" | wc -l)" -eq 2 ] && ! sed 1d "$1" | grep -q " allow "' _ "$T/denied"
check "control: the same probe finds allowed events without --denied" bash -c \
	'sed 1d "$1" | grep -q " allow "' _ "$T/table"
"$W" logs --audit-log "$L" --denied --run r1 --json >"$T/both" 2>/dev/null
check "filters combine" bash -c '[ "$(wc -l <"$1")" -eq 1 ] && grep -q "evil.test" "$1"' _ "$T/both"

# --tail
"$W" logs --audit-log "$L" --tail 2 --json >"$T/tail" 2>/dev/null
check "--tail 2 shows the last two events" cmp -s "$T/tail" <(grep '"allowed"' "$L" | tail -n 2)
"$W" logs --audit-log "$L" -n 1 --run r1 --json >"$T/tail1" 2>/dev/null
check "--tail with a filter counts matching events" bash -c 'grep -q "net.connect" "$1" && [ "$(wc -l <"$1")" -eq 1 ]' _ "$T/tail1"
"$W" logs --audit-log "$L" --tail 0 --json >"$T/tail0" 2>/dev/null
check "--tail 0 shows nothing" test ! -s "$T/tail0"
check "control: --tail 2 showed something (the same test)" test -s "$T/tail"

# issue 27, item 5: filters before the tail, the result column, whole action names,
# housekeeping hidden unless --all, --run by prefix, --type mcp, a default tail on a terminal
L5=$T/five.jsonl
{
	ev ab12 run run.start true /usr/bin/curl "" ',"command":["curl"]'
	ev ab12 run run.gateway-register true wd-ab12 "registered with the gateway"
	ev ab12 run run.liveness true warden-liveness.check.invalid "$(printf 'the liveness check %.0s' $(seq 1 12))"
	ev ab12 run run.mcp true /usr/bin/curl "attribution off"
	for i in $(seq 1 30); do
		ev ab12 net net.connect false "n$i.test" "no rule" ',"port":443'
		ev ab12 dns dns.query true "q$i.test" "allowed"
	done
	ev ab12 mcp mcp.allowlist.request false other.test "request 1: pending a person's approval"
	ev ab12 run run.gateway-unregister true wd-ab12 "unregistered from the gateway"
	ev ab12 run run.exit true /usr/bin/curl "" ',"exit":56,"duration_ms":3'
	ev ab34 run run.start true /bin/sh "" ',"command":["sh"]'
	ev ab34 run run.exit true /bin/sh "" ',"exit":137,"signal":9,"duration_ms":3'
	ev cd56 run run.start true /bin/sh "" ',"command":["sh"]'
} >"$L5"
chmod 600 "$L5"
"$W" logs --audit-log "$L5" --type net --tail 3 >"$T/t3" 2>&1
check "--type net --tail 3: the last three net events (filters apply before the tail)" bash -c \
	'[ "$(sed 1d "$1" | wc -l)" -eq 3 ] && sed -n 2p "$1" | grep -q "n28.test:443" && sed -n 4p "$1" | grep -q "n30.test:443"' _ "$T/t3"
check "control: --type net alone has 30 rows" test "$("$W" logs --audit-log "$L5" --type net | sed 1d | wc -l)" -eq 30
"$W" logs --audit-log "$L5" >"$T/five" 2>&1
check "run.exit shows the program's exit status, not allow" grep -qE ' run\.exit +exit 56 ' "$T/five"
check "run.exit of a signalled program shows the signal" grep -qE ' run\.exit +SIGKILL ' "$T/five"
check "action names are whole (mcp.allowlist.request)" grep -q ' mcp\.allowlist\.request ' "$T/five"
check "--type mcp is accepted and keeps mcp events" bash -c \
	'"$1" logs --audit-log "$2" --type mcp | sed 1d | grep -c . | grep -qx 1' _ "$W" "$L5"
for h in run.liveness run.gateway-register run.gateway-unregister run.mcp; do
	check "housekeeping $h is hidden by default" bash -c '! grep -q " $1 " "$2"' _ "$h" "$T/five"
done
"$W" logs --audit-log "$L5" --all >"$T/all" 2>&1
check "--all shows the housekeeping rows" test "$(grep -cE ' run\.(liveness|gateway-register|gateway-unregister|mcp) ' "$T/all")" -eq 4
check "--all: no 200-character reason in the table (rows stay short)" \
	test "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$T/all")" -le 200
check "control: the liveness reason in the log is that long" \
	test "$(jq -r 'select(.action == "run.liveness") | .reason | length' "$L5")" -gt 200
"$W" logs --audit-log "$L5" --run ab1 --json >"$T/pfx" 2>&1
check "--run takes a unique prefix of a run id" bash -c \
	'[ "$(wc -l <"$1")" -gt 30 ] && ! grep -qv "\"run\":\"ab12\"" "$1"' _ "$T/pfx"
"$W" logs --audit-log "$L5" --run ab >"$T/amb.out" 2>"$T/amb.err"
st=$?
check "--run with an ambiguous prefix: exit 2, listing the runs" bash -c \
	'[ $1 -eq 2 ] && grep -q "ambiguous" "$2" && grep -q "ab12" "$2" && grep -q "ab34" "$2"' _ $st "$T/amb.err"
check "--run with an unknown id prints no row, exit 0" bash -c \
	'"$1" logs --audit-log "$2" --run zz --json >"$3/zz" && ! [ -s "$3/zz" ]' _ "$W" "$L5" "$T"
# a terminal gets the last 50 events unless --tail says otherwise
script -qec "$W logs --audit-log $L5 --all" /dev/null >"$T/tty" 2>&1
check "on a terminal: a default tail of 50 events" test "$(grep -c ' ab[0-9][0-9] \| cd56 ' "$T/tty")" -eq 50
script -qec "$W logs --audit-log $L5 --all --tail 60" /dev/null >"$T/tty60" 2>&1
check "control: --tail 60 on a terminal shows 60" test "$(grep -c ' ab[0-9][0-9] \| cd56 ' "$T/tty60")" -eq 60
check "control: not a terminal: every event" test "$(sed 1d "$T/all" | wc -l)" -eq "$(wc -l <"$L5")"

# rotation: the ".1" file is read first, then the current one
ev rot1 run run.start true old.test "" >"$T/rot.jsonl.1"
ev rot2 run run.start true new.test "" >"$T/rot.jsonl"
chmod 600 "$T/rot.jsonl" "$T/rot.jsonl.1"
"$W" logs --audit-log "$T/rot.jsonl" --json >"$T/rot" 2>&1
check "logs reads LOG.1 then LOG" bash -c '[ "$(jq -r .run "$1" | tr "\n" " ")" = "rot1 rot2 " ]' _ "$T/rot"
"$W" logs --audit-log "$T/rot.jsonl" --json --tail 1 >"$T/rot1" 2>&1
check "--tail counts across both" bash -c '[ "$(jq -r .run "$1")" = rot2 ]' _ "$T/rot1"
"$W" logs --audit-log "$T/rot.jsonl" --json --tail 2 >"$T/rot2" 2>&1
check "--tail 2 reaches into LOG.1" bash -c '[ "$(jq -r .run "$1" | tr "\n" " ")" = "rot1 rot2 " ]' _ "$T/rot2"

# the log path
WARDEN_AUDIT_LOG=$L "$W" logs --json >"$T/env" 2>/dev/null
check "WARDEN_AUDIT_LOG names the log" cmp -s "$T/env" "$T/json"
XDG_STATE_HOME=$T/state "$W" logs >"$T/none.out" 2>"$T/none.err"
st=$?
check "a missing log is not an error" test $st -eq 0
check "a missing log is named" grep -q "no audit log at $T/state/warden/audit.jsonl yet" "$T/none.err"

# errors
"$W" logs --bogus >/dev/null 2>"$T/err1"
st=$?
check "unknown option: exit 2 with a message" bash -c '[ $1 -eq 2 ] && grep -q "unknown option" "$2"' _ $st "$T/err1"
"$W" logs --tail many >/dev/null 2>&1
check "bad --tail: exit 2" test $? -eq 2
"$W" logs --audit-log "$L" extra >/dev/null 2>&1
check "stray argument: exit 2" test $? -eq 2
mkdir "$T/dir.jsonl"
"$W" logs --audit-log "$T/dir.jsonl" >/dev/null 2>"$T/err2"
st=$?
check "unreadable log: exit 2 with a message" bash -c '[ $1 -eq 2 ] && grep -q "not a regular file" "$2"' _ $st "$T/err2"

# --follow: shows the tail, then new lines; survives rotation by rename and by truncation
"$W" logs --audit-log "$L" --follow --json >"$T/follow" 2>"$T/follow.err" &
follower=$!
check "--follow prints the existing tail" wait_for "$T/follow" '"action":"run.exit"'
ev r3 net net.close true follow-1.test "" ',"bytes_up":1' >>"$L"
check "--follow prints an appended line" wait_for "$T/follow" follow-1.test
# (padded so that the truncated file below is shorter than what was read)
ev r3 net net.close true follow-2.test "" ',"rule":"padding padding padding padding"' >"$T/next.jsonl"
mv "$T/next.jsonl" "$L"
check "--follow moves to a replaced log" wait_for "$T/follow" follow-2.test
: >"$L"
ev r3 net net.close true follow-3.test "" >>"$L"
check "--follow starts over after truncation" wait_for "$T/follow" follow-3.test
echo '{"torn' >>"$L"
ev r3 net net.close true follow-4.test "" >>"$L"
check "--follow skips a corrupt line and goes on" wait_for "$T/follow" follow-4.test
check "--follow reports the skipped line" wait_for "$T/follow.err" "skipped 1 .*corrupt line"
check "--follow printed each event once" test "$(grep -c follow- "$T/follow")" -eq 4
check "the follower is still running" kill -0 "$follower"
kill "$follower"
wait "$follower" 2>/dev/null
check "the follower stopped when killed" bash -c '! kill -0 "$1" 2>/dev/null' _ "$follower"
follower=

# --follow on a log that does not exist yet
"$W" logs --audit-log "$T/later/audit.jsonl" --follow >"$T/later.out" 2>"$T/later.err" &
follower=$!
check "--follow waits for a missing log" wait_for "$T/later.err" "no audit log at .* yet; waiting"
mkdir -m 700 "$T/later"
ev r4 run run.start true later.test "" >"$T/later/audit.jsonl"
check "--follow picks up the log once it exists" wait_for "$T/later.out" later.test
kill "$follower"
wait "$follower" 2>/dev/null
follower=

lab_finish
