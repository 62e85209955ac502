#!/usr/bin/env bash
# run_flood.sh - audit floods under `warden run` in the lab: a run that sends 100,000 DNS
# queries for denied names leaves a small audit log (the first denials in full, then one summary
# a second with counts by name) whose counts add up to exactly 100,000, as does run.exit's
# "denials"; a run past its audit byte budget gets summaries only, and every query is still
# accounted for; the liveness check is recorded as run.liveness. No timing is asserted.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
BURST=${WD_DNS_BURST:-${WARDEN_BUILD_DIR:-$SRC/build}/tests/integration/dns_burst}
[[ -x $BURST ]] || { echo "FAIL - $BURST not built"; exit 1; }
lab_up

T=$(lab_tmpdir wd-run-flood)
lab_on_exit rm -rf "$T"
chmod 0755 "$T"
cp "$BURST" "$T/dns_burst" && chmod 0755 "$T/dns_burst"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW
cat >"$T/p.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/dns_burst"]
network:
  allow:
    - {host: allowed.test, ports: [443]}
    - {host: "*.wild.test", ports: [443]}
EOF
# flood N WINDOW [denied]: dns_burst inside a warden run, at the run's own nameserver
flood() {
	ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" ${GWOPT:-} -p "$T/p.yaml" -- \
		sh -c 'exec "$0" "$(sed -n "s/^nameserver //p" /etc/resolv.conf | head -n1)" 53 "$@"' \
		"$T/dns_burst" "$@"
}
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
run_bytes() { jq -c --arg r "$1" 'select(.run == $r)' "$A" | wc -c; }
# queries the run's dns.query events stand for, with that decision
dns_count() {
	jq -s --arg r "$1" "[.[] | select(.run == \$r and .action == \"dns.query\" and .allowed == $2) | (.count // 1)] | add // 0" "$A"
}

echo "# 100,000 denied DNS queries (100 outstanding: every one reaches the gateway)"
check_eq "the flood: every query answered NXDOMAIN" \
	"100000 sent, 100000 answered, 100000 correct, 100000 denied" flood 100000 100 denied
R=$(last_run)
check "its teardown is done (the run's last summaries are written at unregister)" \
	lab_wait 30 lab_teardowns_quiet "$A"
check_eq "run.exit counts every denial" 100000 \
	jq -r -s --arg r "$R" '.[] | select(.run == $r and .action == "run.exit") | .denials' "$A"
check_eq "the log's events stand for exactly 100,000 denied queries" 100000 dns_count "$R" false
n_full=$(jq -s --arg r "$R" '[.[] | select(.run == $r and .action == "dns.query" and .allowed == false and (has("count") | not))] | length' "$A")
n_sum=$(jq -s --arg r "$R" '[.[] | select(.run == $r and .action == "dns.query" and has("count"))] | length' "$A")
bytes=$(run_bytes "$R")
echo "# the run's log: $bytes bytes, $n_full denials in full, $n_sum summaries (main: ~22 MB, one event each)"
check "the first 100 denials are written in full" bash -c '(( $0 >= 100 ))' "$n_full"
check "the rest are in summaries with counts by name" jq -e -s --arg r "$R" '
	[.[] | select(.run == $r and .action == "dns.query" and has("count"))] |
	length > 0 and all(.allowed == false and .resource == "" and (.reason | startswith("rate limit")) and
		((.names | to_entries | map(.value) | add) == .count) and
		(.names | keys | all(test("^f[0-7]\\.blocked\\.test$"))))' "$A"
# full events: 100 + 10 a second; summaries: one a second; ~300 bytes each. A bound that
# holds for a flood lasting up to a minute on a slow machine, and is 1/40 of what main wrote.
check "the run's audit log stays under 512 KiB" bash -c '(( $0 < 524288 ))' "$bytes"
check "the liveness check is its own action, once" bash -c \
	'[[ $(jq -s --arg r "$1" "[.[] | select(.run == \$r and .action == \"run.liveness\")] | length" "$0") == 1 ]]' \
	"$A" "$R"
check_eq "... and no dns.query for its name" 0 jq -s \
	'[.[] | select(.action == "dns.query" and .resource == "warden-liveness.check.invalid")] | length' "$A"

echo "# a run past its audit byte budget"
cat >"$T/gw.yaml" <<EOF
version: 1
control: {path: "$T/gw.sock"}
audit: {path: "$A"}
resolvers: ["$LAB_DNS_V4"]
limits: {audit_kib_per_run: 64}
EOF
lab_spawn host gwd "$GW" --config "$T/gw.yaml"
lab_wait 10 test -S "$T/gw.sock" || { echo "FAIL - the gateway daemon did not start"; exit 1; }
GWOPT="--gateway $T/gw.sock"
check_eq "20,000 queries (90 % allowed) through a daemon with a 64 KiB budget per run" \
	"20000 sent, 20000 answered, 20000 correct, 2000 denied" flood 20000 100
R=$(last_run)
check "its teardown is done" lab_wait 30 lab_teardowns_quiet "$A"
check "the daemon wrote the run's unregister" lab_wait 10 jq -e -s --arg r "$R" \
	'[.[] | select(.run == $r and .action == "run.gateway-unregister")] | length == 1' "$A"
gw_bytes=$(jq -c --arg r "$R" 'select(.run == $r and (.action | startswith("dns.") or startswith("net.")))' "$A" | wc -c)
echo "# the gateway's events for the run: $gw_bytes bytes"
check "... stay within the budget, plus one line and the summaries (64 KiB + 32 KiB)" \
	bash -c '(( $0 <= 98304 ))' "$gw_bytes"
check_eq "every allowed query is accounted for (in full or in summaries)" 18000 dns_count "$R" true
check_eq "... and every denied one" 2000 dns_count "$R" false
check "allowed summaries say the budget is used up" jq -e -s --arg r "$R" \
	'[.[] | select(.run == $r and .action == "dns.query" and .allowed and has("count") and (.reason | test("audit budget")))] | length > 0' "$A"
check "the run's lifecycle events are still there" jq -e -s --arg r "$R" \
	'[.[] | select(.run == $r and (.action == "run.gateway-register" or .action == "run.gateway-unregister"))] | length == 2' "$A"
check_eq "run.exit counts its 2,000 denials" 2000 \
	jq -r -s --arg r "$R" '.[] | select(.run == $r and .action == "run.exit") | .denials' "$A"
lab_stop host gwd
lab_finish
