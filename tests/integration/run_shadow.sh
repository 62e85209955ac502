#!/usr/bin/env bash
# run_shadow.sh - shadow mode (issue 31 item 6): `warden run --shadow` with the same policy and
# the same curl probes as a normal run. Without --shadow a name the policy does not allow fails
# (the negative) while an allowed one succeeds (the control); with --shadow the denied name is
# reached, and the audit log has its would_deny events (the reason and the denial id that would
# have been), run.start says "shadow": true, stderr warns at the start, and the end-of-run block
# lists what the policy would have blocked. What stays denied in shadow mode: the SSRF guard (a
# name that resolves to a loopback address), beside a control reached in the same run. A
# `shadow` key in a policy file is refused. Both the transparent path (DNS + TCP) and the proxy
# port (HTTPS_PROXY: CONNECT, and SOCKS5 with names) are probed. Run as root here, and by
# run_as_user.sh as a user (rootless mode); run_shadow_daemon.sh is daemon mode's (and the
# ceiling's).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
lab_up

T=$(lab_tmpdir wd-run-shadow)
chmod 0755 "$T"
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0

cat >"$T/p.yaml" <<YAML
version: 1
filesystem:
  read: ["$LAB_CA"]
network:
  allow:
    - {host: allowed.test, ports: [443]}
YAML

wr() { in_host "$W" run --audit-log "$A" -p "$T/p.yaml" "$@"; }
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
# the run's events that match the jq filter $2 (run id $1): how many
events() { jq -s --arg r "$1" "[.[] | select(.run == \$r and ($2))] | length" "$A"; }
has_event() { [[ $(events "$1" "$2") -ge 1 ]]; }
# curl in the sandbox: through the proxy port (the sandbox's HTTPS_PROXY), or transparent
get() { wr -q "$@" -- curl -fsS --max-time 8 --cacert "$LAB_CA" https://other.test/; }
get_direct() { wr -q "$@" -- curl -fsS --max-time 8 --noproxy '*' --cacert "$LAB_CA" https://other.test/; }
get_allowed() { wr -q "$@" -- curl -fsS --max-time 8 --cacert "$LAB_CA" https://allowed.test/; }
# SOCKS5 with names on the proxy port (the address of the sandbox's HTTPS_PROXY)
get_socks() {
	local name=$1
	shift
	wr -q "$@" -- sh -c 'p=${HTTPS_PROXY#http://}; p=${p%/}; exec curl -fsS --max-time 8 \
		--cacert "$0" -x "socks5h://$p" "https://$1/"' "$LAB_CA" "$name"
}

echo "# without --shadow: the policy is enforced"
check_eq "control: allowed.test is reached" "hello from allowed.test" get_allowed
check_fails --denied 22,56 "other.test through the proxy is denied (CONNECT answered 403)" get
check_fails --denied 6 "other.test direct does not resolve (NXDOMAIN)" get_direct
r=$(last_run)
check "control: its DNS denial is an ordinary one (allowed false, no decision)" has_event "$r" \
	'.type == "dns" and .resource == "other.test" and .allowed == false and (has("decision") | not)'
check "control: the normal run.start has no shadow" has_event "$r" \
	'.action == "run.start" and (has("shadow") | not)'
check_eq "control: allowed.test through SOCKS5 is reached" "hello from allowed.test" get_socks allowed.test
check_fails --denied 7,97 "other.test through SOCKS5 is refused" get_socks other.test

echo "# with --shadow: the same probes reach other.test"
check_eq "control: allowed.test is still reached" "hello from allowed.test" get_allowed --shadow
r=$(last_run)
check "... and it is no would-deny" bash -c '[[ $(jq -s --arg r "$2" "[.[] | select(.run == \$r and .decision == \"would_deny\")] | length" "$1") -eq 0 ]]' _ "$A" "$r"
check_eq "other.test through the proxy is reached" "hello from other.test" get --shadow
r=$(last_run)
check "its net.connect: allowed, decision would_deny, the policy's reason, a denial id" \
	has_event "$r" '.action == "net.connect" and .resource == "other.test" and .port == 443 and
	 .allowed == true and .decision == "would_deny" and .shadow == true and
	 (.reason | contains("not allowed by policy p.yaml (no network.allow rule matches)")) and
	 (.denial_id | startswith("dn-"))'
check "run.start says shadow: true, loudly" has_event "$r" \
	'.action == "run.start" and .shadow == true and (.reason | contains("SHADOW RUN: nothing is enforced on the network"))'
check "run.exit says shadow: true, and counts no denial" has_event "$r" \
	'.action == "run.exit" and .shadow == true and .denials == 0'
check_eq "other.test direct (DNS + TCP) is reached" "hello from other.test" get_direct --shadow
r=$(last_run)
check "its DNS query: answered, would_deny with the policy's reason and an id" has_event "$r" \
	'.type == "dns" and .resource == "other.test" and .allowed == true and .decision == "would_deny" and
	 .reason == "other.test is not allowed by policy p.yaml" and (.denial_id | startswith("dn-"))'
check "its connection: would_deny too" has_event "$r" \
	'.action == "net.connect" and .resource == "other.test" and .decision == "would_deny"'
check "warden logs --would-deny lists them" bash -c \
	'"$1" logs --audit-log "$2" --run "$3" --would-deny --json | jq -e -s "length >= 2 and all(.[]; .decision == \"would_deny\")"' \
	_ "$W" "$A" "$r"
check "control: warden logs --denied has none of them" bash -c \
	'[[ -z $("$1" logs --audit-log "$2" --run "$3" --denied --json | jq -c "select(.decision)") ]]' _ "$W" "$A" "$r"

check_eq "other.test through SOCKS5 is reached" "hello from other.test" get_socks other.test --shadow
r=$(last_run)
check "its net.connect: would_deny" has_event "$r" \
	'.action == "net.connect" and .resource == "other.test" and .decision == "would_deny"'

echo "# the warning at the start and the end-of-run block"
wr --shadow -- sh -c "curl -fsS --max-time 8 --cacert '$LAB_CA' -o /dev/null https://other.test/;
	curl -fsS --max-time 8 --cacert '$LAB_CA' -o /dev/null https://other.test/" >"$T/out" 2>"$T/err"
check "control: the run succeeded (both fetches)" test $? -eq 0
r=$(last_run)
sed 's/^/    | /' "$T/err"
check "stderr warns that nothing is enforced on the network" \
	grep -qF "warden run: warning: shadow run: nothing is enforced on the network" "$T/err"
check "the block's head counts what the policy would have blocked" \
	grep -qF "warden run: shadow run: the policy would have blocked 2 accesses (let through; all of them: warden logs --run $r --would-deny)" "$T/err"
id=$(jq -r -s --arg r "$r" '[.[] | select(.run == $r and .decision == "would_deny")] | last | .denial_id' "$A")
check "it names other.test:443, twice, with its last would-be denial id" \
	grep -qE "^  other\.test:443  network, 2 times, would-be denial id $id\$" "$T/err"
check "... and the policy line that would allow it" grep -qF \
	'    to allow it: network.allow: ["other.test:443"] (or warden run --allow other.test:443)' "$T/err"
check "no denial block (nothing was denied)" bash -c '! grep -q "denials\? in this run" "$1"' _ "$T/err"
wr -- sh -c "curl -fsS --max-time 8 --cacert '$LAB_CA' -o /dev/null https://other.test/; true" >"$T/out" 2>"$T/err"
check "control: without --shadow, no warning and no would-be block, the denial block instead" bash -c \
	'! grep -q "shadow" "$1" && grep -qF "warden run: 1 denial in this run" "$1"' _ "$T/err"

echo "# the SSRF guard still denies in shadow mode"
loop() { wr -q --shadow -- curl -fsS --max-time 8 "$@" http://loopback.test/; }
check_fails --denied 22 "loopback.test (resolves to 127.0.0.1) through the proxy: a 403" loop
r=$(last_run)
check "its event: denied (not a would-deny), naming the loopback address" has_event "$r" \
	'.action == "net.connect" and .resource == "loopback.test" and .allowed == false and
	 (has("decision") | not) and (.reason | contains("127.0.0.1 is a loopback address"))'
check_fails --denied 7,22,35,52,56 "loopback.test direct: refused too" loop --noproxy '*'
r=$(last_run)
check "its event: denied, naming the loopback address" has_event "$r" \
	'.action == "net.connect" and .resource == "loopback.test" and .allowed == false and
	 (.reason | contains("127.0.0.1 is a loopback address"))'
check_eq "control next to it: http://other.test/ is reached in the same mode" "hello from other.test" \
	wr -q --shadow -- curl -fsS --max-time 8 http://other.test/

echo "# shadow is a flag, never a policy key"
{ cat "$T/p.yaml"; echo "shadow: true"; } >"$T/key.yaml"
in_host "$W" run --audit-log "$A" -p "$T/key.yaml" -- true 2>"$T/err"
check "a policy with shadow: true does not run (125) and says why" bash -c \
	'[ $1 -eq 125 ] && grep -qF "\`shadow\` is not a policy key" "$2"' _ $? "$T/err"
check "control: the same policy without the key runs" wr -q -- true

lab_finish
