// client.mjs - an MCP client on the official TypeScript SDK that starts a server with the
// command line it is given (here: `warden run ... -- node server-everything`), then
// initializes, lists the tools and calls `echo`; prints one JSON line with what it saw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
	console.error("usage: node client.mjs COMMAND ARGS...");
	process.exit(2);
}
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "warden-mcp-test", version: "1.0.0" });
const timer = setTimeout(() => {
	console.error("client.mjs: no answer within 60 s");
	process.exit(3);
}, 60000);
await client.connect(transport);
const server = client.getServerVersion();
const tools = await client.listTools();
const echo = await client.callTool({ name: "echo", arguments: { message: "hello through warden" } });
const sum = await client.callTool({ name: tools.tools.some((t) => t.name === "get-sum") ? "get-sum" : "add",
	arguments: { a: 2, b: 3 } }).catch((e) => ({ content: [{ text: String(e) }] }));
console.log(JSON.stringify({
	server: server?.name,
	tools: tools.tools.map((t) => t.name),
	echo: echo.content?.[0]?.text,
	sum: sum.content?.[0]?.text,
}));
clearTimeout(timer);
await client.close();
