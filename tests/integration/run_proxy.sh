#!/usr/bin/env bash
# run_proxy.sh - proxy-aware clients work in both families (issue 11, item 6). The proxy
# variables name the gateway as `warden-proxy`, which the run's /etc/hosts resolves to the
# run's own gateway addresses, v4 and v6, so `curl -4` and `curl -6` both reach it (an IPv4
# literal made `curl -6` fail with exit 7); python3 requests (over either family) and git
# over HTTPS (a dumb-HTTP repository in lab-wan) go through it. ALL_PROXY is not set: curl
# uses it for every protocol, also ones an HTTP proxy cannot carry, which the transparent
# path does carry (raw TCP by name). Negative checks sit next to positive ones.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
PY=/usr/bin/python3
[[ -x $PY ]] && $PY -c 'import requests' 2>/dev/null ||
	{ echo "SKIP: python3-requests missing"; exit 77; }
command -v git >/dev/null || { echo "SKIP: git missing"; exit 77; }
lab_up

T=$(lab_tmpdir wd-run-proxy)
chmod 0755 "$T"
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0

cat >"$T/net.yaml" <<EOF
version: 1
filesystem:
  read: ["$LAB_CA", "$T/req.py"]
env:
  set:
    GIT_SSL_CAINFO: "$LAB_CA"
network:
  allow:
    - {host: allowed.test, ports: [80, 443, 7]}
EOF
# req.py URL [4|6]: GET URL with python3 requests (proxies from the environment), connecting
# to the proxy over the given family only; prints the body
cat >"$T/req.py" <<EOF
import socket, sys
import requests
import urllib3.util.connection as c
if len(sys.argv) > 2:
    c.allowed_gai_family = lambda: socket.AF_INET6 if sys.argv[2] == "6" else socket.AF_INET
r = requests.get(sys.argv[1], verify="$LAB_CA", timeout=8)
r.raise_for_status()
print(r.text, end="")
EOF
chmod 0644 "$T/req.py"

wr() { in_host "$W" run -q --audit-log "$A" -p "$T/net.yaml" "$@"; }
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
# via_proxy: the newest run reached allowed.test through the proxy: an allowed connection
# to it, and no DNS query for it (a proxy client hands the name to the proxy; only
# warden-proxy is resolved, from /etc/hosts)
via_proxy() {
	jq -e -s --arg r "$(last_run)" '
		([.[] | select(.run == $r and .action == "net.connect" and .allowed and
			.resource == "allowed.test")] | length > 0) and
		([.[] | select(.run == $r and .action == "dns.query" and
			(.resource == "allowed.test" or .resource == "warden-proxy"))] | length == 0)' \
		"$A" >/dev/null
}
# has PATTERN CMD...: CMD's output matches PATTERN
has() {
	local pat=$1 out
	shift
	out=$("$@" 2>&1)
	printf '%s\n' "$out"
	grep -q -- "$pat" <<<"$out"
}
curl_in() { wr -- curl -fsS --max-time 8 --cacert "$LAB_CA" "$@"; }

echo "# the proxy variables and the name behind them"
check_eq "https_proxy names the gateway, not an address" "http://warden-proxy:15080" \
	wr -- printenv https_proxy
check_eq "HTTP_PROXY too" "http://warden-proxy:15080" wr -- printenv HTTP_PROXY
# (printenv exits 1 for a variable that is not set; the controls are the two above)
check_fails --denied 1 "ALL_PROXY is not set" wr -- printenv ALL_PROXY
check_fails --denied 1 "all_proxy is not set" wr -- printenv all_proxy
check "warden-proxy resolves to the run's own gateway address, v4" wr -- sh -c \
	'getent ahostsv4 warden-proxy | grep -q "^$(awk "/^nameserver [0-9.]*$/ {print \$2}" /etc/resolv.conf) "'
check "... and v6" wr -- sh -c \
	'getent ahostsv6 warden-proxy | grep -q "^$(awk "/^nameserver .*:/ {print \$2}" /etc/resolv.conf) "'

echo "# curl in both families, with the variables set"
check_eq "curl -4 https://allowed.test/" "hello from allowed.test" curl_in -4 https://allowed.test/
check "... through the proxy" via_proxy
check_eq "curl -6 https://allowed.test/" "hello from allowed.test" curl_in -6 https://allowed.test/
check "... through the proxy" via_proxy
check_eq "curl -6 http://allowed.test/ (absolute-form request)" "hello from allowed.test" \
	curl_in -6 http://allowed.test/
check "... through the proxy" via_proxy
check_fails "curl -6 https://other.test/ is denied" curl_in -6 https://other.test/
check_eq "control: curl -6 without the proxy (transparent) works" "hello from allowed.test" \
	curl_in -6 --noproxy '*' https://allowed.test/
check_fails "... and that one is not through the proxy (it resolved allowed.test)" via_proxy

echo "# python3 requests"
check_eq "requests.get https://allowed.test/ (proxy over IPv4)" "hello from allowed.test" \
	wr -- "$PY" "$T/req.py" https://allowed.test/ 4
check "... through the proxy" via_proxy
check_eq "requests.get https://allowed.test/ (proxy over IPv6)" "hello from allowed.test" \
	wr -- "$PY" "$T/req.py" https://allowed.test/ 6
check "... through the proxy" via_proxy
check_eq "requests.get http://allowed.test/" "hello from allowed.test" \
	wr -- "$PY" "$T/req.py" http://allowed.test/
check_fails "requests.get https://other.test/ is denied" \
	wr -- "$PY" "$T/req.py" https://other.test/

echo "# git over HTTPS"
check "git ls-remote https://allowed.test/git/lab.git" \
	has "refs/heads/main" wr -- git ls-remote https://allowed.test/git/lab.git
check "... through the proxy" via_proxy
check_eq "git clone https://allowed.test/git/lab.git" "warden lab repository" wr -- sh -c \
	'cd /tmp && git clone -q https://allowed.test/git/lab.git && cat lab/README'
check "... through the proxy" via_proxy
check_fails --denied 128 "git ls-remote https://other.test/git/lab.git is denied (fatal: 128)" \
	wr -- git ls-remote https://other.test/git/lab.git

echo "# without ALL_PROXY, curl's other protocols go the transparent way"
check "curl telnet://allowed.test:7 (raw TCP by name, echo)" has "^through" wr -- sh -c \
	'echo through | curl -sS --max-time 4 telnet://allowed.test:7'

lab_finish
