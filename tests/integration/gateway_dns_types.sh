#!/usr/bin/env bash
# gateway_dns_types.sh - the DNS front's query types and what it audits: zone transfers (AXFR,
# IXFR), NULL, OPT as a question, MAILA/MAILB and the other meta-types get REFUSED (with an EDE)
# over UDP and TCP, are audited and never reach the lab DNS, while TXT, MX, SRV, CNAME and CAA
# of allowed names are still forwarded and answered; malformed queries are audited with what
# was parsed and counted as denials; the liveness check name is recorded as run.liveness.
set -u
. "$(dirname "$0")/gateway/fixture.sh"
gw_setup
command -v /usr/bin/python3 >/dev/null || { echo "SKIP: missing python3"; exit 77; }
POL=$LAB_DIR/policy.yaml
cat >"$POL" <<'EOF2'
version: 1
network:
  allow:
    - { host: allowed.test, ports: [443] }
    - { host: "*.allowed.test", ports: [443] }
    - { host: txt.test, ports: [443] }
    - { host: cname1.test, ports: [443] }
EOF2
check "register the run" gw_register "$POL"
denied() { gw_ctl list | jq -r '.runs[0].denied'; }
dstatus() { run_dig "$@" | sed -n 's/.*status: \([A-Z]*\).*/\1/p' | head -n1; }

echo "# types clients need are forwarded (and the lab DNS sees them: the checks below can fail)"
check_eq "TXT" '"warden lab txt record" "second string"' run_dig +short txt.test TXT
check "MX" bash -c '[[ $(ip netns exec "$0" dig +short +time=3 +tries=1 @"$1" allowed.test MX) == "10 mail.allowed.test." ]]' "$RUN" "$H4"
check_eq "SRV (a service name of an allowed name)" "0 10 80 allowed.test." \
	run_dig +short _http._tcp.allowed.test SRV
check "SRV of a service name of a denied name: NXDOMAIN, not forwarded" bash -c \
	'ip netns exec "$0" dig +time=3 +tries=1 @"$1" _http._tcp.other.test SRV | grep -q "status: NXDOMAIN"' "$RUN" "$H4"
check "... never asked upstream" lab_dns_never_asked _http._tcp.other.test
check_eq "CNAME" "cname2.test." run_dig +short cname1.test CNAME
check_eq "CAA" '0 issue "ca.test"' run_dig +short allowed.test CAA
check_eq "CAA over TCP" '0 issue "ca.test"' run_dig +tcp +short allowed.test CAA
check "the lab DNS was asked for the TXT" lab_dns_asked txt.test TXT
check "... and the SRV" lab_dns_asked _http._tcp.allowed.test SRV
check "... and the CAA (dnsmasq names it type=257)" bash -c \
	'grep -qiF "query[type=257] allowed.test from " "$0" || grep -qiF "query[CAA] allowed.test from " "$0"' "$LAB_DNS_LOG"
# the lab DNS logs a transfer it is asked for: the "never asked" checks below can fail
check "control: a transfer asked of the lab DNS directly is in its log" bash -c \
	'in_host() { ip netns exec "$0" "$@"; }; in_host dig +time=2 +tries=1 @"$1" axfr control-axfr.test >/dev/null; grep -qF "query[AXFR] control-axfr.test from " "$2"' \
	"$LAB_HOST_NS" "$LAB_DNS_V4" "$LAB_DNS_LOG"

echo "# transfer and meta types are refused"
d0=$(denied)
check "AXFR (dig, over TCP): the transfer fails" bash -c \
	'ip netns exec "$0" dig +time=3 +tries=1 @"$1" axfr allowed.test | grep -q "Transfer failed"' "$RUN" "$H4"
check "IXFR (dig, over TCP): the transfer fails" bash -c \
	'ip netns exec "$0" dig +time=3 +tries=1 @"$1" ixfr=1 allowed.test | grep -q "Transfer failed"' "$RUN" "$H4"
check "... refused by the gateway, not by the lab DNS" audit_has \
	'.action == "dns.query" and .allowed == false and .qtype == "IXFR" and (.reason | test("zone transfers are refused"))'
check_eq "NULL: REFUSED" REFUSED dstatus allowed.test NULL
check_eq "NULL over TCP: REFUSED" REFUSED dstatus +tcp allowed.test NULL
check_eq "MAILA: REFUSED" REFUSED dstatus allowed.test MAILA
check_eq "MAILB: REFUSED" REFUSED dstatus allowed.test MAILB
check_eq "OPT as a question type: REFUSED" REFUSED dstatus allowed.test TYPE41
check_eq "TKEY: REFUSED" REFUSED dstatus allowed.test TYPE249
check_eq "an unassigned meta-type (200): REFUSED" REFUSED dstatus allowed.test TYPE200
check "the refusal says why (EDE 21, Not Supported)" bash -c \
	'ip netns exec "$0" dig +time=3 +tries=1 @"$1" allowed.test NULL | grep -q "EDE: 21 (Not Supported).*NULL"' "$RUN" "$H4"
check_eq "ANY stays NOTIMP" NOTIMP dstatus allowed.test ANY
check_eq "each refusal counted in the run's denials (11 queries)" 11 bash -c 'echo $(( $1 - $0 ))' "$d0" "$(denied)"
check "the lab DNS never saw an AXFR for allowed.test" lab_dns_never_asked allowed.test AXFR
check "... nor an IXFR" lab_dns_never_asked allowed.test IXFR
check "... nor a NULL" lab_dns_never_asked allowed.test NULL
check "... nor a MAILA or MAILB" bash -c \
	'[[ -s $0 ]] && ! grep -qiE "query\[(MAILA|MAILB|type=25[34])\] allowed.test from " "$0"' "$LAB_DNS_LOG"
check "the AXFR was audited as refused" audit_has \
	'.action == "dns.query" and .allowed == false and .resource == "allowed.test" and .qtype == "AXFR" and (.reason | test("zone transfers are refused"))'
check "the NULL too" audit_has '.action == "dns.query" and .allowed == false and .qtype == "NULL"'

echo "# malformed queries"
cat >"$LAB_DIR/bad.py" <<'EOF2'
import socket, sys
addr = sys.argv[1]
def q(name_wire, qtype=1, extra=b"", arcount=0):
    return (b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00" + arcount.to_bytes(2, "big")
            + name_wire + qtype.to_bytes(2, "big") + b"\x00\x01" + extra)
msgs = {
    # a dot inside a label: the text "a.b.allowed.test" would lie about the labels
    "dot": q(b"\x03a.b\x07allowed\x04test\x00"),
    # cut inside the question's name
    "cut": q(b"\x07allowed\x04test\x00")[:17],
    # EDNS version 1
    "edns1": q(b"\x07allowed\x04test\x00", 1, b"\x00\x00\x29\x04\xd0\x00\x01\x00\x00\x00\x00", 1),
}
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
out = []
for k in sys.argv[2:]:
    s.sendto(msgs[k], (addr, 53))
    try:
        m = s.recv(4096)
        out.append("%s:rcode%d" % (k, (m[3] & 15) | (16 if k == "edns1" and m[3] & 15 == 0 else 0)))
    except socket.timeout:
        out.append(k + ":none")
print(" ".join(out))
EOF2
d0=$(denied)
check_eq "three malformed queries are answered" "dot:rcode5 cut:rcode1 edns1:rcode16" \
	in_run /usr/bin/python3 "$LAB_DIR/bad.py" "$H4" dot cut edns1
check_eq "... and counted in the run's denials" 3 bash -c 'echo $(( $1 - $0 ))' "$d0" "$(denied)"
check "a name with a dot inside a label is audited as parsed, bytes outside a host name as ?" audit_has \
	'.action == "dns.query" and .allowed == false and .resource == "a?b.allowed.test" and .qtype == "A" and (.reason | startswith("malformed: query name has characters outside"))'
check "a query cut in its name: no name, no type, the reason" audit_has \
	'.action == "dns.query" and .allowed == false and .resource == "" and (has("qtype") | not) and (.reason | startswith("malformed: name runs past"))'
check "an EDNS version 1 query: its name and type" audit_has \
	'.action == "dns.query" and .allowed == false and .resource == "allowed.test" and .qtype == "A" and (.reason == "malformed: EDNS version is not 0")'
check_eq "no event names the type TYPE0" 0 jq -s '[.[] | select(.qtype == "TYPE0")] | length' "$AUDIT"

echo "# the liveness check"
check_eq "its HTTPS query is answered empty" NOERROR dstatus warden-liveness.check.invalid HTTPS
check "it is audited as run.liveness, with a true reason" audit_has \
	'.action == "run.liveness" and .allowed and .resource == "warden-liveness.check.invalid" and (.reason | test("liveness check"))'
check_eq "... not as a dns.query" 0 jq -s \
	'[.[] | select(.action == "dns.query" and .resource == "warden-liveness.check.invalid")] | length' "$AUDIT"

check "SIGTERM stops the gateway" gw_stop
check "no sanitizer report in the gateway's log" gw_log_clean
lab_finish
