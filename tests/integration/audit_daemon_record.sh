#!/usr/bin/env bash
# audit_daemon_record.sh - the gateway daemon's signed run records (issue 32, item 5;
# docs/audit.md "The daemon's run record"): warden-gateway --manage-nft makes its own key (0600,
# audit.key), a daemon-mode run that ends gets a signed run.record in the central log, and
# `warden logs --verify --key` with the daemon's public key (--print-audit-key) passes on the
# intact central log, fails on an edited line naming the line after it, fails on a run line
# removed under a forged chain at the record (bad run root), and refuses the record without the
# daemon's key (unknown key); `warden attest --daemon-log` of the run verifies with the
# daemon's key and is refused with a changed byte; the central log renamed while the daemon
# runs gets the parent's signed anchor (verified; removed: missing anchor). Each negative check
# beside its control.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
. "$SRC/tests/integration/daemon/fixture.sh"


KEY=$T/gw/gateway-audit-key.pem
cat >"$T/gateway.yaml" <<EOF
version: 1
resolvers: ["$LAB_DNS_V4"]
control: {path: "$SOCK"}
audit: {path: "$CENTRAL", key: "$KEY"}
EOF
printf 'version: 1\n' >"$T/p.yaml"
chmod a+r "$T/p.yaml"

check "the host's nft table is installed" in_host "$W" nft install
daemon_start
check "the daemon starts as root in lab-host (--manage-nft)" daemon_ready
check "its signing key was made 0600 at audit.key" test "$(stat -c %a "$KEY")" = 600
check "--print-audit-key prints its public half" \
	bash -c '"$0" --config "$1" --print-audit-key >"$2" && grep -q "BEGIN PUBLIC KEY" "$2"' \
	"$GW" "$T/gateway.yaml" "$T/gw-pub.pem"
check "... and no private key in it" lab_no_match "PRIVATE" cat "$T/gw-pub.pem"

check_eq "A's daemon-mode run" ok ra -p "$T/p.yaml" -- echo ok
r=$(jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$AA")
record() { jq -c -s --arg r "$r" '[.[] | select(.run == $r and .action == "run.record")]' "$CENTRAL"; }
export -f record
export r CENTRAL
check "the central log gets the run's signed run.record" \
	lab_wait 10 bash -c '[[ $(record) != "[]" ]]'
check "... one, with its root, count, the daemon's key id and a signature" \
	bash -c 'record | jq -e "length == 1 and (.[0] | (.root | test(\"^sha256:[0-9a-f]{64}$\")) and .events >= 2 and (.key | test(\"^ed25519:[0-9a-f]{64}$\")) and (.sig | length) == 88 and .mode == \"daemon\")" >/dev/null'

check "... written when the run ended: not before the line before it in the central log" \
	jq -e -s --arg r "$r" '
	(to_entries | map(select(.value.run == $r and .value.action == "run.record"))[0].key) as $i |
	$i > 0 and .[$i].ts >= .[$i - 1].ts and (.[$i].ts | startswith("1970") | not)' "$CENTRAL"

# verify_at FILE WHERE: `warden logs --verify --key PUB FILE` exits 1 and names WHERE
verify_at() {
	local out rc=0
	out=$("$W" logs --verify --key "$T/gw-pub.pem" "$1" 2>&1 >/dev/null) || rc=$?
	((rc == 1)) || { echo "exit $rc (wanted 1): $out"; return 1; }
	grep -qF -- "$2" <<<"$out" || { echo "does not name $2: $out"; return 1; }
}
daemon_stop # the central log is still then: copies of it are checked
cp "$CENTRAL" "$T/intact.jsonl"
check "control: the central log verifies with the daemon's key" \
	lab_match "OK: .* [1-9][0-9]* signed run records verified" \
	"$W" logs --verify --key "$T/gw-pub.pem" "$T/intact.jsonl"

# K: the run's second line (its first may open the file: removing that one would look like a
# file that begins after a rotation, whose record cannot be rooted)
K=$(grep -n "\"run\":\"$r\"" "$T/intact.jsonl" | sed -n 2p | cut -d: -f1)
E=$(grep -n "\"action\":\"run.record\"" "$T/intact.jsonl" | grep "\"run\":\"$r\"" | cut -d: -f1)
check "the run's second line ($K) is before its record ($E)" test "${K:-0}" -gt 0 -a "${E:-0}" -gt "${K:-0}"
sed "${K}s/\"allowed\":true/\"allowed\":false/" "$T/intact.jsonl" >"$T/edited.jsonl"
check "the edit changed line $K" bash -c '! cmp -s "$0" "$1"' "$T/intact.jsonl" "$T/edited.jsonl"
check "an edited run line: exit 1, names edited.jsonl:$((K + 1))" \
	verify_at "$T/edited.jsonl" "edited.jsonl:$((K + 1)): broken chain"

python3 - "$T/intact.jsonl" "$T/forged.jsonl" "$K" <<'PY'
import hashlib, re, sys
lines = open(sys.argv[1]).read().rstrip("\n").split("\n")
del lines[int(sys.argv[3]) - 1]
for i in range(1, len(lines)):
    h = hashlib.sha256(lines[i - 1].encode()).hexdigest()
    lines[i] = re.sub(r',"prev":"[0-9a-f]{64}"}$', ',"prev":"%s"}' % h, lines[i])
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
check "a removed run line under a forged chain: exit 1, bad run root at the record ($((E - 1)))" \
	verify_at "$T/forged.jsonl" "forged.jsonl:$((E - 1)): bad run root"
check "without the daemon's key: exit 1, unknown key" \
	bash -c 'out=$("$0" logs --verify "$1" 2>&1); [[ $? == 1 && $out == *"unknown key"* ]]' \
	"$W" "$T/intact.jsonl"
check "control: the intact copy still verifies" \
	"$W" logs --verify --key "$T/gw-pub.pem" "$T/intact.jsonl"

# warden attest of the daemon-mode run from the central log: the daemon's run.record inside,
# the envelope signed with the attesting person's key (one made here for it)
openssl genpkey -algorithm ed25519 -out "$T/att-key.pem" 2>/dev/null && chmod 600 "$T/att-key.pem"
att() { WARDEN_AUDIT_KEY=$T/att-key.pem "$W" attest "$@"; }
check "attest --daemon-log --key DAEMON RUN prints an envelope of the run's run.record" \
	bash -c "$(declare -f att); W=$W T=$T"'; att --daemon-log "$0" --key "$1" "$2" >"$3"' \
	"$T/intact.jsonl" "$T/gw-pub.pem" "$r" "$T/att.json"
check "... its statement names the run, the record's root and the run.record line" \
	bash -c 'jq -r .payload "$0" | base64 -d | jq -e --arg r "$1" --slurpfile rec <(record) \
	"(.subject[0].name == \"warden-run:\" + \$r) and .predicate.merkle_root == \$rec[0][0].root and
	 (.predicate.record.line | fromjson | .action == \"run.record\" and .run == \$r) and
	 .predicate.mode == \"daemon\"" >/dev/null' "$T/att.json" "$r"
check "attest --verify --key DAEMON checks it (the envelope and the record inside)" \
	bash -c "$(declare -f att); W=$W T=$T"'; att --verify "$0" --key "$1" | grep -q ": OK: run "' \
	"$T/att.json" "$T/gw-pub.pem"
check "without the daemon's key the record inside does not verify (exit 1)" bash -c \
	"$(declare -f att); W=$W T=$T"'; out=$(att --verify "$0" 2>&1); [[ $? == 1 && $out == *"run record inside does not verify"* ]]' \
	"$T/att.json"
# one byte of the record line inside the payload changed, the envelope otherwise as it was
python3 - "$T/att.json" "$T/att-changed.json" <<'PY'
import base64, json, sys
env = json.load(open(sys.argv[1]))
p = base64.b64decode(env["payload"]).decode()
q = p.replace('\\"allowed\\":true', '\\"allowed\\":false', 1)
assert q != p
env["payload"] = base64.b64encode(q.encode()).decode()
json.dump(env, open(sys.argv[2], "w"))
PY
check "a changed byte in it: attest --verify refuses (exit 1)" bash -c \
	"$(declare -f att); W=$W T=$T"'; out=$(att --verify "$0" --key "$1" 2>&1); [[ $? == 1 && $out == *"no signature verifies"* ]]' \
	"$T/att-changed.json" "$T/gw-pub.pem"
check "control: the unchanged envelope still verifies" bash -c \
	"$(declare -f att); W=$W T=$T"'; att --verify "$0" --key "$1"' "$T/att.json" "$T/gw-pub.pem"
check "attest without the daemon's key: the central log does not verify (exit 1)" bash -c \
	"$(declare -f att); W=$W T=$T"'; out=$(att --daemon-log "$0" "$1" 2>&1); [[ $? == 1 && $out == *"does not verify"*"a key not given"* ]]' \
	"$T/intact.jsonl" "$r"

# the central log rotated the way logrotate renames it, while the daemon runs: the parent (it
# holds the daemon's key) begins the new file with a signed anchor when it next writes (the
# next run's run.record); the worker, adopted from a descriptor, goes on in the renamed file
daemon_start
check "the daemon starts again" daemon_ready
mv "$CENTRAL" "$CENTRAL.1"
check_eq "A's second daemon-mode run, after the rename" ok ra -p "$T/p.yaml" -- echo ok
r2=$(jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$AA")
# new_record: the run's run.record is in the new central file (else the daemon's last words)
new_record() {
	lab_wait 10 bash -c '[[ -s $0 ]] && jq -e -s --arg r "$1" \
		"any(.[]; .run == \$r and .action == \"run.record\")" "$0" >/dev/null' "$CENTRAL" "$r2" ||
		{ tail -n 20 "$T/daemon.log"; return 1; }
}
check "its run.record reaches the new central file" new_record
daemon_stop
check "the new file begins with an audit.anchor signed with the daemon's key, naming .1" \
	bash -c 'head -n 1 "$0" | jq -e --arg k "$(sed -n "s/.*\"key\":\"\(ed25519:[0-9a-f]*\)\".*/\1/p" "$1" | head -n 1)" \
	".action == \"audit.anchor\" and .resource == \"central.jsonl.1\" and .key == \$k and .lines >= 1" >/dev/null' \
	"$CENTRAL" "$T/intact.jsonl"
check "control: both files verify with the daemon's key, the anchor checked" \
	lab_match "OK: .* 1 signed anchors" "$W" logs --verify --key "$T/gw-pub.pem" --audit-log "$CENTRAL"
mkdir -p "$T/ra"
cp "$CENTRAL.1" "$T/ra/central.jsonl.1"
tail -n +2 "$CENTRAL" >"$T/ra/central.jsonl"
check "the anchor removed: exit 1, missing anchor at the new file's line 1" bash -c \
	'out=$("$0" logs --verify --key "$1" --audit-log "$2" 2>&1); [[ $? == 1 && $out == *"$2:1: missing anchor:"* ]] ||
	{ echo "$out"; exit 1; }' "$W" "$T/gw-pub.pem" "$T/ra/central.jsonl"
check_eq "no process of A's runs is left" "" ours_left

lab_finish
