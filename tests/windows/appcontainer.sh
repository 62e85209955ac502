#!/usr/bin/env bash
# tests/windows/appcontainer.sh - on Windows (an elevated prompt, MSYS2's bash): `warden run`
# of warden.exe, which starts its own warden-gateway.exe (the run registered with --run) and
# runs the program in an AppContainer whose WFP filters let it reach only the gateway's
# loopback port. .github/workflows/windows.yml runs it; it has never run (there is no Windows
# machine where Warden is built: tests/cross/run-windows runs the same run path under wine with
# a stand-in layer that confines nothing; docs/platforms.md).
#
#   WARDEN=.../warden.exe tests/windows/appcontainer.sh
#
# It starts, on 127.0.0.1: an HTTP upstream (python) and a DNS stub naming allowed.test and
# other.test there (tests/macos/dns_stub.py: the gateway's resolver asks DNS only). The policy
# grants one folder for reading and allows allowed.test:UP, with a cidr rule for 127.0.0.1:UP
# (which lifts the SSRF guard's loopback class for the upstream alone). Under `warden run`,
# with Windows' own curl.exe as the program:
#   - a granted file read (file://) beside a file outside the grants refused;
#   - curl told only by warden's proxy variables served for allowed.test and refused for
#     other.test (403 with a denial id that is in the run's audit log); socks5h is not probed
#     (Windows' environment is case-blind and curl.exe cannot be told ALL_PROXY alone; the
#     same gateway's SOCKS5 is tested in the lab, gateway_socks.sh);
#   - curl straight to the upstream (--noproxy) refused by the WFP filters, beside the same
#     request outside the sandbox served (the control: the upstream is there);
#   - the program's exit status passed back (curl -f: 22), run.start and run.exit in the log;
#   - the run's folder under %TEMP% gone after.
# A probe that could not run (warden's 125, 126/127) is an ERROR. Exit 0 all passed, 1 a check
# failed, 2 a probe or a fixture could not run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
WD=${WARDEN:-warden.exe}
UP=${WIN_UPSTREAM_PORT:-18080}
DNS=${WIN_DNS_PORT:-15353}
PY=${PYTHON:-python3}
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

for tool in "$WD" "$PY" cygpath; do
	command -v "$tool" >/dev/null || die "$tool is not there (a probe that cannot run is an error)"
done
CURL="$(cygpath -u "${SYSTEMROOT:-C:\\Windows}")/System32/curl.exe"
[[ -x $CURL ]] || die "Windows' curl.exe is not in System32"
T=$(mktemp -d "${TMPDIR:-/tmp}/wd-appcontainer.XXXXXX") || die "mktemp"
mkdir -p "$T/granted" "$T/secret" || die "cannot fill $T"
echo "granted text" >"$T/granted/ok.txt"
echo "secret text" >"$T/secret/no.txt"
w() { cygpath -m "$1"; } # C:/... : what a policy and curl's file:// take

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
"$PY" -c '
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
"$PY" "$here/../macos/dns_stub.py" 127.0.0.1 "$DNS" allowed.test=127.0.0.1 \
	other.test=127.0.0.1 >"$T/dns.log" 2>&1 &
pids+=($!)
wait_for 10 "$CURL" -fsS --noproxy '*' -o NUL "http://127.0.0.1:$UP/" ||
	die "the upstream on 127.0.0.1:$UP did not start: $(cat "$T/http.log")"
wait_for 10 grep -q ready "$T/dns.log" || die "the DNS stub did not start: $(cat "$T/dns.log")"

cat >"$T/policy.yaml" <<EOF2
version: 1
filesystem:
  read: ["$(w "$T/granted")"]
network:
  allow:
    - { host: allowed.test, ports: [$UP] }
    - { cidr: "127.0.0.1/32", ports: [$UP] }
EOF2
cat >"$T/gateway.yaml" <<EOF2
version: 1
resolvers: ["127.0.0.1:$DNS"]
limits: {peek_timeout_ms: 1500, connect_timeout_ms: 2000}
EOF2
AUDIT=$T/audit.jsonl

# wrun OUT ARGS...: `warden run` of curl.exe ARGS under the policy; stdout in $T/OUT, stderr in
# $T/OUT.err; sets rc. 125 (warden failed before the program) or 126/127 is an error.
wrun() {
	local out=$1
	shift
	"$WD" run -q -p "$(w "$T/policy.yaml")" --config "$(w "$T/gateway.yaml")" \
		--audit-log "$(w "$AUDIT")" -- curl.exe "$@" >"$T/$out" 2>"$T/$out.err"
	rc=$?
	if ((rc == 125 || rc == 126 || rc == 127)); then
		err "warden run curl.exe $* could not run (exit $rc): $(cat "$T/$out.err")"
		return 1
	fi
	return 0
}

echo "# files"
if wrun read-ok -sS "file:///$(w "$T/granted/ok.txt")"; then
	[[ $rc == 0 && $(tr -d '\r' <"$T/read-ok") == "granted text" ]] &&
		ok "a granted file is read" ||
		bad "the granted file: exit $rc, '$(cat "$T/read-ok" "$T/read-ok.err")'"
fi
if wrun read-no -sS "file:///$(w "$T/secret/no.txt")"; then
	# 37: curl could not read the file (access denied to the AppContainer)
	[[ $rc == 37 && ! -s $T/read-no ]] && ok "a file outside the grants is refused (curl 37)" ||
		bad "the file outside the grants: exit $rc, '$(cat "$T/read-no" "$T/read-no.err")'"
fi

echo "# the network: the gateway's proxy port, and nothing else"
if wrun via-ok -sS --max-time 10 "http://allowed.test:$UP/"; then
	[[ $rc == 0 && $(tr -d '\r' <"$T/via-ok") == "hello from upstream" ]] &&
		ok "curl (warden's HTTP_PROXY) reaches allowed.test" ||
		bad "curl to allowed.test: exit $rc, '$(cat "$T/via-ok" "$T/via-ok.err")'"
fi
if wrun via-no -sS -i --max-time 10 "http://other.test:$UP/"; then
	dn=$(grep -oE 'dn-[0-9a-f]{12}' "$T/via-no" | head -n 1)
	[[ $rc == 0 && $(head -n 1 "$T/via-no") == "HTTP/1.1 403"* && -n $dn ]] &&
		grep -q "\"denial_id\":\"$dn\"" "$AUDIT" &&
		ok "curl to other.test gets a 403 whose denial id ($dn) is in the run's audit log" ||
		bad "curl to other.test: exit $rc, '$(head -c 300 "$T/via-no") $(cat "$T/via-no.err")'"
fi
if wrun direct -sS --noproxy '*' --max-time 10 "http://127.0.0.1:$UP/"; then
	out=$("$CURL" -sS --noproxy '*' --max-time 10 "http://127.0.0.1:$UP/" 2>&1 | tr -d '\r')
	[[ $out == "hello from upstream" ]] &&
		ok "outside the sandbox, curl straight to 127.0.0.1:$UP is served (the control)" ||
		bad "outside the sandbox, curl straight to the upstream: '$out'"
	# 7: could not connect; 28: timed out (a WFP block may drop rather than refuse)
	[[ ($rc == 7 || $rc == 28) && ! -s $T/direct ]] &&
		ok "in the AppContainer, curl straight to 127.0.0.1:$UP is refused (exit $rc)" ||
		bad "in the AppContainer, curl straight to the upstream: exit $rc, '$(cat "$T/direct" "$T/direct.err")'"
fi

echo "# exit status and the audit log"
if wrun exit -sS -f --max-time 10 "http://other.test:$UP/"; then
	[[ $rc == 22 ]] && ok "the program's exit status is warden's (curl -f on a 403: 22)" ||
		bad "exit status $rc, wanted 22: $(cat "$T/exit.err")"
	grep -q '"action":"run.start"' "$AUDIT" && grep -q '"action":"run.exit".*"exit":22' "$AUDIT" &&
		ok "run.start and run.exit (exit 22) are in the audit log" ||
		bad "no run.start or run.exit with exit 22 in the audit log"
	grep -q "registered at the gateway's start (--run)" "$AUDIT" &&
		ok "the run was registered with its gateway at the gateway's start" ||
		bad "no run.gateway-register at the gateway's start in the audit log"
fi
left=$(find "$(cygpath -u "$TEMP")" -maxdepth 1 -name 'warden-run-*' 2>/dev/null)
[[ -z $left ]] && ok "the runs' folders under %TEMP% are gone" || bad "left: $left"
finish
