#!/usr/bin/env bash
# gateway_ceiling.sh - the operator's ceiling in a daemon's config (issue 14): a run whose policy
# allows a name the ceiling lacks gets a 403 (and an NXDOMAIN) that cites the ceiling's
# file:line, in the response and in the audit events, while a name both allow is served; a
# `replace` cannot widen past the ceiling; the per-user caps: a uid's connection cap reached is
# refused and audited while another uid's run is still served, and a uid's cap on runs refuses
# (and audits) one more register. Runs are registered over the control socket as root (uid 0)
# and, with setpriv, as uid 65534.
set -u
. "$(dirname "$0")/gateway/fixture.sh"
LOAD=${WD_GW_LOAD:-${WARDEN_BUILD_DIR:-$SRC/build}/tests/integration/gw_load}
lab_require_root
command -v /usr/bin/python3 >/dev/null || { echo "SKIP: missing python3"; exit 77; }
command -v socat >/dev/null || { echo "SKIP: missing socat"; exit 77; }
CEILING='ceiling:
  allow:
    - allowed.test
    - allowed.test:7007
  users:
    "0":
      limits: { connections: 2 }
    "65534":
      limits: { runs: 1 }'
gw_setup "$CEILING"
[[ -x $LOAD ]] || { echo "FAIL - $LOAD not built"; exit 1; }
ALLOW_LINE=$(grep -n '^  allow:$' "$GWCONF" | head -n1 | cut -d: -f1)
CAP_LINE=$(grep -n 'connections: 2' "$GWCONF" | cut -d: -f1)
RUNS_LINE=$(grep -n 'runs: 1' "$GWCONF" | cut -d: -f1)
[[ -n $ALLOW_LINE && -n $CAP_LINE && -n $RUNS_LINE ]] || { echo "FAIL - the config's lines"; exit 1; }
CEIL_AT="$GWCONF:$ALLOW_LINE"

POL=$LAB_DIR/policy.yaml
cat >"$POL" <<'EOF'
version: 1
network:
  allow:
    - allowed.test
    - other.test
    - allowed.test:7007
EOF
chmod 0644 "$POL"
check "register run A (root's)" gw_register "$POL"
lab_spawn wan echo "$LOAD" serve 7007
lab_wait_listen wan 7007 || { echo "FAIL - echo server"; exit 1; }

echo "# a name the policy allows and the ceiling does not"
check "control: allowed.test (both allow it) is served" \
	bash -c '[[ $(ip netns exec "$0" curl -s --max-time 10 -o /dev/null -w "%{http_code}" --resolve allowed.test:80:"$1" http://allowed.test/) == 200 ]]' \
	"$RUN" "$LAB_ALLOWED_V4"
check "other.test gets a 403 whose body cites the ceiling's file:line" \
	bash -c 'out=$(ip netns exec "$0" curl -s --max-time 10 -D - --resolve other.test:80:"$1" http://other.test/); grep -q "^HTTP/1.1 403" <<<"$out" && grep -qF "other.test:80 is not allowed by the host'"'"'s ceiling $2" <<<"$out"' \
	"$RUN" "$LAB_OTHER_V4" "$CEIL_AT"
check "its net.connect event carries the ceiling's file:line" audit_has \
	".action == \"net.connect\" and .allowed == false and .resource == \"other.test\" and (.reason | contains(\"not allowed by the host's ceiling $CEIL_AT\"))"
check_eq "control: allowed.test resolves to a synthetic address" "1" \
	bash -c 'ip netns exec "$0" dig +time=3 +tries=1 @"$1" +short allowed.test A | grep -c "^100\."' "$RUN" "$H4"
check_eq "other.test is NXDOMAIN from the DNS front" "NXDOMAIN" \
	bash -c 'ip netns exec "$0" dig +time=3 +tries=1 @"$1" other.test A | sed -n "s/.*status: \([A-Z]*\).*/\1/p"' "$RUN" "$H4"
check "its dns.query event carries the ceiling's file:line" audit_has \
	".action == \"dns.query\" and .allowed == false and .resource == \"other.test\" and (.reason | contains(\"not allowed by the host's ceiling $CEIL_AT\"))"

echo "# a replace cannot widen past the ceiling"
WIDE=$LAB_DIR/wide.yaml
cat >"$WIDE" <<'EOF'
version: 1
network:
  allow:
    - allowed.test
    - other.test
    - "*.wild.test"
    - allowed.test:7007
EOF
check "replace run A's policy with a wider one" gw_ctl replace --id "$RUN" --policy "$WIDE"
check "a.wild.test (the new policy allows it) still gets the ceiling's 403" \
	bash -c 'out=$(ip netns exec "$0" curl -s --max-time 10 -D - --resolve a.wild.test:80:"$1" http://a.wild.test/); grep -q "^HTTP/1.1 403" <<<"$out" && grep -qF "a.wild.test:80 is not allowed by the host'"'"'s ceiling $2" <<<"$out"' \
	"$RUN" "$LAB_WILD_V4" "$CEIL_AT"
check "control: allowed.test is still served after the replace" \
	bash -c '[[ $(ip netns exec "$0" curl -s --max-time 10 -o /dev/null -w "%{http_code}" --resolve allowed.test:80:"$1" http://allowed.test/) == 200 ]]' \
	"$RUN" "$LAB_ALLOWED_V4"

echo "# run B, another uid's (65534)"
RUN2=wdgw-b$$ IF2=wd-h$$ H42=10.213.200.1 S42=10.213.200.2 H62=fd77:7764:6e00::c801 S62=fd77:7764:6e00::c802
lab_run_netns "$RUN2" "$IF2" "$H42" "$S42" "$H62" "$S62" || { echo "FAIL - run B's namespace"; exit 1; }
in_host "$W" nft run-add "$IF2" --v4 "$S42" --gw4 "$H42" --v6 "$S62" --gw6 "$H62" >/dev/null ||
	{ echo "FAIL - nft run-add B"; exit 1; }
# echo_via NS ADDR: what the echo service at ADDR:7007 sends back from NS (3 tries)
echo_via()
{
	local out= i
	for i in 1 2 3; do
		out=$(printf 'hi\n' | timeout 8 ip netns exec "$1" socat -T3 - "TCP:$2:7007,connect-timeout=3" 2>/dev/null) || true
		[[ $out == hi ]] && break
		sleep 1
	done
	echo "$out"
}
as_nobody() { in_host setpriv --reuid=65534 --regid=65534 --clear-groups "$GW" ctl --socket "$GWSOCK" "$@"; }
check "register run B as uid 65534" as_nobody register --id "$RUN2" --if "$IF2" --host-v4 "$H42" \
	--sandbox-v4 "$S42" --host-v6 "$H62" --sandbox-v6 "$S62" --policy "$POL"
check_eq "run B belongs to uid 65534" "65534" \
	bash -c '"$0" ctl --socket "$1" list | jq -r ".runs[] | select(.id == \"$2\") | .uid"' "$GW" "$GWSOCK" "$RUN2"
check_fails "a second run of uid 65534 is refused (ceiling runs: 1)" as_nobody register --id "wdgw-c$$" \
	--if "wd-i$$" --host-v4 10.213.200.5 --sandbox-v4 10.213.200.6 --policy "$POL"
check "the refusal is audited with the ceiling's file:line" audit_has \
	".action == \"run.gateway-register\" and .allowed == false and .uid == 65534 and (.reason | contains(\"the host's ceiling $GWCONF:$RUNS_LINE allows 1 at once\"))"

echo "# uid 0's connection cap (2 at once, all its runs)"
A=$(synth allowed.test)
A2=$(ip netns exec "$RUN2" dig +time=3 +tries=1 @"$H42" +short allowed.test A | head -n1)
[[ $A == 100.* && $A2 == 100.* ]] || { echo "FAIL - synthetic addresses ($A, $A2)"; exit 1; }
# the holder keeps 2 echo connections of run A open until its stdin closes (60 s at most)
cat >"$LAB_DIR/hold.py" <<'EOF'
import socket, sys, select
addr, n = sys.argv[1], int(sys.argv[2])
held = []
for _ in range(n):
    s = socket.create_connection((addr, 7007), timeout=5)
    s.sendall(b"hi\n")
    if s.recv(16) != b"hi\n":
        sys.exit("no echo")
    held.append(s)
print("held %d" % len(held), flush=True)
select.select([sys.stdin], [], [], 60)
EOF
mkfifo "$LAB_DIR/hold.in"
(in_run /usr/bin/python3 "$LAB_DIR/hold.py" "$A" 2 <"$LAB_DIR/hold.in" >"$LAB_DIR/hold.out" 2>&1) &
holder=$!
exec 7>"$LAB_DIR/hold.in"
check "run A holds 2 relayed connections" lab_wait 15 grep -q "^held 2" "$LAB_DIR/hold.out"
check_fails "a third connection of uid 0 gets no echo" \
	bash -c '[[ $(printf "hi\n" | timeout 8 ip netns exec "$0" socat -T3 - "TCP:$1:7007,connect-timeout=3" 2>/dev/null) == hi ]]' "$RUN" "$A"
check "the refusal is audited with the ceiling's file:line" audit_has \
	".action == \"net.connect\" and .allowed == false and (.reason | contains(\"user connection limit reached: uid 0 has 2 connections, the host's ceiling $GWCONF:$CAP_LINE allows 2\"))"
check_eq "control: uid 65534's run B is still served meanwhile" "hi" echo_via "$RUN2" "$A2"
exec 7>&-
wait "$holder"
check_eq "once the holder is gone, uid 0 connects again" "hi" echo_via "$RUN" "$A"

echo "# warden run through the daemon says what the ceiling changed"
lab_need_run_tools
# warden_run ARGS...: warden run through the daemon, its stderr on stdout; again (3 tries)
# when the launcher picked a link the runs this script made by hand already use
warden_run()
{
	local out rc i
	for i in 1 2 3; do
		out=$(ip netns exec "$LAB_HOST_NS" "$W" run --audit-log "$AUDIT" --gateway "$GWSOCK" \
			-p "$POL" "$@" 2>&1) && rc=0 || rc=$?
		[[ $out == *"addresses already belong to run wdgw-"* ]] || break
	done
	echo "$out"
	return "$rc"
}
check "warden run prints the ceiling's narrowing with its file:line" lab_match \
	"^warden run: the host's ceiling: \`other.test:80,443\` is dropped: not allowed by the host's ceiling $CEIL_AT" \
	warden_run -- true
check_eq "control: with -q the run goes through silently (the program ran and exited 0)" "" \
	warden_run -q -- true

echo "# warden policy check --ceiling shows the effective policy and where each narrowing came from"
check "other.test is dropped, citing the ceiling's file:line" lab_match \
	"policy.yaml:5:7: \`other.test:80,443\` is dropped: not allowed by the host's ceiling $CEIL_AT" \
	"$W" policy check --ceiling "$GWCONF" --user 65534 "$POL"
check "control: allowed.test is kept" lab_match '^    - "allowed.test:80,443"  #' \
	"$W" policy check --ceiling "$GWCONF" --user 65534 "$POL"
check "uid 65534's cap on runs is listed with its file:line" lab_match \
	"^#   runs: 1  \($GWCONF:$RUNS_LINE\)" "$W" policy check --ceiling "$GWCONF" --user 65534 "$POL"
check "uid 0 gets its own cap on connections" lab_match \
	"^#   connections: 2  \($GWCONF:$CAP_LINE\)" "$W" policy check --ceiling "$GWCONF" --user 0 "$POL"
check_fails --denied 2 "an unknown user is an error" "$W" policy check --ceiling "$GWCONF" --user no-such-user-x "$POL"

check "the gateway still runs" kill -0 "$GW_PID"
check "SIGTERM stops the gateway" gw_stop
check "no sanitizer report in the gateway's log" gw_log_clean
lab_finish
