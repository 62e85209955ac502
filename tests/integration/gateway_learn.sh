#!/usr/bin/env bash
# gateway_learn.sh - the gateway's learn mode (issue 16, `warden trace`): a run registered with
# "learn": true reaches lab names its policy does not allow (curl https by SNI, curl http by
# Host, raw TCP by a name from the gateway's DNS, an address literal) and a name it only
# resolves; the same run registered without learn is denied those names (the control); the SSRF
# classes stay refused in learn mode (a name that resolves to loopback, the host's own address
# as a literal) with a reason, while a lab name next to them works; `learned` answers exactly
# the (host, port, proto) seen with their counts, to the run's own uid only. Then under a
# ceiling: learn mode allows what the ceiling allows and no more.
set -u
. "$(dirname "$0")/gateway/fixture.sh"
lab_require_root
command -v socat >/dev/null || { echo "SKIP: missing socat"; exit 77; }
gw_setup
POL=$LAB_DIR/policy.yaml
cat >"$POL" <<'EOF'
version: 1
network:
  allow:
    - allowed.test:443
EOF
chmod 0644 "$POL"

learned() { gw_ctl learned --id "$RUN"; }
# the learned table as sorted "host port proto count [refused]" lines, ';'-joined
learned_set()
{
	learned | jq -e -r '.learned | map("\(.host) \(.port) \(.proto) \(.count)" +
		(if .refused then " refused" else "" end)) | sort | join(";")'
}
# learned_refused HOST PORT PROTO: the refusal reason of that entry
learned_refused()
{
	learned | jq -e -r --arg h "$1" --argjson p "$2" --arg t "$3" \
		'.learned[] | select(.host == $h and .port == $p and .proto == $t) | .refused'
}
curl4() { run_curl -4 "$@"; }
# not_echoed ADDR PORT: a raw TCP connection there does not echo (reset, or no name)
not_echoed() { [[ $(tcp_say "$1" 7 ping) != ping ]]; }
# dns_status NAME: the DNS front's rcode for an A query
dns_status() { run_dig "$1" A | sed -n 's/.*status: \([A-Z]*\).*/\1/p'; }
# synthetic_for NAME: the DNS front answers NAME with a synthetic address (100.96/12)
synthetic_for() { [[ $(run_dig +short "$1" A) =~ ^100\. ]]; }
# ctl_says TEXT ARGS...: a control request (ARGS for gw_ctl) whose answer contains TEXT
ctl_says() { local t=$1 out; shift; out=$(gw_ctl "$@" 2>&1); grep -qF -- "$t" <<<"$out"; }
# as_nobody ARGS...: the control client as uid 65534
as_nobody() { in_host setpriv --reuid 65534 --regid 65534 --clear-groups "$GW" ctl --socket "$GWSOCK" "$@"; }
nobody_stats_ok() { as_nobody stats | jq -e .ok >/dev/null; }
nobody_learned_absent()
{
	local out
	out=$(as_nobody learned --id "$RUN" 2>&1)
	grep -q "no such run" <<<"$out" && ! grep -q other.test <<<"$out"
}
learned_dropped() { learned | jq -r .dropped; }
learned_summary() { learned | jq -c -r '"\(.learned) \(.dropped)"'; }
# body_has TEXT CURL-ARGS...: curl's output (a 403's body) contains TEXT
body_has() { local t=$1 out; shift; out=$(curl4 "$@"); grep -qF -- "$t" <<<"$out"; }
# refused_has TEXT HOST PORT PROTO: that entry's refusal contains TEXT
refused_has() { local t=$1 out; shift; out=$(learned_refused "$@") && grep -qF -- "$t" <<<"$out"; }

# --- the control: the same run without learn mode -----------------------------------------
check "register the run without learn" gw_register "$POL"
check_eq "control: allowed.test (its policy's name) is served" "hello from allowed.test" \
	curl4 https://allowed.test/
check_fails --denied 6 "other.test does not resolve (NXDOMAIN)" curl4 https://other.test/
check_fails --denied 35 "other.test by SNI to its lab address is denied (TLS alert)" \
	curl4 --resolve other.test:443:"$LAB_OTHER_V4" https://other.test/
check_fails --denied 6 "a.wild.test does not resolve" curl4 http://a.wild.test/
check_fails --denied 22 "a.wild.test by Host to its lab address gets a 403" \
	curl4 -f --resolve a.wild.test:80:"$LAB_WILD_V4" http://a.wild.test/
check "raw TCP to multi.test:7 fails (no name)" not_echoed multi.test
check_eq "NXDOMAIN for resolved.wild.test" "NXDOMAIN" dns_status resolved.wild.test
check "learned refuses a run not in learn mode" ctl_says "not in learn mode" learned --id "$RUN"
check "unregister it" gw_ctl unregister --id "$RUN"

# --- learn mode ----------------------------------------------------------------------------
check "register the run in learn mode" gw_ctl register --id "$RUN" --if "$IF" \
	--host-v4 "$H4" --sandbox-v4 "$S4" --host-v6 "$H6" --sandbox-v6 "$S6" --policy "$POL" --learn
check "its register event says learn mode" audit_has \
	".action == \"run.gateway-register\" and .run == \"$RUN\" and .learn == true and (.reason | contains(\"learn mode\"))"
check_eq "learned starts empty" "[] 0" learned_summary
check_eq "curl https://other.test/ (SNI; not in the policy)" "hello from other.test" \
	curl4 https://other.test/
check_eq "... twice" "hello from other.test" curl4 https://other.test/
check "its net.connect event: allowed in learn mode" audit_has \
	".action == \"net.connect\" and .run == \"$RUN\" and .resource == \"other.test\" and .allowed == true and .learn == true and .reason == \"allowed: learn mode\""
check_eq "curl http://a.wild.test/ (Host)" "hello from wild.test" curl4 http://a.wild.test/
check_eq "raw TCP by name: multi.test:7 echoes" "ping" tcp_say multi.test 7 ping
check_eq "raw TCP to a lab address literal ($LAB_ALLOWED_V4:7) echoes" "ping" \
	tcp_say "$LAB_ALLOWED_V4" 7 ping
check "resolved.wild.test gets a synthetic address (resolved only)" \
	synthetic_for resolved.wild.test
check "... and the lab DNS was never asked about it" lab_dns_never_asked resolved.wild.test
# the SSRF classes, each next to a lab name that works
check_fails --denied 22 "loopback.test (resolves to 127.0.0.1) is refused with a 403" \
	curl4 -f http://loopback.test/
check "its 403 says why" body_has "127.0.0.1 is a loopback address" http://loopback.test/
check_eq "control next to it: http://other.test/ works" "hello from other.test" \
	curl4 http://other.test/
check "its denial event: learn mode, refused" audit_has \
	".action == \"net.connect\" and .run == \"$RUN\" and .resource == \"loopback.test\" and .allowed == false and .learn == true"
check "the host's own address as a literal ($LAB_HOST_V4:7) is reset" not_echoed "$LAB_HOST_V4"
check "its denial event names the SSRF guard" audit_has \
	".action == \"net.connect\" and .run == \"$RUN\" and .resource == \"$LAB_HOST_V4\" and .allowed == false and (.reason | contains(\"refused in learn mode\"))"
check_eq "control next to it: the lab literal still echoes" "ping" \
	tcp_say "$LAB_ALLOWED_V4" 7 ping

# (in jq's sort order: "203.0.113.1 " before "203.0.113.10")
WANT="$LAB_HOST_V4 7 raw 1 refused;$LAB_ALLOWED_V4 7 raw 2;a.wild.test 80 http 1"
WANT+=";loopback.test 80 http 2 refused;multi.test 7 raw 1;other.test 443 tls 2"
WANT+=";other.test 80 http 1;resolved.wild.test 0 dns 1"
check_eq "learned: exactly the (host, port, proto) seen, with counts" "$WANT" learned_set
check "loopback.test's refusal names its address" \
	refused_has "127.0.0.1 is a loopback address" loopback.test 80 http
check "$LAB_HOST_V4's refusal names the SSRF guard" \
	refused_has "refused in learn mode as in any run (SSRF guard" "$LAB_HOST_V4" 7 raw
check_eq "nothing dropped" "0" learned_dropped
# a replace keeps learn mode
check "replace the run's policy" gw_ctl replace --id "$RUN" --policy "$POL"
check_eq "after replace: other.test is still reached" "hello from other.test" \
	curl4 https://other.test/
check "after replace: learned still answers" learned
# another uid: its connection works (stats), the run is not there for it
check "control: uid 65534 reaches the control socket (stats)" nobody_stats_ok
check "uid 65534's learned finds no such run" nobody_learned_absent
check "unregister the learn-mode run" gw_ctl unregister --id "$RUN"

# --- under a ceiling -----------------------------------------------------------------------
check "stop the gateway" gw_stop
gw_start 'ceiling:
  allow:
    - other.test:443
    - "*.wild.test:80"
  deny: ["bad.wild.test"]'
RULE_LINE=$(grep -n -- '- other.test:443' "$GWCONF" | head -n1 | cut -d: -f1)
check "register in learn mode under the ceiling" gw_ctl register --id "$RUN" --if "$IF" \
	--host-v4 "$H4" --sandbox-v4 "$S4" --host-v6 "$H6" --sandbox-v6 "$S6" --policy "$POL" --learn
check_eq "the ceiling's other.test:443 is reached" "hello from other.test" \
	curl4 https://other.test/
check_eq "the ceiling's *.wild.test:80 is reached" "hello from wild.test" \
	curl4 http://a.wild.test/
check_fails --denied 22 "other.test:80 (the ceiling's name, not its port) gets a 403" \
	curl4 -f http://other.test/
check "its reason cites the ceiling's file:line" \
	body_has "other.test:80 is not allowed by the host's ceiling $GWCONF:$RULE_LINE (its rule \`other.test:443\` is for other ports)" \
	http://other.test/
check_fails --denied 6 "bad.wild.test (the ceiling denies it) does not resolve" \
	curl4 http://bad.wild.test/
check_fails --denied 6 "allowed.test (the policy's own, the ceiling's not) does not resolve" \
	curl4 https://allowed.test/
check_fails --denied 35 "allowed.test by SNI to its lab address is denied" \
	curl4 --resolve allowed.test:443:"$LAB_ALLOWED_V4" https://allowed.test/
check "a lab literal the ceiling has no cidr rule for is reset" not_echoed "$LAB_ALLOWED_V4"
check "learned under the ceiling: other.test:80's refusal cites the ceiling" \
	refused_has "not allowed by the host's ceiling" other.test 80 http
check "unregister" gw_ctl unregister --id "$RUN"
check "the gateway's log has no sanitizer report" gw_log_clean
lab_finish
