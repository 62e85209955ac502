#!/usr/bin/env bash
# run_mcp_tool_egress.sh - mcp.tools.NAME.network (issue 31 item 1, per-tool egress): a small MCP
# server written for the test (tests/mcp/tool_fetch_server.mjs: tools fetch_a and fetch_b that
# GET a URL, and `startup`, what its GETs said when it started) runs under `warden run` in the
# lab, driven by the official SDK client (tests/mcp/tool_egress_client.mjs). The policy allows
# other.test only to fetch_a's calls and allowed.test (the control, network.allow) at every
# moment: other.test works in fetch_a's call, and is denied in fetch_b's call and at the
# server's start-up (outside any call), each with audit events naming the tool whose rule
# allowed it, or saying that only fetch_a's calls may and which tools were in flight;
# allowed.test works in all three. A synthetic address that fetch_a's call resolved is decided
# again when fetch_b's call connects to it (denied), and when fetch_a's does (allowed); the
# gateway's proxy port (the sandbox's HTTP_PROXY) decides by the same rules.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
lab_need_mcp
command -v jq >/dev/null || { echo "ERROR: jq is missing"; exit 1; }
lab_up

T=$(lab_tmpdir wd-run-mcp-tool-egress)
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW
cat >"$T/p.yaml" <<EOF
version: 1
filesystem:
  read: ["$MCP"]
network:
  allow:
    - allowed.test
mcp:
  tools:
    fetch_a:
      network: [other.test]
EOF
SCOPED=http://other.test/
CONTROL=http://allowed.test/

out=$("$NODE" "$MCP/tool_egress_client.mjs" "$SCOPED" "$CONTROL" \
	ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" -p "$T/p.yaml" -- \
	"$NODE" "$MCP/tool_fetch_server.mjs" "$SCOPED" "$CONTROL" 2>"$T/client.err")
rc=$?
echo "# client: $out"
[[ -s $T/client.err ]] && sed 's/^/# client stderr: /' "$T/client.err" | tail -5
check_eq "the MCP client ran to the end" 0 echo "$rc"
# the answers: the control name at every moment, the tool's name in its calls only
check_eq "control: allowed.test at start-up (network.allow)" "200 hello from allowed.test" \
	jq -r --arg u "$CONTROL" '.startup[$u]' <<<"$out"
check_eq "control: allowed.test in fetch_a's call" "200 hello from allowed.test" \
	jq -r .a_control <<<"$out"
check_eq "control: allowed.test in fetch_b's call" "200 hello from allowed.test" \
	jq -r .b_control <<<"$out"
check_eq "other.test in fetch_a's call (mcp.tools.fetch_a.network)" "200 hello from other.test" \
	jq -r .a_scoped <<<"$out"
check_eq "other.test in fetch_b's call: the name does not resolve" "error: ENOTFOUND" \
	jq -r .b_scoped <<<"$out"
check_eq "other.test at start-up, outside any call: the name does not resolve" "error: ENOTFOUND" \
	jq -r --arg u "$SCOPED" '.startup[$u]' <<<"$out"

RUN=$(jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A")
ID() { jq -c ".ids.$1" <<<"$out"; }
echo "# run $RUN, call ids: $(jq -c .ids <<<"$out")"
ev() { jq -e -c -s --arg run "$RUN" "[.[] | select(.run == \$run)] | $1" "$A"; }
RULE='mcp.tools.fetch_a.network: other.test:80,443'
check "fetch_a's DNS query of other.test: allowed by fetch_a's rule, carrying its call" ev \
	"any(.[]; .action == \"dns.query\" and .resource == \"other.test\" and .allowed and
	 .rule == \"$RULE\" and .mcp.tool == \"fetch_a\" and .mcp.call_id == $(ID a_scoped))"
check "fetch_a's connection to other.test: allowed by fetch_a's rule, carrying its call" ev \
	"any(.[]; .action == \"net.connect\" and .resource == \"other.test\" and .allowed and
	 .rule == \"$RULE\" and .mcp.call_id == $(ID a_scoped))"
check "control: allowed.test's events in fetch_a's call name network.allow's rule" ev \
	"any(.[]; .action == \"net.connect\" and .resource == \"allowed.test\" and .allowed and
	 .rule == \"allowed.test:80,443\" and .mcp.call_id == $(ID a_control))"
check "control: allowed.test connected in fetch_b's call, by network.allow's rule" ev \
	"any(.[]; .action == \"net.connect\" and .resource == \"allowed.test\" and .allowed and
	 .rule == \"allowed.test:80,443\" and .mcp.call_id == $(ID b_control))"
check "control: allowed.test connected at start-up, outside any call" ev \
	'any(.[]; .action == "net.connect" and .resource == "allowed.test" and .allowed and
	 (has("mcp") | not))'
check "fetch_b's DNS query of other.test: denied, only fetch_a's calls may, fetch_b in flight" ev \
	"any(.[]; .action == \"dns.query\" and .resource == \"other.test\" and (.allowed | not) and
	 .mcp.call_id == $(ID b_scoped) and
	 (.reason | contains(\"allowed only during calls of tool fetch_a\") and
	  contains(\"in flight: fetch_b\")) and (.denial_id | length > 0))"
check "the start-up DNS query of other.test: denied, no tool call in flight" ev \
	'any(.[]; .action == "dns.query" and .resource == "other.test" and (.allowed | not) and
	 (has("mcp") | not) and
	 (.reason | contains("allowed only during calls of tool fetch_a") and
	  contains("no tool call was in flight")))'
# (decisions only: a connection fetch_a's call opened may close after the call, its net.close
# event then without the call)
check_fails "no DNS answer or connection of other.test allowed outside fetch_a's calls" ev \
	"any(.[]; (.action == \"dns.query\" or .action == \"net.connect\") and
	 .resource == \"other.test\" and .allowed and
	 (.mcp.tool != \"fetch_a\" or (has(\"mcp\") | not)))"

# a synthetic address bound in fetch_a's call, dialled in fetch_b's: decided again at accept
check "fetch_a resolved other.test to a synthetic address" jq -e \
	'.a_lookup | test("^[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+$")' <<<"$out"
check "fetch_b's connection to that address: refused with a 403 saying only fetch_a's calls may" \
	jq -e '.b_via | startswith("403 ") and contains("allowed only during calls of tool fetch_a")' \
	<<<"$out"
check_eq "control: fetch_a's connection to the same address gets the page" \
	"200 hello from other.test" jq -r .a_via <<<"$out"
check "fetch_b's connection to it is a denied net.connect carrying fetch_b's call" ev \
	"any(.[]; .action == \"net.connect\" and .resource == \"other.test\" and (.allowed | not) and
	 .mcp.call_id == $(ID b_via) and (.reason | contains(\"in flight: fetch_b\")))"
check "fetch_a's connection to it is allowed by fetch_a's rule" ev \
	"any(.[]; .action == \"net.connect\" and .resource == \"other.test\" and .allowed and
	 .rule == \"$RULE\" and .mcp.call_id == $(ID a_via))"

# the proxy port (HTTP_PROXY in the sandbox): the same rules
check "fetch_b's absolute-form GET through the proxy port: a 403 saying only fetch_a's calls may" \
	jq -e '.b_proxy | startswith("403 ") and contains("allowed only during calls of tool fetch_a")' \
	<<<"$out"
check_eq "control: fetch_a's through the proxy port gets the page" "200 hello from other.test" \
	jq -r .a_proxy <<<"$out"
check "fetch_a's proxy request is allowed by fetch_a's rule, carrying its call" ev \
	"any(.[]; .action == \"net.connect\" and .resource == \"other.test\" and .allowed and
	 .proto == \"proxy-http\" and .rule == \"$RULE\" and .mcp.call_id == $(ID a_proxy))"

lab_finish
