#!/usr/bin/env bash
# run_mcp_explain.sh - mcp.explain_denials (issue 31, denials an agent understands): a small MCP
# server (tests/mcp/fetch_server.mjs, tool fetch_url) under `warden run` in the lab, driven by
# the official SDK client (tests/mcp/explain_client.mjs). With explain_denials, the result of
# the call whose fetch the gateway denied gets one more text item naming the DNS lookup it
# refused (other.test), or the address and port with the denial id (the audit's) of a fetch of a
# literal address of the lab, and saying it is policy; the allowed call's result gets none. The
# same calls under the same policy without explain_denials get no such item (the control).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
MCP=$SRC/tests/mcp

lab_require_root
lab_need_run_tools
lab_need_mcp
lab_up

T=$(lab_tmpdir wd-run-mcp-explain)
lab_on_exit rm -rf "$T"
export WARDEN_GATEWAY_BIN=$GW
# $1: file, $2: extra lines
policy() {
	cat >"$1" <<EOF2
version: 1
command: ["$NODE", "$MCP/fetch_server.mjs"]
filesystem:
  read: ["$MCP"]
network:
  allow:
    - allowed.test
$2
EOF2
}
policy "$T/explain.yaml" 'mcp:
  explain_denials: true'
policy "$T/plain.yaml" ''
client() {
	"$NODE" "$MCP/explain_client.mjs" http://allowed.test/ http://other.test/ \
		"http://$LAB_WAN_V4:8080/" \
		ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$2" -p "$1"
}

out=$(client "$T/plain.yaml" "$T/plain.jsonl" 2>"$T/plain.err")
rc=$?
echo "# without explain_denials: $out"
check_eq "control: the client ran to the end" 0 echo "$rc"
check "control: the allowed fetch got the page" jq -e \
	'.allowed[0] | test("^200 hello from allowed.test")' <<<"$out"
check "control: the denied fetch failed in the server" jq -e '.denied[0] | length > 0' <<<"$out"
check_eq "control: without explain_denials no result names warden" 0 jq \
	'[.allowed[], .denied[] | select(test("warden denied"))] | length' <<<"$out"
check "control: the gateway did deny other.test in that run" jq -es \
	'any(.[]; .resource == "other.test" and .allowed == false)' "$T/plain.jsonl"

out=$(client "$T/explain.yaml" "$T/explain.jsonl" 2>"$T/explain.err")
rc=$?
echo "# with explain_denials: $out"
check_eq "the client ran to the end" 0 echo "$rc"
check_eq "the allowed call's result has its one text item, no explanation" 1 jq \
	'.allowed | length' <<<"$out"
check_eq "the denied call's result has one more text item" 2 jq '.denied | length' <<<"$out"
check "... naming the DNS lookup of other.test it refused, its denial ids and the reason" jq -e \
	'.denied[1] | test("^warden denied the DNS lookup of other.test \\(denial dn-[0-9a-f]{12}(, dn-[0-9a-f]{12})*: other.test is not allowed by policy explain.yaml\\)")' <<<"$out"
ids=$(jq -r '.denied[1] | [scan("dn-[0-9a-f]{12}")] | join(" ")' <<<"$out")
check "... every denial id it names is a denied DNS query of other.test in the audit log" bash -c '
	for id in $1; do
		jq -es --arg i "$id" "any(.[]; .denial_id == \$i and .action == \"dns.query\" and
			.resource == \"other.test\" and .allowed == false)" "$2" >/dev/null || exit 1
	done
	[[ -n $1 ]]' _ "$ids" "$T/explain.jsonl"
check "... saying it is policy, not a network failure" jq -e \
	'.denied[1] | test("this is policy, not a network failure")' <<<"$out"
check "... and how a person allows it" jq -e \
	'.denied[1] | test("warden allowlist [0-9a-f]+ add other.test")' <<<"$out"
check "control: the gateway denied other.test's lookup in that run" jq -es \
	'any(.[]; .action == "dns.query" and .resource == "other.test" and .allowed == false)' \
	"$T/explain.jsonl"
check_eq "the literal address's call has one more text item" 2 jq '.address | length' <<<"$out"
check "... naming the address and port with a denial id" jq -e --arg a "$LAB_WAN_V4" \
	'.address[1] | startswith("warden denied \($a):8080 (denial dn-")' <<<"$out"
check "... and that only a cidr rule allows an address" jq -e \
	'.address[1] | test("allowed only by a cidr rule")' <<<"$out"
id=$(jq -r '.address[1] | capture("denial (?<d>dn-[0-9a-f]{12})").d' <<<"$out")
check "... the denial id is the audit's denial of that address" jq -es --arg i "$id" \
	--arg a "$LAB_WAN_V4" 'any(.[]; .denial_id == $i and .dst == $a and .allowed == false)' \
	"$T/explain.jsonl"

lab_finish
