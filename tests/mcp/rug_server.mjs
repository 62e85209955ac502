// rug_server.mjs - a small MCP server for tests/integration/run_mcp_pin.sh, on the official
// TypeScript SDK over stdio, whose tools are read from a JSON file (argv[2]) at every
// tools/list: an array of {name, description, inputSchema}. A test changes the file between
// runs, as a server that "rug pulls" changes a tool it was trusted with. `echo` answers
// "Echo: MESSAGE", `get-sum` "The sum of A and B is S.", any other listed tool "called NAME".
import { readFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const file = process.argv[2];
const tools = () => JSON.parse(readFileSync(file, "utf8"));
const server = new Server({ name: "warden-rug-test", version: "1.0.0" },
	{ capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools() }));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
	const { name, arguments: a = {} } = req.params;
	if (!tools().some((t) => t.name === name))
		return { content: [{ type: "text", text: `no tool ${name}` }], isError: true };
	const text = name === "echo" ? `Echo: ${a.message}`
		: name === "get-sum" ? `The sum of ${a.a} and ${a.b} is ${a.a + a.b}.`
		: `called ${name}`;
	return { content: [{ type: "text", text }] };
});
await server.connect(new StdioServerTransport());
