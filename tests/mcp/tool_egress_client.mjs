// tool_egress_client.mjs - drives tests/mcp/tool_fetch_server.mjs through the command line it
// is given (`warden run ... -- node tool_fetch_server.mjs URL...`) with the official SDK client,
// for tests/integration/run_mcp_tool_egress.sh: the start-up GETs' answers, then fetch_a and
// fetch_b of the tool-scoped URL and of the control URL, one call at a time, then fetch_a
// resolving the tool-scoped name and fetch_b connecting to that address (a synthetic one bound
// during fetch_a's call), then fetch_b and fetch_a of the tool-scoped URL through the gateway's
// proxy port. Prints one JSON line: each call's JSON-RPC id and its answer.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [scoped, control, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const ids = {};
let label = "";
const send = transport.send.bind(transport);
transport.send = (msg, opts) => {
	if (msg.method === "tools/call")
		ids[label] = msg.id;
	return send(msg, opts);
};
const timer = setTimeout(() => {
	console.error("tool_egress_client.mjs: no answer within 90 s");
	process.exit(3);
}, 90000);
const client = new Client({ name: "warden-tool-egress-test", version: "1.0.0" });
await client.connect(transport);
const out = {};
const call = async (key, name, args) => {
	label = key;
	const r = await client.callTool({ name, arguments: args });
	out[key] = r.content?.[0]?.text;
};
await call("startup", "startup", {});
out.startup = JSON.parse(out.startup);
await call("a_scoped", "fetch_a", { url: scoped });
await call("b_scoped", "fetch_b", { url: scoped });
await call("a_control", "fetch_a", { url: control });
await call("b_control", "fetch_b", { url: control });
await call("a_lookup", "fetch_a", { lookup: new URL(scoped).hostname });
await call("b_via", "fetch_b", { url: scoped, via: out.a_lookup });
await call("a_via", "fetch_a", { url: scoped, via: out.a_lookup });
await call("b_proxy", "fetch_b", { url: scoped, proxy: true });
await call("a_proxy", "fetch_a", { url: scoped, proxy: true });
console.log(JSON.stringify({ ids, ...out }));
clearTimeout(timer);
await client.close();
