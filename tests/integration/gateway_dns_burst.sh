#!/usr/bin/env bash
# gateway_dns_burst.sh - the gateway's DNS front under bursts: a client keeps
# 100 UDP queries outstanding (so the gateway takes and answers them in
# batches), over IPv4 and IPv6; every query gets a correct answer (synthetic
# A/AAAA for allowed names, NXDOMAIN for others) and the audit log accounts
# for exactly the queries that were sent, allowed and denied (denials past the
# run's rate in summaries that count them).
set -u
. "$(dirname "$0")/gateway/fixture.sh"
BURST=${WD_DNS_BURST:-${WARDEN_BUILD_DIR:-$SRC/build}/tests/integration/dns_burst}
gw_setup
[[ -x $BURST ]] || { echo "FAIL - $BURST not built"; exit 1; }
POL=$LAB_DIR/policy.yaml
cat >"$POL" <<'EOF2'
version: 1
network:
  allow:
    - { host: allowed.test, ports: [80] }
    - { host: "*.wild.test", ports: [80] }
EOF2
check "register the run" gw_register "$POL"

# dns_events ALLOWED|any WANT: the number of queries the dns.query events with
# that decision stand for (a summary of denials not written one by one carries
# "count"). Allowed events are written at the end of the gateway's loop round,
# just after the answers, a summary a second after the first denial it counts:
# wait up to 5 s for the number to reach WANT (then print what it is).
dns_events()
{
	local sel=".action == \"dns.query\"" n
	[[ $1 == any ]] || sel+=" and .allowed == $1"
	for _ in $(seq 50); do
		n=$(jq -s "[.[] | select($sel) | (.count // 1)] | add // 0" "$AUDIT")
		[[ $n == "$2" ]] && break
		sleep 0.1
	done
	echo "$n"
}

check_eq "500 queries over IPv4, 100 outstanding: 500 correct answers" \
	"500 sent, 500 answered, 500 correct, 50 denied" in_run "$BURST" "$H4" 53 500 100
check_eq "the audit log accounts for 450 allowed queries" 450 dns_events true 450
check_eq "and for 50 denied ones" 50 dns_events false 50
check "each denial is one event naming the policy" \
	bash -c '[[ $(jq -s "[.[] | select(.action == \"dns.query\" and .allowed == false and (.resource | endswith(\".blocked.test\")) and (.count // 1) == 1 and (.reason | contains(\"not allowed by policy\")))] | length" "$0") == 50 ]]' "$AUDIT"
check_eq "500 more over IPv6: 500 correct answers" \
	"500 sent, 500 answered, 500 correct, 50 denied" in_run "$BURST" "$H6" 53 500 100
check_eq "the audit log now accounts for 900 allowed queries" 900 dns_events true 900
check_eq "and for 100 denied ones" 100 dns_events false 100
check_eq "5,000 queries, 100 outstanding" \
	"5000 sent, 5000 answered, 5000 correct, 500 denied" in_run "$BURST" "$H4" 53 5000 100
check_eq "the audit log accounts for all 6,000" 6000 dns_events any 6000
check "SIGTERM stops the gateway" gw_stop
check "no sanitizer report in the gateway's log" gw_log_clean
lab_finish
