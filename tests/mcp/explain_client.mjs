// explain_client.mjs - drives tests/mcp/fetch_server.mjs through the command line it is given
// (`warden run ... -- node fetch_server.mjs`) with the official SDK client for
// mcp.explain_denials (tests/integration/run_mcp_explain.sh): fetch_url of an allowed URL, then
// of a denied name and of a denied address (no name), and prints one JSON line with every text item of each result.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [allowed, denied, address, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const timer = setTimeout(() => {
	console.error("explain_client.mjs: no answer within 60 s");
	process.exit(3);
}, 60000);
const client = new Client({ name: "warden-explain-test", version: "1.0.0" });
await client.connect(transport);
const texts = (r) => (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text);
const a = texts(await client.callTool({ name: "fetch_url", arguments: { url: allowed } }));
const d = texts(await client.callTool({ name: "fetch_url", arguments: { url: denied } }));
const l = texts(await client.callTool({ name: "fetch_url", arguments: { url: address } }));
console.log(JSON.stringify({ allowed: a, denied: d, address: l }));
clearTimeout(timer);
await client.close();
