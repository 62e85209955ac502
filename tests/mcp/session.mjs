// session.mjs - an MCP client on the official TypeScript SDK that keeps one server in use for a
// while (tests/integration/init_mcp.sh): it starts the server with the command line it is given
// (here: `warden run -p POLICY`), then calls `echo` every SESSION_EVERY_MS (default 3000) until
// SESSION_S seconds (default 30) have passed, and once more at the end; prints one JSON line:
// {"tools":[names the server listed],"calls":N,"ok":N,"seconds":S,"error":null or what failed}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const seconds = Number(process.env.SESSION_S || 30);
const every = Number(process.env.SESSION_EVERY_MS || 3000);
const [command, ...args] = process.argv.slice(2);
if (!command) {
	console.error("usage: node session.mjs COMMAND ARGS...");
	process.exit(2);
}
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "warden-mcp-session", version: "1.0.0" });
const t0 = Date.now();
let calls = 0, ok = 0, error = null;
await client.connect(transport);
let tools = [];
try {
	tools = (await client.listTools()).tools.map((t) => t.name);
} catch (e) {
	error = `tools/list: ${e}`;
}
while (!error) {
	const last = Date.now() - t0 >= seconds * 1000;
	calls++;
	try {
		const r = await client.callTool({ name: "echo", arguments: { message: `call ${calls}` } },
			undefined, { timeout: 15000 });
		if (r.content?.[0]?.text !== `Echo: call ${calls}`) {
			error = `call ${calls}: unexpected answer ${JSON.stringify(r.content)}`;
			break;
		}
		ok++;
	} catch (e) {
		error = `call ${calls} after ${((Date.now() - t0) / 1000).toFixed(1)} s: ${e}`;
		break;
	}
	if (last)
		break;
	await new Promise((res) => setTimeout(res, every));
}
console.log(JSON.stringify({ tools, calls, ok, seconds: Math.floor((Date.now() - t0) / 1000), error }));
await client.close().catch(() => {});
process.exit(error ? 1 : 0);
