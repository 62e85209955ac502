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

lab_finish
