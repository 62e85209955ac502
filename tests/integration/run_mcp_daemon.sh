#!/usr/bin/env bash
# run_mcp_daemon.sh - MCP tool-call attribution in daemon mode (issue 15): an unprivileged
# user's `warden run` plumbed by the host's gateway daemon (--manage-nft) tells that daemon the
# calls in flight over a control connection of its own (the uid that registered the run); the
# daemon's events of the run carry them. The test MCP server (tests/mcp/fetch_server.mjs) is
# driven by the SDK client (tests/mcp/attr_client.mjs) as in run_mcp_attr.sh, which covers
# root mode (and, through run_as_user.sh, rootless mode).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
if [[ ${LAB_AS_USER:-} == 1 ]]; then
	echo "SKIP: run_mcp_daemon.sh runs its users itself"
	exit 77
fi
lab_require_root
MCP=$SRC/tests/mcp
lab_need_mcp
. "$SRC/tests/integration/daemon/fixture.sh"

cat >"$T/gateway.yaml" <<EOF
version: 1
resolvers: ["$LAB_DNS_V4"]
control: {path: "$SOCK"}
audit: {path: "$CENTRAL"}
EOF
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
chmod 0644 "$T/fetch.yaml"
check "the host's nft table is installed" in_host "$W" nft install
daemon_start
check "the daemon is up (--manage-nft)" daemon_ready

out=$(as_a "$NODE" "$MCP/attr_client.mjs" http://allowed.test/ http://denied.test/ \
	http://other.test/ http://wild.test/ "$W" run -q --audit-log "$AA" -p "$T/fetch.yaml" \
	2>"$T/client.err")
rc=$?
echo "# client: $out"
[[ -s $T/client.err ]] && sed 's/^/# client stderr: /' "$T/client.err" | tail -5
check_eq "the MCP client ran to the end (user A, daemon mode)" 0 echo "$rc"
check_eq "control: the allowed fetch got the page" "200 hello from allowed.test" jq -r .allowed <<<"$out"
RUN=$(jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$AA")
check_eq "the run was a daemon-mode run" daemon jq -r -s --arg r "$RUN" \
	'.[] | select(.run == $r and .action == "run.start") | .mode' "$AA"
ID_ALLOWED=$(jq -c '.ids[0].id' <<<"$out")
ID_DENIED=$(jq -c '.ids[1].id' <<<"$out")
ev() { jq -e -c -s --arg run "$RUN" "[.[] | select(.run == \$run)] | $1" "$CENTRAL"; }
check "the daemon's connection event of the allowed fetch carries its call" ev \
	"any(.[]; .action == \"net.connect\" and .resource == \"allowed.test\" and .allowed and
	 .mcp.tool == \"fetch_url\" and .mcp.call_id == $ID_ALLOWED and .uid == $A_UID)"
check "the daemon's denied DNS query carries the denied fetch's call" ev \
	"any(.[]; .action == \"dns.query\" and .resource == \"denied.test\" and (.allowed | not) and
	 .mcp.call_id == $ID_DENIED)"
check "the concurrent calls: the daemon's events carry in_flight 2" ev \
	'any(.[]; .type == "net" and .mcp.in_flight == 2)'
check "run.exit counts 4 calls and the denials per tool (the daemon's answer)" jq -e -s --arg r "$RUN" \
	'.[] | select(.run == $r and .action == "run.exit") |
	 .mcp.tools.fetch_url.calls == 4 and .mcp.tools.fetch_url.denials >= 1' "$AA"
daemon_stop
none_of_ours_left() { [[ -z $(ours_left) ]]; }
check "no process of the users is left" lab_wait 10 none_of_ours_left
lab_finish
