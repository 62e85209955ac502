// warden_mcp.mjs - drives `warden mcp` with the official MCP TypeScript SDK client over stdio
// (tests/integration/mcp_server.sh). Usage: node warden_mcp.mjs SCENARIO COMMAND ARGS...
// SCENARIO: basic | concurrent | cancel | allowlist | elicit-accept | elicit-decline | locked |
// live-remove. Prints one JSON object with what it saw; the shell test checks it with jq.
// $WARDEN names the warden binary for `warden allowlist approve|deny|pending` (another process,
// as a person at a terminal would run it). $URL_OK and $URL_DENIED are the lab's URLs; $CA its CA.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import Ajv from "ajv";
import { execFileSync, spawnSync } from "node:child_process";

const [scenario, command, ...args] = process.argv.slice(2);
if (!scenario || !command) {
	console.error("usage: node warden_mcp.mjs SCENARIO COMMAND ARGS...");
	process.exit(2);
}
const CA = process.env.CA;
const WARDEN = process.env.WARDEN;
const out = { scenario };
const timer = setTimeout(() => {
	console.error("warden_mcp.mjs: not done within 240 s");
	console.log(JSON.stringify({ ...out, timeout: true }));
	process.exit(3);
}, 240000);

const elicit = scenario.startsWith("elicit-");
const client = new Client({ name: "warden-mcp-test", version: "1.0.0" },
	{ capabilities: elicit ? { elicitation: {} } : {} });
if (elicit) {
	out.asked = [];
	client.setRequestHandler(ElicitRequestSchema, async (req) => {
		out.asked.push(req.params.message);
		return scenario === "elicit-accept"
			? { action: "accept", content: { approve: true } }
			: { action: "decline" };
	});
}
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
await client.connect(transport);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const call = (name, a, opts) => client.callTool({ name, arguments: a }, undefined, opts);
const curl = (url) => call("run_sandboxed", {
	command: ["curl", "-fsS", "--max-time", "8", "--cacert", CA, url],
});
const brief = (r) => ({
	isError: !!r.isError,
	exit: r.structuredContent?.exit,
	stdout: r.structuredContent?.stdout,
	run: r.structuredContent?.run,
	denials: r.structuredContent?.denials,
	text: r.content?.[0]?.text,
});
// the audit log through the server, until @pred holds for some event (10 s at most)
async function audit_until(pred) {
	for (let i = 0; i < 50; i++) {
		const r = await call("list_audit_log", { tail: 200 });
		if (r.structuredContent.events.some(pred))
			return true;
		await sleep(200);
	}
	return false;
}
// the program itself (its whole command line), not the launcher that names it after `--`
function pgrep(pattern) {
	return spawnSync("pgrep", ["-f", pattern]).status === 0;
}

try {
	if (scenario === "basic") {
		out.server = client.getServerVersion();
		out.caps = client.getServerCapabilities();
		const list = await client.listTools();
		const ajv = new Ajv({ strict: false });
		out.tools = list.tools.map((t) => t.name);
		out.schemas_valid = list.tools.every((t) => {
			try {
				ajv.compile(t.inputSchema);
				if (t.outputSchema)
					ajv.compile(t.outputSchema);
				return t.inputSchema.type === "object";
			} catch (e) {
				console.error(`schema of ${t.name}: ${e}`);
				return false;
			}
		});
		out.with_output_schema = list.tools.filter((t) => t.outputSchema).map((t) => t.name);
		out.allowed = brief(await curl(process.env.URL_OK));
		out.denied = brief(await curl(process.env.URL_DENIED));
		out.stdin = brief(await call("run_sandboxed",
			{ command: ["cat"], stdin: "fed on stdin\n", timeout_s: 60 }));
		out.shell = brief(await call("run_sandboxed", { command: "echo one; echo two >&2; exit 3" }));
		const big = await call("run_sandboxed", { command: "head -c 600000 /dev/zero | tr '\\0' x" });
		out.big = { len: big.structuredContent.stdout.length,
			cut: big.structuredContent.stdout_cut_bytes };
		out.log_run = (await call("list_audit_log", { run: out.denied.run })).structuredContent.events
			.map((e) => e.action);
		out.log_denied = (await call("list_audit_log", { run: out.denied.run, denied_only: true }))
			.structuredContent.events.map((e) => [e.action, e.resource, e.allowed]);
		out.log_tail = (await call("list_audit_log", { tail: 3 })).structuredContent.events.length;
		out.runs_idle = (await call("list_runs", {})).structuredContent.runs.length;
		// bad arguments: each a tool error with its reason
		const bad = {
			wrong_type: ["run_sandboxed", { command: 42 }],
			unknown_field: ["run_sandboxed", { command: ["true"], evil: 1 }],
			missing: ["run_sandboxed", {}],
			oversize_stdin: ["run_sandboxed", { command: ["cat"], stdin: "x".repeat(1100000) }],
			too_many_words: ["run_sandboxed", { command: Array(300).fill("a") }],
			timeout_range: ["run_sandboxed", { command: ["true"], timeout_s: 0 }],
			timeout_over_policy: ["run_sandboxed", { command: ["true"], timeout_s: 601 }],
			not_visible: ["run_sandboxed", { command: ["/opt/warden-nowhere/prog"] }],
			cwd_outside: ["run_sandboxed", { command: ["pwd"], cwd: "/etc" }],
			kill_unknown: ["kill_run", { run: "000000000000" }],
			allow_bad_name: ["set_egress_allowlist", { add: ["not a name!"] }],
			allow_nothing: ["set_egress_allowlist", {}],
			log_tail_type: ["list_audit_log", { tail: "ten" }],
		};
		out.bad = {};
		for (const [k, [name, a]] of Object.entries(bad)) {
			const r = await call(name, a).catch((e) => ({ thrown: String(e) }));
			out.bad[k] = { isError: !!r.isError, text: r.content?.[0]?.text ?? r.thrown };
		}
		out.unknown_tool = await call("no_such_tool", {}).then(() => "answered",
			(e) => e.code);
		out.runs_after = (await call("list_runs", {})).structuredContent.runs.length;
	} else if (scenario === "concurrent") {
		// two runs that each print when they began and ended, and a progress-token call
		const cmd = "date +%s%N; sleep 3; date +%s%N";
		let progress = 0;
		const a = call("run_sandboxed", { command: cmd }, { onprogress: () => progress++ });
		const b = call("run_sandboxed", { command: cmd });
		await sleep(1500);
		out.live = (await call("list_runs", {})).structuredContent.runs.length;
		const [ra, rb] = await Promise.all([a, b]);
		const [a0, a1] = ra.structuredContent.stdout.trim().split("\n").map(BigInt);
		const [b0, b1] = rb.structuredContent.stdout.trim().split("\n").map(BigInt);
		out.overlap = a0 < b1 && b0 < a1;
		out.exits = [ra.structuredContent.exit, rb.structuredContent.exit];
		out.progress = progress;
	} else if (scenario === "cancel") {
		const ac = new AbortController();
		const p = call("run_sandboxed", { command: ["sleep", "371"] }, { signal: ac.signal })
			.then(() => "answered", (e) => `rejected: ${e.name}`);
		let runs = [];
		for (let i = 0; i < 50 && !runs.length; i++) {
			await sleep(200);
			runs = (await call("list_runs", {})).structuredContent.runs;
		}
		out.run = runs[0]?.run;
		for (let i = 0; i < 50 && !pgrep("^[^ ]*sleep 371$"); i++)
			await sleep(200);
		out.before = pgrep("^[^ ]*sleep 371$");
		ac.abort("test cancels");
		out.call = await p;
		let gone = false;
		for (let i = 0; i < 75 && !gone; i++) {
			await sleep(200);
			gone = !pgrep("^[^ ]*sleep 371$");
		}
		out.gone = gone;
		out.audited = await audit_until((e) => e.action === "mcp.cancel" && e.run === out.run);
		for (let i = 0; i < 50; i++) {
			out.runs_after = (await call("list_runs", {})).structuredContent.runs.length;
			if (!out.runs_after)
				break;
			await sleep(200);
		}
		// kill_run: the same for a run stopped through the tool; its call is answered
		const k = call("run_sandboxed", { command: ["sleep", "372"] });
		runs = [];
		for (let i = 0; i < 50 && !runs.length; i++) {
			await sleep(200);
			runs = (await call("list_runs", {})).structuredContent.runs;
		}
		for (let i = 0; i < 50 && !pgrep("^[^ ]*sleep 372$"); i++)
			await sleep(200);
		out.kill_before = pgrep("^[^ ]*sleep 372$");
		out.kill = brief(await call("kill_run", { run: runs[0]?.run }));
		const kr = await k;
		out.killed = { killed: kr.structuredContent?.killed, exit: kr.structuredContent?.exit };
		for (let i = 0; i < 75 && pgrep("^[^ ]*sleep 372$"); i++)
			await sleep(200);
		out.kill_gone = !pgrep("^[^ ]*sleep 372$");
	} else if (scenario === "allowlist") {
		out.ok_before = brief(await curl(process.env.URL_OK));
		out.remove = brief(await call("set_egress_allowlist", { remove: ["allowed.test"] }));
		out.ok_after_remove = brief(await curl(process.env.URL_OK));
		// an addition: pending until a person approves it at a terminal
		out.denied_before = brief(await curl(process.env.URL_DENIED));
		const add = await call("set_egress_allowlist", { add: ["other.test"] });
		out.add = brief(add);
		const id = add.structuredContent?.pending?.[0]?.request;
		out.request = id;
		out.denied_pending = brief(await curl(process.env.URL_DENIED));
		out.pending_list = execFileSync(WARDEN, ["allowlist", "pending"]).toString();
		out.approve = spawnSync(WARDEN, ["allowlist", "approve", id]).status;
		out.approved_audited = await audit_until((e) =>
			e.action === "mcp.allowlist.approve" && e.reason.includes(id));
		out.denied_after_approve = brief(await curl(process.env.URL_DENIED));
		out.approve_again = spawnSync(WARDEN, ["allowlist", "approve", id]).status;
		// a refusal at the terminal: the name stays out
		const add2 = await call("set_egress_allowlist", { add: ["multi.test"] });
		const id2 = add2.structuredContent?.pending?.[0]?.request;
		out.deny = spawnSync(WARDEN, ["allowlist", "deny", id2]).status;
		out.denied_audited = await audit_until((e) =>
			e.action === "mcp.allowlist.deny" && e.reason.includes(id2));
		out.multi_after_deny = brief(await curl(process.env.URL_MULTI));
	} else if (scenario === "elicit-accept" || scenario === "elicit-decline") {
		out.denied_before = brief(await curl(process.env.URL_DENIED));
		// issue 25: eleven names of ~200 bytes and a wildcard last (the old 2 KiB question
		// was cut before it, and an acceptance added it): over the bounds, refused whole,
		// nobody asked
		const label = "abcdefghij".repeat(6);
		const many = [...Array(11).keys()]
			.map((k) => `cdn-assets-${k}.${label}.${label}.${label}.test`);
		out.over = brief(await call("set_egress_allowlist", { add: [...many, "*.wild.test"] }));
		out.asked_after_over = out.asked.length;
		out.add = brief(await call("set_egress_allowlist", { add: ["other.test"] }));
		out.added = (await call("list_audit_log", { tail: 20 })).structuredContent.events
			.filter((e) => e.type === "mcp").map((e) => e.action);
		out.after = brief(await curl(process.env.URL_DENIED));
		// list_audit_log: only this session's runs (earlier scenarios' runs are in the log too)
		const log = (await call("list_audit_log", { tail: 10000 })).structuredContent;
		out.log_runs = [...new Set(log.events.map((e) => e.run).filter((r) => r))];
		out.my_runs = [out.denied_before.run, out.after.run];
	} else if (scenario === "locked") {
		out.add = brief(await call("set_egress_allowlist", { add: ["other.test"] }));
		out.after = brief(await curl(process.env.URL_DENIED));
		out.ok = brief(await curl(process.env.URL_OK));
		out.remove = brief(await call("set_egress_allowlist", { remove: ["allowed.test"] }));
	} else if (scenario === "live-remove") {
		// one live run fetches allowed.test every 0.3 s; removing the name for that run
		// (h/15live's `warden allowlist RUN remove NAME`) makes its later fetches fail
		const loop = `for i in $(seq 1 40); do if curl -fsS --max-time 2 --cacert ${CA} ` +
			`${process.env.URL_OK} >/dev/null 2>&1; then echo ok; else echo no; fi; sleep 0.3; done`;
		const p = call("run_sandboxed", { command: loop });
		let runs = [];
		for (let i = 0; i < 50 && !runs.length; i++) {
			await sleep(200);
			runs = (await call("list_runs", {})).structuredContent.runs;
		}
		await sleep(3000);
		const rm = await call("set_egress_allowlist",
			{ remove: ["allowed.test"], run: runs[0]?.run });
		out.remove = brief(rm);
		out.removed = rm.structuredContent?.removed?.[0];
		const r = await p;
		const lines = r.structuredContent.stdout.trim().split("\n");
		out.first = lines[0];
		out.last = lines[lines.length - 1];
	} else if (scenario === "hello") {
		// a server started exactly as an example config says: it answers, lists its tools
		// and runs a command in its sandbox
		out.server = client.getServerVersion()?.name;
		out.tools = (await client.listTools()).tools.map((t) => t.name);
		out.hello = brief(await call("run_sandboxed", { command: ["echo", "hello"] }));
	} else if (scenario === "live-add") {
		// one live run fetches other.test (not allowed) every 0.3 s; adding it for that run is
		// a request; once a person approves it at a terminal, the run's fetches get through
		const loop = `for i in $(seq 1 60); do if curl -fsS --max-time 2 --cacert ${CA} ` +
			`${process.env.URL_DENIED} >/dev/null 2>&1; then echo ok; else echo no; fi; sleep 0.3; done`;
		const p = call("run_sandboxed", { command: loop });
		let runs = [];
		for (let i = 0; i < 50 && !runs.length; i++) {
			await sleep(200);
			runs = (await call("list_runs", {})).structuredContent.runs;
		}
		await sleep(2000);
		const add = await call("set_egress_allowlist", { add: ["other.test"], run: runs[0]?.run });
		out.add = brief(add);
		const id = add.structuredContent?.pending?.[0]?.request;
		out.request = id;
		await sleep(2000);
		out.approve = spawnSync(WARDEN, ["allowlist", "approve", id]).status;
		out.approved_audited = await audit_until((e) =>
			e.action === "mcp.allowlist.approve" && e.reason.includes(id) &&
			e.reason.includes("live run"));
		const r = await p;
		const lines = r.structuredContent.stdout.trim().split("\n");
		out.first = lines[0];
		out.last = lines[lines.length - 1];
	}
} catch (e) {
	out.error = String(e?.stack ?? e);
}
console.log(JSON.stringify(out));
clearTimeout(timer);
await client.close();
