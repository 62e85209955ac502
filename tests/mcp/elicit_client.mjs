// elicit_client.mjs - drives tests/mcp/tool_fetch_server.mjs through the command line it is
// given (`warden run ... -- node tool_fetch_server.mjs`) with the official SDK client, for
// tests/integration/run_ask_elicit.sh (network.ask answered through MCP elicitation). MODE:
// "accept" (declares the elicitation capability, answers accept with allow: true), "decline"
// (declares it, answers decline), "wait" (declares it, never answers: it waits until the request
// is withdrawn, notifications/cancelled, and notes that), "none" (declares no capability).
// fetch_a GETs the control URL, then the asked one. Prints one JSON line: both answers, the
// elicitation requests it was sent (their ids and messages) and those withdrawn.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, asked, control, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const timer = setTimeout(() => {
	console.error("elicit_client.mjs: no answer within 90 s");
	process.exit(3);
}, 90000);
const capabilities = mode === "none" ? {} : { elicitation: {} };
const client = new Client({ name: "warden-elicit-test", version: "1.0.0" }, { capabilities });
const elicited = [], withdrawn = [];
if (mode !== "none")
	client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
		elicited.push({ id: extra.requestId, message: req.params.message,
			schema: req.params.requestedSchema });
		if (mode === "wait")
			return await new Promise((resolve) => {
				extra.signal.addEventListener("abort", () => {
					withdrawn.push(extra.requestId);
					resolve({ action: "cancel" });
				});
			});
		return mode === "accept" ? { action: "accept", content: { allow: true } }
			: { action: "decline" };
	});
await client.connect(transport);
const call = async (url) => {
	const r = await client.callTool({ name: "fetch_a", arguments: { url } });
	return r.content?.[0]?.text;
};
const out = { control: await call(control), asked: await call(asked), elicited, withdrawn };
console.log(JSON.stringify(out));
clearTimeout(timer);
await client.close();
