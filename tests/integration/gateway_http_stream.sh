#!/usr/bin/env bash
# gateway_http_stream.sh - every request on a bound plain-HTTP connection is checked, not only
# the first: a second request on a kept-alive connection, pipelined heads, a request after a
# leading CRLF (or bare LF), requests inside a CONNECT tunnel to port 80, and requests that
# follow Content-Length and chunked bodies (whose bytes are not taken for requests). Each
# fronting attempt is answered 403, audited, and never reaches nginx (its access log is checked
# after a marker request that does reach it); the same probe with the allowed name is served.
# Keep-alive clients keep working: curl with several URLs, python3 requests' Session, git clone
# over dumb HTTP, each on few connections; an Upgrade answered 101 becomes a tunnel. A denied
# proxy-http request records the destination asked for as dst, not the proxy's own address.
set -u
. "$(dirname "$0")/gateway/fixture.sh"
PROBE=$SRC/tests/integration/gateway/http_probe.py
gw_setup
for tool in git /usr/bin/python3; do
	command -v "$tool" >/dev/null || { echo "SKIP: missing $tool"; exit 77; }
done
lab_spawn wan upgrade /usr/bin/python3 "$SRC/tests/integration/gateway/upgrade_server.py" \
	"$LAB_ALLOWED_V4" 8080
lab_wait_listen wan 8080 || { echo "FAIL - the upgrade server did not start"; exit 1; }
POL=$LAB_DIR/policy.yaml
cat >"$POL" <<'EOF2'
version: 1
network:
  allow:
    - { host: allowed.test, ports: [80, 8080] }
EOF2
check "register the run" gw_register "$POL"
A=$(synth allowed.test)
check "allowed.test has a synthetic address" test -n "$A"

probe() { in_run /usr/bin/python3 "$PROBE" "$@"; }
ok='GET /?MARK HTTP/1.1\r\nHost: allowed.test\r\n\r\n'
bad='GET /?MARK HTTP/1.1\r\nHost: other.test\r\n\r\n'
# req MARK HOST: a GET for /?MARK naming HOST
req() { printf 'GET /?%s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' "$1" "$2"; }
N=0
# relayed MARK: nginx served a request for /?MARK. A marker request on a new connection is
# served first, so everything an earlier probe got through is in the access log by then.
relayed()
{
	N=$((N + 1))
	[[ $(probe "$A" 80 "$(req "marker$N" allowed.test)") == 200 ]] || return 2
	lab_wait 5 grep -qF "GET /?marker$N " "$LAB_HTTP_LOG" || return 2
	grep -qF "GET /?$1 " "$LAB_HTTP_LOG"
}
not_relayed()
{
	local rc=0
	relayed "$1" || rc=$?
	((rc == 1))
}

echo "# a second request on a kept-alive connection"
check_eq "two requests for allowed.test on one connection are both served" "200 200" \
	probe "$A" 80 "$(req ka-ok1 allowed.test)" "$(req ka-ok2 allowed.test)"
check "... and both reached nginx" relayed ka-ok2
check_eq "a second request naming other.test gets 403" "200 403" \
	probe "$A" 80 "$(req ka-1 allowed.test)" "$(req ka-bad other.test)"
check "... and never reached nginx" not_relayed ka-bad
check "... audited as fronting, naming the request" audit_has \
	'.action == "net.connect" and .allowed == false and .host == "other.test" and (.reason | test("domain fronting"))'
check_eq "three allowed then one other: 200 200 200 403" "200 200 200 403" \
	probe "$A" 80 "$(req ka-3a allowed.test)" "$(req ka-3b allowed.test)" \
	"$(req ka-3c allowed.test)" "$(req ka-3bad other.test)"
check "... the fourth never reached nginx" not_relayed ka-3bad

echo "# pipelined requests"
check_eq "pipelined: two for allowed.test are both served" "200 200" \
	probe --pipeline "$A" 80 "$(req pl-ok1 allowed.test)" "$(req pl-ok2 allowed.test)"
check "... both reached nginx" relayed pl-ok2
check_eq "pipelined in one segment: the second naming other.test gets 403" "200 403" \
	probe --pipeline "$A" 80 "$(req pl-1 allowed.test)" "$(req pl-bad other.test)"
check "... and never reached nginx" not_relayed pl-bad

echo "# a leading CRLF (RFC 9112 2.2) is skipped and the request that follows is checked"
check_eq "CRLF, then a request for allowed.test: served" "200" \
	probe "$A" 80 "\\r\\n$(req crlf-ok allowed.test)"
check "... it reached nginx" relayed crlf-ok
check_eq "CRLF, then a request naming other.test: 403" "403" \
	probe "$A" 80 "\\r\\n$(req crlf-bad other.test)"
check "... and never reached nginx" not_relayed crlf-bad
check_eq "CRLF CRLF between two requests: the second naming other.test gets 403" "200 403" \
	probe "$A" 80 "$(req crlf2-1 allowed.test)" "\\r\\n\\r\\n$(req crlf2-bad other.test)"
check "... and never reached nginx" not_relayed crlf2-bad
check_eq "a bare LF, then a request naming other.test: 403" "403" \
	probe "$A" 80 "\\n$(req lf-bad other.test)"
check "... and never reached nginx" not_relayed lf-bad

echo "# bodies are framed: their bytes are not requests, the request after them is checked"
body=$(req inbody other.test)
blen=$(printf "$body" | wc -c)
post="POST /?post-cl HTTP/1.1\\r\\nHost: allowed.test\\r\\nContent-Length: $blen\\r\\n\\r\\n$body"
check_eq "a Content-Length body that reads like a request is relayed as a body" "200 200" \
	probe "$A" 80 "$post" "$(req post-cl-after allowed.test)"
check "... the POST and the request after it reached nginx" relayed post-cl-after
check "... the body was no request" not_relayed inbody
check_eq "after a Content-Length body, a request naming other.test gets 403" "200 403" \
	probe "$A" 80 "$post" "$(req post-cl-bad other.test)"
check "... and never reached nginx" not_relayed post-cl-bad
hex=$(printf '%x' "$blen")
chunked="POST /?post-ch HTTP/1.1\\r\\nHost: allowed.test\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n$hex;ext=1\\r\\n$body\\r\\n3\\r\\nabc\\r\\n0\\r\\nX-Trailer: t\\r\\n\\r\\n"
check_eq "a chunked body (extension, trailer) is relayed as a body" "200 200" \
	probe "$A" 80 "$chunked" "$(req post-ch-after allowed.test)"
check "... the request after it reached nginx" relayed post-ch-after
check_eq "after a chunked body, a request naming other.test gets 403" "200 403" \
	probe "$A" 80 "$chunked" "$(req post-ch-bad other.test)"
check "... and never reached nginx" not_relayed post-ch-bad
# nginx answers the POST at once (it does not read a body for `return 200`); the stream
# cannot be framed past "zz", so nothing after it goes upstream and the next answer is the 403
check_eq "a chunk size that is not hex cannot be framed: 403" "200 200 403" \
	probe "$A" 80 "$(req frame-1 allowed.test)" \
	"POST /?frame-bad HTTP/1.1\\r\\nHost: allowed.test\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\nzz\\r\\n" \
	"$(req frame-after allowed.test)"
check "... the request after it never reached nginx" not_relayed frame-after
check "... audited as unframable" audit_has \
	'.action == "net.connect" and .allowed == false and (.reason | test("chunk"))'

echo "# a CONNECT tunnel to port 80"
check_eq "CONNECT allowed.test:80, two requests for allowed.test: served" "connect-200 200 200" \
	probe --connect allowed.test:80 "$H4" 15080 "$(req tun-ok1 allowed.test)" \
	"$(req tun-ok2 allowed.test)"
check "... both reached nginx" relayed tun-ok2
check_eq "CONNECT allowed.test:80, then a second request naming other.test: 403" \
	"connect-200 200 403" probe --connect allowed.test:80 "$H4" 15080 \
	"$(req tun-1 allowed.test)" "$(req tun-bad other.test)"
check "... and never reached nginx" not_relayed tun-bad

echo "# a denied proxy request records the destination asked for, not the proxy's address"
check "absolute-form to other.test through the proxy port: 403" bash -c \
	'[[ $(ip netns exec "$0" curl -s --max-time 10 -o /dev/null -w "%{http_code}" -x "http://$1:15080" http://other.test/) == 403 ]]' \
	"$RUN" "$H4"
check "... its event has no dst (a name never resolved), not the proxy's $H4" audit_has \
	".action == \"net.connect\" and .allowed == false and .proto == \"proxy-http\" and .host == \"other.test\" and (has(\"dst\") | not)"
check "to an address literal: 403" bash -c \
	'[[ $(ip netns exec "$0" curl -s --max-time 10 -o /dev/null -w "%{http_code}" -x "http://$1:15080" "http://$2/") == 403 ]]' \
	"$RUN" "$H4" "$LAB_OTHER_V4"
check "... its event's dst is that address" audit_has \
	".action == \"net.connect\" and .allowed == false and .proto == \"proxy-http\" and .dst == \"$LAB_OTHER_V4\""
check_eq "no proxy-http denial names the proxy's own address" 0 jq -s \
	"[.[] | select(.proto == \"proxy-http\" and .dst == \"$H4\")] | length" "$AUDIT"

echo "# Upgrade"
check_eq "an Upgrade answered 101 becomes a tunnel (raw bytes echoed)" "101 echo" bash -c \
	'ip netns exec "$0" /usr/bin/python3 -c "
import socket, sys
s = socket.create_connection((sys.argv[1], 8080), timeout=8)
s.sendall(b\"GET /ws HTTP/1.1\r\nHost: allowed.test\r\nUpgrade: lab\r\nConnection: Upgrade\r\n\r\n\")
b = b\"\"
while b\"\r\n\r\n\" not in b:
    b += s.recv(4096)
st = b.split(b\" \")[1].decode()
s.sendall(b\"\x81\x04GET Host: other.test\r\n\r\n\")
e = b\"\"
while len(e) < 26:
    e += s.recv(4096)
print(st, \"echo\" if e.startswith(b\"\x81\x04GET Host\") else repr(e))
" "$1"' "$RUN" "$A"
check_eq "an Upgrade the server declines (200): the next request is still checked" "200 403" \
	probe "$A" 80 'GET /?up HTTP/1.1\r\nHost: allowed.test\r\nUpgrade: lab\r\nConnection: Upgrade\r\n\r\n' \
	"$(req up-bad other.test)"
check "... and never reached nginx" not_relayed up-bad

echo "# keep-alive clients"
conns() { jq -s "[.[] | select(.action == \"net.connect\" and .allowed and .port == ${1:-80})] | length" "$AUDIT"; }
c0=$(conns)
check_eq "curl with three URLs on one connection" "hello from allowed.test
hello from allowed.test
allowed.test" run_curl http://allowed.test/ http://allowed.test/ http://allowed.test/host
check_eq "... used one connection" 1 bash -c 'echo $(( $1 - $0 ))' "$c0" "$(conns)"
c0=$(conns)
check_eq "python3 requests: a Session with 5 GETs" "200 200 200 200 200" in_run /usr/bin/python3 -c '
import requests
s = requests.Session()
print(" ".join(str(s.get("http://allowed.test/?py%d" % i, timeout=8).status_code) for i in range(5)))'
check_eq "... used one connection" 1 bash -c 'echo $(( $1 - $0 ))' "$c0" "$(conns)"
check "a bare repository for dumb HTTP" bash -c '
	set -e
	d=$(mktemp -d); trap "rm -rf $d" EXIT
	git -C "$d" init -q -b main w
	for i in $(seq 30); do echo "file $i" >"$d/w/f$i"; git -C "$d/w" add "f$i"
		git -C "$d/w" -c user.name=t -c user.email=t@t commit -qm "c$i"; done
	git clone -q --bare "$d/w" "$0/www/git/repo.git"
	git -C "$0/www/git/repo.git" update-server-info' "$LAB_DIR"
c0=$(conns)
check "git clone over dumb HTTP (one GET per loose object, kept alive)" bash -c '
	d=$(mktemp -d); trap "rm -rf $d" EXIT
	ip netns exec "$0" git -c http.proxy= clone -q http://allowed.test/git/repo.git "$d/c" &&
	[[ $(git -C "$d/c" rev-list --count HEAD) == 30 ]]' "$RUN"
check "... on far fewer connections than requests" bash -c \
	'reqs=$(grep -c "GET /git/repo.git" "$0"); n=$(( $2 - $1 )); echo "requests $reqs, connections $n"; (( n >= 1 && n * 5 < reqs ))' \
	"$LAB_HTTP_LOG" "$c0" "$(conns)"

check "SIGTERM stops the gateway" gw_stop
check "no sanitizer report in the gateway's log" gw_log_clean
lab_finish
