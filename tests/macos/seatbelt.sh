#!/usr/bin/env bash
# tests/macos/seatbelt.sh - on a Mac: Warden's Seatbelt profile enforced by sandbox-exec, with the
# proxy-mode gateway (warden-gateway of macOS, gateway/main_proxy.c) as the one way out.
# .github/workflows/macos.yml runs it; it has never run (there is no Mac where Warden is built,
# docs/platforms.md).
#
#   WARDEN_PROFILE=.../warden-profile WARDEN_GATEWAY=.../warden-gateway WARDEN=.../warden \
#     tests/macos/seatbelt.sh
#
# It starts, all on 127.0.0.1: an HTTP upstream (python3 -m http.server), a DNS stub naming
# allowed.test and other.test there (dns_stub.py: the gateway's resolver asks DNS only), and the
# gateway in proxy mode with one run registered (allowed.test:UP and a cidr rule for 127.0.0.1:UP,
# which lifts the SSRF guard's loopback class for the upstream alone). It renders the profile
# with warden-profile (the policy's read grant, the proxy port) and runs under `sandbox-exec -f`:
#   - a granted file read (the control) beside a file outside the grants refused;
#   - curl through http_proxy and socks5h to allowed.test served, other.test refused by the
#     gateway (403 with a denial id that is the audit's; SOCKS5 reply 2);
#   - curl straight to the upstream (--noproxy) refused by the profile, beside the same request
#     outside the sandbox served (the control: the upstream is there).
# Then `warden run` itself (WARDEN: the macOS warden, run/mode_seatbelt.c), which starts its own
# gateway (WARDEN_GATEWAY_BIN), renders and checks the profile and runs sandbox-exec: the granted
# file read beside the one outside the grants refused; curl told only by warden's proxy
# variables served for allowed.test and refused for other.test (403, the denial id in the run's
# audit log), socks5h alike; curl straight to the upstream refused; the program's exit status
# passed back (7) with run.start and run.exit in the audit log; the run's folder gone after.
# Every probe must run: a probe that exits 126/127, or sandbox-exec refusing the profile, is an
# ERROR. Exit 0 all passed, 1 a check failed, 2 a probe or a fixture could not run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
WP=${WARDEN_PROFILE:-warden-profile}
GW=${WARDEN_GATEWAY:-warden-gateway}
SBX=${WARDEN_SANDBOX_EXEC:-sandbox-exec}
WD=${WARDEN:-warden}
PROXY=${SEATBELT_PROXY_PORT:-15080}
UP=${SEATBELT_UPSTREAM_PORT:-18080}
DNS=${SEATBELT_DNS_PORT:-15353}
passed=0 failed=0 errors=0
pids=()

ok() { echo "ok - $*"; passed=$((passed + 1)); }
bad() { echo "FAIL - $*"; failed=$((failed + 1)); }
err() { echo "ERROR - $*"; errors=$((errors + 1)); }
finish() {
	echo "$passed passed, $failed failed, $errors errors"
	((errors)) && exit 2
	((failed)) && exit 1
	exit 0
}
# a fixture that is not there: nothing after it can be trusted
die() {
	err "$*"
	finish
}
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[[ -n ${T:-} ]] && rm -rf "$T"
}
trap cleanup EXIT

for tool in "$SBX" "$WP" "$GW" "$WD" curl python3; do
	command -v "$tool" >/dev/null || die "$tool is not there (a probe that cannot run is an error)"
done
# macOS's TMPDIR is under /var, a link to /private/var: the profile names real paths
T=$(mktemp -d "${TMPDIR:-/tmp}/wd-seatbelt.XXXXXX") || die "mktemp"
T=$(cd "$T" && pwd -P)
mkdir -p "$T/granted" "$T/secret" || die "cannot fill $T"
echo "granted text" >"$T/granted/ok.txt"
echo "secret text" >"$T/secret/no.txt"

# wait_for SECONDS CMD...: CMD succeeds within SECONDS
wait_for() {
	local i n=$(($1 * 10))
	shift
	for ((i = 0; i < n; i++)); do
		"$@" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# --- the fixtures ------------------------------------------------------------------------
# the upstream: one text for every request target (absolute-form too, which the proxy passes on
# and python's http.server would answer 404)
python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello from upstream\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
' "$UP" >"$T/http.log" 2>&1 &
pids+=($!)
python3 "$here/dns_stub.py" 127.0.0.1 "$DNS" allowed.test=127.0.0.1 other.test=127.0.0.1 \
	>"$T/dns.log" 2>&1 &
pids+=($!)
wait_for 10 curl -fsS --noproxy '*' -o /dev/null "http://127.0.0.1:$UP/" ||
	die "the upstream on 127.0.0.1:$UP did not start: $(cat "$T/http.log")"
wait_for 10 grep -q ready "$T/dns.log" || die "the DNS stub did not start: $(cat "$T/dns.log")"

cat >"$T/gateway.yaml" <<EOF
version: 1
mode: proxy
listen: {v4: "127.0.0.1"}
ports: {proxy: $PROXY}
resolvers: ["127.0.0.1:$DNS"]
control: {path: "$T/gw.sock"}
audit: {path: "$T/audit.jsonl"}
limits: {peek_timeout_ms: 1500, connect_timeout_ms: 2000}
EOF
"$GW" --config "$T/gateway.yaml" >"$T/gw.log" 2>&1 &
gwpid=$!
pids+=("$gwpid")
wait_for 10 test -S "$T/gw.sock" || die "the gateway did not start: $(cat "$T/gw.log")"
grep -q "serving: proxy mode" "$T/gw.log" && ok "warden-gateway serves in proxy mode" ||
	bad "warden-gateway's log has no 'serving: proxy mode': $(cat "$T/gw.log")"

cat >"$T/policy.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/granted"]
network:
  allow:
    - { host: allowed.test, ports: [$UP] }
    - { cidr: "127.0.0.1/32", ports: [$UP] }
EOF
"$GW" ctl --socket "$T/gw.sock" register --id seatbelt$$ --if lo0 --host-v4 127.0.0.1 \
	--sandbox-v4 127.0.0.1 --policy "$T/policy.yaml" >"$T/register.out" 2>&1 ||
	die "the run did not register: $(cat "$T/register.out")"
ok "a run is registered with the gateway"

"$WP" macos "$T/policy.yaml" "$PROXY" >"$T/profile.sb" 2>"$T/profile.err" ||
	die "warden-profile did not render the profile: $(cat "$T/profile.err")"
grep -q "localhost:$PROXY" "$T/profile.sb" && ok "the profile allows only localhost:$PROXY" ||
	bad "the profile does not name localhost:$PROXY"

# --- probes under sandbox-exec -------------------------------------------------------------
# sbx OUT CMD...: CMD under the profile; its stdout in $T/OUT, stderr in $T/OUT.err; sets rc.
# A status of 126/127 or a message of sandbox-exec's own (the profile refused) is an error.
sbx() {
	local out=$1
	shift
	"$SBX" -f "$T/profile.sb" "$@" >"$T/$out" 2>"$T/$out.err"
	rc=$?
	if ((rc == 126 || rc == 127)) || grep -q "^sandbox-exec:" "$T/$out.err"; then
		err "$* could not run under the profile (exit $rc): $(cat "$T/$out.err")"
		return 1
	fi
	return 0
}
# the probes' environment: no proxy variable but the one given (a command, for sandbox-exec)
pcurl=(/usr/bin/env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY
	-u all_proxy -u NO_PROXY -u no_proxy)

echo "# files"
if sbx read-ok /bin/cat "$T/granted/ok.txt"; then
	[[ $rc == 0 && $(cat "$T/read-ok") == "granted text" ]] &&
		ok "a granted file is read under the profile" ||
		bad "the granted file: exit $rc, '$(cat "$T/read-ok" "$T/read-ok.err")'"
fi
if sbx read-no /bin/cat "$T/secret/no.txt"; then
	[[ $rc != 0 && ! -s $T/read-no ]] && grep -q "Operation not permitted" "$T/read-no.err" &&
		ok "a file outside the grants is refused (Operation not permitted)" ||
		bad "the file outside the grants: exit $rc, '$(cat "$T/read-no" "$T/read-no.err")'"
fi

echo "# network through the gateway"
if sbx via-ok "${pcurl[@]}" "http_proxy=http://127.0.0.1:$PROXY" /usr/bin/curl -sS --max-time 10 \
	"http://allowed.test:$UP/"; then
	[[ $rc == 0 && $(cat "$T/via-ok") == "hello from upstream" ]] &&
		ok "curl through the proxy reaches allowed.test" ||
		bad "curl through the proxy to allowed.test: exit $rc, '$(cat "$T/via-ok" "$T/via-ok.err")'"
fi
if sbx via-no "${pcurl[@]}" "http_proxy=http://127.0.0.1:$PROXY" /usr/bin/curl -sS -i --max-time 10 \
	"http://other.test:$UP/"; then
	dn=$(grep -oE 'dn-[0-9a-f]{12}' "$T/via-no" | head -n 1)
	[[ $rc == 0 && $(head -n 1 "$T/via-no") == "HTTP/1.1 403"* && -n $dn ]] &&
		ok "curl through the proxy to other.test gets the gateway's 403 ($dn)" ||
		bad "curl through the proxy to other.test: exit $rc, '$(head -c 300 "$T/via-no") $(cat "$T/via-no.err")'"
	[[ -n $dn ]] && grep -q "\"denial_id\":\"$dn\"" "$T/audit.jsonl" &&
		ok "that denial id is in the audit log" || bad "denial id '$dn' is not in the audit log"
fi
if sbx socks-ok "${pcurl[@]}" "ALL_PROXY=socks5h://127.0.0.1:$PROXY" /usr/bin/curl -sS --max-time 10 \
	"http://allowed.test:$UP/"; then
	[[ $rc == 0 && $(cat "$T/socks-ok") == "hello from upstream" ]] &&
		ok "curl through socks5h reaches allowed.test" ||
		bad "socks5h to allowed.test: exit $rc, '$(cat "$T/socks-ok" "$T/socks-ok.err")'"
fi
if sbx socks-no "${pcurl[@]}" "ALL_PROXY=socks5h://127.0.0.1:$PROXY" /usr/bin/curl -sS --max-time 10 \
	"http://other.test:$UP/"; then
	# curl: 97 is a SOCKS proxy handshake failure (reply 2: not allowed by the ruleset)
	[[ $rc == 97 ]] && ok "curl through socks5h to other.test is refused (exit 97)" ||
		bad "socks5h to other.test: exit $rc (wanted 97), '$(cat "$T/socks-no" "$T/socks-no.err")'"
fi

echo "# network around the gateway"
out=$("${pcurl[@]}" /usr/bin/curl -sS --noproxy '*' --max-time 10 "http://127.0.0.1:$UP/" 2>&1)
rc=$?
[[ $rc == 0 && $out == "hello from upstream" ]] &&
	ok "outside the sandbox, curl straight to 127.0.0.1:$UP is served (the control)" ||
	bad "outside the sandbox, curl straight to the upstream: exit $rc, '$out'"
if sbx direct "${pcurl[@]}" /usr/bin/curl -sS --noproxy '*' --max-time 10 "http://127.0.0.1:$UP/"; then
	# 7: could not connect (the profile denies network-outbound there)
	[[ $rc == 7 && ! -s $T/direct ]] &&
		ok "under the profile, curl straight to 127.0.0.1:$UP is refused (exit 7)" ||
		bad "under the profile, curl straight to the upstream: exit $rc, '$(cat "$T/direct" "$T/direct.err")'"
fi
if sbx direct-proxy "${pcurl[@]}" /usr/bin/curl -sS --noproxy '*' --max-time 10 \
	"http://127.0.0.1:$PROXY/"; then
	# the proxy port itself is reachable: a request with no proxy form is the gateway's to refuse
	[[ $rc == 0 || $rc == 52 || $rc == 56 ]] &&
		ok "under the profile, the proxy port itself is reachable (exit $rc)" ||
		bad "under the profile, the proxy port: exit $rc, '$(cat "$T/direct-proxy.err")'"
fi

echo "# warden run (its own gateway, profile and sandbox-exec)"
cat >"$T/run-gateway.yaml" <<EOF
version: 1
resolvers: ["127.0.0.1:$DNS"]
limits: {peek_timeout_ms: 1500, connect_timeout_ms: 2000}
EOF
mkdir -p "$T/runtmp"
# wrun OUT CMD...: `warden run` of CMD under the policy; stdout in $T/OUT, stderr in $T/OUT.err;
# sets rc. 125 (warden failed before the program) or 126/127 is an error.
wrun() {
	local out=$1
	shift
	TMPDIR="$T/runtmp" WARDEN_GATEWAY_BIN="$GW" "$WD" run -q -p "$T/policy.yaml" \
		--config "$T/run-gateway.yaml" --audit-log "$T/run-audit.jsonl" -- "$@" \
		>"$T/$out" 2>"$T/$out.err"
	rc=$?
	if ((rc == 125 || rc == 126 || rc == 127)); then
		err "warden run $* could not run (exit $rc): $(cat "$T/$out.err")"
		return 1
	fi
	return 0
}
if wrun w-read-ok /bin/cat "$T/granted/ok.txt"; then
	[[ $rc == 0 && $(cat "$T/w-read-ok") == "granted text" ]] &&
		ok "warden run: a granted file is read" ||
		bad "warden run: the granted file: exit $rc, '$(cat "$T/w-read-ok" "$T/w-read-ok.err")'"
fi
if wrun w-read-no /bin/cat "$T/secret/no.txt"; then
	[[ $rc != 0 && ! -s $T/w-read-no ]] && grep -q "Operation not permitted" "$T/w-read-no.err" &&
		ok "warden run: a file outside the grants is refused" ||
		bad "warden run: the file outside the grants: exit $rc, '$(cat "$T/w-read-no" "$T/w-read-no.err")'"
fi
if wrun w-via-ok /usr/bin/curl -sS --max-time 10 "http://allowed.test:$UP/"; then
	[[ $rc == 0 && $(cat "$T/w-via-ok") == "hello from upstream" ]] &&
		ok "warden run: curl (warden's http_proxy) reaches allowed.test" ||
		bad "warden run: curl to allowed.test: exit $rc, '$(cat "$T/w-via-ok" "$T/w-via-ok.err")'"
fi
if wrun w-via-no /usr/bin/curl -sS -i --max-time 10 "http://other.test:$UP/"; then
	dn=$(grep -oE 'dn-[0-9a-f]{12}' "$T/w-via-no" | head -n 1)
	[[ $rc == 0 && $(head -n 1 "$T/w-via-no") == "HTTP/1.1 403"* && -n $dn ]] &&
		grep -q "\"denial_id\":\"$dn\"" "$T/run-audit.jsonl" &&
		ok "warden run: curl to other.test gets a 403 whose denial id ($dn) is in the run's audit log" ||
		bad "warden run: curl to other.test: exit $rc, '$(head -c 300 "$T/w-via-no") $(cat "$T/w-via-no.err")'"
fi
nohttp=(/usr/bin/env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY)
if wrun w-socks-ok "${nohttp[@]}" /usr/bin/curl -sS --max-time 10 "http://allowed.test:$UP/"; then
	[[ $rc == 0 && $(cat "$T/w-socks-ok") == "hello from upstream" ]] &&
		ok "warden run: curl with warden's ALL_PROXY (socks5h) alone reaches allowed.test" ||
		bad "warden run: socks5h to allowed.test: exit $rc, '$(cat "$T/w-socks-ok.err")'"
fi
if wrun w-socks-no "${nohttp[@]}" /usr/bin/curl -sS --max-time 10 "http://other.test:$UP/"; then
	[[ $rc == 97 ]] && ok "warden run: socks5h to other.test is refused (exit 97)" ||
		bad "warden run: socks5h to other.test: exit $rc (wanted 97), '$(cat "$T/w-socks-no.err")'"
fi
if wrun w-direct /usr/bin/curl -sS --noproxy '*' --max-time 10 "http://127.0.0.1:$UP/"; then
	[[ $rc == 7 && ! -s $T/w-direct ]] &&
		ok "warden run: curl straight to 127.0.0.1:$UP is refused (exit 7)" ||
		bad "warden run: curl straight to the upstream: exit $rc, '$(cat "$T/w-direct" "$T/w-direct.err")'"
fi
if wrun w-exit /bin/sh -c 'exit 7'; then
	[[ $rc == 7 ]] && ok "warden run: the program's exit status is warden's (7)" ||
		bad "warden run: exit status $rc, wanted 7: $(cat "$T/w-exit.err")"
	grep -q '"action":"run.start"' "$T/run-audit.jsonl" &&
		grep -q '"action":"run.exit".*"exit":7' "$T/run-audit.jsonl" &&
		ok "warden run: run.start and run.exit (exit 7) are in the audit log" ||
		bad "warden run: no run.start or run.exit with exit 7 in the audit log"
fi
[[ -z $(ls -A "$T/runtmp") ]] && ok "warden run: its folders (profile, gateway socket) are gone" ||
	bad "warden run left $(ls -A "$T/runtmp")"

kill -TERM "$gwpid" 2>/dev/null
wait_for 10 bash -c '! kill -0 "$0"' "$gwpid" && ok "SIGTERM stops the gateway" ||
	bad "the gateway did not stop on SIGTERM"
[[ ! -e $T/gw.sock ]] && ok "its control socket is gone" || bad "its control socket is left"
finish
