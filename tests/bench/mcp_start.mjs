// mcp_start.mjs - the MCP server start time for tests/bench/run (workload mcp): N times, the
// official TypeScript SDK client (tests/mcp's node_modules, MCP_DIR) starts the given command
// over stdio and waits until `initialize` answers (Client.connect), then closes it and waits
// for the process to end. Prints one JSON line: {"runs", "median_ms", "min_ms", "max_ms"}.
// Usage: MCP_DIR=tests/mcp node mcp_start.mjs N COMMAND ARGS...
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const [n, command, ...args] = process.argv.slice(2);
const runs = Number(n);
if (!Number.isInteger(runs) || runs < 1 || !command || !process.env.MCP_DIR) {
	console.error("usage: MCP_DIR=DIR node mcp_start.mjs N COMMAND ARGS...");
	process.exit(2);
}
const req = createRequire(`${process.env.MCP_DIR}/`);
const load = (m) => import(pathToFileURL(req.resolve(m)).href);
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");

const timer = setTimeout(() => {
	console.error("mcp_start.mjs: no answer within 600 s");
	process.exit(3);
}, 600000);
const ms = [];
for (let i = 0; i < runs + 1; i++) {
	const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" });
	const client = new Client({ name: "warden-bench", version: "1.0.0" });
	const closed = new Promise((resolve) => { client.onclose = resolve; });
	const t0 = performance.now();
	await client.connect(transport);
	const t1 = performance.now();
	if (!client.getServerVersion()?.name) {
		console.error("mcp_start.mjs: initialize answered without a server name");
		process.exit(1);
	}
	await client.close();
	await closed;
	if (i > 0) ms.push(t1 - t0); // the first start warms the page cache
}
clearTimeout(timer);
ms.sort((a, b) => a - b);
const r = (v) => Math.round(v * 100) / 100;
console.log(JSON.stringify({ runs, median_ms: r(ms[Math.floor(ms.length / 2)]),
	min_ms: r(ms[0]), max_ms: r(ms[ms.length - 1]) }));
