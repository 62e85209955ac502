#!/usr/bin/env bash
# gateway_proxy_mode.sh - the gateway's proxy mode (`mode: proxy`), the network path of platforms
# without nftables (macOS, Windows), on Linux in the lab. The clients live in a namespace of
# their own that has nothing but loopback (no route anywhere: a client that ignores the proxy
# variables reaches nothing, which the first checks show); the gateway's proxy listeners sit on
# that loopback (127.0.0.1 and ::1, made there and handed over with --listen-fds, as a launcher
# does), its upstream side in lab-host. One run is registered with loopback addresses; curl
# (HTTP_PROXY / HTTPS_PROXY / ALL_PROXY=socks5h), python3 requests and git reach allowed.test
# through it and are refused other.test, by name; raw TCP by name through socks5h; SSRF classes
# (the metadata address, the proxy's own loopback); the audit and denial ids; and what proxy
# mode refuses: a second run, addresses that are not loopback ones, a listen address that is
# not loopback, --manage-nft. The same gateway code serves a Mac's run (docs/platforms.md).
set -u
. "$(dirname "$0")/gateway/fixture.sh"
lab_require_root
for tool in jq socat nsenter; do
	command -v "$tool" >/dev/null || { echo "SKIP: missing $tool"; exit 77; }
done
PY=/usr/bin/python3
[[ -x $GW ]] || { echo "SKIP: $GW not built"; exit 77; }
$PY -c 'import requests' 2>/dev/null || { echo "SKIP: python3-requests missing"; exit 77; }
lab_up

T=$LAB_DIR/pm
mkdir -p "$T"
CLI=wdpx-cli$$
GWSOCK=$T/gw.sock
AUDIT=$T/audit.jsonl
CONF=$T/gateway.yaml
RUNID=pm-run$$
ip netns add "$CLI" || { echo "FAIL - netns $CLI"; exit 1; }
lab_on_exit ip netns delete "$CLI"
ip -n "$CLI" link set lo up
in_cli() { ip netns exec "$CLI" "$@"; }

cat >"$T/policy.yaml" <<EOF
version: 1
network:
  allow:
    - { host: allowed.test, ports: [80, 443, 7] }
    - { host: metadata.test, ports: [80] }
    - { host: loopback.test, ports: [15080] }
EOF

# --- the configuration: what proxy mode refuses -----------------------------------------
printf 'version: 1\nmode: proxy\nlisten: {v4: "0.0.0.0"}\n' >"$T/bad-listen.yaml"
printf 'version: 1\nmode: sideways\n' >"$T/bad-mode.yaml"
OUT=$("$GW" --config "$T/bad-listen.yaml" --no-privsep 2>&1)
RC=$?
check "mode: proxy with listen.v4 0.0.0.0 is refused at its line and column (exit 2)" \
	bash -c '[[ $0 == 2 && $1 == *"bad-listen.yaml:3:"*"listen.v4: \`0.0.0.0\` is not a loopback address"* ]]' "$RC" "$OUT"
OUT=$("$GW" --config "$T/bad-mode.yaml" --no-privsep 2>&1)
RC=$?
check "mode: sideways is refused (exit 2, expected transparent or proxy)" \
	bash -c '[[ $0 == 2 && $1 == *"bad-mode.yaml:2:7"*"expected \`transparent\` or \`proxy\`"* ]]' "$RC" "$OUT"
cat >"$CONF" <<EOF
version: 1
mode: proxy
resolvers: ["$LAB_DNS_V4"]
control: {path: "$GWSOCK"}
audit: {path: "$AUDIT"}
limits: {peek_timeout_ms: 1500, connect_timeout_ms: 2000}
EOF
OUT=$(in_host "$GW" --config "$CONF" --manage-nft 2>&1)
RC=$?
check "--manage-nft in proxy mode is refused (exit 2): there is no nft table" \
	bash -c '[[ $0 == 2 && $1 == *"proxy-mode gateway (mode: proxy) has no nft table"* ]]' "$RC" "$OUT"

# --- the client namespace has no network of its own --------------------------------------
check_fails --denied 7 "without the proxy, curl in the client namespace reaches nothing (no route)" \
	in_cli curl -sS --max-time 5 --noproxy '*' http://203.0.113.10/

# --- the gateway, its listeners on the client namespace's loopback -----------------------
lab_spawn host gw "$PY" "$SRC/tests/integration/gateway/proxy_listen.py" "/run/netns/$CLI" 15080 \
	"$GW" --config "$CONF" --listen-fds 2
GW_PID=$LAB_SPAWNED_PID
if ! lab_wait 10 test -S "$GWSOCK"; then
	echo "FAIL - the gateway did not start"
	cat "$LAB_DIR/log/host-gw.log"
	exit 1
fi
gw_ctl() { in_host "$GW" ctl --socket "$GWSOCK" "$@"; }
listening() { ip netns exec "$1" ss -Hltn | awk '{print $4}' | sort | paste -sd ' '; }
check_eq "the client namespace: the proxy port on loopback, nothing else" \
	"127.0.0.1:15080 [::1]:15080" listening "$CLI"
check "lab-host: no transparent, DNS or proxy listener of the gateway" \
	bash -c '! ip netns exec "$0" ss -Hltnu | grep -Eq ":(15001|15053|15080)\b"' "$LAB_HOST_NS"
check "the gateway says it serves in proxy mode" \
	lab_match "serving: proxy mode" cat "$LAB_DIR/log/host-gw.log"

# --- one run, by its loopback addresses --------------------------------------------------
OUT=$(gw_ctl register --id bad$$ --if lo --host-v4 10.213.0.1 --sandbox-v4 10.213.0.2 \
	--policy "$T/policy.yaml" 2>&1)
check "a run with pool addresses is refused in proxy mode" \
	bash -c '[[ $0 == *"the listen address (127.0.0.1)"* ]]' "$OUT"
check "the run registers with its loopback addresses" \
	gw_ctl register --id "$RUNID" --if lo --host-v4 127.0.0.1 --sandbox-v4 127.0.0.1 \
	--host-v6 ::1 --sandbox-v6 ::1 --policy "$T/policy.yaml"
OUT=$(gw_ctl register --id second$$ --if lo --host-v4 127.0.0.1 --sandbox-v4 127.0.0.1 \
	--policy "$T/policy.yaml" 2>&1)
check "a second run is refused: one run at a time" \
	bash -c '[[ $0 == *"serves one run at a time; run $1 is registered"* ]]' "$OUT" "$RUNID"

P4=http://127.0.0.1:15080
P6="http://[::1]:15080"
# px VAR=VALUE... -- CMD...: CMD in the client namespace with only the given proxy variables
px()
{
	local vars=()
	while [[ $1 != -- ]]; do vars+=("$1"); shift; done
	shift
	in_cli env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY \
		-u all_proxy -u NO_PROXY -u no_proxy "${vars[@]}" "$@"
}
pcurl() { local v=$1; shift; px "$v" -- curl -sS --max-time 10 --cacert "$LAB_CA" "$@"; }

echo "# curl with the proxy variables"
check_eq "HTTPS_PROXY: https://allowed.test/" "hello from allowed.test" \
	pcurl HTTPS_PROXY=$P4 https://allowed.test/
check_fails --denied 56 "HTTPS_PROXY: https://other.test/ is refused (CONNECT 403)" \
	pcurl HTTPS_PROXY=$P4 https://other.test/
check_eq "HTTPS_PROXY over IPv6 loopback: https://allowed.test/" "hello from allowed.test" \
	pcurl HTTPS_PROXY=$P6 https://allowed.test/
# curl reads http_proxy in lower case only (httpoxy: HTTP_PROXY may come from a CGI request)
check_eq "http_proxy (absolute form): http://allowed.test/" "hello from allowed.test" \
	pcurl http_proxy=$P4 http://allowed.test/
OUT=$(pcurl http_proxy=$P4 -i http://other.test/ 2>&1)
check "http_proxy: http://other.test/ gets a 403 with a denial id" \
	bash -c '[[ $0 == "HTTP/1.1 403"* && $0 =~ dn-[0-9a-f]{12} ]]' "$OUT"
DN=$(grep -oE 'dn-[0-9a-f]{12}' <<<"$OUT" | head -n 1)
check "that denial id is the audit's, for other.test, proto proxy-http" \
	audit_has ".action == \"net.connect\" and .allowed == false and .denial_id == \"$DN\" and .resource == \"other.test\""
check_eq "ALL_PROXY=socks5h: https://allowed.test/" "hello from allowed.test" \
	pcurl ALL_PROXY=socks5h://127.0.0.1:15080 https://allowed.test/
check_fails --denied 97 "ALL_PROXY=socks5h: https://other.test/ is refused" \
	pcurl ALL_PROXY=socks5h://127.0.0.1:15080 https://other.test/

echo "# raw TCP by name, SSRF classes"
sprobe() { px -- $PY "$SRC/tests/integration/gateway/socks_probe.py" 127.0.0.1 15080 "$@"; }
check_eq "socks5h raw TCP by name: echo on allowed.test:7" "method=00 rep=00 ping" \
	sprobe greet:050100 connect:allowed.test:7 say:ping
check_eq "socks5h raw TCP: other.test:7 is refused (reply 02)" "method=00 rep=02 closed" \
	sprobe greet:050100 connect:other.test:7
check_fails --denied 56 "CONNECT metadata.test:80 (allowed by name, 169.254.169.254) is refused" \
	pcurl http_proxy=$P4 -p http://metadata.test/
check "that refusal names the link-local class" \
	audit_has '.action == "net.connect" and .allowed == false and .resource == "metadata.test" and (.reason | test("link-local"))'
check_fails --denied 56 "CONNECT to the proxy's own 127.0.0.1:15080 is refused" \
	pcurl http_proxy=$P4 -p http://127.0.0.1:15080/
check_fails --denied 56 "CONNECT loopback.test:15080 (allowed by name, 127.0.0.1: the proxy) is refused" \
	pcurl http_proxy=$P4 -p http://loopback.test:15080/
check "that refusal names the loopback class" \
	audit_has '.action == "net.connect" and .allowed == false and .resource == "loopback.test" and (.reason | test("loopback"))'

echo "# python3 requests and git with the proxy variables"
cat >"$T/req.py" <<EOF
import sys, requests
r = requests.get(sys.argv[1], verify="$LAB_CA", timeout=8)
print(r.status_code, r.text, end="")
EOF
check_eq "requests, HTTPS_PROXY: https://allowed.test/" "200 hello from allowed.test" \
	px HTTPS_PROXY=$P4 -- $PY "$T/req.py" https://allowed.test/
check_fails --denied 1 "requests, HTTPS_PROXY: https://other.test/ raises (ProxyError)" \
	px HTTPS_PROXY=$P4 -- $PY "$T/req.py" https://other.test/
check "git ls-remote https://allowed.test/git/lab.git" \
	lab_match "refs/heads/main" px HTTPS_PROXY=$P4 GIT_SSL_CAINFO="$LAB_CA" -- \
	git ls-remote https://allowed.test/git/lab.git
check_fails --denied 128 "git ls-remote https://other.test/git/lab.git is refused" \
	px HTTPS_PROXY=$P4 GIT_SSL_CAINFO="$LAB_CA" -- git ls-remote https://other.test/git/lab.git

echo "# the audit"
check "every allowed connection is the run's, by name" \
	jq -e -s --arg r "$RUNID" '[.[] | select(.action == "net.connect" and .allowed)] |
		length > 0 and all(.run == $r)' "$AUDIT"
check "the socks5h refusal is audited with its denial id" \
	audit_has '.action == "net.connect" and .allowed == false and .resource == "other.test" and .proto == "socks5" and (.denial_id | length) > 0'
check "the run unregisters" gw_ctl unregister --id "$RUNID"
check "no connection so far was refused for want of a run" \
	lab_negate audit_has '.reason == "no run owns this ingress address pair"'
# the refusal is a reset right after the accept: curl says 56, or 7 when the reset beat its
# CONNECT; the audit says which it was
check_fails --denied 7,56 "after it, the proxy refuses the same request" \
	pcurl HTTPS_PROXY=$P4 https://allowed.test/
check "that refusal is audited: no run owns the connection" \
	audit_has '.action == "net.connect" and .allowed == false and .reason == "no run owns this ingress address pair"'
check "SIGTERM stops the gateway" gw_stop
check "no sanitizer report in the gateway's log" \
	lab_no_match "Sanitizer|runtime error:" cat "$LAB_DIR/log/host-gw.log"
lab_finish
