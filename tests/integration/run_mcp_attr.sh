#!/usr/bin/env bash
# run_mcp_attr.sh - issue 15 item 1: `warden run`'s stdio relay and MCP tool-call attribution.
# A small MCP server written for the test (tests/mcp/fetch_server.mjs, tool `fetch_url`) runs
# under `warden run` in the lab, driven by the official SDK client (tests/mcp/attr_client.mjs):
# the audit events of the allowed fetch and of the denied one carry that call's tool and id,
# two concurrent calls appear with in_flight 2, run.exit counts calls and denials per tool,
# `warden logs --tool` filters. Then the relay itself: 10 MiB of random bytes both ways
# through `cat` byte-identical (and attribution off, said once), framed JSON-RPC unchanged, EOF
# in each direction, the exit status, a terminal keeps direct inheritance.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
MCP=$SRC/tests/mcp

lab_require_root
lab_need_run_tools
lab_need_mcp
for tool in jq python3 sha256sum; do
	command -v "$tool" >/dev/null || { echo "ERROR: $tool is missing"; exit 1; }
done
lab_up

T=$(lab_tmpdir wd-run-mcp-attr)
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW
cat >"$T/fetch.yaml" <<EOF
version: 1
command: ["$NODE", "$MCP/fetch_server.mjs"]
filesystem:
  read: ["$MCP"]
network:
  allow:
    - allowed.test
    - other.test
    - wild.test
EOF
cat >"$T/cat.yaml" <<EOF
version: 1
EOF
in_run() { ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" "$@"; }

# --- attribution: the SDK client drives the test server through warden run ---------------
out=$("$NODE" "$MCP/attr_client.mjs" http://allowed.test/ http://denied.test/ \
	http://other.test/ http://wild.test/ \
	ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" -p "$T/fetch.yaml" 2>"$T/client.err")
rc=$?
echo "# client: $out"
[[ -s $T/client.err ]] && sed 's/^/# client stderr: /' "$T/client.err" | tail -5
check_eq "the MCP client ran to the end" 0 echo "$rc"
check_eq "control: the allowed fetch got the page through the sandbox" \
	"200 hello from allowed.test" jq -r .allowed <<<"$out"
check "the denied fetch failed (the name does not resolve in the sandbox)" \
	jq -e '.denied | startswith("error")' <<<"$out"
check "both concurrent fetches got their page" \
	jq -e '.both | map(startswith("200 ")) | all' <<<"$out"
RUN=$(jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A")
ID_ALLOWED=$(jq -c '.ids[0].id' <<<"$out")
ID_DENIED=$(jq -c '.ids[1].id' <<<"$out")
ID_ONE=$(jq -c '.ids[2].id' <<<"$out")
ID_TWO=$(jq -c '.ids[3].id' <<<"$out")
echo "# run $RUN, call ids: allowed $ID_ALLOWED, denied $ID_DENIED, concurrent $ID_ONE $ID_TWO"
ev() { jq -e -c -s --arg run "$RUN" "[.[] | select(.run == \$run)] | $1" "$A"; }
check_eq "run.start says stdio is relayed" true ev '.[] | select(.action == "run.start") | .mcp.relay'
check "the allowed fetch's connection carries fetch_url and its call id" ev \
	"any(.[]; .type == \"net\" and .resource == \"allowed.test\" and .allowed and
	 .mcp.tool == \"fetch_url\" and .mcp.call_id == $ID_ALLOWED and .mcp.in_flight == 1)"
check "the allowed fetch's DNS query carries fetch_url and its call id" ev \
	"any(.[]; .action == \"dns.query\" and .resource == \"allowed.test\" and .allowed and
	 .mcp.call_id == $ID_ALLOWED)"
check "the denied fetch's DNS query is denied and carries fetch_url and its call id" ev \
	"any(.[]; .action == \"dns.query\" and .resource == \"denied.test\" and (.allowed | not) and
	 .mcp.tool == \"fetch_url\" and .mcp.call_id == $ID_DENIED)"
check "every denial of denied.test carries that call (none is attributed to another)" ev \
	"[.[] | select(.resource == \"denied.test\")] | length > 0 and
	 all(.mcp.call_id == $ID_DENIED)"
for name in other.test wild.test; do
	check "the concurrent fetch of $name: its DNS query and connection carry in_flight 2 and both calls" ev \
		"[.[] | select((.action == \"dns.query\" or .action == \"net.connect\") and
		 .resource == \"$name\" and .mcp.in_flight == 2 and
		 ([.mcp.calls[].call_id] | sort) == ([$ID_ONE, $ID_TWO] | sort))] |
		 any(.action == \"net.connect\") and any(.action == \"dns.query\")"
done
check "each call's arguments hash is there (64 hex digits)" ev \
	'[.[] | select(.mcp.calls) | .mcp.calls[].args_sha256 | test("^[0-9a-f]{64}$")] | all'
# the liveness check runs before any call: its events carry none (the control: the fetch's do)
check "the run's events before the first call carry no mcp" ev \
	'[.[] | select(.action == "run.liveness")] | length > 0 and all(.mcp == null)'
check_eq "run.exit counts 4 calls of fetch_url" 4 ev \
	'.[] | select(.action == "run.exit") | .mcp.tools.fetch_url.calls'
check "run.exit counts the denials during fetch_url's calls" ev \
	'.[] | select(.action == "run.exit") | .mcp.tools.fetch_url.denials >= 1'
check "run.exit: attribution stayed on" ev \
	'.[] | select(.action == "run.exit") | .mcp.attribution == null'
check_eq "warden logs --tool fetch_url --run lists only that tool's events" true \
	bash -c '"$1" logs --audit-log "$2" --json --run "$3" --tool fetch_url |
		jq -s "length > 2 and all(.mcp.calls | any(.tool == \"fetch_url\"))"' _ "$W" "$A" "$RUN"
check_eq "warden logs --tool nosuch lists nothing" 0 \
	bash -c '"$1" logs --audit-log "$2" --json --run "$3" --tool nosuch | wc -l' _ "$W" "$A" "$RUN"

# --- the relay ---------------------------------------------------------------------------
head -c 10485760 /dev/urandom >"$T/random.bin"
in_run -p "$T/cat.yaml" -- /bin/cat <"$T/random.bin" >"$T/random.out"
check_eq "10 MiB of random bytes through cat: the status" 0 echo "$?"
check_eq "10 MiB of random bytes through cat come back byte-identical" \
	"$(sha256sum <"$T/random.bin")" sha256sum <"$T/random.out"
RUN2=$(jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A")
check_eq "random bytes: not an MCP program, so no run.mcp note (issue 27)" 0 jq -s --arg r "$RUN2" \
	'[.[] | select(.run == $r and .action == "run.mcp")] | length' "$A"
printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize"}' 'then plain text' >"$T/mixed.txt"
in_run -p "$T/cat.yaml" -- /bin/cat <"$T/mixed.txt" >/dev/null
RUN2B=$(jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A")
check_eq "JSON-RPC, then a line that is not: attribution off, said once" 1 jq -s --arg r "$RUN2B" \
	'[.[] | select(.run == $r and .action == "run.mcp" and (.reason | test("line 2 .* is not JSON")))] | length' "$A"
check "random bytes: run.exit says attribution was off" jq -e -s --arg r "$RUN2" \
	'.[] | select(.run == $r and .action == "run.exit") | .mcp.attribution | startswith("off:")' "$A"

# framed JSON-RPC (requests, a batch, a notification, responses, a tools/call in pieces)
python3 - "$T/frames.jsonl" <<'EOF'
import json, sys
msgs = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a", "arguments": {"x": "\u00e9\n"}}},
    [{"jsonrpc": "2.0", "id": "s2", "method": "tools/call", "params": {"name": "b"}},
     {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}],
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
    {"jsonrpc": "2.0", "id": "s2", "result": {"content": []}},
]
with open(sys.argv[1], "w") as f:
    for m in msgs * 200:
        f.write(json.dumps(m, separators=(",", ":")) + "\n")
    f.write('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"last"}}')  # no newline
EOF
in_run -p "$T/cat.yaml" -- /bin/cat <"$T/frames.jsonl" >"$T/frames.out"
check_eq "framed JSON-RPC through cat comes back unchanged" \
	"$(sha256sum <"$T/frames.jsonl")" sha256sum <"$T/frames.out"
RUN3=$(jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A")
check_eq "framed JSON-RPC: attribution stayed on (no run.mcp event)" 0 jq -s --arg r "$RUN3" \
	'[.[] | select(.run == $r and .action == "run.mcp")] | length' "$A"
check_eq "framed JSON-RPC: run.exit counts the complete tools/call lines per tool" '{"a":200,"b":200}' \
	jq -c -s --arg r "$RUN3" '.[] | select(.run == $r and .action == "run.exit") |
	.mcp.tools | map_values(.calls)' "$A"

# EOF each way, the status, SIGPIPE
check_eq "the program sees EOF when the client closes stdin" "x|got-eof" bash -c \
	'printf "x\n" | ip netns exec "$1" "$2" run -q --audit-log "$3" -p "$4" -- /bin/sh -c \
	 "cat; echo got-eof" | paste -sd"|"' _ "$LAB_HOST_NS" "$W" "$A" "$T/cat.yaml"
# the program ends while the client keeps its stdin open: the client sees EOF at the program's
# end (a relay that waited for the client's stdin would hang: 20 s limit). bwrap holds the
# program's stdout too, so EOF comes with the program's end, not with its own close of stdout.
check_eq "the client sees EOF when the program ends, its stdin still open" "early|0" \
	python3 - "$LAB_HOST_NS" "$W" "$A" "$T/cat.yaml" <<'EOF'
import subprocess, sys
ns, w, a, pol = sys.argv[1:]
p = subprocess.Popen(["ip", "netns", "exec", ns, w, "run", "-q", "--audit-log", a, "-p", pol,
                      "--", "/bin/sh", "-c", "echo early; exit 0"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
out = p.stdout.read()  # to EOF, stdin still open
print(out.decode().strip() + "|" + str(p.wait(timeout=20)))
p.stdin.close()
EOF
check_eq "the exit status goes through the relay" 3 bash -c \
	'ip netns exec "$1" "$2" run -q --audit-log "$3" -p "$4" -- /bin/sh -c "exit 3" </dev/null |
	 cat >/dev/null; echo "${PIPESTATUS[0]}"' _ "$LAB_HOST_NS" "$W" "$A" "$T/cat.yaml"
check_eq "a client that stops reading: the program gets EPIPE, warden ends with its status" 141 bash -c \
	'ip netns exec "$1" "$2" run -q --audit-log "$3" -p "$4" -- /bin/sh -c \
	 "trap \"\" PIPE; yes | head -c 100000000; exit 141" </dev/null | head -c 10 >/dev/null;
	 echo "${PIPESTATUS[0]}"' _ "$LAB_HOST_NS" "$W" "$A" "$T/cat.yaml"
# a terminal: direct inheritance (the program's stdin is the terminal itself)
if command -v script >/dev/null; then
	check "a terminal keeps direct inheritance: the program's stdin is a tty" bash -c \
		'script -qec "ip netns exec $1 $2 run -q --audit-log $3 -p $4 -- /bin/sh -c \"test -t 0 && echo TTY\"" /dev/null |
		 grep -q TTY' _ "$LAB_HOST_NS" "$W" "$A" "$T/cat.yaml"
	check "control: through pipes the program's stdin is no tty" bash -c \
		'ip netns exec "$1" "$2" run -q --audit-log "$3" -p "$4" -- /bin/sh -c "test -t 0 || echo PIPE" </dev/null |
		 grep -q PIPE' _ "$LAB_HOST_NS" "$W" "$A" "$T/cat.yaml"
	check "run.start of the terminal's run says: no relay, a terminal" jq -e -s \
		'any(.[]; .action == "run.start" and .mcp.relay == false and (.mcp.reason | test("terminal")))' "$A"
fi

teardowns_quiet() { lab_teardowns_quiet "$A"; }
check "the background teardowns finish" lab_wait 20 teardowns_quiet
check "warden gc --pool drains the pool of ready networks" \
	ip netns exec "$LAB_HOST_NS" "$W" gc -q --pool
check "no sandbox interface is left" lab_wait 5 lab_no_match '^wd-' in_host ip -br link
check "control: the same listing shows lab-host's veth-wan" lab_match '^veth-wan' in_host ip -br link
lab_finish
