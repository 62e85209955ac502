#!/usr/bin/env bash
# init_mcp.sh - `warden init -- COMMAND` of a real MCP server (@modelcontextprotocol/server-
# everything from npm, tests/mcp), driven over stdio by the official SDK client while it is
# traced; then the server runs under the policy init wrote and the SDK client uses it for
# SESSION_S seconds (default 65: longer than the 60 s floor an MCP server's timeout had before,
# issue 27 item 1), a tool call every 3 s, and it is never killed: a program that spoke JSON-RPC
# on its stdio gets no timeout (the policy's comment says why), and memory and pids their
# floors.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
MCP=$SRC/tests/mcp
SERVER=$MCP/node_modules/@modelcontextprotocol/server-everything/dist/index.js

lab_require_root
lab_need_run_tools
command -v jq >/dev/null || { echo "FAIL: jq is missing"; exit 1; }
NODE=$(command -v node) || { echo "SKIP: node is not installed"; exit 77; }
if [[ ! -e $SERVER || ! -d $MCP/node_modules/@modelcontextprotocol/sdk ]]; then
	command -v npm >/dev/null || { echo "SKIP: npm is not installed"; exit 77; }
	(cd "$MCP" && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
		{ echo "SKIP: npm ci in tests/mcp failed (no registry access?)"; exit 77; }
fi
lab_up

T=$(lab_tmpdir wd-init-mcp) || exit 1
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
chmod 0755 "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
SESSION_S=${SESSION_S:-65}

# the trace: the SDK client starts `warden init -- node server stdio` in the lab and talks MCP
# to it (initialize, tools/list, two calls), then closes its stdin; init writes the policy
trace_it() {
	(cd "$T" && XDG_STATE_HOME=$T/state "$NODE" "$MCP/client.mjs" ip netns exec \
		"$LAB_HOST_NS" "$W" init -o "$T/mcp.yaml" -- "$NODE" "$SERVER" stdio \
		2>"$T/init.err")
}
out=$(trace_it)
rc=$?
echo "# trace: $out"
check_eq "the SDK client talked to the traced server" "0 Echo: hello through warden" \
	echo "$rc $(jq -r .echo <<<"$out")"
check "warden init wrote the policy" test -s "$T/mcp.yaml"
check "... and the trace says it spoke JSON-RPC on its stdio" grep -q \
	'"stdio_jsonrpc":true' "$(sed -n 's/^warden: trace written to //p' "$T/init.err")"
check_fails "the policy has no timeout (an MCP server lives as long as its client)" \
	grep -Eq '^ *timeout_s:' "$T/mcp.yaml"
check "... and says why in a comment" grep -q "# timeout_s: none. It spoke JSON-RPC" "$T/mcp.yaml"
check "memory has its floor or more, the peak in the comment" grep -Eq \
	'^  memory_mb: [0-9]+ +# peak [0-9]+ MiB seen.*at least 256' "$T/mcp.yaml"
check "pids have their floor or more" grep -Eq '^  pids: [0-9]+ +#.*at least 64' "$T/mcp.yaml"
check "the policy passes warden policy check" "$W" policy check "$T/mcp.yaml"
# the tools the server listed during the trace are pinned beside the policy (issue 31 item 3)
TRACE_FILE=$(sed -n 's/^warden: trace written to //p' "$T/init.err")
check "the trace recorded the tools the server listed" test "$(grep -c '"type":"tool"' \
	"$TRACE_FILE")" -ge 5
check "init wrote the pin file beside the policy, with those tools" jq -e --argjson n \
	"$(grep -c '"type":"tool"' "$TRACE_FILE")" '.version == 1 and (.tools | length) == $n and
	(.tools.echo.sha256 | startswith("sha256:"))' "$T/mcp.pin.json"
check "... and the policy pins them (mcp.pin)" grep -q '^  pin: "mcp.pin.json"$' "$T/mcp.yaml"
check "... and warden mcp pin finds every tool as pinned" bash -c '"$@" >"$0" 2>&1 &&
	! grep -Eq "^[+~-] " "$0" && grep -q "^= echo" "$0"' "$T/pincheck.out" ip netns exec \
	"$LAB_HOST_NS" env XDG_STATE_HOME="$T/state" "$W" mcp pin -p "$T/mcp.yaml"
check_fails "init -- COMMAND prints no 'next: warden init' line" grep -q "next: warden init" "$T/init.err"
sed 's/^/    | /' "$T/mcp.yaml"

# the run under that policy: the client uses the server for SESSION_S seconds
session() {
	SESSION_S=$SESSION_S "$NODE" "$MCP/session.mjs" ip netns exec "$LAB_HOST_NS" \
		"$W" run -q --audit-log "$A" -p "$T/mcp.yaml" 2>"$T/session.err"
}
out=$(session)
rc=$?
echo "# session: $out"
check_eq "the server answered every call for ${SESSION_S} s under the policy init wrote" \
	"0 null" echo "$rc $(jq -c .error <<<"$out")"
check "... calls spread over at least ${SESSION_S} s" jq -e --argjson s "$SESSION_S" \
	'.seconds >= $s and .ok == .calls and .calls >= 3' <<<"$out"
check "... and the run ended once, when the client left, with no limit.time event" jq -e -s \
	'([.[] | select(.action == "run.exit")] | length == 1) and
	 ([.[] | select(.action == "limit.time")] | length == 0)' "$A"
check "... every pinned tool was listed (none hidden)" jq -e --slurpfile pin "$T/mcp.pin.json" \
	'(.tools | sort) == ($pin[0].tools | keys | sort)' <<<"$out"

# the pin holds: a pinned definition that is not the server's (as after a rug pull) hides echo
jq '.tools.echo.sha256 = "sha256:" + ("0" * 64) | .tools.echo.def.description = "was other"' \
	"$T/mcp.pin.json" >"$T/pin.new" && mv "$T/pin.new" "$T/mcp.pin.json"
out=$(SESSION_S=0 session)
echo "# session with echo changed since pinned: $out"
check "with echo's pin changed, the server's echo is hidden and its call refused" jq -e \
	'(.tools | index("echo")) == null and (.tools | length) > 0 and .ok == 0' <<<"$out"
check "... audited: mcp.list says echo changed since it was pinned" jq -e -s \
	'any(.[]; .action == "mcp.list" and .resource == "echo" and
	     (.reason | test("changed since it was pinned")))' "$A"

lab_finish
