#!/usr/bin/env bash
# run_ask.sh - network.ask (issue 31 item 4, a person in the loop): a name outside
# network.allow but inside network.ask is held -- its DNS query waits -- while the person at
# `warden run`'s terminal answers with `warden approve ID` or `warden deny ID`. The terminal is a
# pty (script(1)); the test is the person: it reads the ask's id from the launcher's stderr and
# runs the verb. An approved name resolves and is reached (getent, then curl without the proxy:
# the connection is allowed by the rule the approval added), a denied one does not resolve, one
# nobody answers is denied at its deadline (network.ask_timeout: 2) and audited "no answer in
# 2 s" (a request to the proxy port, which needs no DNS query, is held and approved the same
# way), and without a terminal (stderr a file) an ask is denied at once, audited "no one to
# ask" (an audit reason, not a timing, says it did not wait): by the gateway when stdio is not
# relayed, by the launcher when it is but no MCP client elicits (run_ask_elicit.sh has the
# client that does); so is it when the program may
# write the approval store (it could approve itself). Each beside the control name in
# network.allow resolving in the same run. run_as_user.sh runs it as a user (rootless) too.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
command -v script >/dev/null || { echo "SKIP: script (util-linux) is missing"; exit 77; }
lab_up

T=$(lab_tmpdir wd-run-ask)
chmod 0755 "$T"
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
# the approval store: the test's own (the runs and the verbs find it the same way)
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0 XDG_STATE_HOME=$T/state
cd "$T" || exit 1
lab_on_exit cd /

cat >"$T/ask.yaml" <<YAML
version: 1
network:
  allow:
    - allowed.test
  ask:
    - other.test
    - "*.ask.test"
YAML
cat >"$T/short.yaml" <<YAML
version: 1
network:
  allow:
    - allowed.test
  ask:
    - other.test
  ask_timeout: 2
YAML

# the program: the control name first, then the asked one (PROBE), each line its outcome
prog() {
	echo "getent hosts allowed.test >/dev/null && echo control-ok; $1; echo probe-exit=\$?"
}

# ask_run OUT POLICY PROBE: warden run with stderr on a pty (script -e: its exit status), in
# the background; its pid in RUNPID
ask_run() {
	local out=$1 pol=$2 probe=$3 cmd
	printf -v cmd '%q ' "$W" run -q --audit-log "$A" -p "$pol" -- sh -c "$(prog "$probe")"
	in_host script -qfec "$cmd" /dev/null >"$out" 2>&1 </dev/null &
	RUNPID=$!
}

# ask_id OUT: the ask's request id the launcher printed ("warden: ask ID: PROGRAM wants NAME")
ask_id() {
	grep -ao 'warden: ask [0-9a-f]\{32\}: ' "$1" | head -n1 | sed 's/^warden: ask \([0-9a-f]*\): $/\1/'
}
has_id() { [[ -n $(ask_id "$1") ]]; }

echo "# approved within the window: the name resolves and is reached"
ask_run "$T/out1" "$T/ask.yaml" "getent hosts other.test >/dev/null && curl --noproxy '*' -fsS --max-time 8 http://other.test/"
check "the launcher says it asks, on its terminal, with the request id" lab_wait 15 has_id "$T/out1"
ID1=$(ask_id "$T/out1")
check "... naming the program and the name, and both verbs" grep -aqE \
	"warden: ask $ID1: sh wants other.test .* .warden approve $ID1. or .warden deny $ID1. \\(30 s\\)" "$T/out1"
check "warden status lists the pending ask" bash -c '"$0" status | grep -qE "^$1 +[^ ]+ +other.test"' "$W" "$ID1"
check "warden approve ID: 0" in_host "$W" approve "$ID1"
wait "$RUNPID"
rc1=$?
check_eq "the run ends 0" 0 echo "$rc1"
check "control: allowed.test resolved in that run" grep -aq control-ok "$T/out1"
check "the approved name was reached: hello from other.test" grep -aq "hello from other.test" "$T/out1"
check "... probe-exit=0" grep -aq "probe-exit=0" "$T/out1"
check "dns.ask: held, then approved by the terminal" bash -c \
	'jq -e -s "[.[] | select(.action == \"dns.ask\" and .resource == \"other.test\")] | (.[0].allowed == false) and (.[1].allowed == true) and (.[1].reason | test(\"approved by a terminal \\\\(uid [0-9]+\"))" "$0"' "$A"
check "the held query's dns.query is allowed (synthetic address)" bash -c \
	'jq -e -s "any(.[]; .action == \"dns.query\" and .resource == \"other.test\" and .allowed == true and (.reason | test(\"approved\")))" "$0"' "$A"
check "the store keeps no request of it" test ! -e "$T/state/warden/approvals/$ID1.json"

echo "# a request to the proxy port (curl follows the proxy variables: no DNS query) is held too"
: >"$A"
ask_run "$T/out6" "$T/ask.yaml" "curl -fsS --max-time 40 http://allowed.test/ && curl -fsS --max-time 40 http://other.test/"
check "the launcher asks" lab_wait 15 has_id "$T/out6"
ID6=$(ask_id "$T/out6")
check "warden approve ID: 0" in_host "$W" approve "$ID6"
wait "$RUNPID"
check "control: allowed.test through the proxy" grep -aq "hello from allowed.test" "$T/out6"
check "the held request went on once approved: hello from other.test" grep -aq "hello from other.test" "$T/out6"
check "... probe-exit=0" grep -aq "probe-exit=0" "$T/out6"
check "net.connect of other.test allowed (proxy)" bash -c \
	'jq -e -s "any(.[]; .action == \"net.connect\" and .resource == \"other.test\" and .allowed == true)" "$0"' "$A"

echo "# a held request whose client gives up: out of its ask; the gateway goes on"
: >"$A"
cat >"$T/four.yaml" <<YAML
version: 1
network:
  allow:
    - allowed.test
  ask:
    - other.test
  ask_timeout: 4
YAML
ask_run "$T/out7" "$T/four.yaml" "curl -sS --max-time 1 http://other.test/; sleep 5; curl -fsS --max-time 8 http://allowed.test/"
check "the launcher asks" lab_wait 15 has_id "$T/out7"
wait "$RUNPID"
check "after the ask's deadline the run's next request is served: hello from allowed.test" \
	grep -aq "hello from allowed.test" "$T/out7"
check "net.connect of other.test denied: the client closed while its ask was pending" bash -c \
	'jq -e -s "any(.[]; .action == \"net.connect\" and .resource == \"other.test\" and .allowed == false and (.reason | test(\"closed while its ask\")))" "$0"' "$A"
check "dns.ask: no answer in 4 s" bash -c \
	'jq -e -s "any(.[]; .action == \"dns.ask\" and (.reason | test(\"no answer in 4 s\")))" "$0"' "$A"

echo "# denied: the name does not resolve"
: >"$A"
ask_run "$T/out2" "$T/ask.yaml" "getent hosts x.ask.test"
check "the launcher asks" lab_wait 15 has_id "$T/out2"
ID2=$(ask_id "$T/out2")
check "warden deny ID: 0" in_host "$W" deny "$ID2"
wait "$RUNPID"
check "control: allowed.test resolved in that run" grep -aq control-ok "$T/out2"
check "the denied name did not resolve (getent: 2)" grep -aq "probe-exit=2" "$T/out2"
check "dns.ask: denied by the terminal" bash -c \
	'jq -e -s "any(.[]; .action == \"dns.ask\" and .resource == \"x.ask.test\" and .allowed == false and (.reason | test(\"denied by a terminal\")))" "$0"' "$A"
check "dns.query of x.ask.test denied with a denial id" bash -c \
	'jq -e -s "any(.[]; .action == \"dns.query\" and .resource == \"x.ask.test\" and .allowed == false and (.denial_id | length > 0))" "$0"' "$A"

echo "# nobody answers: denied at the deadline (ask_timeout: 2)"
: >"$A"
ask_run "$T/out3" "$T/short.yaml" "getent hosts other.test"
check "the launcher asks" lab_wait 15 has_id "$T/out3"
wait "$RUNPID"
check "control: allowed.test resolved in that run" grep -aq control-ok "$T/out3"
check "the unanswered name did not resolve (getent: 2)" grep -aq "probe-exit=2" "$T/out3"
check "dns.ask: no answer in 2 s" bash -c \
	'jq -e -s "any(.[]; .action == \"dns.ask\" and .allowed == false and (.reason | test(\"no answer in 2 s\")))" "$0"' "$A"
check "the launcher said so" grep -aq "no answer in 2 s" "$T/out3"
check "a later approve finds nothing pending (1)" bash -c '"$0" approve "$1"; test $? = 1' "$W" "$(ask_id "$T/out3")"

echo "# no person (stderr is a file, stdio not relayed): denied at once by the gateway, never held"
: >"$A"
check_eq "control: allowed.test resolves; other.test does not (getent: 2)" \
	"control-ok
probe-exit=2" in_host env WARDEN_STDIO_RELAY=0 "$W" run -q --audit-log "$A" \
	-p "$T/ask.yaml" -- sh -c "$(prog 'getent hosts other.test')" </dev/null
check "dns.query of other.test denied: no one to ask" bash -c \
	'jq -e -s "any(.[]; .action == \"dns.query\" and .resource == \"other.test\" and .allowed == false and (.reason | test(\"no one to ask\")))" "$0"' "$A"
check "... and never held: no dns.ask event" bash -c \
	'jq -e -s "all(.[]; .action != \"dns.ask\")" "$0"' "$A"

echo "# no person, stdio relayed (an MCP client could elicit; this one is no MCP client): the"
echo "# launcher denies the ask at once"
: >"$A"
check_eq "control: allowed.test resolves; other.test does not (getent: 2)" \
	"control-ok
probe-exit=2" in_host "$W" run -q --audit-log "$A" -p "$T/ask.yaml" -- sh -c "$(prog 'getent hosts other.test')" </dev/null
check "dns.ask of other.test denied: no one to ask" bash -c \
	'jq -e -s "any(.[]; .action == \"dns.ask\" and .resource == \"other.test\" and .allowed == false and (.reason | test(\"no one to ask\")))" "$0"' "$A"
check "... and its dns.query denied with it" bash -c \
	'jq -e -s "any(.[]; .action == \"dns.query\" and .resource == \"other.test\" and .allowed == false and (.reason | test(\"no one to ask\")))" "$0"' "$A"
check_fails --denied 2 "--ask on the command line: the same (no person)" \
	in_host "$W" run -q --audit-log "$A" --allow allowed.test --ask other.test -- getent hosts other.test
check "control: --ask leaves the allow list alone" \
	in_host "$W" run -q --audit-log "$A" --allow allowed.test --ask other.test -- getent hosts allowed.test

echo "# a program that may write the approval store: no one is asked, even with a terminal"
: >"$A"
# a store of its own inside a folder the program may write (whoever it runs as); the grant is
# the store's own folder, not the state folder, which holds the audit signing key too (a grant
# of that is refused)
mkdir -m 1777 "$T/w" "$T/w/warden" "$T/w/warden/approvals"
cat >"$T/writable.yaml" <<YAML
version: 1
filesystem:
  write: ["$T/w/warden/approvals"]
network:
  allow:
    - allowed.test
  ask:
    - other.test
YAML
XDG_STATE_HOME=$T/w ask_run "$T/out5" "$T/writable.yaml" "getent hosts other.test"
wait "$RUNPID"
check "the launcher says why it asks no one" grep -aq "which holds the approval store: no one is asked" "$T/out5"
check "control: allowed.test resolved in that run" grep -aq control-ok "$T/out5"
check "other.test was denied at once (getent: 2)" grep -aq "probe-exit=2" "$T/out5"
check "... audited: no one to ask" bash -c \
	'jq -e -s "any(.[]; .action == \"dns.query\" and .resource == \"other.test\" and (.reason | test(\"no one to ask\")))" "$0"' "$A"

lab_finish
