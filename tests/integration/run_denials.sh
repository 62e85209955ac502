#!/usr/bin/env bash
# run_denials.sh - the end-of-run denial block (issue 27, item 3): a run whose program was
# refused something prints, on stderr, one short block naming what was denied (name:port),
# how often, the denial id that `warden logs` finds, and the exact policy line that would
# allow it, and the `warden run` flag that would (issue 27, item 7). Controls: a run with no denials prints no block; -q prints none; the allowed
# name of the same run is not in the block.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
lab_up

T=$(lab_tmpdir wd-run-denials)
chmod 0755 "$T"
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0

cat >"$T/net.yaml" <<YAML
version: 1
filesystem:
  read: ["$LAB_CA"]
network:
  allow:
    - {host: allowed.test, ports: [443]}
YAML

wr() { in_host "$W" run --audit-log "$A" -p "$T/net.yaml" "$@"; }
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
# curl CMDs: one allowed fetch, then N tries at a denied name (through the proxy: a 403)
fetch() { echo "curl -sS --max-time 8 --cacert '$LAB_CA' -o /dev/null https://allowed.test/"; }
denied() { echo "curl -sS --max-time 8 --cacert '$LAB_CA' -o /dev/null https://other.test/"; }

echo "# a run with denials ends with the block"
wr -- sh -c "$(fetch); $(denied); $(denied); $(denied); true" >"$T/out" 2>"$T/err"
check "control: the run itself succeeded (exit 0)" test $? -eq 0
check "control: the program saw the gateway's 403" grep -q "response 403" "$T/err"
r=$(last_run)
ids=$(jq -r --arg r "$r" 'select(.run == $r and .action == "net.connect" and .allowed == false) | .denial_id' "$A")
last_id=$(tail -n1 <<<"$ids")
check "control: the log has the three denials with their ids" test "$(grep -c '^dn-' <<<"$ids")" -eq 3
check "the block's head counts them and says where all of them are" \
	grep -qF "warden run: 3 denials in this run (all of them: warden logs --run $r --denied)" "$T/err"
check "the block names other.test:443, how often, and its (last) denial id" \
	grep -qE "^  other\.test:443  network, 3 times, denial id $last_id\$" "$T/err"
check "the block gives the exact policy line, and the warden run flag" grep -qF \
	'    to allow it: network.allow: ["other.test:443"] (or warden run --allow other.test:443)' "$T/err"
check "the allowed name of the same run is not in the block" bash -c '! grep -q "allowed.test" "$1"' _ "$T/err"
check "warden logs finds the denial id the block gave" bash -c \
	'"$1" logs --audit-log "$2" --run "$3" --denied --json | grep -qF "\"denial_id\":\"$4\""' _ "$W" "$A" "$r" "$last_id"
check "the block is short (at most 10 lines of warden's)" test "$(grep -c -v '^curl:' "$T/err")" -le 11

echo "# a file the policy does not grant (audit.files: denied)"
echo secret >"$T/secret.txt"
chmod 0644 "$T/secret.txt"
{ cat "$T/net.yaml"; printf '%s\n' "audit:" "  files: denied"; } >"$T/files.yaml"
in_host "$W" run --audit-log "$A" -p "$T/files.yaml" -- sh -c "cat '$T/secret.txt'; true" >"$T/out" 2>"$T/err"
check "control: the program could not read it" bash -c '! grep -q secret "$1"' _ "$T/out"
check "the block names the file and the read" grep -qF "  $T/secret.txt  file read, " "$T/err"
check "... with the filesystem.read line that grants it, and the flag" \
	grep -qF "    to allow it: filesystem.read: [\"$T/secret.txt\"] (or warden run --read $T/secret.txt)" "$T/err"
sed -i "s|^  read: \[\"$LAB_CA\"\]\$|  read: [\"$LAB_CA\", \"$T/secret.txt\"]|" "$T/files.yaml"
check "setup: the line is in the policy" grep -qF "\"$T/secret.txt\"]" "$T/files.yaml"
in_host "$W" run --audit-log "$A" -p "$T/files.yaml" -- cat "$T/secret.txt" >"$T/out" 2>"$T/err"
check "with it, the program reads the file, and no block" bash -c 'grep -q secret "$1" && ! grep -q denial "$2"' _ "$T/out" "$T/err"

echo "# the policy line it gives does allow the name"
sed -i 's/^    - {host: allowed.test, ports: \[443\]}$/&\n    - "other.test:443"/' "$T/net.yaml"
check "setup: the line is in the policy" grep -q '"other.test:443"' "$T/net.yaml"
check "with it, the same fetch of other.test works" wr -- sh -c "$(denied)"
sed -i '/"other.test:443"/d' "$T/net.yaml"
get_other() { wr -q "$@" -- curl -fsS --max-time 8 --cacert "$LAB_CA" -o /dev/null https://other.test/; }
check_fails --denied 22 "control: without it, the fetch is denied again (the gateway's 403)" get_other
check "the flag it gives allows the name too (--allow over -p)" get_other --allow other.test:443

echo "# a run without denials prints no block"
wr -- sh -c "$(fetch)" >"$T/out" 2>"$T/err"
check "control: the fetch worked" test $? -eq 0
check "no block" bash -c '! grep -q "denial" "$1"' _ "$T/err"

echo "# -q prints none"
wr -q -- sh -c "$(denied); true" >"$T/out" 2>"$T/err"
r=$(last_run)
check "control: the run with -q was denied (run.exit counts it)" \
	jq -e -s --arg r "$r" '[.[] | select(.run == $r and .action == "run.exit")][0].denials == 1' "$A"
check "-q: no block" bash -c '! grep -q "denial" "$1"' _ "$T/err"

echo "# many names: the block is capped and points at warden logs"
many=
for i in 1 2 3 4 5 6 7; do
	many+="curl -sS --max-time 8 -o /dev/null http://n$i.other.test/; "
done
wr -- sh -c "$many true" >"$T/out" 2>"$T/err"
r=$(last_run)
grep -v '^curl:' "$T/err" | sed 's/^/    | /'
check "at most 10 lines in the block" test "$(sed -n '/denials in this run/,$p' "$T/err" | grep -vc '^curl:')" -le 10
check "the rest: and N more, with the command that lists them" \
	grep -qE "^  and [0-9]+ more: warden logs --run $r --denied\$" "$T/err"

echo "# the log rotates at WARDEN_AUDIT_MAX_BYTES; the block and warden logs read both files"
R=$T/rot/audit.jsonl
# a first run makes the log (its folder and file the runner's own, as in any mode)
WARDEN_AUDIT_MAX_BYTES=0 in_host "$W" run -q --audit-log "$R" -p "$T/net.yaml" -- true
check "setup: the first run made the log" test -s "$R"
# a cap that run.start (~1 KiB) still fits under, and the run's other events do not
cap=$(($(stat -c %s "$R") + 1800))
WARDEN_AUDIT_MAX_BYTES=$cap in_host "$W" run --audit-log "$R" -p "$T/net.yaml" -- \
	sh -c "$(denied); $(denied); $(denied); true" >"$T/out" 2>"$T/err"
check "control: the run succeeded" test $? -eq 0
check "the log was rotated: LOG.1 holds the old part" test -s "$R.1"
check "... and the new LOG stays under the cap" test "$(stat -c %s "$R")" -le "$cap"
r=$(jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$R.1" "$R" 2>/dev/null)
check "run.start is in LOG.1, run.exit in LOG (the run spans both)" bash -c \
	'jq -e -s --arg r "$3" "any(.[]; .run == \$r and .action == \"run.start\")" "$1" &&
	 jq -e -s --arg r "$3" "any(.[]; .run == \$r and .action == \"run.exit\")" "$2"' _ "$R.1" "$R" "$r" 2>/dev/null
check "the block still counts the run's three denials" grep -qF "warden run: 3 denials in this run" "$T/err"
check "warden logs --run shows the run from both files" bash -c \
	'"$1" logs --audit-log "$2" --run "$3" --json | jq -e -s "(map(.action) | index(\"run.start\")) != null and (map(.action) | index(\"run.exit\")) != null"' _ "$W" "$R" "$r"
WARDEN_AUDIT_MAX_BYTES=lots in_host "$W" run --audit-log "$R" -p "$T/net.yaml" -- true 2>"$T/err"
check "a bad WARDEN_AUDIT_MAX_BYTES: the run does not start (exit 125) and says why" bash -c \
	'[ $1 -eq 125 ] && grep -q "WARDEN_AUDIT_MAX_BYTES" "$2"' _ $? "$T/err"

echo "# an address and a name with terminal escapes"
wr -- sh -c "curl -sS --max-time 8 -o /dev/null --noproxy '*' http://203.0.113.11:8080/;
	dig +short +tries=1 +time=3 \$'evil\\033[31m.test'; true" >"$T/out" 2>"$T/err"
r=$(last_run)
grep -v '^curl:' "$T/err" | sed 's/^/    | /'
check "control: the escaped name's query was denied and logged" jq -e -s --arg r "$r" \
	'[.[] | select(.run == $r and .type == "dns" and .allowed == false and (.resource | test("evil")))] | length >= 1' "$A"
name=$(jq -r -s --arg r "$r" '[.[] | select(.run == $r and .type == "dns" and (.resource | test("evil")))][0].resource' "$A")
check "the name is in the block as the log has it" grep -qF "  $name  dns, 1 time" "$T/err"
check "no raw escape reaches the terminal" bash -c '! grep -q $'"'"'\x1b'"'"' "$1"' _ "$T/err"
check "no policy line is offered for a name that is not a host name" bash -c '! grep -q "network.allow: \[\"evil" "$1"' _ "$T/err"

lab_finish
