// attr_client.mjs - drives tests/mcp/fetch_server.mjs through the command line it is given
// (`warden run ... -- node fetch_server.mjs`) with the official SDK client: fetch_url of an
// allowed URL, of a denied one, then two calls at once (together: 2) of two more allowed URLs
// (other names: each call opens its own connection). Prints one JSON line:
// each call's JSON-RPC id (read off the messages the client sends) and its answer.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [allowed, denied, one, two, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const ids = [];
const send = transport.send.bind(transport);
transport.send = (msg, opts) => {
	if (msg.method === "tools/call")
		ids.push({ id: msg.id, url: msg.params.arguments.url, together: msg.params.arguments.together ?? 1 });
	return send(msg, opts);
};
const timer = setTimeout(() => {
	console.error("attr_client.mjs: no answer within 60 s");
	process.exit(3);
}, 60000);
const client = new Client({ name: "warden-attr-test", version: "1.0.0" });
await client.connect(transport);
const text = (r) => r.content?.[0]?.text;
const a = text(await client.callTool({ name: "fetch_url", arguments: { url: allowed } }));
const d = text(await client.callTool({ name: "fetch_url", arguments: { url: denied } }));
const both = await Promise.all([
	client.callTool({ name: "fetch_url", arguments: { url: one, together: 2 } }),
	client.callTool({ name: "fetch_url", arguments: { url: two, together: 2 } }),
]);
console.log(JSON.stringify({ ids, allowed: a, denied: d, both: both.map(text) }));
clearTimeout(timer);
await client.close();
