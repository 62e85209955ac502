// examples_client.mjs - an MCP client on the official TypeScript SDK for the servers of
// deploy/examples/mcp (tests/integration/run_mcp_examples.sh): starts the server with the
// command line it is given (`warden run -q -p COPY`, as a client config says), lists the
// tools and calls one; prints one JSON line with what it saw.
//   node examples_client.mjs filesystem FILE COMMAND ARGS...   read_text_file of FILE, write_file beside it
//   node examples_client.mjs memory COMMAND ARGS...            create_entities, then read_graph
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [mode, ...rest] = process.argv.slice(2);
const file = mode === "filesystem" ? rest.shift() : undefined;
const [command, ...args] = rest;
if (!command || !["filesystem", "memory"].includes(mode)) {
	console.error("usage: node examples_client.mjs filesystem FILE|memory COMMAND ARGS...");
	process.exit(2);
}
const timer = setTimeout(() => {
	console.error("examples_client.mjs: no answer within 60 s");
	process.exit(3);
}, 60000);
const text = (r) => r.content?.map((c) => c.text ?? "").join("\n") ?? "";
const client = new Client({ name: "warden-examples-test", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" }));
const tools = (await client.listTools()).tools.map((t) => t.name);
const out = { server: client.getServerVersion()?.name, tools };
if (mode === "filesystem") {
	const read = await client.callTool({ name: "read_text_file", arguments: { path: file } });
	out.read = text(read);
	out.readError = read.isError === true;
	const wrote = await client.callTool({ name: "write_file",
		arguments: { path: file + ".new", content: "written through warden\n" } });
	out.writeError = wrote.isError === true;
	const outside = await client.callTool({ name: "read_text_file", arguments: { path: "/etc/passwd" } });
	out.outsideError = outside.isError === true;
} else {
	const made = await client.callTool({ name: "create_entities", arguments: { entities: [
		{ name: "warden", entityType: "tool", observations: ["runs MCP servers in a sandbox"] }] } });
	out.createError = made.isError === true;
	const graph = await client.callTool({ name: "read_graph", arguments: {} });
	out.graph = text(graph);
}
console.log(JSON.stringify(out));
clearTimeout(timer);
await client.close();
