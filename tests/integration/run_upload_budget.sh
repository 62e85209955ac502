#!/usr/bin/env bash
# run_upload_budget.sh - upload budgets under `warden run` in the lab (issue 32 item 4): with
# limits.upload_kib a run's uploads to one name stop at the budget -- an upload under it passes
# (the control), one over it is cut (curl fails) with one limit.upload event whose bytes are at
# least the budget and at most one read more, and a later connection to that name is refused;
# a download far larger than the budget passes (download is not limited); another name has a
# budget of its own (over HTTPS and over plain HTTP, under a wildcard); through the proxy port
# (the run's proxy variables: CONNECT, absolute-form; SOCKS5) and transparently (curl --noproxy). With
# limits.upload_total_kib the run's total binds across names. Real curl against an upload sink in
# lab-wan that answers only once it read the whole body (HTTP and HTTPS: nginx answers a PUT to
# `return 200` before it read the body, so a cut upload could end before curl noticed);
# downloads from the lab's nginx. Each negative check sits beside a positive one with the same
# probe. No timing is asserted.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
lab_up

T=$(lab_tmpdir wd-run-upload)
chmod 0755 "$T"
lab_on_exit rm -rf "$T"
# the sink: a PUT (or POST, GET) with a Content-Length read whole, then answered "got N"; HTTP on
# 8080, HTTPS on 8443 with the lab's certificate of the SNI's name
cat >"$T/sink.py" <<'EOF'
import http.server, socket, ssl, sys, threading
pki = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_PUT(self):
        n = int(self.headers.get("Content-Length", "0"))
        got = 0
        while got < n:
            b = self.rfile.read(min(65536, n - got))
            if not b:
                return
            got += len(b)
        body = b"got %d\n" % got
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_POST = do_PUT
    do_GET = do_PUT
    def log_message(self, *a):
        pass
class S(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
    daemon_threads = True
    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()
ctxs = {}
for v in ("allowed", "other", "wild", "multi"):
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    c.load_cert_chain("%s/%s.crt" % (pki, v), "%s/%s.key" % (pki, v))
    ctxs[v] = c
def pick(sock, name, ctx):
    # the vhost's certificate: the label before .test (allowed, other, wild, multi)
    labels = (name or "").split(".")
    sock.context = ctxs.get(labels[-2] if len(labels) >= 2 else "", ctxs["allowed"])
ctxs["allowed"].sni_callback = pick
plain = S(("::", 8080), H)
tls = S(("::", 8443), H)
tls.socket = ctxs["allowed"].wrap_socket(tls.socket, server_side=True)
threading.Thread(target=plain.serve_forever, daemon=True).start()
tls.serve_forever()
EOF
lab_spawn wan sink python3 "$T/sink.py" "$LAB_DIR/pki"
lab_wait_listen wan 8443 || { echo "FAIL - the upload sink did not start"; exit 1; }
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
BUDGET=65536 # limits.upload_kib: 64
head -c 16384 /dev/urandom >"$T/small"
head -c 524288 /dev/urandom >"$T/big"
chmod 0644 "$T/small" "$T/big"

# the steps run in one sandbox (budgets are per run): each prints "NAME rc=N" and what the
# server said (letters, digits, spaces)
cat >"$T/steps.sh" <<EOF
step() { n=\$1; shift; o=\$(curl --http1.1 -sS --max-time 20 --cacert "$LAB_CA" "\$@"); r=\$?; echo "\$n rc=\$r \$(printf %s "\$o" | tr -dc 'a-z0-9 ')"; }
step small_up -f -T "$T/small" https://allowed.test:8443/up
step download -o /dev/null -f https://allowed.test$LAB_BIGFILE_PATH
step big_up -f -T "$T/big" https://allowed.test:8443/up
step again -f https://allowed.test:8443/
step other_up -f -T "$T/small" https://other.test:8443/up
step http_big_up -f -T "$T/big" http://a.wild.test:8080/up
step http_again -f http://a.wild.test:8080/
step http_other -f -T "$T/small" http://b.wild.test:8080/up
step t_small --noproxy '*' -f -T "$T/small" https://e.wild.test:8443/up
step t_big_up --noproxy '*' -f -T "$T/big" https://multi.test:8443/up
step t_http_small --noproxy '*' -f -T "$T/small" http://d.wild.test:8080/up
step t_http_big --noproxy '*' -f -T "$T/big" http://c.wild.test:8080/up
step s_small --socks5-hostname warden-proxy:15080 -f -T "$T/small" https://g.wild.test:8443/up
step s_big_up --socks5-hostname warden-proxy:15080 -f -T "$T/big" https://f.wild.test:8443/up
EOF
cat >"$T/total.sh" <<EOF
step() { n=\$1; shift; o=\$(curl --http1.1 -sS --max-time 20 --cacert "$LAB_CA" "\$@"); r=\$?; echo "\$n rc=\$r \$(printf %s "\$o" | tr -dc 'a-z0-9 ')"; }
step first -f -T "$T/small" https://allowed.test:8443/up
step second -f -T "$T/big" https://other.test:8443/up
step third -f https://multi.test:8443/
EOF
chmod 0644 "$T/steps.sh" "$T/total.sh"
policy() { # policy FILE LIMITS-LINE
	cat >"$1" <<EOF
version: 1
filesystem:
  read: ["$LAB_CA", "$T/small", "$T/big", "$T/steps.sh", "$T/total.sh"]
network:
  allow:
    - {host: allowed.test, ports: [443, 8443]}
    - {host: other.test, ports: [8443]}
    - {host: multi.test, ports: [8443]}
    - {host: "*.wild.test", ports: [8080, 8443]}
limits:
  $2
EOF
}
policy "$T/p.yaml" "upload_kib: 64"
policy "$T/total.yaml" "upload_total_kib: 64"
policy "$T/none.yaml" "pids: 256"

wr() { in_host "$W" run -q --audit-log "$A" "$@"; }
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
rc_of() { sed -n "s/^$1 rc=\([0-9]*\).*/\1/p" "$T/out"; }
said() { grep -qx "$1 rc=0 $2" "$T/out"; } # said STEP TEXT: the step passed and the sink said TEXT
ok() { [[ $(rc_of "$1") == 0 ]]; }
failed() { local r; r=$(rc_of "$1"); [[ -n $r && $r != 0 ]]; }
# events R ACTION RESOURCE: the run's events of that action and resource
events() { jq -c -s --arg r "$1" --arg a "$2" --arg n "$3" \
	'.[] | select(.run == $r and .action == $a and .resource == $n)' "$A"; }
count() { events "$@" | wc -l; }

echo "# the control: the same steps under a policy without an upload budget all pass"
wr -p "$T/none.yaml" -- sh "$T/steps.sh" >"$T/out" 2>"$T/err"
cat "$T/out"
for s in small_up download big_up again other_up http_big_up http_again http_other t_small t_big_up \
	t_http_small t_http_big s_small s_big_up; do
	check "no budget: $s passes" ok "$s"
done
check "no budget: the sink got the whole 512 KiB over HTTPS" said big_up "got 524288"
check "... and over HTTP" said http_big_up "got 524288"
check "... and without the proxy, over TLS and HTTP" bash -c \
	'grep -qx "t_big_up rc=0 got 524288" "$0" && grep -qx "t_http_big rc=0 got 524288" "$0"' "$T/out"
check "... and through SOCKS5" said s_big_up "got 524288"

echo "# limits.upload_kib: 64"
wr -p "$T/p.yaml" -- sh "$T/steps.sh" >"$T/out" 2>"$T/err"
cat "$T/out"
R=$(last_run)
check "an upload under the budget passes (16 KiB)" said small_up "got 16384"
check "a download of $(($(stat -c %s "$LAB_BIGFILE") >> 20)) MiB from the same name passes (download is not limited)" ok download
check "an upload over the budget (512 KiB) is cut: curl fails" failed big_up
check_eq "one limit.upload event for allowed.test" 1 count "$R" limit.upload allowed.test
EV=$(events "$R" limit.upload allowed.test)
echo "# $EV"
check "it names the name, port, budget (limits.upload_kib) and a denial id" jq -e \
	--argjson b "$BUDGET" '.allowed == false and .type == "limit" and .port == 8443 and
		.limit == $b and .rule == "limits.upload_kib" and (.denial_id | startswith("dn-")) and
		(.reason | startswith("upload budget spent: allowed.test was sent"))' <<<"$EV"
check "the bytes sent to the name are at least the budget and at most one read (64 KiB) more" \
	jq -e --argjson b "$BUDGET" '.usage >= $b and .usage <= $b + 65536 and .bytes_up <= .usage' <<<"$EV"
check "a later connection to the spent name is refused" failed again
check "... and audited with the same reason" jq -e -s --arg r "$R" '
	[.[] | select(.run == $r and .action == "net.connect" and .allowed == false and
		.resource == "allowed.test" and (.reason | startswith("upload budget spent: allowed.test")))]
	| length >= 1' "$A"
check "another name has its own budget: an upload to other.test passes" said other_up "got 16384"
check "over plain HTTP through the proxy port (absolute-form) the upload is cut too" failed http_big_up
check "... with its limit.upload event" jq -e -s --arg r "$R" --argjson b "$BUDGET" '
	[.[] | select(.run == $r and .action == "limit.upload" and .resource == "a.wild.test" and
		.proto == "proxy-http" and .port == 8080 and .usage >= $b and .usage <= $b + 65536)] | length == 1' "$A"
check "a later request to a.wild.test is refused" failed http_again
check "another name under the same wildcard passes" ok http_other
echo "# the same without the proxy (curl --noproxy): the transparent path, TLS and framed HTTP"
check "an upload under the budget passes (TLS)" said t_small "got 16384"
check "an upload over the budget is cut (TLS)" failed t_big_up
check "... with its limit.upload event" jq -e -s --arg r "$R" --argjson b "$BUDGET" '
	[.[] | select(.run == $r and .action == "limit.upload" and .resource == "multi.test" and
		.proto == "tls" and .usage >= $b and .usage <= $b + 65536)] | length == 1' "$A"
check "an upload under the budget passes (HTTP)" said t_http_small "got 16384"
check "an upload over the budget is cut (HTTP, every request framed)" failed t_http_big
check "... with its limit.upload event (proto http: not the proxy's)" jq -e -s --arg r "$R" \
	--argjson b "$BUDGET" '[.[] | select(.run == $r and .action == "limit.upload" and
		.resource == "c.wild.test" and .proto == "http" and .usage >= $b and
		.usage <= $b + 65536)] | length == 1' "$A"

echo "# through SOCKS5 on the proxy port (curl --socks5-hostname)"
check "an upload under the budget passes" said s_small "got 16384"
check "an upload over the budget is cut" failed s_big_up
check "... with its limit.upload event" jq -e -s --arg r "$R" --argjson b "$BUDGET" '
	[.[] | select(.run == $r and .action == "limit.upload" and .resource == "f.wild.test" and
		.usage >= $b and .usage <= $b + 65536)] | length == 1' "$A"

echo "# limits.upload_total_kib: 64 (the run's total, every name together)"
wr -p "$T/total.yaml" -- sh "$T/total.sh" >"$T/out" 2>"$T/err"
cat "$T/out"
R=$(last_run)
check "the first upload (16 KiB) passes" said first "got 16384"
check "an upload to another name that passes the run's total is cut" failed second
check "its event says the run's budget" jq -e -s --arg r "$R" --argjson b "$BUDGET" '
	[.[] | select(.run == $r and .action == "limit.upload" and .resource == "other.test" and
		.rule == "limits.upload_total_kib" and .limit == $b and .usage >= $b and
		.usage <= $b + 65536 and (.reason | startswith("upload budget spent: the run sent")))]
	| length == 1' "$A"
check "a third name is refused too: the run's total is spent" failed third
lab_stop wan sink
lab_finish
