#!/usr/bin/env bash
# run_mcp.sh - a real MCP server (@modelcontextprotocol/server-everything from npm) run with
# `warden run` inside the lab, driven over stdio by a client on the official MCP TypeScript SDK
# (tests/mcp/client.mjs): initialize, list tools, call tools; and the sandbox holds (the server
# sees no secret from the environment and reaches no network).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
MCP=$SRC/tests/mcp
SERVER=$MCP/node_modules/@modelcontextprotocol/server-everything/dist/index.js

lab_require_root
lab_need_run_tools
lab_need_mcp
lab_up

T=$(lab_tmpdir wd-run-mcp)
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW
cat >"$T/mcp.yaml" <<EOF
version: 1
command: ["$NODE", "$SERVER", "stdio"]
filesystem:
  read: ["$MCP"]
network:
  allow:
    - allowed.test
EOF

# the client starts `ip netns exec LAB-HOST warden run ... -- node server stdio`
mcp() {
	AWS_SECRET_ACCESS_KEY=hunter2 "$NODE" "$MCP/client.mjs" ip netns exec "$LAB_HOST_NS" \
		"$W" run -q --audit-log "$A" -p "$T/mcp.yaml" "$@"
}
out=$(mcp 2>"$T/client.err")
rc=$?
echo "# client: $out"
check_eq "the MCP client ran to the end" 0 echo "$rc"
check_eq "initialize: the server says who it is" "mcp-servers/everything" \
	jq -r .server <<<"$out"
check "tools/list lists echo" jq -e '.tools | index("echo")' <<<"$out"
check_eq "tools/call echo answers through the sandbox" "Echo: hello through warden" \
	jq -r .echo <<<"$out"
check_eq "tools/call get-sum answers" "The sum of 2 and 3 is 5." jq -r .sum <<<"$out"
check "the run was audited with the server's command" jq -e -s '
	[.[] | select(.action == "run.start" and (.command | index("stdio")))] | length == 1' "$A"
check "the run ended cleanly when the client closed stdin" jq -e -s '
	[.[] | select(.action == "run.exit")] | length == 1' "$A"
check "the gateway's events belong to the run" jq -e -s '
	(map(select(.action == "run.start"))[0].run) as $id |
	all(.[]; .run == $id)' "$A"

# the same server sees only what the sandbox lets it see
cat >"$T/probe.mjs" <<'EOF'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const [command, ...args] = process.argv.slice(2);
const client = new Client({ name: "probe", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command, args, env: process.env }));
const env = await client.callTool({ name: "get-env", arguments: {} });
console.log(env.content?.[0]?.text ?? "");
await client.close();
EOF
cp "$T/probe.mjs" "$MCP/.probe-$LAB_NAME.mjs"
lab_on_exit rm -f "$MCP/.probe-$LAB_NAME.mjs"
envout=$(AWS_SECRET_ACCESS_KEY=hunter2 "$NODE" "$MCP/.probe-$LAB_NAME.mjs" ip netns exec \
	"$LAB_HOST_NS" "$W" run -q --audit-log "$A" -p "$T/mcp.yaml" 2>/dev/null)
check "the server's environment was readable over MCP" grep -q PATH <<<"$envout"
check_fails "the parent's AWS_SECRET_ACCESS_KEY is not in the server's environment" \
	grep -q hunter2 <<<"$envout"
check "the server was told to use the gateway as its proxy" grep -q 15080 <<<"$envout"
# the detached teardowns are done (no run's state owned by a live process, no teardown child
# refilling the pool), then the pool of ready networks is drained
teardowns_quiet() { lab_teardowns_quiet "$A"; }
check "the background teardowns finish" lab_wait 20 teardowns_quiet
check "warden gc --pool drains the pool of ready networks" \
	ip netns exec "$LAB_HOST_NS" "$W" gc -q --pool
check "no sandbox interface is left" lab_wait 5 lab_no_match '^wd-' in_host ip -br link
check "control: the same listing shows lab-host's veth-wan" lab_match '^veth-wan' in_host ip -br link

lab_finish
