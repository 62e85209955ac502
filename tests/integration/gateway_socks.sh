#!/usr/bin/env bash
# gateway_socks.sh - the proxy port's SOCKS5 in the lab (the proxy mode of platforms without
# nftables): curl --socks5-hostname (socks5h: the name goes to the gateway) to an allowed name
# over HTTPS and HTTP beside a denied one, curl --socks5 (the client resolved: an address
# literal, decided by the cidr rules), raw TCP by name (echo on port 7) through a raw SOCKS5
# client, an SSRF-class name, BIND and UDP ASSOCIATE refused with their reply code, a broken
# greeting and request closed without an answer, the audit events and denial ids, git over
# HTTP(S) through socks5h, and the HTTP proxy on the same port still working.
set -u
. "$(dirname "$0")/gateway/fixture.sh"
gw_setup
POL=$LAB_DIR/policy.yaml
cat >"$POL" <<EOF2
version: 1
network:
  allow:
    - { host: allowed.test, ports: [80, 443, 7] }
    - { host: metadata.test, ports: [80] }
    - { cidr: "$LAB_ALLOWED_V4/32", ports: [80] }
EOF2
PROBE="$SRC/tests/integration/gateway/socks_probe.py"
P4=$H4:15080
probe() { in_run python3 "$PROBE" "$H4" 15080 "$@"; }
# curl_err ARGS...: curl through the proxy that must fail; prints its exit status and message
curl_err()
{
	local out rc
	out=$(run_curl "$@" 2>&1)
	rc=$?
	echo "rc=$rc $out"
}

check "register the run" gw_register "$POL"
A=$(synth allowed.test)
check "allowed.test has a synthetic address (for --socks5's client-side resolution)" \
	bash -c '[[ $0 =~ ^100\. ]]' "$A"

# --- socks5h: the name goes to the gateway --------------------------------------------
check_eq "curl --socks5-hostname https://allowed.test/" "hello from allowed.test" \
	run_curl --socks5-hostname "$P4" https://allowed.test/
check_eq "curl --socks5-hostname http://allowed.test/" "hello from allowed.test" \
	run_curl --socks5-hostname "$P4" http://allowed.test/
check_eq "socks5h through the proxy port over IPv6" "hello from allowed.test" \
	run_curl -x "socks5h://[$H6]:15080" https://allowed.test/
check_eq "the HTTP proxy on the same port still works (CONNECT)" "hello from allowed.test" \
	run_curl -x "http://$P4" https://allowed.test/
OUT=$(curl_err --socks5-hostname "$P4" https://other.test/)
check "curl --socks5-hostname https://other.test/ is refused: not allowed by ruleset" \
	bash -c '[[ $0 == "rc=97 "*"SOCKS5 connection to other.test. (2)"* ]]' "$OUT"
OUT=$(curl_err --socks5-hostname "$P4" http://allowed.test:9/)
check "allowed.test on a port no rule allows is refused the same way" \
	bash -c '[[ $0 == "rc=97 "*"(2)"* ]]' "$OUT"
check "the denial was audited with its denial id and proto socks5" \
	audit_has '.action == "net.connect" and .allowed == false and .resource == "other.test" and .port == 443 and .proto == "socks5" and (.denial_id | length) > 0 and (.reason | test("not allowed by policy"))'
check "the HTTPS tunnel was audited as allowed, by its rule" \
	audit_has '.action == "net.connect" and .allowed == true and .resource == "allowed.test" and .port == 443 and .sni == "allowed.test" and .rule != null'
check "fronting inside a socks5h tunnel: allowed.test then SNI other.test gets a TLS alert" \
	bash -c 'out=$(ip netns exec "$0" curl -sS --max-time 10 --cacert "$1" --socks5-hostname "$2" --connect-to other.test:443:allowed.test:443 https://other.test/ 2>&1); [[ $out == *"access denied"* ]]' \
	"$RUN" "$LAB_CA" "$P4"

# --- socks5: the client resolved, an address literal ---------------------------------------
OUT=$(run_curl --socks5 "$P4" "http://$LAB_ALLOWED_V4/" 2>&1)
check "curl --socks5 http://$LAB_ALLOWED_V4/ (a cidr rule names it)" \
	bash -c '[[ $0 == "hello from "* ]]' "$OUT"
OUT=$(curl_err --socks5 "$P4" "http://$LAB_OTHER_V4/")
check "curl --socks5 http://$LAB_OTHER_V4/ (no cidr rule) is refused" \
	bash -c '[[ $0 == "rc=97 "*"(2)"* ]]' "$OUT"
OUT=$(curl_err --socks5 "$P4" https://allowed.test/)
check "curl --socks5 https://allowed.test/ sends the synthetic address: a literal, refused" \
	bash -c '[[ $0 == "rc=97 "*"(2)"* ]]' "$OUT"
AAAA=$(synth allowed.test AAAA)
check "the literal was decided as one (resource = the synthetic address curl sent)" \
	audit_has ".action == \"net.connect\" and .allowed == false and (.resource == \"$A\" or .resource == \"$AAAA\") and .port == 443 and .proto == \"socks5\""

# --- raw TCP by name, and what the gateway refuses ------------------------------------------
check_eq "raw TCP by name through socks5h: echo on allowed.test:7" "method=00 rep=00 ping" \
	probe greet:050100 connect:allowed.test:7 say:ping
check_eq "greeting and request in one write (pipelined)" "method=00 rep=00 pong" \
	probe raw:050100050100030c616c6c6f7765642e7465737400 raw:07 reply say:pong
check_eq "other.test:7 is refused (reply 02) and closed" "method=00 rep=02 closed" \
	probe greet:050100 connect:other.test:7
check_eq "ATYP IPv4 $LAB_ALLOWED_V4:7 (the cidr rule is for port 80) is refused" \
	"method=00 rep=02 closed" probe greet:050100 "ipv4:$LAB_ALLOWED_V4:7"
check_eq "SSRF: metadata.test (allowed, resolves to 169.254.169.254) is refused" \
	"method=00 rep=02 closed" probe greet:050100 connect:metadata.test:80
check "... audited with the SSRF guard's words" \
	audit_has '.allowed == false and .resource == "metadata.test" and .proto == "socks5" and (.reason | test("169.254.169.254 is a link-local address"))'
check_eq "BIND is refused: command not supported (07)" "method=00 rep=07 closed" \
	probe greet:050100 cmd:2:allowed.test:80
check_eq "UDP ASSOCIATE is refused: command not supported (07)" "method=00 rep=07 closed" \
	probe greet:050100 cmd:3:allowed.test:80
check "both audited as denials with a denial id" \
	audit_has '.allowed == false and .proto == "socks5" and .reason == "SOCKS5 UDP ASSOCIATE is not supported" and (.denial_id | length) > 0'
check_eq "an unknown address type is refused (08)" "method=00 rep=08 closed" \
	probe raw:050100050100020102030400 raw:50 reply
check_eq "only username/password offered: no acceptable method (ff)" "method=ff" \
	probe greet:050102
OUT=$(probe greet:0500)
check "a greeting with no methods is closed without an answer" \
	bash -c '[[ $0 =~ ^(closed|reset)$ ]]' "$OUT"
OUT=$(probe greet:050100 raw:050101030c616c6c6f7765642e746573740007 say:ping)
check "a request with a non-zero reserved byte: closed, nothing relayed (no echo)" \
	bash -c '[[ $0 =~ ^method=00\ (closed|reset)$ ]]' "$OUT"
check "the broken greeting was audited" \
	audit_has '.allowed == false and .proto == "socks5" and .reason == "SOCKS5 greeting offers no method"'
check "the echo tunnel's close was audited with its bytes" \
	audit_has '.action == "net.close" and .resource == "allowed.test" and .port == 7 and .bytes_up > 0 and .bytes_down > 0'

# --- git through socks5h --------------------------------------------------------------------
if command -v git >/dev/null; then
	GITP=(env "GIT_SSL_CAINFO=$LAB_CA" git -c "http.proxy=socks5h://$P4")
	OUT=$(in_run "${GITP[@]}" ls-remote https://allowed.test/git/lab.git 2>&1)
	check "git ls-remote https://allowed.test/git/lab.git through socks5h" \
		bash -c '[[ $0 == *refs/heads/main* ]]' "$OUT"
	OUT=$(in_run "${GITP[@]}" ls-remote http://allowed.test/git/lab.git 2>&1)
	check "git ls-remote http://allowed.test/git/lab.git through socks5h" \
		bash -c '[[ $0 == *refs/heads/main* ]]' "$OUT"
	check_fails --denied 128 "git ls-remote https://other.test/git/lab.git through socks5h is refused" \
		in_run "${GITP[@]}" ls-remote https://other.test/git/lab.git
else
	echo "# git missing: git through socks5h not checked"
fi
if in_run python3 -c 'import socks, requests' 2>/dev/null; then
	check_eq "python3 requests through socks5h" "hello from allowed.test" in_run python3 -c \
		'import requests,sys; p={"https":"socks5h://"+sys.argv[1]}; print(requests.get("https://allowed.test/", proxies=p, verify=sys.argv[2]).text.strip())' \
		"$P4" "$LAB_CA"
else
	echo "# python3 socks module missing: requests through socks5h not checked"
fi

check "the gateway is still running" kill -0 "$GW_PID"
check "SIGTERM stops the gateway" gw_stop
check "no sanitizer report in the gateway's log" gw_log_clean
lab_finish
