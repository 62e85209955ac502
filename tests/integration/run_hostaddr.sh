#!/usr/bin/env bash
# run_hostaddr.sh - a run reaches only its own gateway address (issue 11, item 1). Host services
# listening on the gateway's ports at the host's other addresses (lab-host's own address, v4 and
# v6, TCP 15080 and UDP 15053; another run's gateway address) are never reached, and every such
# attempt is an audit event ("net.host", attributed to the run, counted in run.exit's denials).
# Positive controls next to each: the same probe at the run's own gateway address works (the
# proxy port, the DNS port), and curl through the proxy variables and transparently works.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
PY=/usr/bin/python3
[[ -x $PY ]] || { echo "SKIP: python3 missing"; exit 77; }
lab_up

T=$(lab_tmpdir wd-run-hostaddr)
chmod 0755 "$T"
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
cp "$SRC/tests/integration/probe.py" "$T/probe.py"
chmod 0755 "$T/probe.py"
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0

cat >"$T/net.yaml" <<EOF
version: 1
filesystem:
  read: ["$LAB_CA", "$T/probe.py"]
network:
  allow:
    - {host: allowed.test, ports: [80, 443]}
EOF
cat >"$T/gw.yaml" <<EOF
version: 1
control: {path: "$T/gw.sock"}
audit: {path: "$A"}
EOF

# wr ARGS...: warden run in lab-host with the test's audit log and policy
wr() { in_host "$W" run -q --audit-log "$A" -p "$T/net.yaml" "$@"; }
# probe ARGS...: probe.py inside a run (embedded gateway); prints what it got
probe() { wr -- "$PY" "$T/probe.py" "$@"; }
# own4 / own6: the run's own gateway addresses, as the run sees them (its resolv.conf)
OWN4='$(awk '"'"'/^nameserver [0-9.]*$/ {print $2}'"'"' /etc/resolv.conf)'
OWN6='$(awk '"'"'/^nameserver .*:/ {print $2}'"'"' /etc/resolv.conf)'
probe_own() { wr -- sh -c "exec $PY '$T/probe.py' $1 $2 $3 ${4:-}"; }
# has PATTERN CMD...: CMD's output matches PATTERN
has() {
	local pat=$1 out
	shift
	out=$("$@" 2>&1)
	printf '%s\n' "$out"
	grep -q -- "$pat" <<<"$out"
}
# rc_is WANT CMD...: CMD exits WANT
rc_is() {
	local want=$1 rc
	shift
	"$@"
	rc=$?
	echo "exit $rc"
	((rc == want))
}
# the run ids in the audit log whose probe matched (newest last)
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
host_events() {
	jq -s --arg r "$1" --arg d "$2" --argjson p "$3" --arg t "$4" \
		'[.[] | select(.run == $r and .action == "net.host" and .allowed == false and
			.dst == $d and .port == $p and .proto == $t)] | length' "$A"
}

echo "# host services on the gateway's ports at lab-host's own addresses"
lab_spawn host sec4 socat TCP4-LISTEN:15080,bind="$LAB_HOST_V4",reuseaddr,fork SYSTEM:'echo HOST-SECRET'
lab_spawn host sec6 socat TCP6-LISTEN:15080,bind="[$LAB_HOST_V6]",ipv6only=1,reuseaddr,fork \
	SYSTEM:'echo HOST-SECRET'
lab_spawn host udp4 socat UDP4-RECVFROM:15053,bind="$LAB_HOST_V4",reuseaddr,fork SYSTEM:'echo HOST-UDP'
lab_spawn host udp6 socat UDP6-RECVFROM:15053,bind="[$LAB_HOST_V6]",reuseaddr,fork \
	SYSTEM:'echo HOST-UDP'
# (both of each pair: lab_wait_listen returns once one of them listens)
listeners() { (($(in_host ss -Hln"$1" "sport = :$2" | wc -l) >= 2)); }
lab_wait 10 listeners t 15080
lab_wait 10 listeners u 15053
check "control: the TCP service answers in lab-host (v4)" bash -c \
	'ip netns exec "$0" socat -T3 - TCP:"$1":15080 </dev/null | grep -q HOST-SECRET' \
	"$LAB_HOST_NS" "$LAB_HOST_V4"
check "control: the TCP service answers in lab-host (v6)" bash -c \
	'ip netns exec "$0" socat -T3 - TCP6:"[$1]":15080 </dev/null | grep -q HOST-SECRET' \
	"$LAB_HOST_NS" "$LAB_HOST_V6"
check "control: the UDP service answers in lab-host (v4)" bash -c \
	'echo q | ip netns exec "$0" socat -T3 - UDP4:"$1":15053 | grep -q HOST-UDP' \
	"$LAB_HOST_NS" "$LAB_HOST_V4"

# the issue's recipe, with socat
check_fails "socat -T3 - TCP:$LAB_HOST_V4:15080 from inside a run gets no HOST-SECRET" \
	has HOST-SECRET wr -- socat -T3 - "TCP:$LAB_HOST_V4:15080,connect-timeout=3" </dev/null
check_fails "socat -T3 - TCP6:[$LAB_HOST_V6]:15080 neither" \
	has HOST-SECRET wr -- socat -T3 - "TCP6:[$LAB_HOST_V6]:15080,connect-timeout=3" </dev/null
check "control: the same socat reaches the gateway's proxy at the run's own address" \
	has "hello from allowed.test" wr -- sh -c "printf 'GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n' |
	socat -T3 - TCP:$OWN4:15080"
check "control: the proxy port at the run's own v4 address relays to allowed.test" \
	has "hello from allowed.test" probe_own tcp "$OWN4" 15080 http
out=$(probe tcp "$LAB_HOST_V4" 15080)
check_fails "the proxy port at lab-host's own v4 address: the host service is not reached" \
	grep -q HOST-SECRET <<<"$out"
R4=$(last_run)
check "control: the proxy port at the run's own v6 address relays to allowed.test" \
	has "hello from allowed.test" probe_own tcp "$OWN6" 15080 http
out=$(probe tcp "$LAB_HOST_V6" 15080)
check_fails "the proxy port at lab-host's own v6 address: the host service is not reached" \
	grep -q HOST-SECRET <<<"$out"
R6=$(last_run)
check_eq "control: the DNS port at the run's own v4 address answers" "dns rcode=0 answers=1" \
	probe_own udp "$OWN4" 15053 dns
out=$(probe udp "$LAB_HOST_V4" 15053 text)
check_fails "the DNS port at lab-host's own v4 address: the UDP service is not reached" \
	grep -q HOST-UDP <<<"$out"
U4=$(last_run)
check_eq "control: the DNS port at the run's own v6 address answers" "dns rcode=0 answers=1" \
	probe_own udp "$OWN6" 15053 dns
out=$(probe udp "$LAB_HOST_V6" 15053 text)
check_fails "the DNS port at lab-host's own v6 address: the UDP service is not reached" \
	grep -q HOST-UDP <<<"$out"
U6=$(last_run)
check_fails "... nor with a DNS query to it" has rcode probe udp "$LAB_HOST_V4" 15053 dns

echo "# the attempts are audited, per run"
check "TCP to $LAB_HOST_V4:15080: a net.host event of that run" \
	test "$(host_events "$R4" "$LAB_HOST_V4" 15080 tcp)" -ge 1
check "TCP to [$LAB_HOST_V6]:15080: a net.host event of that run" \
	test "$(host_events "$R6" "$LAB_HOST_V6" 15080 tcp)" -ge 1
check "UDP to $LAB_HOST_V4:15053: a net.host event of that run" \
	test "$(host_events "$U4" "$LAB_HOST_V4" 15053 udp)" -ge 1
check "UDP to [$LAB_HOST_V6]:15053: a net.host event of that run" \
	test "$(host_events "$U6" "$LAB_HOST_V6" 15053 udp)" -ge 1
check "... its reason names the run's own gateway address" jq -e -s --arg r "$R4" \
	'[.[] | select(.run == $r and .action == "net.host")][0].reason |
	 test("only its own gateway address")' "$A"
check "run.exit counts the attempt as a denial" jq -e -s --arg r "$R4" \
	'[.[] | select(.run == $r and .action == "run.exit")][0].denials >= 1' "$A"
# As a user (run_as_user.sh), a rootless run's namespace holds no host address: a connection to
# one is DNATed to the run's own gateway like any other and refused as a literal address
# (net.connect), a datagram to one is dropped by the run's own table like any other (net.udp).
# run_as_user.sh's rows for the net.host checks above want these.
if [[ ${LAB_AS_USER:-} == 1 ]]; then
	# refused RUN ACTION DST PORT WHY: RUN has a refused ACTION event to DST:PORT whose reason
	# matches WHY (0), or not (1)
	refused() {
		jq -e -s --arg r "$1" --arg a "$2" --arg d "$3" --argjson p "$4" --arg why "$5" \
			'any(.[]; .run == $r and .action == $a and .allowed == false and .dst == $d and
			.port == $p and (.reason | test($why)))' "$A" >/dev/null
	}
	check "as the user: TCP to $LAB_HOST_V4:15080 is refused as a literal address (net.connect)" \
		refused "$R4" net.connect "$LAB_HOST_V4" 15080 "no cidr rule allows"
	check "as the user: TCP to [$LAB_HOST_V6]:15080 is refused as a literal address (net.connect)" \
		refused "$R6" net.connect "$LAB_HOST_V6" 15080 "no cidr rule allows"
	check "as the user: UDP to $LAB_HOST_V4:15053 is dropped by the run's table (net.udp)" \
		refused "$U4" net.udp "$LAB_HOST_V4" 15053 "dropped by the nft table"
	check "as the user: UDP to [$LAB_HOST_V6]:15053 is dropped by the run's table (net.udp)" \
		refused "$U6" net.udp "$LAB_HOST_V6" 15053 "dropped by the nft table"
fi

echo "# the gateway's own service still works (positive controls)"
curl_in() { wr -- curl -fsS --max-time 8 --cacert "$LAB_CA" "$@"; }
check_eq "HTTPS through the proxy variables" "hello from allowed.test" curl_in https://allowed.test/
check_eq "HTTP through the proxy variables" "hello from allowed.test" curl_in http://allowed.test/
check_eq "HTTPS transparently" "hello from allowed.test" curl_in --noproxy '*' https://allowed.test/
check_eq "HTTPS transparently over IPv6" "hello from allowed.test" \
	curl_in -6 --noproxy '*' https://allowed.test/
check_fails "a denied name through the proxy still fails" curl_in https://other.test/
lab_stop host sec4
lab_stop host sec6
lab_stop host udp4
lab_stop host udp6

echo "# another run's gateway address (one daemon, two runs)"
lab_spawn host gwd "$GW" --config "$T/gw.yaml" --manage-nft
# (a daemon that did not start says why under the check)
check "setup: the gateway daemon answers on its control socket" lab_wait 10 test -S "$T/gw.sock" ||
	sed 's/^/    | /' "$LAB_DIR/log/host-gwd.log"
# warden itself in the background (not a subshell of in_host: its pid is warden's), ended and
# waited for at exit before $T goes: a run ended later would write its run.exit into a $T made
# again by its audit log
ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" --gateway "$T/gw.sock" -- sleep 60 &
bpid=$!
lab_on_exit bash -c 'kill "$0" 2>/dev/null; for _ in $(seq 100); do kill -0 "$0" 2>/dev/null || break; sleep 0.1; done' "$bpid"
check "run B is up" lab_wait 10 bash -c '(( $(ip netns exec "$0" "$1" ctl --socket "$2" list |
	jq ".runs | length") == 1 ))' "$LAB_HOST_NS" "$GW" "$T/gw.sock"
list=$(in_host "$GW" ctl --socket "$T/gw.sock" list)
B4=$(jq -r '.runs[0].host_v4' <<<"$list")
B6=$(jq -r '.runs[0].host_v6' <<<"$list")
wd() { in_host "$W" run -q --audit-log "$A" -p "$T/net.yaml" --gateway "$T/gw.sock" "$@"; }
check "control: run A's own v4 proxy address relays (daemon)" \
	has "hello from allowed.test" wd -- sh -c "exec $PY '$T/probe.py' tcp $OWN4 15080 http"
check "run A cannot connect to run B's gateway address $B4:15080" \
	rc_is 2 wd -- "$PY" "$T/probe.py" tcp "$B4" 15080
RB4=$(last_run)
check "run A cannot connect to run B's gateway address [$B6]:15080" \
	rc_is 2 wd -- "$PY" "$T/probe.py" tcp "$B6" 15080
RB6=$(last_run)
check_eq "control: the DNS port at run A's own address answers (daemon)" \
	"dns rcode=0 answers=1" wd -- sh -c "exec $PY '$T/probe.py' udp $OWN4 15053 dns"
check "run A gets no answer from run B's DNS port $B4:15053" \
	rc_is 2 wd -- "$PY" "$T/probe.py" udp "$B4" 15053 dns
RBU=$(last_run)
check "the daemon audits the v4 attempt as run A's" test "$(host_events "$RB4" "$B4" 15080 tcp)" -ge 1
check "... the v6 one" test "$(host_events "$RB6" "$B6" 15080 tcp)" -ge 1
check "... the UDP one" test "$(host_events "$RBU" "$B4" 15053 udp)" -ge 1
kill "$bpid" 2>/dev/null
wait "$bpid"
lab_stop host gwd

lab_finish
