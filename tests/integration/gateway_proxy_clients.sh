#!/usr/bin/env bash
# gateway_proxy_clients.sh - proxy mode in the lab (issue 29): the network path of macOS and Windows,
# where there is no nftables and a run's clients reach the network only through the gateway's
# proxy port, told by proxy variables. Real clients (curl, git, python3 requests, Node's fetch
# with undici's EnvHttpProxyAgent, curl's telnet) go through HTTP_PROXY/HTTPS_PROXY (CONNECT and
# absolute-form) and ALL_PROXY=socks5h:// (the name goes to the gateway), each allowed probe
# beside a denied one with the same client; an SSRF-class name is refused through each kind; the
# audit has every denial as a net.connect event with its denial id, the very id the client saw
# where it can see one (the 403's X-Warden-Denial header and body; a SOCKS5 reply has no room).
#
# The gateway here is the fixture's, a transparent-mode one whose table is then removed: the
# proxy port is the same code either way; gateway_proxy_mode.sh runs the gateway in `mode:
# proxy` itself (loopback listeners, one run), with fewer clients.
#
# The setup, as close to a Mac's as the gateway fixture allows (gateway/fixture.sh):
# - The gateway runs in lab-host as in the other gateway tests, and the run is registered with
#   it (it attributes a connection by the run's source address). Then the fixture's nft table
#   `inet warden` is deleted from lab-host: no transparent redirect, no DNS redirect, no filter
#   on the host side at all. A Mac has no nftables, and the proxy port needs none.
# - What keeps the run in is its own namespace's routing, in place of the sandbox profile
#   (Seatbelt's `(deny network*)` with only the proxy port allowed; the WFP filters of an
#   AppContainer): policy routing rules send TCP to the proxy port at the run's gateway address
#   (v4 and v6) to the main table, and everything else to `prohibit`. Any other connect() or
#   send fails at once (EACCES), as Seatbelt refuses a connect: the gateway's DNS front and
#   transparent port are as unreachable as the lab's servers. An nft output chain would do
#   the same more slowly: its drop (or reject, whose reset this kernel does not deliver to the
#   local socket) leaves a TCP connect to retry its SYN until the client's timeout.
# - So the run resolves nothing itself, as a Mac run cannot (mDNSResponder is denied): a client
#   works only when it hands the name to the proxy. Each client is shown failing without the
#   proxy variables (Node 20: with them but without the dispatcher), and every allowed probe is
#   checked to have left its allowed net.connect event in the gateway's audit log.
# - The variables: HTTP_PROXY/HTTPS_PROXY = http://GW:15080 in upper and lower case (curl reads
#   http_proxy only in lower case, checked below; warden's Linux backend sets both, a Mac one
#   must too), NO_PROXY empty, NODE_USE_ENV_PROXY=1 (Node >= 24; Node 20 needs the dispatcher
#   by hand, tests/integration/gateway/fetch_probe.mjs); or ALL_PROXY = socks5h://GW:15080
#   alone, which curl, git and requests then take for every URL.
set -u
. "$(dirname "$0")/gateway/fixture.sh"
PY=/usr/bin/python3
[[ -x $PY ]] && $PY -c 'import requests' 2>/dev/null ||
	{ echo "SKIP: python3-requests missing"; exit 77; }
command -v git >/dev/null || { echo "SKIP: git missing"; exit 77; }
MCP=$SRC/tests/mcp
UNDICI=$MCP/node_modules/undici
if command -v node >/dev/null && [[ ! -e $UNDICI/package.json ]] && command -v npm >/dev/null; then
	# as the MCP tests do: the pinned packages (package-lock.json), once; without undici the
	# Node checks are ERRORs (fetch_probe.mjs exits 2)
	(cd "$MCP" && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
		echo "# npm ci in tests/mcp failed: no undici, the Node checks cannot run"
fi
lab_probe_errors node 2 # fetch_probe.mjs: usage, no undici
export LAB_BIGFILE_MIB=1 # (the lab's throughput file is not used here)
gw_setup
POL=$LAB_DIR/policy.yaml
cat >"$POL" <<EOF2
version: 1
network:
  allow:
    - { host: allowed.test, ports: [80, 443, 7] }
    - { host: metadata.test, ports: [80, 443] }
    - { host: private10.test, ports: [443] }
EOF2
FETCH=$SRC/tests/integration/gateway/fetch_probe.mjs
REQ=$SRC/tests/integration/gateway/requests_probe.py
SOCKS=$SRC/tests/integration/gateway/socks_probe.py
PX=http://$H4:15080
SX=socks5h://$H4:15080
mkdir -p "$LAB_DIR/home" "$LAB_DIR/clones"
# every client's environment: nothing of the script's, the lab CA for git and Node
BASE=(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$LAB_DIR/home" LANG=C.UTF-8
	GIT_SSL_CAINFO="$LAB_CA" NODE_EXTRA_CA_CERTS="$LAB_CA")
CURL=(curl -sS --max-time 10 --cacert "$LAB_CA")

# bare CMD...: CMD in the run's namespace without proxy variables
bare() { in_run "${BASE[@]}" NO_PROXY= no_proxy= "$@"; }
# viahttp CMD...: with the HTTP proxy variables (PX: the proxy's URL)
viahttp()
{
	in_run "${BASE[@]}" HTTP_PROXY="$PX" http_proxy="$PX" HTTPS_PROXY="$PX" https_proxy="$PX" \
		NO_PROXY= no_proxy= NODE_USE_ENV_PROXY=1 "$@"
}
# viahttp6 CMD...: the same with the proxy at the gateway's IPv6 address
viahttp6() { PX="http://[$H6]:15080" viahttp "$@"; }
# viasocks CMD...: with ALL_PROXY=socks5h:// only (SX: the proxy's URL)
viasocks() { in_run "${BASE[@]}" ALL_PROXY="$SX" all_proxy="$SX" NO_PROXY= no_proxy= "$@"; }
# saw FILE CMD...: CMD with its stdout and stderr kept in FILE (and shown); CMD's status
saw()
{
	local f=$1 rc=0
	shift
	"$@" >"$f" 2>&1 || rc=$?
	cat "$f"
	return "$rc"
}
# seen_id FILE: the one denial id the client printed in FILE (nothing when none, or several)
seen_id() { grep -oE 'dn-[0-9a-f]{12}' "$1" | sort -u | awk 'END { if (NR == 1) print $0 }'; }
# audit_id ID FILTER: exactly one audit event carries denial id ID: a net.connect denial
# matching FILTER
audit_id()
{
	[[ -n $1 ]] || { echo "no denial id seen"; return 1; }
	jq -e -s --arg id "$1" "[.[] | select(.denial_id == \$id)] | length == 1 and
		(.[0] | .action == \"net.connect\" and .allowed == false and ($2))" "$AUDIT" >/dev/null
}
# mark: the audit log's length now; since FILTER: an event written after the mark matches it
# (waited for up to 3 s: the event is written in the gateway's loop round, not before the
# client's answer)
mark() { MARK=$(wc -l <"$AUDIT"); }
_since() { tail -n "+$((MARK + 1))" "$AUDIT" | jq -e -s "[.[] | select($1)] | length > 0" >/dev/null; }
since() { lab_wait 3 _since "$1"; }
# refusal: mark, before a probe the gateway must refuse (REFUSALS counts them)
REFUSALS=0
refusal()
{
	mark
	REFUSALS=$((REFUSALS + 1))
}
# allowed_since NAME PORT [PROTO]: the gateway relayed a connection to NAME:PORT since the mark
allowed_since()
{
	since ".action == \"net.connect\" and .allowed and .resource == \"$1\" and .port == $2 and
		(\"${3:-}\" == \"\" or .proto == \"${3:-}\")"
}
# denied_since NAME PORT PROTO [REASON-ERE]: a net.connect denial of NAME:PORT with PROTO
# (connect, proxy-http, socks5) and a denial id since the mark
denied_since()
{
	since ".action == \"net.connect\" and .allowed == false and .resource == \"$1\" and
		.port == $2 and .proto == \"$3\" and (.denial_id | test(\"^dn-[0-9a-f]{12}$\")) and
		(.reason | test(\"${4:-.}\"))"
}
# gitclone VIA URL: git clone of URL under VIA (bare, viahttp, viasocks) into a new folder;
# prints the clone's README
gitclone()
{
	local dir
	dir=$(mktemp -d "$LAB_DIR/clones/c.XXXXXX") || return 125
	"$1" git clone -q "$2" "$dir/lab" || return
	cat "$dir/lab/README"
}
# telnet_ping VIA NAME:PORT: curl's telnet:// under VIA sends "ping"; prints what came back
# (the echo server keeps the connection open: curl ends at its 2 s limit, exit 28)
telnet_ping() { echo ping | "$1" curl -sS --max-time 2 "telnet://$2"; }
# proxy_only: the run namespace's routing lets out TCP to the proxy port at the run's gateway
# address, v4 and v6, and prohibits everything else
proxy_only()
{
	in_run ip -4 rule add pref 100 to "$H4" ipproto tcp dport 15080 lookup main &&
		in_run ip -4 rule add pref 200 prohibit &&
		in_run ip -6 rule add pref 100 to "$H6" ipproto tcp dport 15080 lookup main &&
		in_run ip -6 rule add pref 200 prohibit
}

check "register the run" gw_register "$POL"

# --- the setup: no nft on the host, the run reaches only the proxy port -------------------------
check "control: the fixture's nft table is in lab-host" in_host nft list table inet warden
check "control: dig in the run namespace gets an answer (the DNS front, before proxy mode)" \
	lab_match '^100\.' run_dig +short allowed.test
check "delete lab-host's nft table (no redirect, no host filter: a Mac has no nftables)" \
	in_host nft delete table inet warden
check_fails --denied 1 "... it is gone" in_host nft list table inet warden
check "the run's routing: TCP to $H4:15080 and [$H6]:15080, everything else prohibited" proxy_only
check_fails --denied 9 "dig in the run namespace now gets no answer: no resolver is reachable" \
	run_dig +short allowed.test
mark
DNS_MARK=$MARK

# --- without the proxy variables, each client fails ---------------------------------------------
check_fails --denied 6 "bare curl https://allowed.test/: no resolver" bare "${CURL[@]}" https://allowed.test/
check_fails --denied 7 "bare curl to allowed.test's real address: prohibited in the namespace" \
	bare "${CURL[@]}" --resolve "allowed.test:443:$LAB_ALLOWED_V4" https://allowed.test/
check_fails --denied 7 "bare curl to the gateway's transparent port: prohibited as well" \
	bare "${CURL[@]}" "http://$H4:15001/"
check_fails --denied 7 "bare curl telnet://$LAB_ALLOWED_V4:7 (the echo service): prohibited" \
	telnet_ping bare "$LAB_ALLOWED_V4:7"
check_fails --denied 128 "bare git clone https://allowed.test/git/lab.git fails" \
	gitclone bare https://allowed.test/git/lab.git
check_fails --denied 1 "bare python3 requests https://allowed.test/ fails" \
	bare "$PY" "$REQ" "$LAB_CA" https://allowed.test/
check_fails --denied 1 "Node 20's fetch with the variables (NODE_USE_ENV_PROXY=1) but no dispatcher fails" \
	viahttp node "$FETCH" "$UNDICI" plain https://allowed.test/
check_fails --denied 6 "curl ignores HTTP_PROXY in upper case (httpoxy): http:// goes direct, no resolver" \
	in_run "${BASE[@]}" HTTP_PROXY="$PX" "${CURL[@]}" http://allowed.test/

# --- curl -----------------------------------------------------------------------------------------
mark
check_eq "curl https://allowed.test/ with HTTPS_PROXY (CONNECT)" "hello from allowed.test" \
	viahttp "${CURL[@]}" https://allowed.test/
check "... carried by the proxy port (an allowed net.connect of allowed.test:443)" \
	allowed_since allowed.test 443 tls
mark
check_eq "curl http://allowed.test/ with http_proxy (absolute-form)" "hello from allowed.test" \
	viahttp "${CURL[@]}" http://allowed.test/
check "... carried by the proxy port (proto proxy-http)" allowed_since allowed.test 80 proxy-http
mark
check_eq "curl https://allowed.test/ with HTTPS_PROXY at the gateway's IPv6 address" \
	"hello from allowed.test" viahttp6 "${CURL[@]}" https://allowed.test/
check "... carried by the proxy port" allowed_since allowed.test 443 tls
refusal
check_fails --denied 56 "curl https://other.test/ with HTTPS_PROXY: the CONNECT gets a 403" \
	saw "$LAB_DIR/curl-connect.out" viahttp "${CURL[@]}" -v https://other.test/
ID=$(seen_id "$LAB_DIR/curl-connect.out")
check "... curl saw X-Warden-Denial $ID: the audit's denial of other.test:443 (proto connect)" \
	audit_id "$ID" '.resource == "other.test" and .port == 443 and .proto == "connect"'
refusal
check "curl http://other.test/ with http_proxy: a 403" \
	saw "$LAB_DIR/curl-abs.out" viahttp "${CURL[@]}" -D - http://other.test/
ID=$(seen_id "$LAB_DIR/curl-abs.out")
check "... its X-Warden-Denial and its body name one id, $ID" lab_match \
	"^warden: denied: other\.test:80 is not allowed by policy .* \(id $ID\)$" cat "$LAB_DIR/curl-abs.out"
check "... the audit's denial of other.test:80 (proto proxy-http) has that id" \
	audit_id "$ID" '.resource == "other.test" and .port == 80 and .proto == "proxy-http"'
mark
check_eq "curl https://allowed.test/ with ALL_PROXY=socks5h://" "hello from allowed.test" \
	viasocks "${CURL[@]}" https://allowed.test/
check "... carried by the proxy port" allowed_since allowed.test 443 tls
mark
check_eq "curl http://allowed.test/ with ALL_PROXY=socks5h://" "hello from allowed.test" \
	viasocks "${CURL[@]}" http://allowed.test/
check "... carried by the proxy port (the tunnel's proto: http)" allowed_since allowed.test 80 http
mark
check_eq "curl https://allowed.test/ with ALL_PROXY=socks5h:// at the gateway's IPv6 address" \
	"hello from allowed.test" \
	in_run "${BASE[@]}" ALL_PROXY="socks5h://[$H6]:15080" "${CURL[@]}" https://allowed.test/
check "... carried by the proxy port" allowed_since allowed.test 443 tls
refusal
check_fails --denied 97 "curl https://other.test/ with ALL_PROXY=socks5h:// is refused (reply 02)" \
	viasocks "${CURL[@]}" https://other.test/
check "... audited: a socks5 denial of other.test:443 with its id" denied_since other.test 443 socks5

# --- git clone ------------------------------------------------------------------------------------
mark
check_eq "git clone https://allowed.test/git/lab.git with HTTPS_PROXY" "warden lab repository" \
	gitclone viahttp https://allowed.test/git/lab.git
check "... carried by the proxy port" allowed_since allowed.test 443 tls
mark
check_eq "git clone http://allowed.test/git/lab.git with http_proxy (dumb HTTP, absolute-form)" \
	"warden lab repository" gitclone viahttp http://allowed.test/git/lab.git
check "... carried by the proxy port (proto proxy-http)" allowed_since allowed.test 80 proxy-http
refusal
check_fails --denied 128 "git clone https://other.test/git/lab.git with HTTPS_PROXY is refused" \
	gitclone viahttp https://other.test/git/lab.git
check "... audited: a denial of other.test:443 (proto connect) with its id" \
	denied_since other.test 443 connect
refusal
check_fails --denied 128 "git clone http://other.test/git/lab.git with http_proxy is refused (403)" \
	saw "$LAB_DIR/git-abs.out" gitclone viahttp http://other.test/git/lab.git
ID=$(seen_id "$LAB_DIR/git-abs.out")
check "... git showed the 403's body: remote: warden: denied: ... (id $ID)" \
	lab_match "^remote: warden: denied: other\.test:80 .* \(id $ID\)$" cat "$LAB_DIR/git-abs.out"
check "... the audit's denial of other.test:80 (proto proxy-http) has that id" \
	audit_id "$ID" '.resource == "other.test" and .port == 80 and .proto == "proxy-http"'
mark
check_eq "git clone https://allowed.test/git/lab.git with ALL_PROXY=socks5h://" \
	"warden lab repository" gitclone viasocks https://allowed.test/git/lab.git
check "... carried by the proxy port" allowed_since allowed.test 443 tls
mark
check_eq "git clone http://allowed.test/git/lab.git with ALL_PROXY=socks5h://" \
	"warden lab repository" gitclone viasocks http://allowed.test/git/lab.git
check "... carried by the proxy port" allowed_since allowed.test 80 http
refusal
check_fails --denied 128 "git clone https://other.test/git/lab.git with ALL_PROXY=socks5h:// is refused" \
	gitclone viasocks https://other.test/git/lab.git
check "... audited: a socks5 denial of other.test:443" denied_since other.test 443 socks5

# --- python3 requests -----------------------------------------------------------------------------
mark
check_eq "requests https://allowed.test/ with HTTPS_PROXY (CONNECT)" "hello from allowed.test" \
	viahttp "$PY" "$REQ" "$LAB_CA" https://allowed.test/
check "... carried by the proxy port" allowed_since allowed.test 443 tls
mark
check_eq "requests http://allowed.test/ with HTTP_PROXY (absolute-form)" "hello from allowed.test" \
	viahttp "$PY" "$REQ" "$LAB_CA" http://allowed.test/
check "... carried by the proxy port (proto proxy-http)" allowed_since allowed.test 80 proxy-http
refusal
check_fails --denied 1 "requests https://other.test/ with HTTPS_PROXY: the tunnel is refused" \
	viahttp "$PY" "$REQ" "$LAB_CA" https://other.test/
check "... audited: a denial of other.test:443 (proto connect) with its id" \
	denied_since other.test 443 connect
refusal
check "requests http://other.test/ with HTTP_PROXY: a 403" \
	saw "$LAB_DIR/req-abs.out" viahttp "$PY" "$REQ" "$LAB_CA" http://other.test/
ID=$(seen_id "$LAB_DIR/req-abs.out")
check "... with X-Warden-Denial $ID, the id its body names" lab_match \
	"^status=403 denial=$ID body=warden: denied: other\.test:80 .* \(id $ID\)$" cat "$LAB_DIR/req-abs.out"
check "... the audit's denial of other.test:80 (proto proxy-http) has that id" \
	audit_id "$ID" '.resource == "other.test" and .port == 80 and .proto == "proxy-http"'
mark
check_eq "requests https://allowed.test/ with ALL_PROXY=socks5h:// (python3-socks)" \
	"hello from allowed.test" viasocks "$PY" "$REQ" "$LAB_CA" https://allowed.test/
check "... carried by the proxy port" allowed_since allowed.test 443 tls
mark
check_eq "requests https://allowed.test/ with HTTPS_PROXY=socks5h://" "hello from allowed.test" \
	in_run "${BASE[@]}" HTTPS_PROXY="$SX" "$PY" "$REQ" "$LAB_CA" https://allowed.test/
check "... carried by the proxy port" allowed_since allowed.test 443 tls
refusal
check_fails --denied 1 "requests https://other.test/ with ALL_PROXY=socks5h:// is refused" \
	viasocks "$PY" "$REQ" "$LAB_CA" https://other.test/
check "... audited: a socks5 denial of other.test:443" denied_since other.test 443 socks5

# --- Node's fetch with undici's EnvHttpProxyAgent -------------------------------------------------
mark
check_eq "node fetch https://allowed.test/ (EnvHttpProxyAgent, HTTPS_PROXY)" "hello from allowed.test" \
	viahttp node "$FETCH" "$UNDICI" env https://allowed.test/
check "... carried by the proxy port" allowed_since allowed.test 443 tls
mark
check_eq "node fetch http://allowed.test/ (EnvHttpProxyAgent, HTTP_PROXY)" "hello from allowed.test" \
	viahttp node "$FETCH" "$UNDICI" env http://allowed.test/
check "... carried by the proxy port (undici tunnels http:// too: CONNECT, then proto http)" \
	allowed_since allowed.test 80 http
refusal
check_fails --denied 1 "node fetch https://other.test/ is refused" \
	viahttp node "$FETCH" "$UNDICI" env https://other.test/
check "... audited: a denial of other.test:443 (proto connect) with its id" \
	denied_since other.test 443 connect
refusal
check_fails --denied 1 "node fetch http://other.test/ is refused (the CONNECT to :80)" \
	viahttp node "$FETCH" "$UNDICI" env http://other.test/
check "... audited: a denial of other.test:80 (proto connect) with its id" \
	denied_since other.test 80 connect

# --- raw TCP by name through socks5h --------------------------------------------------------------
mark
check_eq "curl telnet://allowed.test:7 with ALL_PROXY=socks5h:// (echo)" "ping" \
	telnet_ping viasocks allowed.test:7
check "... carried by the proxy port (proto tcp)" allowed_since allowed.test 7 tcp
refusal
check_fails --denied 97 "curl telnet://other.test:7 with ALL_PROXY=socks5h:// is refused" \
	telnet_ping viasocks other.test:7
check "... audited: a socks5 denial of other.test:7" denied_since other.test 7 socks5
mark
check_eq "a raw SOCKS5 client (socks_probe.py): echo on allowed.test:7 by name" \
	"method=00 rep=00 ping" in_run "$PY" "$SOCKS" "$H4" 15080 greet:050100 connect:allowed.test:7 say:ping
check "... carried by the proxy port (proto tcp)" allowed_since allowed.test 7 tcp
refusal
check_eq "... other.test:7: reply 02 (not allowed by ruleset), closed" "method=00 rep=02 closed" \
	in_run "$PY" "$SOCKS" "$H4" 15080 greet:050100 connect:other.test:7
check "... audited: a socks5 denial of other.test:7" denied_since other.test 7 socks5

# --- SSRF: an allowed name that resolves to a forbidden address, through each proxy kind ---------
refusal
check_fails --denied 56 "CONNECT metadata.test:443 (169.254.169.254) is refused with a 403" \
	saw "$LAB_DIR/ssrf-connect.out" viahttp "${CURL[@]}" -v https://metadata.test/
ID=$(seen_id "$LAB_DIR/ssrf-connect.out")
check "... curl saw $ID: the audit's denial of metadata.test:443 (proto connect) by the SSRF guard" \
	audit_id "$ID" '.resource == "metadata.test" and .port == 443 and .proto == "connect" and
		(.reason | test("169.254.169.254 is a link-local address"))'
refusal
check "absolute-form http://metadata.test/ is refused with a 403" \
	saw "$LAB_DIR/ssrf-abs.out" viahttp "${CURL[@]}" -D - http://metadata.test/
ID=$(seen_id "$LAB_DIR/ssrf-abs.out")
check "... its body names the guard's reason and the id $ID" lab_match \
	"^warden: denied: .*169\.254\.169\.254 is a link-local address.* \(id $ID\)$" cat "$LAB_DIR/ssrf-abs.out"
check "... the audit's denial of metadata.test:80 (proto proxy-http) has that id" \
	audit_id "$ID" '.resource == "metadata.test" and .port == 80 and .proto == "proxy-http" and
		(.reason | test("169.254.169.254 is a link-local address"))'
refusal
check_fails --denied 97 "socks5h metadata.test:443 is refused (reply 02)" \
	viasocks "${CURL[@]}" https://metadata.test/
check "... audited: a socks5 denial of metadata.test:443 by the SSRF guard" \
	denied_since metadata.test 443 socks5 '169\\.254\\.169\\.254 is a link-local address'
refusal
check_fails --denied 1 "requests https://private10.test/ (10.1.2.3) with ALL_PROXY=socks5h:// is refused" \
	viasocks "$PY" "$REQ" "$LAB_CA" https://private10.test/
check "... audited: a socks5 denial of private10.test:443 naming 10.1.2.3" \
	denied_since private10.test 443 socks5 '10\\.1\\.2\\.3'

# --- the audit log as a whole ---------------------------------------------------------------------
check "every denial in the log is a net.connect event with a denial id of its own" jq -e -s '
	[.[] | select(.allowed == false)] as $d |
	($d | length) > 0 and
	($d | all(.action == "net.connect" and (.denial_id | test("^dn-[0-9a-f]{12}$")))) and
	($d | map(.denial_id) | unique | length) == ($d | length)' "$AUDIT"
check_eq "... one for each of the $REFUSALS refused probes, no more" "$REFUSALS" \
	jq -s '[.[] | select(.allowed == false)] | length' "$AUDIT"
MARK=$DNS_MARK
check "no dns.query event since proxy mode began: the run never reached the DNS front" \
	lab_negate _since '.action == "dns.query"'
check "control: the dig before proxy mode was audited as a dns.query" \
	audit_has '.action == "dns.query" and .resource == "allowed.test"'

check "the gateway is still running" kill -0 "$GW_PID"
check "SIGTERM stops the gateway" gw_stop
check "no sanitizer report in the gateway's log" gw_log_clean
lab_finish
