#!/usr/bin/env bash
# lab_helpers.sh - the lab's assertions (tests/lab/lib.sh) tell a probe that was denied from one
# that did not run: check_fails, check and check_eq report an ERROR (counted as a failure) for
# exit 127, 126 or 125, a missing function, program or file, a usage error (curl 2, grep 2), a
# helper called inside `bash -c` where it does not exist, a lab namespace that is not there, a
# DNS log that is not there; and they pass on genuine denials: curl refused (exit 7) on lab-host's
# loopback, a name the lab DNS was never asked.
set -u
. "$(dirname "$0")/../lab/lib.sh"
lab_require_root
lab_up

T=$(mktemp -d /tmp/wd-lab-helpers-XXXXXX)
lab_on_exit rm -rf "$T"

# outcome ASSERTION ARGS...: runs one assertion in a subshell with fresh counts; prints how it came
# out: the first word it printed (ok, FAIL, ERROR) and its counts "passed failed errors". What the
# assertion printed goes to stderr (shown when this check fails; an `ip netns exec` message in it
# is reworded, or this check_eq would take it for its own probe's).
outcome()
{
	(
		LAB_PASSED=0 LAB_FAILED=0 LAB_ERRORS=0
		"$@" >"$T/out" 2>&1
		read -r word _ <"$T/out"
		sed 's/^/  > /; s/exec of "/exec of: "/' "$T/out" >&2
		echo "$word $LAB_PASSED $LAB_FAILED $LAB_ERRORS"
	)
}
ERROR="ERROR 0 1 1"
OK="ok 1 0 0"
FAIL="FAIL 0 1 0"

# a closed TCP port on lab-host's loopback (nothing listens there: connect() is refused)
PORT=$(in_host python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
refused() { in_host curl -sS --max-time 3 "http://127.0.0.1:$PORT/"; }

echo "# genuine results"
check_eq "check_fails passes on a genuine denial (curl: connection refused, exit 7)" "$OK" \
	outcome check_fails "refused" in_host curl -sS --max-time 3 "http://127.0.0.1:$PORT/"
check_eq "... also through a function of the test" "$OK" outcome check_fails "refused" refused
check_eq "... and with --denied 7" "$OK" outcome check_fails --denied 7 "refused" refused
check_eq "check_fails fails when the probe succeeds" "$FAIL" outcome check_fails "succeeds" true
check_eq "check passes on exit 0" "$OK" outcome check "true" true
check_eq "check fails on exit 1" "$FAIL" outcome check "false" false
check_eq "check_eq passes on the wanted output" "$OK" outcome check_eq "echo" x echo x
check_eq "check_fails passes on grep finding nothing in a file that is there" "$OK" \
	outcome check_fails "no match" grep -q never-in-it "$LAB_DNS_LOG"
never=never-$LAB_NAME.test
check_eq "lab_dns_never_asked: a name nobody asked" "$OK" \
	outcome check "never asked" lab_dns_never_asked "$never"
check_eq "lab_dns_asked: the name up's probes ask" "$OK" outcome check "asked" lab_dns_asked ready.lab.test
check_eq "lab_dns_never_asked fails for it" "$FAIL" \
	outcome check "never asked" lab_dns_never_asked ready.lab.test
check_eq "lab_no_match: no wd- link in lab-host" "$OK" \
	outcome check "no wd- link" lab_no_match '^wd-' in_host ip -br link
check_eq "lab_match (its control): veth-wan is there" "$OK" \
	outcome check "veth-wan" lab_match '^veth-wan' in_host ip -br link

echo "# probes that did not run are ERRORs"
check_eq "check_fails: a function that does not exist" "$ERROR" \
	outcome check_fails "missing function" no_such_function_here
check_eq "check_fails: a program that does not exist" "$ERROR" \
	outcome check_fails "missing program" /nonexistent/bin/probe
check_eq "check_fails: exit 127 from inside a shell" "$ERROR" \
	outcome check_fails "127" bash -c 'exit 127'
check_eq "check_fails: exit 126 (not executable)" "$ERROR" outcome check_fails "126" bash -c 'exit 126'
check_eq "check_fails: a missing file (grep exits 2)" "$ERROR" \
	outcome check_fails "missing file" grep -q x "$T/no-such-file"
check_eq "check_fails: curl with a bad option (exit 2)" "$ERROR" \
	outcome check_fails "bad option" in_host curl --no-such-option "http://127.0.0.1:$PORT/"
check_eq "check_fails: curl with a bad URL (exit 3)" "$ERROR" \
	outcome check_fails "bad URL" in_host curl -sS "http://[::1:$PORT/"
check_eq "check_fails: curl whose CA file is missing (exit 77)" "$ERROR" \
	outcome check_fails "CA file" in_host curl -sS --max-time 3 --cacert "$T/no-ca.pem" \
	"https://allowed.test/"
check_eq "check_fails --denied: another status is an ERROR (7 is not 28)" "$ERROR" \
	outcome check_fails --denied 28 "timeout wanted" refused
check_eq "check_fails --denied: a malformed list is an ERROR" "$ERROR" \
	outcome check_fails --denied seven "bad list" refused
check_eq "check_fails: in_host with a program that is not there (ip would exit 1)" "$ERROR" \
	outcome check_fails "in_host" in_host no-such-program-here
check_eq "check_fails: ip netns exec saying 'exec of ... failed' (exit 1)" "$ERROR" \
	outcome check_fails "ip netns exec" ip netns exec "$LAB_HOST_NS" no-such-program-here
no_ns() { LAB_HOST_NS=wdlab-none in_host true; }
check_eq "check_fails: in_host with no lab namespace" "$ERROR" outcome check_fails "no namespace" no_ns
no_log() { LAB_DNS_LOG=$T/none.log lab_dns_asked "$1"; }
check_eq "check_fails: lab_dns_asked without a DNS log" "$ERROR" outcome check_fails "no log" no_log a.test
no_log_never() { LAB_DNS_LOG=$T/none.log lab_dns_never_asked "$1"; }
check_eq "check: lab_dns_never_asked without a DNS log" "$ERROR" outcome check "no log" no_log_never a.test
check_eq "check: lab_dns_never_asked without a name" "$ERROR" outcome check "no name" lab_dns_never_asked ""
check_eq "check: \`bash -c '! lab_dns_asked ...'\` (no such function in there; run_pool.sh had it)" \
	"$ERROR" outcome check "negated" bash -c '! lab_dns_asked allowed.test 2>/dev/null'
check_eq "check: a negated missing command in a function of the test" "$ERROR" \
	outcome check "negated" bash -c '! no_such_command_here'
check_eq "check_eq: wanting no output from a probe that did not run" "$ERROR" \
	outcome check_eq "empty" "" dig_not_here +short allowed.test
check_eq "check_eq: wanting no output from dig with a bad option (exit 1)" "$ERROR" \
	outcome check_eq "empty" "" in_host dig +no-such-option @"$LAB_DNS_V4" allowed.test
check_eq "check_eq: wanting 0 from a count whose command is not there" "$ERROR" \
	outcome check_eq "zero" 0 bash -c 'no_such_counter | wc -l'
check_eq "lab_no_match: its command fails (no such namespace)" "$ERROR" \
	outcome check "no wd- link" lab_no_match '^wd-' ip -n wdlab-none -br link
flaky() { [[ -e $T/second ]] && return 0; : >"$T/second"; lab_probe_error "not ready yet"; return 1; }
check_eq "lab_wait: an attempt that is retried does not count" "$OK" \
	outcome check "flaky" lab_wait 5 flaky
check_eq "lab_wait: the last attempt does" "$ERROR" \
	outcome check "never ready" lab_wait 1 bash -c 'no_such_command_here; false'
check "an ERROR says why" bash -c \
	'out=$(. "$0/lib.sh"; check_fails x grep -q x /nonexistent 2>&1; _lab_probe_cleanup)
	grep -q "^ERROR - x (exit 2; the probe did not run: grep exits 2 when it cannot do its job" <<<"$out"' \
	"$LAB_LIB_DIR"
check_eq "lab_finish: an ERROR fails the test (exit 1)" 1 bash -c \
	'(. "$0/lib.sh"; check_fails x no_such_function_here; lab_finish) >/dev/null; echo $?' "$LAB_LIB_DIR"
lab_finish
