// tool_fetch_server.mjs - a small MCP server for tests/integration/run_mcp_tool_egress.sh
// (mcp.tools.NAME.network), on the official TypeScript SDK over stdio. Two tools that do the
// same thing, `fetch_a` and `fetch_b` {url, via?, lookup?, proxy?}: an HTTP GET of url with
// node:http (via: connect to that address instead of resolving the URL's host, which still goes
// in the Host header; proxy: an absolute-form GET to the sandbox's HTTP_PROXY, the gateway's
// proxy port; lookup: only resolve that name and answer its address), each on a connection
// of its own (no keep-alive pool: a connection opened in one call would serve the next). A
// third, `startup`, answers what the GETs of the URLs given on the command line said when the
// server started, before it took any request (a server's own start-up traffic, outside any
// tool call).
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import http from "node:http";
import dns from "node:dns/promises";

// GET @url (via @via when given; through the sandbox's HTTP_PROXY with @proxy): "STATUS BODY",
// or "error: CODE"
const get = (url, via, proxy) => new Promise((resolve) => {
	const u = new URL(url);
	const p = proxy ? new URL(process.env.HTTP_PROXY) : null;
	const req = http.get({
		host: p?.hostname ?? via ?? u.hostname, port: p?.port ?? (u.port || 80),
		path: p ? u.href : u.pathname,
		headers: { host: u.host }, timeout: 8000,
		agent: false, // a connection of its own: node keeps connections alive across calls
	}, (res) => {
		let body = "";
		res.setEncoding("utf8");
		res.on("data", (c) => { body += c; });
		res.on("end", () => resolve(`${res.statusCode} ${body.trim()}`));
	});
	req.on("timeout", () => req.destroy(new Error("timeout")));
	req.on("error", (e) => resolve(`error: ${e.code ?? e.message}`));
});

const startup = {};
for (const url of process.argv.slice(2))
	startup[url] = await get(url);

const server = new Server({ name: "warden-tool-egress-test", version: "1.0.0" },
	{ capabilities: { tools: {} } });
const schema = {
	type: "object",
	properties: {
		url: { type: "string" }, via: { type: "string" }, lookup: { type: "string" },
		proxy: { type: "boolean" },
	},
};
server.setRequestHandler(ListToolsRequestSchema, async () => ({
	tools: [
		{ name: "fetch_a", description: "GET a URL (tool A)", inputSchema: schema },
		{ name: "fetch_b", description: "GET a URL (tool B)", inputSchema: schema },
		{ name: "startup", description: "What the start-up GETs said",
		  inputSchema: { type: "object", properties: {} } },
	],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
	const { name } = req.params;
	const { url, via, lookup, proxy } = req.params.arguments ?? {};
	let text;
	if (name === "startup") {
		text = JSON.stringify(startup);
	} else if (name !== "fetch_a" && name !== "fetch_b") {
		return { isError: true, content: [{ type: "text", text: `no tool ${name}` }] };
	} else if (lookup) {
		try {
			text = (await dns.lookup(lookup, { family: 4 })).address;
		} catch (e) {
			text = `error: ${e.code ?? e.message}`;
		}
	} else {
		text = await get(url, via, proxy);
	}
	return { content: [{ type: "text", text }] };
});
await server.connect(new StdioServerTransport());
