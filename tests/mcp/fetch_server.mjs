// fetch_server.mjs - a small MCP server for tests/integration/run_mcp_attr.sh, on the official
// TypeScript SDK over stdio: one tool, `fetch_url` {url, together?}, that fetches the URL with
// node's fetch and answers with the status and the body (or the error). `together: N` makes
// the call wait until N calls are in flight here before it fetches, and again until all N have
// fetched before it answers, so that every fetch of the N happens while all N are in flight.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "warden-fetch-test", version: "1.0.0" },
	{ capabilities: { tools: {} } });
// the calls of one `together` group (calls without it do not count)
let started = 0, fetched = 0;
const until = async (cond) => {
	for (let i = 0; i < 1000 && !cond(); i++)
		await new Promise((r) => setTimeout(r, 10));
};

server.setRequestHandler(ListToolsRequestSchema, async () => ({
	tools: [{
		name: "fetch_url",
		description: "Fetch a URL and return its status and body",
		inputSchema: {
			type: "object",
			properties: { url: { type: "string" }, together: { type: "integer" } },
			required: ["url"],
		},
	}],
}));

server.setRequestHandler(CallToolRequestSchema, async (req) => {
	if (req.params.name !== "fetch_url")
		return { isError: true, content: [{ type: "text", text: `no tool ${req.params.name}` }] };
	const { url, together = 1 } = req.params.arguments ?? {};
	const group = together > 1;
	if (group) {
		started++;
		await until(() => started >= together);
	}
	let text;
	try {
		const res = await fetch(url, { signal: AbortSignal.timeout(8000) });
		text = `${res.status} ${(await res.text()).trim()}`;
	} catch (e) {
		text = `error: ${e.cause?.code ?? e.message}`;
	}
	if (group) {
		fetched++;
		await until(() => fetched >= together);
	}
	return { content: [{ type: "text", text }] };
});

await server.connect(new StdioServerTransport());
