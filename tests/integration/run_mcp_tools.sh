#!/usr/bin/env bash
# run_mcp_tools.sh - mcp.tools (issue 31, tool allow/deny): a real MCP server
# (@modelcontextprotocol/server-everything from npm) run with `warden run` inside the lab,
# driven by the official MCP TypeScript SDK (tests/mcp/tools_client.mjs). Under
# `mcp.tools.deny: [get-sum]` the tool is missing from tools/list and a call of it is answered
# by warden with a JSON-RPC error naming the denial, while `echo` works; a tee in front of the
# server records every line it was sent: the denied call never reached it. Controls: the same
# client and server under the same policy without mcp.tools list and call get-sum. Fail
# closed: a policy with mcp.tools and no stdio relay is refused before anything runs.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
MCP=$SRC/tests/mcp
SERVER=$MCP/node_modules/@modelcontextprotocol/server-everything/dist/index.js

lab_require_root
lab_need_run_tools
lab_need_mcp
lab_up

T=$(lab_tmpdir wd-run-mcp-tools)
lab_on_exit rm -rf "$T"
mkdir -p "$T/seen"
chmod 0755 "$T"
chmod 0777 "$T/seen"
export WARDEN_GATEWAY_BIN=$GW
# $1: the policy's file, $2: its extra lines (the mcp section, or nothing)
policy() {
	cat >"$1" <<EOF2
version: 1
filesystem:
  read: ["$MCP"]
  write: ["$T/seen"]
network:
  allow:
    - allowed.test
$2
EOF2
}
policy "$T/deny.yaml" 'mcp:
  tools:
    deny: [get-sum]'
policy "$T/allow.yaml" 'mcp:
  tools:
    allow: ["ec*"]'
policy "$T/plain.yaml" ''

# $1: policy, $2: audit log, $3: the file the server's stdin is copied to
client() {
	"$NODE" "$MCP/tools_client.mjs" ip netns exec "$LAB_HOST_NS" \
		"$W" run -q --audit-log "$2" -p "$1" -- \
		/bin/sh -c 'tee "$0" | exec "$1" "$2" stdio' "$3" "$NODE" "$SERVER"
}

out=$(client "$T/plain.yaml" "$T/plain.jsonl" "$T/seen/plain.txt" 2>"$T/plain.err")
rc=$?
echo "# control, no mcp.tools: $out"
check_eq "control: the client ran to the end" 0 echo "$rc"
check "control: without mcp.tools, tools/list has get-sum" \
	jq -e '.tools | index("get-sum")' <<<"$out"
check_eq "control: ... and the call of get-sum reaches the server" \
	"The sum of 2 and 3 is 5." jq -r .second.text <<<"$out"
check "control: the server was sent the get-sum call (the tee saw it)" \
	grep -q '"name":"get-sum"' "$T/seen/plain.txt"

out=$(client "$T/deny.yaml" "$T/deny.jsonl" "$T/seen/deny.txt" 2>"$T/deny.err")
rc=$?
echo "# mcp.tools.deny [get-sum]: $out"
check_eq "deny: the client ran to the end" 0 echo "$rc"
check "deny: tools/list has echo" jq -e '.tools | index("echo")' <<<"$out"
check_eq "deny: tools/list has no get-sum" null jq -r '.tools | index("get-sum")' <<<"$out"
check_eq "deny: echo, an allowed tool, answers" "Echo: allowed tool" jq -r .echo <<<"$out"
check_eq "deny: the call of get-sum is a JSON-RPC error -32602" -32602 \
	jq -r .second.code <<<"$out"
check "deny: ... whose message names warden's policy and a denial id" \
	jq -e '.second.message | test("refused by warden.s policy .mcp.tools.deny: `get-sum`.*denial dn-[0-9a-f]{12}")' <<<"$out"
check "deny: the server was sent the echo call (the tee saw it)" \
	grep -q '"name":"echo"' "$T/seen/deny.txt"
check_fails "deny: the server was never sent the get-sum call" \
	grep -q '"name":"get-sum"' "$T/seen/deny.txt"
id=$(jq -r '.second.message | capture("denial (?<d>dn-[0-9a-f]+)").d' <<<"$out")
check_eq "deny: one mcp.call event, its denial id the one the client got" "get-sum $id" jq -rs \
	'[.[] | select(.action == "mcp.call")] | map("\(.resource) \(.denial_id)") | join(",")' \
	"$T/deny.jsonl"
check "deny: ... type mcp, allowed false, with its rule" jq -es \
	'[.[] | select(.action == "mcp.call")][0] | .type == "mcp" and .allowed == false and
	 (.rule | test("mcp.tools.deny"))' "$T/deny.jsonl"
check "deny: an mcp.list event says get-sum was hidden" jq -es \
	'any(.[]; .action == "mcp.list" and .resource == "get-sum")' "$T/deny.jsonl"
check "deny: run.exit counts one refused call" jq -es \
	'[.[] | select(.action == "run.exit")][0].mcp.filter.refused == 1' "$T/deny.jsonl"
check "deny: run.exit counts echo's call, not get-sum's" jq -es \
	'[.[] | select(.action == "run.exit")][0].mcp.tools | has("echo") and (has("get-sum") | not)' \
	"$T/deny.jsonl"

out=$(client "$T/allow.yaml" "$T/allow.jsonl" "$T/seen/allow.txt" 2>"$T/allow.err")
rc=$?
echo "# mcp.tools.allow [ec*]: $out"
check_eq "allow [ec*]: the client ran to the end" 0 echo "$rc"
check_eq "allow [ec*]: tools/list is echo alone" '["echo"]' jq -c .tools <<<"$out"
check_eq "allow [ec*]: echo answers" "Echo: allowed tool" jq -r .echo <<<"$out"
check_eq "allow [ec*]: get-sum is refused" -32602 jq -r .second.code <<<"$out"
check "allow [ec*]: ... by the allow list" jq -e \
	'.second.message | test("mcp.tools.allow: no pattern matches")' <<<"$out"

# fail closed: mcp.tools is enforced on the relayed stdio; no relay, no run
check "control: without a relay a policy without mcp.tools runs" env WARDEN_STDIO_RELAY=0 \
	ip netns exec "$LAB_HOST_NS" "$W" run -q -p "$T/plain.yaml" -- /bin/true
env WARDEN_STDIO_RELAY=0 ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$T/nr.jsonl" \
	-p "$T/deny.yaml" -- /bin/sh -c "touch $T/seen/ran" >"$T/nr.out" 2>&1
rc=$?
check_eq "no relay with mcp.tools: refused (125)" 125 echo "$rc"
check "... saying why" grep -q "mcp.tools rules (or mcp.pin) are enforced on the relayed stdio" "$T/nr.out"
check_fails "... and the program never ran" test -e "$T/seen/ran"

lab_finish
