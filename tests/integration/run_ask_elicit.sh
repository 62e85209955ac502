#!/usr/bin/env bash
# run_ask_elicit.sh - network.ask answered through MCP elicitation (issue 31 item 4): a small
# MCP server (tests/mcp/tool_fetch_server.mjs, its tool fetch_a GETs a URL) runs under `warden
# run` with no terminal (stderr a file), driven by the official SDK client
# (tests/mcp/elicit_client.mjs). other.test is in network.ask, allowed.test (the control) in
# network.allow. A client that declared the elicitation capability is sent an
# elicitation/create request naming the program and the name; accepting it (allow: true)
# approves the name for the run (the fetch gets the page, dns.ask says "approved by MCP client
# (elicitation)"), declining denies it (the name does not resolve, dns.ask "denied by MCP
# client (elicitation)"). A client without the capability, with no terminal either, gets no
# request and the ask is denied at once (dns.ask "no one to ask": an audit reason, not a timing).
# A client that never answers while a person approves with `warden approve ID` (the ID its stderr
# names): the first answer wins (approved by the terminal) and the client's question is
# withdrawn (notifications/cancelled). Each beside the control name fetched in the same run.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
lab_need_mcp
command -v jq >/dev/null || { echo "ERROR: jq is missing"; exit 1; }
lab_up

T=$(lab_tmpdir wd-run-ask-elicit)
chmod 0755 "$T"
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
# the approval store: the test's own
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0 XDG_STATE_HOME=$T/state
cat >"$T/p.yaml" <<YAML
version: 1
filesystem:
  read: ["$MCP"]
network:
  allow:
    - allowed.test
  ask:
    - other.test
YAML
ASKED=http://other.test/
CONTROL=http://allowed.test/

# drive MODE: the client's JSON line in OUT, the run's audit log fresh in A
drive() {
	rm -f "$A" # the run makes it (as the user, when run_as_user.sh runs this)
	OUT=$("$NODE" "$MCP/elicit_client.mjs" "$1" "$ASKED" "$CONTROL" \
		ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" -p "$T/p.yaml" -- \
		"$NODE" "$MCP/tool_fetch_server.mjs" 2>"$T/client-$1.err")
	RC=$?
	echo "# client ($1): $OUT"
	[[ -s $T/client-$1.err ]] && sed 's/^/# client stderr: /' "$T/client-$1.err" | tail -5
}
ask_ev() { jq -e -s "any(.[]; .action == \"dns.ask\" and .resource == \"other.test\" and $1)" "$A"; }

echo "# a client that elicits, the person accepts: approved for the run"
drive accept
check_eq "the MCP client ran to the end" 0 echo "$RC"
check_eq "control: allowed.test fetched" "200 hello from allowed.test" jq -r .control <<<"$OUT"
check_eq "the asked name fetched once the client accepted" "200 hello from other.test" \
	jq -r .asked <<<"$OUT"
check "the client was sent an elicitation/create request with warden's own id" \
	jq -e '.elicited | length >= 1 and all(.[]; .id | type == "string" and startswith("warden-ask-"))' <<<"$OUT"
check "... naming the program and the name, asking a boolean allow" \
	jq -e '.elicited[0] | (.message | contains("node") and contains("other.test")) and
	.schema.properties.allow.type == "boolean"' <<<"$OUT"
check "dns.ask: held, then approved by the MCP client" ask_ev \
	'.allowed == true and (.reason | contains("approved by MCP client (elicitation)"))'
check "the launcher said the ask on its stderr too (warden approve works as well)" \
	grep -aq "warden: ask [0-9a-f]\{32\}: node wants other.test" "$T/client-accept.err"
check "the store keeps no request" bash -c '! ls "$0"/warden/approvals/*.json 2>/dev/null' "$T/state"

echo "# a client that elicits, the person declines: denied"
drive decline
check_eq "the MCP client ran to the end" 0 echo "$RC"
check_eq "control: allowed.test fetched" "200 hello from allowed.test" jq -r .control <<<"$OUT"
check "the asked name did not resolve" jq -e '.asked | startswith("error: ")' <<<"$OUT"
check "the client was asked" jq -e '.elicited | length >= 1' <<<"$OUT"
check "dns.ask: denied by the MCP client" ask_ev \
	'.allowed == false and (.reason | contains("denied by MCP client (elicitation)"))'
check_fails "no dns.ask of other.test approved" ask_ev '.allowed == true'

echo "# a client without the capability, no terminal: no one to ask, denied at once"
drive none
check_eq "the MCP client ran to the end" 0 echo "$RC"
check_eq "control: allowed.test fetched" "200 hello from allowed.test" jq -r .control <<<"$OUT"
check "the asked name did not resolve" jq -e '.asked | startswith("error: ")' <<<"$OUT"
check_eq "the client was sent no elicitation request" 0 jq -r '.elicited | length' <<<"$OUT"
check "dns.ask: denied, no one to ask" ask_ev \
	'.allowed == false and (.reason | contains("no one to ask"))'
check_fails "no dns.ask of other.test approved" ask_ev '.allowed == true'

echo "# a client that elicits and never answers, a person approves at a terminal: the first wins"
rm -f "$A"
"$NODE" "$MCP/elicit_client.mjs" wait "$ASKED" "$CONTROL" \
	ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" -p "$T/p.yaml" -- \
	"$NODE" "$MCP/tool_fetch_server.mjs" >"$T/out-wait" 2>"$T/client-wait.err" &
CPID=$!
ask_id() { grep -ao 'warden: ask [0-9a-f]\{32\}: ' "$T/client-wait.err" | head -n1 | cut -d' ' -f3 | tr -d :; }
has_id() { [[ -n $(ask_id) ]]; }
check "the launcher names the ask on its stderr" lab_wait 20 has_id
check "warden approve ID: 0" in_host "$W" approve "$(ask_id)"
wait "$CPID"
check_eq "the MCP client ran to the end" 0 echo "$?"
OUT=$(cat "$T/out-wait")
echo "# client (wait): $OUT"
check_eq "control: allowed.test fetched" "200 hello from allowed.test" jq -r .control <<<"$OUT"
check_eq "the asked name fetched once the terminal approved" "200 hello from other.test" \
	jq -r .asked <<<"$OUT"
check "the client was asked, and the question withdrawn (notifications/cancelled)" \
	jq -e '(.elicited | length >= 1) and .withdrawn == [.elicited[0].id]' <<<"$OUT"
check "dns.ask: approved by the terminal" ask_ev \
	'.allowed == true and (.reason | contains("approved by a terminal"))'

lab_finish
