#!/usr/bin/env bash
# mcp_server.sh - `warden mcp`, Warden as an MCP server, driven by the official MCP TypeScript
# SDK client (tests/mcp/warden_mcp.mjs) inside the lab: initialize, tools/list (schemas compiled
# by ajv), run_sandboxed with allowed and denied network (the denial listed), stdin, caps,
# concurrent calls, cancellation and kill_run (the run's processes gone, audited),
# list_audit_log, list_runs, set_egress_allowlist (removal at once; an addition pending until
# `warden allowlist approve` from another process, a refusal with `deny`; elicitation accepted
# and declined; `mcp.allowlist: locked`), bad arguments, and malformed frames with each JSON-RPC
# error code. The agent cannot widen its own sandbox (docs/mcp.md).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
MCP=$SRC/tests/mcp

lab_require_root
lab_need_run_tools
NODE=$(command -v node) || { echo "SKIP: node is not installed"; exit 77; }
if [[ ! -d $MCP/node_modules/@modelcontextprotocol/sdk || ! -d $MCP/node_modules/ajv ]]; then
	command -v npm >/dev/null || { echo "SKIP: npm is not installed"; exit 77; }
	(cd "$MCP" && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
		{ echo "SKIP: npm ci in tests/mcp failed (no registry access?)"; exit 77; }
fi
lab_up

T=$(lab_tmpdir wd-mcp-server)
lab_on_exit rm -rf "$T"
chmod 0755 "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW
# the server's state and the approval store live here, not in root's home
export XDG_STATE_HOME=$T/state
mkdir -p "$T/rw"
chown "$(lab_program_ids)" "$T/rw"
printf '%s\n' "version: 1" "filesystem:" "  read: [\"$LAB_CA\"]" "  write: [\"$T/rw\"]" \
	"network:" "  allow:" "    - {host: allowed.test, ports: [443]}" "limits:" "  timeout_s: 600" \
	>"$T/mcp.yaml"
{ cat "$T/mcp.yaml"; printf '%s\n' "mcp:" "  allowlist: locked"; } >"$T/locked.yaml"
printf '%s\n' "version: 1" "filesystem:" "  write: [\"$XDG_STATE_HOME\"]" >"$T/exposed.yaml"
export CA=$LAB_CA WARDEN=$W URL_OK=https://allowed.test/ URL_DENIED=https://other.test/
export URL_MULTI=https://multi.test/

# scenario NAME [POLICY]: the SDK client starts `ip netns exec LAB-HOST warden mcp ...`
scenario() {
	"$NODE" "$MCP/warden_mcp.mjs" "$1" ip netns exec "$LAB_HOST_NS" \
		"$W" mcp --audit-log "$A" -p "${2:-$T/mcp.yaml}" 2>>"$T/server.err"
}
teardowns_quiet() { lab_teardowns_quiet "$A"; }

echo "# initialize, tools/list, run_sandboxed, list_audit_log, bad arguments"
B=$(scenario basic)
echo "# basic: $(jq -c 'del(.bad)' <<<"$B")"
check "the client ran without an exception" jq -e '.error == null' <<<"$B"
check_eq "initialize: the server says who it is" "warden" jq -r .server.name <<<"$B"
check "initialize: capabilities tools" jq -e '.caps.tools != null' <<<"$B"
check_eq "tools/list lists the five tools" \
	"kill_run list_audit_log list_runs run_sandboxed set_egress_allowlist" \
	jq -r '.tools | sort | join(" ")' <<<"$B"
check "every inputSchema and outputSchema compiles (ajv)" jq -e '.schemas_valid == true' <<<"$B"
check "every tool has an outputSchema (the SDK checked structuredContent against it)" \
	jq -e '.with_output_schema | length == 5' <<<"$B"
check_eq "run_sandboxed: HTTPS to an allowed name answers" "hello from allowed.test" \
	jq -r '.allowed.stdout | rtrimstr("\n")' <<<"$B"
check "control: the allowed run exited 0 and has no denial" \
	jq -e '.allowed.exit == 0 and (.allowed.denials | length) == 0' <<<"$B"
check "run_sandboxed: HTTPS to a denied name fails" jq -e '.denied.exit != 0 and
	.denied.isError == false' <<<"$B"
check "its denial is listed: host, reason, denial id" jq -e '[.denied.denials[] |
	select(.host == "other.test" and .reason != "" and (.denial_id | length) > 0)] |
	length > 0' <<<"$B"
check_eq "stdin reaches the program" "fed on stdin" jq -r '.stdin.stdout | rtrimstr("\n")' <<<"$B"
check "a shell line: its exit status and stdout" jq -e '.shell.exit == 3 and
	.shell.stdout == "one\n"' <<<"$B"
check "stdout is capped at 256 KiB and says how much was cut" jq -e \
	'.big.len == 262144 and .big.cut == (600000 - 262144)' <<<"$B"
check "list_audit_log {run}: that run's start and exit" jq -e '.log_run |
	index("run.start") != null and index("run.exit") != null' <<<"$B"
check "list_audit_log {denied_only}: only denials, other.test among them" jq -e \
	'(.log_denied | length) > 0 and all(.log_denied[]; .[2] == false) and
	any(.log_denied[]; .[1] == "other.test")' <<<"$B"
check "list_audit_log {tail: 3}: three events" jq -e '.log_tail == 3' <<<"$B"
check "list_runs: none when idle" jq -e '.runs_idle == 0 and .runs_after == 0' <<<"$B"
for k in wrong_type unknown_field missing oversize_stdin too_many_words timeout_range \
	timeout_over_policy not_visible cwd_outside kill_unknown allow_bad_name allow_nothing log_tail_type; do
	check "bad arguments ($k): a tool error with the reason" \
		jq -e --arg k "$k" '.bad[$k].isError == true and (.bad[$k].text | length) > 10' <<<"$B"
done
check "timeout_s may not lengthen the run past the policy's limits.timeout_s" \
	jq -e '.bad.timeout_over_policy.text | test("limits.timeout_s")' <<<"$B"
check "control: a timeout_s under the policy's limit runs (the stdin call, 60 s)" \
	jq -e '.stdin.exit == 0' <<<"$B"
check "the unknown field is named" jq -e '.bad.unknown_field.text | test("evil")' <<<"$B"
check "a command not visible in the sandbox: Warden's reason" \
	jq -e '.bad.not_visible.text | test("did not start.*127")' <<<"$B"
check "an unknown tool: JSON-RPC -32602" jq -e '.unknown_tool == -32602' <<<"$B"
check "the runs are marked as started by warden mcp" jq -e -s \
	'[.[] | select(.action == "run.start")] | length > 0 and
	all(.[]; .reason | test("started by warden mcp"))' "$A"

echo "# concurrent calls, progress"
C=$(scenario concurrent)
echo "# concurrent: $C"
check "two runs were live at once (list_runs)" jq -e '.live == 2' <<<"$C"
check "their times overlap (each began before the other ended)" jq -e '.overlap == true' <<<"$C"
check "both exited 0" jq -e '.exits == [0, 0]' <<<"$C"
check "progress notifications came for the call with a progressToken" jq -e '.progress >= 1' <<<"$C"

echo "# cancellation, kill_run"
X=$(scenario cancel)
echo "# cancel: $X"
check "control: the run's sleep was running before the cancellation" jq -e '.before == true' <<<"$X"
check "the cancelled call was rejected by the client" jq -e '.call | test("rejected")' <<<"$X"
check "notifications/cancelled: the run's processes are gone" jq -e '.gone == true' <<<"$X"
check "the cancellation is audited for that run" jq -e '.audited == true' <<<"$X"
check "no run is left (list_runs)" jq -e '.runs_after == 0' <<<"$X"
check "control: kill_run's run was running" jq -e '.kill_before == true' <<<"$X"
check "kill_run: TERM sent, its call answered with killed" jq -e '.kill.isError == false and
	.killed.killed == true and .killed.exit != 0 and .kill_gone == true' <<<"$X"
check "mcp.cancel and mcp.kill are in the log" jq -e -s '(map(.action) | index("mcp.cancel"))
	!= null and (map(.action) | index("mcp.kill")) != null' "$A"

echo "# set_egress_allowlist: removal at once, addition waits for a person"
L=$(scenario allowlist)
echo "# allowlist: $L"
check "control: allowed.test answers before the removal" \
	jq -e '.ok_before.stdout == "hello from allowed.test\n"' <<<"$L"
check "removal: a new run no longer reaches allowed.test (denial listed)" jq -e \
	'.ok_after_remove.exit != 0 and any(.ok_after_remove.denials[]; .host == "allowed.test")' <<<"$L"
check "control: other.test is denied before any request" jq -e '.denied_before.exit != 0' <<<"$L"
check "the addition answers pending approval REQUEST-ID" jq -e \
	'.add.text | test("pending approval [0-9a-f]{32}")' <<<"$L"
req=$(jq -r .request <<<"$L")
check "the server's stderr announces the pending request, its id and how to decide" grep -qE \
	"^warden mcp: approval needed: the agent asks to add other\\.test to (run [0-9a-f]+|the allowlist of new runs) \\(request $req\\); a person decides: warden allowlist approve $req, or warden allowlist deny $req\$" \
	"$T/server.err"
check "... and the audit log has it (mcp.allowlist.request)" jq -e -s --arg q "$req" \
	'any(.[]; .action == "mcp.allowlist.request" and .resource == "other.test" and (.reason | contains($q)))' "$A"
check "while pending, other.test stays denied" jq -e '.denied_pending.exit != 0 and
	any(.denied_pending.denials[]; .host == "other.test")' <<<"$L"
check "warden allowlist pending lists the request" jq -e '.request as $id |
	.pending_list | contains($id)' <<<"$L"
check "warden allowlist approve (another process) exits 0" jq -e '.approve == 0' <<<"$L"
check "the approval is audited by the server" jq -e '.approved_audited == true' <<<"$L"
check "after approval, other.test answers in a new run" \
	jq -e '.denied_after_approve.stdout == "hello from other.test\n"' <<<"$L"
check "approving twice: no such pending request (exit 1)" jq -e '.approve_again == 1' <<<"$L"
check "warden allowlist deny exits 0, audited" jq -e '.deny == 0 and .denied_audited == true' <<<"$L"
check "a denied name stays out" jq -e '.multi_after_deny.exit != 0' <<<"$L"
check "the request, approval, refusal and removal are audit events" jq -e -s '
	[.[] | select(.type == "mcp") | .action] as $a |
	($a | index("mcp.allowlist.request")) != null and ($a | index("mcp.allowlist.approve")) != null
	and ($a | index("mcp.allowlist.deny")) != null and ($a | index("mcp.allowlist.remove")) != null' "$A"
check "the approval store is the user's own: 0700" \
	bash -c '[[ $(stat -c %a "$1/warden/approvals") == 700 ]]' _ "$XDG_STATE_HOME"
check "no request file is left behind" \
	bash -c '[[ -z $(ls -A "$1/warden/approvals") ]]' _ "$XDG_STATE_HOME"

echo "# elicitation"
E=$(scenario elicit-accept)
echo "# elicit-accept: $E"
check "control: other.test denied before" jq -e '.denied_before.exit != 0' <<<"$E"
check "over the bounds (11 long names and *.wild.test last): a tool error, nobody asked" \
	jq -e '.over.isError == true and (.over.text | test("at most 8")) and
	.asked_after_over == 0' <<<"$E"
check "the server asked the client's user (elicitation/create) naming other.test" \
	jq -e '.asked | length == 1 and (.[0] | test("1[.] other[.]test:80,443"))' <<<"$E"
check "list_audit_log: the runs of this session only (the basic scenario's are in the log)" \
	jq -e '(.log_runs | length) > 0 and (.log_runs - .my_runs | length) == 0' <<<"$E"
check "control: the log does hold other sessions' runs" \
	jq -e --slurp '[.[] | select(.type == "run") | .run] | unique | length > 2' "$A"
check "accepted: the call says approved" jq -e '.add.isError == false and
	(.add.text | test("approved"))' <<<"$E"
check "accepted: a new run reaches other.test" \
	jq -e '.after.stdout == "hello from other.test\n"' <<<"$E"
check "accepted: audited as network.ask's answers are (approved by MCP client (elicitation))" \
	jq -e -s 'any(.[]; .action == "mcp.allowlist.approve" and .resource == "other.test" and
	(.reason | contains("approved by MCP client (elicitation)")))' "$A"
E=$(scenario elicit-decline)
echo "# elicit-decline: $E"
check "declined: asked once, the call says refused" jq -e '(.asked | length == 1) and
	(.add.text | test("refused"))' <<<"$E"
check "declined: other.test stays denied" jq -e '.after.exit != 0 and
	any(.after.denials[]; .host == "other.test")' <<<"$E"
check "declined: audited with the same who (refused by MCP client (elicitation))" \
	jq -e -s 'any(.[]; .action == "mcp.allowlist.deny" and .resource == "other.test" and
	(.reason | contains("refused by MCP client (elicitation)")))' "$A"

echo "# mcp.allowlist: locked"
K=$(scenario locked "$T/locked.yaml")
echo "# locked: $K"
check "locked: the addition is a tool error naming the key" jq -e '.add.isError == true and
	(.add.text | test("mcp.allowlist: locked"))' <<<"$K"
check "locked: other.test stays denied" jq -e '.after.exit != 0' <<<"$K"
check "control: allowed.test answers under the locked policy" \
	jq -e '.ok.stdout == "hello from allowed.test\n"' <<<"$K"
check "locked: removal still applies" jq -e '.remove.isError == false' <<<"$K"
check "locked: the refusal is audited" jq -e -s \
	'any(.[]; .action == "mcp.allowlist.refuse" and .resource == "other.test")' "$A"

echo "# removal from a live run (warden allowlist RUN remove NAME)"
V=$(scenario live-remove)
echo "# live-remove: $V"
check "control: the live run reached allowed.test before the removal" \
	jq -e '.first == "ok"' <<<"$V"
check "the removal reached the live run" jq -e '.removed.live == true' <<<"$V"
check "after the removal the live run's fetches fail" jq -e '.last == "no"' <<<"$V"

echo "# the example configs' warden mcp entry (deploy/examples/mcp/.mcp.json) answers"
mkdir -p "$T/cfghome/projects"
chown -R "$(lab_program_ids)" "$T/cfghome" 2>/dev/null || true
mapfile -t CFG < <(jq -r '.mcpServers.warden.args[]' "$SRC/deploy/examples/mcp/.mcp.json")
check_eq "the .mcp.json entry is warden mcp -p agent.yaml" "mcp -p agent.yaml" \
	bash -c 'echo "$1 $2 $(basename "$3")"' _ "${CFG[@]}"
V=$(HOME=$T/cfghome XDG_STATE_HOME=$T/cfgstate "$NODE" "$MCP/warden_mcp.mjs" hello \
	ip netns exec "$LAB_HOST_NS" "$W" "${CFG[0]}" "${CFG[1]}" \
	"$SRC/deploy/examples/mcp/agent.yaml" 2>>"$T/server.err")
echo "# hello: $V"
check_eq "... it answers initialize as warden" "warden" jq -r .server <<<"$V"
check "... lists its five tools" jq -e '.tools | length == 5' <<<"$V"
check_eq "... and runs a command in its sandbox" "hello" \
	jq -r '.hello.stdout | rtrimstr("\n")' <<<"$V"

echo "# an addition to a live run: pending, then a person approves it at a terminal"
V=$(scenario live-add)
echo "# live-add: $V"
check "control: the live run was refused other.test before" jq -e '.first == "no"' <<<"$V"
check "the addition is a pending request" jq -e '.request | test("^[0-9a-f]{32}$")' <<<"$V"
check "warden allowlist approve exits 0" jq -e '.approve == 0' <<<"$V"
check "the approval reached the live run (audited)" jq -e '.approved_audited == true' <<<"$V"
check "after the approval the live run's fetches get through" jq -e '.last == "ok"' <<<"$V"

echo "# malformed frames (raw JSON-RPC lines)"
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}'
raw() {
	printf '%s\n' "$@" | in_host "$W" mcp --audit-log "$A" -p "$T/mcp.yaml" 2>>"$T/server.err"
}
R=$(raw '{"jsonrpc":"2.0","id":"early","method":"tools/list"}' "$INIT" \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"ping"}' \
	'this is not json' \
	'[{"jsonrpc":"2.0","id":3,"method":"ping"}]' \
	'{"jsonrpc":"1.0","id":4,"method":"ping"}' \
	'{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}' \
	'{"jsonrpc":"2.0","id":6,"method":"no/such"}' \
	'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}' \
	'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope"}}' \
	'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_runs","arguments":[1]}}' \
	'{"jsonrpc":"2.0","id":10,"method":"initialize","params":{}}' \
	'{"jsonrpc":"2.0","method":"no/such/notification"}' \
	'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}' \
	'{"jsonrpc":"2.0","id":11,"method":"ping","params":5}' \
	'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"list_runs","arguments":{"x":1}}}' \
	'{"jsonrpc":"2.0","id":13,"method":"ping"}')
sed 's/^/#   /' <<<"$R"
code() {
	jq -s -e --argjson id "$1" --argjson c "$2" \
		'any(.[]; .id == $id and .error.code == $c)' <<<"$R"
}
check "a request before initialize: -32600" code '"early"' -32600
check "control: ping answers {}" jq -s -e 'any(.[]; .id == 2 and .result == {})' <<<"$R"
check "not JSON: -32700 with id null" jq -s -e \
	'any(.[]; .id == null and .error.code == -32700)' <<<"$R"
check "a batch and a bad id: -32600 with id null" jq -s -e \
	'[.[] | select(.id == null and .error.code == -32600)] | length == 2' <<<"$R"
check "jsonrpc 1.0: -32600" code 4 -32600
check "an unknown method: -32601" code 6 -32601
check "tools/call without a name: -32602" code 7 -32602
check "tools/call of an unknown tool: -32602" code 8 -32602
check "tools/call with arguments not an object: -32602" code 9 -32602
check "initialize without protocolVersion: -32602" code 10 -32602
check "params not an object: -32600" code 11 -32600
check "an unknown argument: a tool error (isError)" jq -s -e \
	'any(.[]; .id == 12 and .result.isError == true)' <<<"$R"
check "the last ping is answered (the server went on after every bad frame)" \
	jq -s -e 'any(.[]; .id == 13 and .result == {})' <<<"$R"
check_eq "notifications get no answer: 15 answers for 15 requests and bad frames" 15 \
	jq -s length <<<"$R"
check "control: 2025-06-18 asked, 2025-06-18 answered" jq -s -e \
	'any(.[]; .id == 1 and .result.protocolVersion == "2025-06-18")' <<<"$R"
R2=$(raw '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{}}}')
check "an unknown protocol revision gets the newest (2025-11-25)" \
	jq -e '.result.protocolVersion == "2025-11-25"' <<<"$R2"

echo "# a policy that exposes the approval store is refused"
check_fails "warden mcp refuses a policy with a write grant holding its state" \
	bash -c 'printf "%s\n" "$3" | ip netns exec "$4" "$0" mcp --audit-log "$1" -p "$2" \
	2>>"$5" | grep -q result' "$W" "$A" "$T/exposed.yaml" "$INIT" "$LAB_HOST_NS" "$T/server.err"
# (the state folder also holds the audit signing key since the chain: whichever protection the
# check meets first is named)
check "its reason names what the grant would expose" grep -q \
	"warden mcp's state\|the approval store\|holds the audit signing key" "$T/server.err"
check "control: the same start with the test's policy answers" \
	bash -c 'printf "%s\n" "$3" | ip netns exec "$4" "$0" mcp --audit-log "$1" -p "$2" |
	grep -q result' "$W" "$A" "$T/mcp.yaml" "$INIT" "$LAB_HOST_NS"

echo "# as an unprivileged user: rootless runs, the user's own approval store"
if lab_user; then
	U=$T/user
	install -d -m 0700 -o "$LAB_USER_UID" -g "$LAB_USER_GID" "$U" "$U/rw"
	chmod 0711 "$T"
	printf '%s\n' "version: 1" "filesystem:" "  read: [\"$LAB_CA\"]" "  write: [\"$U/rw\"]" \
		"network:" "  allow:" "    - {host: allowed.test, ports: [443]}" >"$U/mcp.yaml"
	chown "$LAB_USER_UID" "$U/mcp.yaml"
	# the user's environment: its own home's state folder, nothing of root's
	as_u=(setpriv --reuid="$LAB_USER_UID" --regid="$LAB_USER_GID" --init-groups env -i
		HOME="$LAB_USER_HOME" USER="$LAB_USER" LOGNAME="$LAB_USER" XDG_STATE_HOME="$U/state"
		PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 WARDEN_GATEWAY_BIN="$GW")
	printf '#!/bin/sh\nexec %s "$@"\n' "$(printf '%q ' "${as_u[@]}" "$W")" >"$U/warden-as-user"
	chmod 0755 "$U/warden-as-user"
	UO=$(WARDEN=$U/warden-as-user "$NODE" "$MCP/warden_mcp.mjs" allowlist ip netns exec \
		"$LAB_HOST_NS" "${as_u[@]}" "$W" mcp --audit-log "$U/audit.jsonl" -p "$U/mcp.yaml" \
		2>>"$T/server.err")
	echo "# user allowlist: $(jq -c '{ok_before: .ok_before.exit, add: .add.text, approve,
		denied_after_approve: .denied_after_approve.exit, error}' <<<"$UO")"
	check "as the user: the runs are rootless" jq -e -s '[.[] | select(.action == "run.start")] |
		length > 0 and all(.[]; .mode == "rootless" and .uid == '"$LAB_USER_UID"')' "$U/audit.jsonl"
	check "as the user: an allowed name answers" \
		jq -e '.ok_before.stdout == "hello from allowed.test\n"' <<<"$UO"
	check "as the user: removal applies to the next run" jq -e '.ok_after_remove.exit != 0' <<<"$UO"
	check "as the user: an addition stays denied while pending" \
		jq -e '.denied_pending.exit != 0 and (.add.text | test("pending approval"))' <<<"$UO"
	check "as the user: the user's warden allowlist approve lets it through" \
		jq -e '.approve == 0 and .denied_after_approve.stdout == "hello from other.test\n"' <<<"$UO"
	check "as the user: deny keeps the name out" jq -e '.deny == 0 and .multi_after_deny.exit != 0' <<<"$UO"
	check "as the user: the store is the user's own" bash -c \
		'[[ $(stat -c %u:%a "$1/state/warden/approvals") == "$2:700" ]]' _ "$U" "$LAB_USER_UID"
	check "as the user: the teardowns finish" lab_wait 30 lab_teardowns_quiet "$U/audit.jsonl"
else
	check "an unprivileged test user can be made" false
fi

echo "# server stderr (last lines):"
sed 's/^/#   /' "$T/server.err" | tail -n 20
# (in the ASan+UBSan build a leak or an error of any server is reported there)
check_fails "no sanitizer report from any server" \
	grep -E 'AddressSanitizer|LeakSanitizer|runtime error:' "$T/server.err"
check "control: the same grep finds the refused policy's message there" \
	grep -E 'AddressSanitizer|LeakSanitizer|runtime error:|the policy is not valid' "$T/server.err"
check "the background teardowns finish" lab_wait 30 teardowns_quiet
check "warden gc --pool drains the pool of ready networks" in_host "$W" gc -q --pool
check "no server state is left" bash -c '[[ -z $(ls -A "$1/warden/mcp") ]]' _ "$XDG_STATE_HOME"
lab_finish
