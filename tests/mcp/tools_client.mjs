// tools_client.mjs - an MCP client on the official TypeScript SDK for mcp.tools
// (tests/integration/run_mcp_tools.sh): starts the server with the command line it is given,
// lists the tools, calls `echo` and then the tool named by WARDEN_TEST_TOOL (default get-sum)
// whether or not the list had it, and prints one JSON line: the tool names, echo's text, and
// the second call's text or its JSON-RPC error (code and message).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
	console.error("usage: node tools_client.mjs COMMAND ARGS...");
	process.exit(2);
}
const other = process.env.WARDEN_TEST_TOOL || "get-sum";
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "warden-mcp-tools-test", version: "1.0.0" });
const timer = setTimeout(() => {
	console.error("tools_client.mjs: no answer within 60 s");
	process.exit(3);
}, 60000);
await client.connect(transport);
const tools = await client.listTools();
const echo = await client.callTool({ name: "echo", arguments: { message: "allowed tool" } });
let second;
try {
	const r = await client.callTool({ name: other, arguments: { a: 2, b: 3 } });
	second = { text: r.content?.[0]?.text, isError: r.isError === true };
} catch (e) {
	second = { code: e.code, message: String(e.message) };
}
console.log(JSON.stringify({
	tools: tools.tools.map((t) => t.name),
	echo: echo.content?.[0]?.text,
	second,
}));
clearTimeout(timer);
await client.close();
