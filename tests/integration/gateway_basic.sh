#!/usr/bin/env bash
# gateway_basic.sh - warden-gateway in the lab: a run namespace registered over the
# control socket; real clients (dig, curl, openssl, socat) against real servers.
# DNS front (synthetic answers, NXDOMAIN without upstream, HTTPS empty, forwarding),
# TLS/HTTP/raw TCP decisions, fronting, SSRF refusal, the proxy port, audit events.
set -u
. "$(dirname "$0")/gateway/fixture.sh"
gw_setup
POL=$LAB_DIR/policy.yaml
cat >"$POL" <<'EOF2'
version: 1
network:
  allow:
    - { host: allowed.test, ports: [80, 443, 7, 2222] }
    - { host: mail.allowed.test, ports: [25] }
    - { host: txt.test, ports: [443] }
    - { host: "*.wild.test", ports: [443] }
    - { host: loopback.test, ports: [80] }
    - { host: hostself.test, ports: [80] }
    - { host: metadata.test, ports: [80] }
    - { host: private10.test, ports: [80] }
    - { host: multi.test, ports: [80] }
    - { host: unused.test, ports: [80] }
    - { host: ula.test, ports: [80] }
EOF2

check "register the run" gw_register "$POL"
check_fails "registering it twice is refused" gw_register "$POL"
check "list shows the run" bash -c '"$0" ctl --socket "$1" list | jq -e ".runs[0].id == \"$2\""' \
	"$GW" "$GWSOCK" "$RUN"

# --- DNS front ------------------------------------------------------------------
A=$(synth allowed.test)
AAAA=$(synth allowed.test AAAA)
check "allowed.test gets a synthetic IPv4 address (100.96/12)" \
	bash -c '[[ $0 =~ ^100\.(9[6-9]|10[0-9]|11[01])\. ]]' "$A"
check "allowed.test gets a synthetic IPv6 address" bash -c '[[ $0 == fd77:7764:53* ]]' "$AAAA"
check_eq "the synthetic address is stable" "$A" synth allowed.test
check_eq "the synthetic address is stable over TCP DNS" "$A" run_dig +tcp +short allowed.test
check "other.test is NXDOMAIN" bash -c 'ip netns exec "$0" dig +time=3 +tries=1 @"$1" other.test | grep -q "status: NXDOMAIN"' "$RUN" "$H4"
check "NXDOMAIN carries an Extended DNS Error naming the policy" \
	bash -c 'ip netns exec "$0" dig +time=3 +tries=1 @"$1" other.test | grep -q "EDE: 15 (Blocked).*policy.yaml"' "$RUN" "$H4"
check "the lab DNS never saw other.test" lab_dns_never_asked other.test
DNS_DID=$(ip netns exec "$RUN" dig +time=3 +tries=1 @"$H4" other.test |
	grep -o "EDE: 15 (Blocked).*(id dn-[0-9a-f]\{12\})" | grep -o "dn-[0-9a-f]\{12\}")
check "the EDE text carries a denial id" test -n "$DNS_DID"
check "... the audit's denial of other.test's query" audit_has \
	".action == \"dns.query\" and .resource == \"other.test\" and .allowed == false and .denial_id == \"$DNS_DID\""
check "DNS to any address reaches the gateway (redirect)" \
	bash -c '[[ $(ip netns exec "$0" dig +short +time=3 +tries=1 @"$1" allowed.test) == "$2" ]]' \
	"$RUN" "$LAB_DNS_V4" "$A"
check "HTTPS record: empty NOERROR" \
	bash -c 'out=$(ip netns exec "$0" dig +time=3 +tries=1 @"$1" allowed.test HTTPS); grep -q "status: NOERROR" <<<"$out" && grep -q "ANSWER: 0" <<<"$out"' "$RUN" "$H4"
check "HTTPS record of a denied name: empty, not asked upstream" \
	bash -c 'out=$(ip netns exec "$0" dig +time=3 +tries=1 @"$1" nothere.test HTTPS); grep -q "ANSWER: 0" <<<"$out"' "$RUN" "$H4"
check "nothere.test never asked upstream" lab_dns_never_asked nothere.test
check_eq "TXT of an allowed name is forwarded" '"warden lab txt record" "second string"' \
	run_dig +short txt.test TXT
check "MX is forwarded, its address glue dropped" \
	bash -c 'out=$(ip netns exec "$0" dig +time=3 +tries=1 @"$1" allowed.test MX); grep -q "MX.*10 mail.allowed.test" <<<"$out" && ! grep -q 203.0.113 <<<"$out"' "$RUN" "$H4"
check_eq "TXT forwarded over TCP DNS" '"warden lab txt record" "second string"' \
	run_dig +tcp +short txt.test TXT
check_eq "DNS over IPv6 transport gives the same synthetic address" "$A" \
	in_run dig +short +time=3 +tries=1 @"$H6" allowed.test
check "NXDOMAIN over IPv6 transport" \
	bash -c 'ip netns exec "$0" dig +time=3 +tries=1 @"$1" other.test | grep -q "status: NXDOMAIN"' "$RUN" "$H6"
check "ANY is not answered (NOTIMP)" \
	bash -c 'ip netns exec "$0" dig +time=3 +tries=1 @"$1" allowed.test ANY | grep -q "status: NOTIMP"' "$RUN" "$H4"
# (this check used to pass whatever happened: its inline helper grepped an unset "$4")
check "a TXT query for a denied name is NXDOMAIN" bash -c \
	'ip netns exec "$0" dig +time=3 +tries=1 @"$1" other.test TXT | grep -q "status: NXDOMAIN"' \
	"$RUN" "$H4"
check "... and was not forwarded: the lab DNS never saw other.test" lab_dns_never_asked other.test
status_of() { "$@" >/dev/null 2>&1; echo $?; }
check_eq "the same check fails (status 1) for a name that was forwarded (txt.test)" 1 \
	status_of lab_dns_never_asked txt.test

# --- TCP: allowed -----------------------------------------------------------------
check_eq "curl https://allowed.test/ (no proxy)" "hello from allowed.test" run_curl https://allowed.test/
check_eq "curl http://allowed.test/" "hello from allowed.test" run_curl http://allowed.test/
check_eq "curl -6 https://allowed.test/" "hello from allowed.test" run_curl -6 https://allowed.test/
WHO=$(run_curl https://allowed.test/whoami)
check "upstream sees the gateway, SNI and Host intact" \
	bash -c '[[ $0 =~ ^vhost=allowed\ host=allowed.test\ sni=allowed.test\ scheme=https\ remote=(203.0.113.1|2001:db8:0:1::1)$ ]]' "$WHO"
check_eq "raw TCP by name: echo on port 7" "ping" tcp_say allowed.test 7 ping
check_eq "raw TCP by name over IPv6" "ping6" tcp_say "[$AAAA]" 7 ping6
check "server-first protocol (banner on 2222) is relayed" \
	bash -c 'timeout 8 ip netns exec "$0" socat -T2 -u TCP:allowed.test:2222,connect-timeout=3 - | grep -q "^SSH-2.0-WardenLab"' "$RUN"
check "openssl s_client to allowed.test verifies" \
	bash -c 'echo | timeout 8 ip netns exec "$0" openssl s_client -connect allowed.test:443 -servername allowed.test -CAfile "$1" -verify_return_error 2>&1 | grep -q "Verify return code: 0"' "$RUN" "$LAB_CA"

# --- TCP: denied ------------------------------------------------------------------
check "https://other.test/ (via its real address) gets a TLS alert" \
	bash -c 'out=$(ip netns exec "$0" curl -sS --max-time 10 --cacert "$1" --resolve other.test:443:"$2" https://other.test/ 2>&1); [[ $out == *"access denied"* ]]' \
	"$RUN" "$LAB_CA" "$LAB_OTHER_V4"
check "http://other.test/ gets a 403 naming the policy" \
	bash -c 'out=$(ip netns exec "$0" curl -s --max-time 10 -D - --resolve other.test:80:"$1" http://other.test/); grep -q "^HTTP/1.1 403" <<<"$out" && grep -q "warden: denied: other.test:80 is not allowed by policy policy.yaml" <<<"$out"' \
	"$RUN" "$LAB_OTHER_V4"
DID=$(run_curl -s -D - --resolve other.test:80:"$LAB_OTHER_V4" http://other.test/x | tr -d '\r' | sed -n 's/^X-Warden-Denial: //Ip')
check "the 403's denial id is in the audit log" audit_has ".denial_id == \"$DID\" and .allowed == false and .host == \"other.test\""
check "raw TCP to an allowed name on a port not allowed is reset" tcp_reset allowed.test 9
check "raw TCP to a lab-wan address literal is reset" tcp_reset "$LAB_ALLOWED_V4" 7
check "raw TCP to a lab-wan IPv6 literal is reset" tcp_reset "$LAB_ALLOWED_V6" 7
check "the literal connection was audited" audit_has ".action == \"net.connect\" and .allowed == false and .dst == \"$LAB_ALLOWED_V4\" and .port == 7"
check "fronting: TLS to allowed.test's address with SNI other.test is denied" \
	bash -c 'out=$(ip netns exec "$0" curl -sS --max-time 10 --cacert "$1" --resolve other.test:443:"$2" https://other.test/ 2>&1); [[ $out == *"access denied"* ]]' \
	"$RUN" "$LAB_CA" "$A"
check "fronting: HTTP to allowed.test's address with Host other.test gets 403" \
	bash -c 'ip netns exec "$0" curl -s --max-time 10 -o /dev/null -w "%{http_code}" -H "Host: other.test" "http://$1/" | grep -q 403' "$RUN" "$A"
check "upstream refusal (nothing listens on mail.allowed.test:25): the client is reset" \
	tcp_reset mail.allowed.test 25
check "the refusal was audited" audit_has '.resource == "mail.allowed.test" and (.reason | test("Connection refused"))'
check "upstream that never answers: the client is reset after the connect timeouts" tcp_reset unused.test 80
check "the unanswered upstream was audited" audit_has '.resource == "unused.test" and (.reason | test("upstream unused.test:80"))'
( timeout 6 ip netns exec "$RUN" bash -c 'exec 3<>"/dev/tcp/$0/443"; sleep 5' "$LAB_OTHER_V4" & )
check_eq "a silent client does not stall others" "hello from allowed.test" run_curl https://allowed.test/
check "fronting over IPv6: TLS to allowed.test's v6 address with SNI other.test is denied" \
	bash -c 'out=$(ip netns exec "$0" curl -sS --max-time 10 --cacert "$1" --resolve "other.test:443:[$2]" https://other.test/ 2>&1); [[ $out == *"access denied"* ]]' \
	"$RUN" "$LAB_CA" "$AAAA"
check "fronting was audited" audit_has '.allowed == false and (.reason | test("domain fronting"))'
check "SSRF: an allowed name resolving to loopback is refused" \
	bash -c 'ip netns exec "$0" curl -s --max-time 10 http://loopback.test/ | grep -q "127.0.0.1 is a loopback address"' "$RUN"
check "SSRF: an allowed name resolving to lab-host is refused" \
	bash -c 'ip netns exec "$0" curl -s --max-time 10 http://hostself.test/ | grep -q "the gateway.s own address"' "$RUN"
check "SSRF: an allowed name resolving to 169.254.169.254 is refused" \
	bash -c 'ip netns exec "$0" curl -s --max-time 10 http://metadata.test/ | grep -q "169.254.169.254 is a link-local address"' "$RUN"
check "SSRF: an allowed name resolving to RFC 1918 is refused" \
	bash -c 'ip netns exec "$0" curl -s --max-time 10 http://private10.test/ | grep -q "10.1.2.3 is a private address"' "$RUN"
check "SSRF over IPv6: loopback.test's ::1 is named as refused too" \
	bash -c 'ip netns exec "$0" curl -6 -s --max-time 10 http://loopback.test/ | grep -q "127.0.0.1 is a loopback address; ::1 is a loopback address\|::1 is a loopback address; 127.0.0.1 is a loopback address"' "$RUN"
check "SSRF over IPv6: an allowed name resolving to a ULA is refused" \
	bash -c 'ip netns exec "$0" curl -6 -s --max-time 10 http://ula.test/ | grep -q "fd00:1:2::3 is a unique local address"' "$RUN"
check "SSRF over IPv6: metadata.test's fd00:ec2::254 is refused too" \
	bash -c 'ip netns exec "$0" curl -6 -s --max-time 10 http://metadata.test/ | grep -q "fd00:ec2::254 is a unique local address"' "$RUN"
check_eq "multi.test (two addresses) works" "hello from multi.test" run_curl http://multi.test/

check "slow client: a ClientHello that never completes gets an alert after the peek timeout" \
	bash -c 'ip netns exec "$0" bash -c "exec 3<>/dev/tcp/\$0/443; printf \"\\x16\\x03\\x01\\x02\" >&3; timeout 8 head -c 7 <&3 | od -An -tx1" "$1" | grep -Eq "15 03 0[13] 00 02 02 31"' "$RUN" "$A"
check "silent client to an address literal: reset after the peek timeout" tcp_silent_reset "$LAB_ALLOWED_V4" 443
check "no name within the peek timeout was audited" audit_has '.allowed == false and .port == 443 and .dst == "203.0.113.10" and (.reason | test("no host name"))'

# --- the explicit proxy port --------------------------------------------------------
check_eq "CONNECT allowed.test:443 through the proxy port" "hello from allowed.test" \
	run_curl -x "http://$H4:15080" https://allowed.test/
check_eq "absolute-form GET through the proxy port" "hello from allowed.test" \
	run_curl -x "http://$H4:15080" http://allowed.test/
check_eq "the proxy port over IPv6" "hello from allowed.test" \
	run_curl -x "http://[$H6]:15080" https://allowed.test/
check "CONNECT other.test:443 gets 403" \
	bash -c 'out=$(ip netns exec "$0" curl -sS --max-time 10 -x "http://$1:15080" https://other.test/ 2>&1); [[ $out == *"CONNECT tunnel failed, response 403"* ]]' "$RUN" "$H4"
check "absolute-form to other.test gets 403" \
	bash -c 'ip netns exec "$0" curl -s --max-time 10 -o /dev/null -w "%{http_code}" -x "http://$1:15080" http://other.test/ | grep -q 403' "$RUN" "$H4"
check "CONNECT allowed.test then SNI other.test is denied" \
	bash -c 'out=$(ip netns exec "$0" curl -sS --max-time 10 --cacert "$1" -x "http://$2:15080" --connect-to other.test:443:allowed.test:443 https://other.test/ 2>&1); [[ $out == *"access denied"* ]]' \
	"$RUN" "$LAB_CA" "$H4"

# --- audit ------------------------------------------------------------------------
check "DNS denial audited" audit_has '.action == "dns.query" and .resource == "other.test" and .allowed == false'
check "synthetic answer audited" audit_has ".action == \"dns.query\" and .resource == \"allowed.test\" and .qtype == \"A\" and .dst == \"$A\""
check "allowed connection audited with its rule" audit_has '.action == "net.connect" and .allowed == true and .sni == "allowed.test" and .rule == "allowed.test:7,80,443,2222"'
check "closes audited with bytes and duration" audit_has '.action == "net.close" and .bytes_down > 0 and .bytes_up > 0 and has("duration_ms")'

# --- privilege separation -----------------------------------------------------------
WORKER=$(gw_worker_pid)
check "the worker holds no capabilities (CapEff 0)" \
	bash -c 'grep -q "^CapEff:[[:space:]]*0000000000000000$" /proc/$0/status' "$WORKER"
check "the worker runs as nobody" bash -c 'grep -Eq "^Uid:\s+65534\s+65534\s+65534\s+65534$" /proc/$0/status' "$WORKER"
check "the worker has no supplementary groups" bash -c 'grep -Eq "^Groups:\s*$" /proc/$0/status' "$WORKER"
check "the worker has no_new_privs set" bash -c 'grep -Eq "^NoNewPrivs:\s+1$" /proc/$0/status' "$WORKER"

# --- control socket: ownership ----------------------------------------------------
check_fails "another uid cannot unregister the run" \
	in_host setpriv --reuid=65534 --regid=65534 --clear-groups "$GW" ctl --socket "$GWSOCK" unregister --id "$RUN"
check "another uid does not see the run (control: the same client as that uid gets answers)" \
	bash -c 'ip netns exec "$0" setpriv --reuid=65534 --regid=65534 --clear-groups "$1" ctl --socket "$2" list | jq -e ".runs == []"' \
	"$LAB_HOST_NS" "$GW" "$GWSOCK"
check "a malformed request is answered and the connection closed" \
	bash -c 'ip netns exec "$0" "$1" ctl --socket "$2" raw "{\"op\":\"list\",\"op\":\"list\"}" | grep -q "\"ok\":false"' \
	"$LAB_HOST_NS" "$GW" "$GWSOCK"
check "unregister" gw_ctl unregister --id "$RUN"
check "after unregister, TCP from the run is reset" tcp_reset "$A" 7
check "the unknown ingress was audited" audit_has '.action == "net.connect" and .run == "" and (.reason | test("no run owns"))'
check "the gateway is still running" kill -0 "$GW_PID"
check "control: its control socket is there" test -S "$GWSOCK"
check "SIGTERM stops the gateway" gw_stop
check_fails "the control socket is removed" test -e "$GWSOCK"
check "no sanitizer report in the gateway's log" gw_log_clean
lab_finish
