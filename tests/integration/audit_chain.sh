#!/usr/bin/env bash
# audit_chain.sh - the tamper-evident audit log (issue 32, item 5) on a real run's log: every
# line chained, run.exit signed with its root; `warden logs --verify` passes on the intact log
# and fails (exit 1, naming FILE:LINE) on an edited line, a removed line, two swapped lines, a
# run.exit whose signature was altered, and a removed run line whose chain was forged again;
# after a rotation the new file's signed audit.anchor: present and verified, and a forged
# anchor, a removed one and the old file's tail cut refused at the new file's first line;
# `warden attest RUN` parsed with jq and its DSSE signature and the run record's checked by
# `openssl pkeyutl -verify -rawin` with the exported public key (an outside client), and by
# `warden attest --verify`; no grant exposes the signing key. Each negative check has its control.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
lab_up

T=$(lab_tmpdir wd-audit-chain)
chmod 0755 "$T"
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
# the runs' signing key: made by the first run (not in the machine's /root/.local/state)
export WARDEN_AUDIT_KEY=$T/keys/audit-key.pem
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0

cat >"$T/net.yaml" <<YAML
version: 1
filesystem:
  read: ["$LAB_CA"]
network:
  allow:
    - {host: allowed.test, ports: [443]}
YAML

wr() { in_host "$W" run -q --audit-log "$A" -p "$T/net.yaml" "$@"; }
# --noproxy: the names go through the gateway's DNS too (dns and net events)
fetch="curl -sS --noproxy '*' --max-time 8 --cacert '$LAB_CA' -o /dev/null"

echo "# two real runs write the log: the launcher's and the embedded gateway's lines"
wr -- sh -c "$fetch https://allowed.test/; $fetch https://other.test/; true"
check "control: the first run wrote its run.exit" jq -e -s 'any(.[]; .action == "run.exit")' "$A"
wr -- sh -c "$fetch https://allowed.test/; true"
R1=$(jq -r -s '[.[] | select(.action == "run.start")][0].run' "$A")
R2=$(jq -r -s '[.[] | select(.action == "run.start")][1].run' "$A")
check "every line carries prev (64 hex digits)" \
	jq -e -s 'length > 6 and all(.[]; (.prev // "") | test("^[0-9a-f]{64}$"))' "$A"
check "the first line links to nothing before it (zeros)" \
	jq -e -s '.[0].prev == ("0" * 64)' "$A"
check "the gateway's lines are in the chain too (dns.query of run 1)" \
	jq -e -s --arg r "$R1" 'any(.[]; .run == $r and .action == "dns.query" and has("prev"))' "$A"
check "... and a denial of run 1 (other.test)" \
	jq -e -s --arg r "$R1" 'any(.[]; .run == $r and .allowed == false and .type != "run")' "$A"
check "run 1's run.exit carries root, events, key and sig" jq -e -s --arg r "$R1" '
	[.[] | select(.run == $r and .action == "run.exit")][0] |
	(.root | test("^sha256:[0-9a-f]{64}$")) and .events >= 3 and
	(.key | test("^ed25519:[0-9a-f]{64}$")) and (.sig | length) == 88' "$A"
check "... and its time is the run's end: not before its run.start, nor before the line before it" \
	jq -e -s --arg r "$R1" '
	([.[] | select(.run == $r and .action == "run.start")][0].ts) as $start |
	(to_entries | map(select(.value.run == $r and .value.action == "run.exit"))[0].key) as $i |
	.[$i].ts >= $start and .[$i].ts >= .[$i - 1].ts' "$A"
check "the signing key was made 0600" test "$(stat -c %a "$WARDEN_AUDIT_KEY")" = 600

# verify_at FILE WHERE: `warden logs --verify FILE` exits 1 and its message names WHERE
verify_at() {
	local out rc=0
	out=$("$W" logs --verify "$1" 2>&1 >/dev/null) || rc=$?
	((rc == 1)) || { echo "exit $rc (wanted 1): $out"; return 1; }
	grep -qF -- "$2" <<<"$out" || { echo "does not name $2: $out"; return 1; }
}
# nth LINE PATTERN: the number of the first line of the log matching PATTERN
nth() { grep -n -E -- "$1" "$A" | head -1 | cut -d: -f1; }

echo "# the intact log"
check "warden logs --verify passes on the log" "$W" logs --verify --audit-log "$A"
check "... and says OK with the two signed run records" \
	lab_match "OK: .* 2 signed run records verified" "$W" logs --verify "$A"

K=$(nth "\"run\":\"$R1\",\"type\":\"(dns|net)\"")
E=$(nth "\"run\":\"$R1\",\"type\":\"run\",\"action\":\"run.exit\"")
N=$(wc -l <"$A")
check "the test's lines exist (a DNS line of run 1 at $K, its run.exit at $E, of $N)" \
	test "$K" -gt 1 -a "$E" -gt "$K" -a "$N" -gt "$E"

echo "# an edited line: found at the line after it"
cp "$A" "$T/intact.jsonl"
check "control: the copy verifies" "$W" logs --verify "$T/intact.jsonl"
sed "${K}s/allowed.test/allowed.tesx/; ${K}s/other.test/other.tesx/" "$A" >"$T/edited.jsonl"
check "the edit changed the line" bash -c '! cmp -s "$0" "$1"' "$A" "$T/edited.jsonl"
check "an edited line: exit 1, names edited.jsonl:$((K + 1))" \
	verify_at "$T/edited.jsonl" "edited.jsonl:$((K + 1)): broken chain"

echo "# a removed line"
sed "${K}d" "$A" >"$T/removed.jsonl"
check "a removed line: exit 1, names removed.jsonl:$K" \
	verify_at "$T/removed.jsonl" "removed.jsonl:$K: broken chain"

echo "# two swapped lines"
sed -n "1,$((K - 1))p" "$A" >"$T/swapped.jsonl"
sed -n "$((K + 1))p" "$A" >>"$T/swapped.jsonl"
sed -n "${K}p" "$A" >>"$T/swapped.jsonl"
sed -n "$((K + 2)),\$p" "$A" >>"$T/swapped.jsonl"
check_eq "the swapped copy has every line" "$N" wc -l <"$T/swapped.jsonl"
check "two swapped lines: exit 1, names swapped.jsonl:$K" \
	verify_at "$T/swapped.jsonl" "swapped.jsonl:$K: broken chain"

echo "# run.exit's signature altered"
python3 - "$A" "$T/badsig.jsonl" "$E" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
e = int(sys.argv[3]) - 1
i = lines[e].index('"sig":"') + 7
lines[e] = lines[e][:i] + ("B" if lines[e][i] == "A" else "A") + lines[e][i + 1:]
open(sys.argv[2], "w").write("\n".join(lines))
PY
check "an altered signature: exit 1, names badsig.jsonl:$E" \
	verify_at "$T/badsig.jsonl" "badsig.jsonl:$E: bad signature"

echo "# a run line removed and every prev after it forged again"
python3 - "$A" "$T/forged.jsonl" "$K" <<'PY'
import hashlib, re, sys
lines = open(sys.argv[1]).read().rstrip("\n").split("\n")
del lines[int(sys.argv[3]) - 1]
for i in range(1, len(lines)):
    h = hashlib.sha256(lines[i - 1].encode()).hexdigest()
    lines[i] = re.sub(r',"prev":"[0-9a-f]{64}"}$', ',"prev":"%s"}' % h, lines[i])
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
check "the forged chain links (only run.exit's root can tell)" \
	lab_no_match "broken chain" sh -c '"$0" logs --verify "$1" 2>&1; true' "$W" "$T/forged.jsonl"
check "a removed run line under a forged chain: exit 1, bad run root at run.exit ($((E - 1)))" \
	verify_at "$T/forged.jsonl" "forged.jsonl:$((E - 1)): bad run root"

echo "# another person's key: the record is not taken on its word"
openssl genpkey -algorithm ed25519 -out "$T/other.pem" 2>/dev/null && chmod 600 "$T/other.pem"
check "verified with only another key: exit 1, unknown key" \
	env WARDEN_AUDIT_KEY="$T/other.pem" bash -c \
	'out=$("$0" logs --verify "$1" 2>&1); [[ $? == 1 && $out == *"unknown key"* ]]' "$W" "$A"
"$W" attest --public-key >"$T/pub.pem"
check "control: with the exported public key as --key, it verifies" \
	env WARDEN_AUDIT_KEY="$T/other.pem" "$W" logs --verify --key "$T/pub.pem" "$A"

echo "# the public key, and run.exit's signature checked by openssl"
check "the exported key is an ed25519 public key" \
	lab_match "ED25519 Public-Key" openssl pkey -pubin -in "$T/pub.pem" -noout -text
check_eq "the record's key id is the SHA-256 of the raw public key" \
	"$(jq -r -s --arg r "$R1" '[.[] | select(.run == $r and .action == "run.exit")][0].key' "$A")" \
	sh -c 'echo "ed25519:$(openssl pkey -pubin -in "$0" -outform DER | tail -c 32 | sha256sum | cut -d" " -f1)"' "$T/pub.pem"
# the signed bytes: the line without ,"sig":"…","prev":"…" (docs/audit.md)
sed -n "${E}p" "$A" | sed -E 's/,"sig":"[^"]*","prev":"[0-9a-f]{64}"\}$/}/' | tr -d '\n' >"$T/record.bin"
sed -n "${E}p" "$A" | sed -E 's/.*"sig":"([^"]*)".*/\1/' | base64 -d >"$T/record.sig"
check "openssl verifies run.exit's signature" \
	openssl pkeyutl -verify -pubin -inkey "$T/pub.pem" -rawin -in "$T/record.bin" -sigfile "$T/record.sig"
sed 's/"exit":0/"exit":1/' "$T/record.bin" | tr -d '\n' >"$T/record-edited.bin"
check "... and refuses it over an edited record" bash -c \
	'! cmp -s "$2" "$3" && ! openssl pkeyutl -verify -pubin -inkey "$0" -rawin -in "$3" -sigfile "$1"' \
	"$T/pub.pem" "$T/record.sig" "$T/record.bin" "$T/record-edited.bin"

echo "# warden attest"
check "warden attest RUN prints an envelope" bash -c '"$0" attest --audit-log "$1" "$2" >"$3"' \
	"$W" "$A" "$R1" "$T/att.json"
check "a DSSE envelope of an in-toto statement" jq -e '.payloadType == "application/vnd.in-toto+json"
	and (.signatures | length) == 1 and (.signatures[0].keyid | startswith("ed25519:"))' "$T/att.json"
jq -r .payload "$T/att.json" | base64 -d >"$T/payload.json"
check "the statement: in-toto v1, subject digest = the run's root, predicate facts" jq -e \
	--arg r "$R1" --slurpfile log <(jq -c --arg r "$R1" 'select(.run == $r)' "$A") '
	(($log | map(select(.action == "run.exit"))[0]) as $x |
	 ($log | map(select(.action == "run.start"))[0]) as $s |
	 ._type == "https://in-toto.io/Statement/v1" and
	 .subject[0].name == ("warden-run:" + $r) and
	 ("sha256:" + .subject[0].digest.sha256) == $x.root and
	 .predicate.merkle_root == $x.root and .predicate.command == $s.command and
	 .predicate.policy_hash == $s.policy_hash and .predicate.counts.events == $x.events and
	 ([.predicate.counts.by_type[].denied] | add) >= 1 and .predicate.exit == $x.exit)' \
	"$T/payload.json"
# DSSE's PAE: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
{ printf 'DSSEv1 %d %s %d ' 28 application/vnd.in-toto+json "$(stat -c %s "$T/payload.json")"
	cat "$T/payload.json"; } >"$T/pae.bin"
jq -r '.signatures[0].sig' "$T/att.json" | base64 -d >"$T/att.sig"
check "openssl verifies the envelope's signature over DSSE's PAE" \
	openssl pkeyutl -verify -pubin -inkey "$T/pub.pem" -rawin -in "$T/pae.bin" -sigfile "$T/att.sig"
check "warden attest --verify passes it" "$W" attest --verify "$T/att.json"
jq --arg p "$(jq -c '.predicate.exit = 7' "$T/payload.json" | tr -d '\n' | base64 -w0)" \
	'.payload = $p' "$T/att.json" >"$T/att-edited.json"
check_fails --denied 1 "warden attest --verify refuses an edited statement (exit 1)" \
	"$W" attest --verify "$T/att-edited.json"
check_fails --denied 1 "warden attest refuses a run of a log that does not verify (exit 1)" \
	"$W" attest --audit-log "$T/edited.jsonl" "$R2"
check "control: the same run of the intact copy attests" \
	bash -c '"$0" attest --audit-log "$1" "$2" >/dev/null' "$W" "$T/intact.jsonl" "$R2"

echo "# a rotation during a run: one chain through PATH.1 and PATH, the run's root over both"
R=$T/rot/audit.jsonl
mkdir -p "$T/rot"
# two runs first: B's cap (below) then leaves room in the new file for the anchor and all of
# B's lines, so that B rotates once (a second rotation would drop A's run.start)
in_host "$W" run -q --audit-log "$R" -p "$T/net.yaml" -- true
in_host "$W" run -q --audit-log "$R" -p "$T/net.yaml" -- true
# run A sleeps first; run B, whose cap the file has passed, rotates it as it starts: A's
# run.start is in .1, its later lines and its run.exit in the new file
in_host "$W" run -q --audit-log "$R" -p "$T/net.yaml" -- \
	sh -c "sleep 3; $fetch https://allowed.test/; true" &
RUN_A=$!
check "run A has started" lab_wait 20 bash -c \
	'[[ $(jq -s "[.[] | select(.action == \"run.start\")] | length" "$0") == 3 ]]' "$R"
RA=$(jq -r -s '[.[] | select(.action == "run.start")][2].run' "$R")
WARDEN_AUDIT_MAX_BYTES=$(($(stat -c %s "$R") + 100)) \
	in_host "$W" run -q --audit-log "$R" -p "$T/net.yaml" -- true
wait "$RUN_A"
check "the log was rotated during run A (its run.start in .1, its run.exit in the new file)" \
	bash -c 'jq -e -s --arg r "$1" "any(.[]; .run == \$r and .action == \"run.start\")" "$0.1" &&
	jq -e -s --arg r "$1" "any(.[]; .run == \$r and .action == \"run.exit\") and
	 all(.[]; .run != \$r or .action != \"run.start\")" "$0"' "$R" "$RA"
# the gateway's worker (an adopted descriptor) finishes run A's lines in .1: the link is to the
# line that was last there when B rotated the file
check "the new file's first line links to a line of .1" python3 -c '
import hashlib, json, sys
old = [hashlib.sha256(l.rstrip("\n").encode()).hexdigest() for l in open(sys.argv[1] + ".1")]
sys.exit(0 if json.loads(open(sys.argv[1]).readline())["prev"] in old else 1)' "$R"
# the rotating launcher (run B) began the new file with a signed anchor: .1's name, its line
# count then, the hash of its last line then (= the anchor's prev), the person's key
check "the new file begins with a signed audit.anchor naming .1's line count and last line" \
	python3 -c '
import hashlib, json, sys
old = [hashlib.sha256(l.rstrip("\n").encode()).hexdigest() for l in open(sys.argv[1] + ".1")]
a = json.loads(open(sys.argv[1]).readline())
n = a["lines"]
ok = (a["action"] == "audit.anchor" and a["type"] == "audit" and a["resource"] == "audit.jsonl.1"
      and 0 < n <= len(old) and a["last_line"] == "sha256:" + old[n - 1] and a["prev"] == old[n - 1]
      and a["key"].startswith("ed25519:") and len(a["sig"]) == 88)
sys.exit(0 if ok else 1)' "$R"
check "run A's run.exit is signed, its root over lines of both files" \
	jq -e -s --arg r "$RA" '[.[] | select(.run == $r and .action == "run.exit")][0] |
	(.root | startswith("sha256:")) and .events >= 5' "$R"
check "warden logs --verify passes through both files, the four records and the anchor checked" \
	lab_match "OK: .* 4 signed run records verified, 1 signed anchors" "$W" logs --verify \
	--audit-log "$R"
mkdir -p "$T/rc"
cp "$R.1" "$T/rc/audit.jsonl.1"
cp "$R" "$T/rc/audit.jsonl"
check "control: a copy of the pair verifies" "$W" logs --verify --audit-log "$T/rc/audit.jsonl"
# refused() WHAT LINE: --verify of the copy exits 1 naming rc/audit.jsonl:LINE and WHAT
refused() {
	bash -c 'out=$("$0" logs --verify --audit-log "$1" 2>&1); [[ $? == 1 && $out == *"$1:$2: $3:"* ]] ||
	{ echo "$out"; exit 1; }' "$W" "$T/rc/audit.jsonl" "$2" "$1"
}
tail -n +2 "$R" >"$T/rc/audit.jsonl"
check "the anchor removed: exit 1, missing anchor at the new file's line 1" refused "missing anchor" 1
cp "$R" "$T/rc/audit.jsonl"
check "control: the copy restored verifies" "$W" logs --verify --audit-log "$T/rc/audit.jsonl"
# the anchor forged: its line count changed (its prev, the chain after it, all left as they are)
python3 -c '
import json, sys
p = sys.argv[1]
ls = open(p).read().split("\n")
n = json.loads(ls[0])["lines"]
ls[0] = ls[0].replace("\"lines\":%d," % n, "\"lines\":%d," % (n - 1), 1)
open(p, "w").write("\n".join(ls))' "$T/rc/audit.jsonl"
check "a forged anchor (another line count): exit 1, bad signature at line 1" \
	refused "bad signature" 1
cp "$R" "$T/rc/audit.jsonl"
# the old file's tail cut: the lines from the one the anchor names on are removed from .1
NA=$(head -n 1 "$R" | jq .lines)
head -n $((NA - 1)) "$R.1" >"$T/rc/audit.jsonl.1"
check "the old file's tail cut (from the anchor's line on): exit 1, bad anchor at line 1" \
	refused "bad anchor" 1
cp "$R.1" "$T/rc/audit.jsonl.1"
check "control: the pair restored verifies" "$W" logs --verify --audit-log "$T/rc/audit.jsonl"
# an outside client checks the anchor: its signed bytes are the line without sig and prev
head -n 1 "$R" | sed -E 's/,"sig":"[^"]*","prev":"[0-9a-f]{64}"\}$/}/' | tr -d '\n' >"$T/anchor.bin"
head -n 1 "$R" | sed -E 's/.*"sig":"([^"]*)".*/\1/' | base64 -d >"$T/anchor.sig"
check "openssl verifies the anchor's signature with the person's public key" \
	openssl pkeyutl -verify -pubin -inkey "$T/pub.pem" -rawin -in "$T/anchor.bin" \
	-sigfile "$T/anchor.sig"
sed 's/"lines":/"lines":1/' "$T/anchor.bin" | tr -d '\n' >"$T/anchor-edited.bin"
check "openssl refuses it over a changed line count (the same probe)" bash -c \
	'! cmp -s "$2" "$3" && ! openssl pkeyutl -verify -pubin -inkey "$0" -rawin -in "$3" -sigfile "$1"' \
	"$T/pub.pem" "$T/anchor.sig" "$T/anchor.bin" "$T/anchor-edited.bin"

echo "# no grant exposes the signing key"
# the key's owner made nobody (the program's user in root mode), so only the protection can hide
# it; these runs log elsewhere
chown 65534 "$WARDEN_AUDIT_KEY"
chmod 0755 "$T/keys"
cat >"$T/keys.yaml" <<YAML
version: 1
filesystem:
  read: ["$T/keys"]
YAML
cat >"$T/keys-rw.yaml" <<YAML
version: 1
filesystem:
  write: ["$T/keys"]
YAML
# keyprobe: the key's file as the sandbox sees it, under a read grant of its folder
keyprobe() {
	in_host "$W" run -q --audit-log "$T/keys-audit.jsonl" -p "$T/keys.yaml" -- \
		sh -c 'if cat "$0/keys/audit-key.pem" >/dev/null 2>&1; then echo read; else echo hidden; fi' "$T"
}
check_eq "a read grant holding the key's folder: the key cannot be read" hidden keyprobe
check_eq "control: the same probe reads it when the runs sign with another key" read \
	env WARDEN_AUDIT_KEY="$T/keys2/audit-key.pem" bash -c \
	"$(declare -f keyprobe in_host _lab_in); W=$W T=$T LAB_HOST_NS=$LAB_HOST_NS keyprobe"
check_eq "a write grant holding the key is refused (exit 125)" 125 bash -c \
	'"$0" run -q --audit-log "$1" -p "$2" -- true >/dev/null 2>&1; echo $?' "$W" \
	"$T/keys-audit.jsonl" "$T/keys-rw.yaml"
check "control: the same run without that grant runs" \
	in_host "$W" run -q --audit-log "$T/keys-audit.jsonl" -p "$T/net.yaml" -- true

lab_finish
