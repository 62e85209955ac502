#!/usr/bin/env bash
# run_udp.sh - UDP by name (issue 32 item 1) in root mode: a policy's `proto: udp` rule lets a
# run's datagrams to a name reach a UDP echo peer in lab-wan through the gateway's relay (the nft
# table redirects UDP to a synthetic address to ports.udp, the gateway asks conntrack through
# its privileged parent, decides, resolves the name itself, relays both ways). Beside the allowed
# name and port, with the same probe: the same name on another port (denied), a name allowed for
# TCP only (denied), and the peer's raw address (dropped and audited by the nft table as before).
# Each exchange's net.udp events are checked: allow with its bytes at close, deny with a reason
# and a denial id.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
PY=/usr/bin/python3
[[ -x $PY ]] || { echo "FAIL: python3 missing"; exit 1; }
lab_up

T=$(lab_tmpdir wd-run-udp)
chmod 0755 "$T"
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
cp "$SRC/tests/integration/udp_probe.py" "$T/udp_probe.py"
chmod 0755 "$T/udp_probe.py"
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0

# the echo peer in lab-wan at allowed.test's and other.test's addresses (bound to each: its
# answers come from the address the datagram went to), ports 3478 and 3479: every denied probe
# below would get its echo if it were relayed
lab_spawn wan udpecho $PY "$SRC/tests/integration/udp_echo.py" \
	"$LAB_ALLOWED_V4" "$LAB_ALLOWED_V6" "$LAB_OTHER_V4" "$LAB_OTHER_V6"
lab_on_exit lab_stop wan udpecho

cat >"$T/udp.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/udp_probe.py"]
network:
  allow:
    - { host: allowed.test, proto: udp, ports: [3478] }
    - other.test
EOF

wr() { in_host "$W" run -q --audit-log "$A" -p "$T/udp.yaml" -- "$PY" "$T/udp_probe.py" "$@"; }
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
# events RUN JQ-FILTER: how many events of RUN match
events() { jq -s --arg r "$1" "[.[] | select(.run == \$r and ($2))] | length" "$A"; }

# probe WHAT HOST PORT FAMILY: one run of the probe; its output in $out, its status in $rc, its
# run in $r
probe() {
	out=$(wr "${@:2}" 2>&1)
	rc=$?
	r=$(last_run)
	echo "# $1: rc=$rc $out"
}

probe "allowed name and port (v4)" allowed.test 3478 4
check "the echo comes back through the relay (v4)" test "$rc" -eq 0
check "... a net.udp allow event names allowed.test:3478 and its rule" \
	test "$(events "$r" '.action == "net.udp" and .allowed == true and .resource == "allowed.test" and .port == 3478 and .rule == "allowed.test:3478/udp" and .bytes_up == null')" -ge 1
check "... the flow's closing event carries its bytes both ways" \
	test "$(events "$r" '.action == "net.udp" and .allowed == true and .bytes_up == 9 and .bytes_down == 14')" -ge 1
probe "allowed name and port (v6)" allowed.test 3478 6
check "the echo comes back through the relay (v6)" test "$rc" -eq 0
check "... a net.udp allow event (v6) with its upstream address" \
	test "$(events "$r" '.action == "net.udp" and .allowed == true and .dst == "2001:db8:0:1::10"')" -ge 1

probe "allowed name, another port" allowed.test 3479 4
check "the same name on a port no udp rule lists gets nothing back" test "$rc" -eq 1
check "... a net.udp deny event with the reason and a denial id" \
	test "$(events "$r" '.action == "net.udp" and .allowed == false and .resource == "allowed.test" and .port == 3479 and (.reason | test("no `proto: udp` rule")) and (.denial_id | length > 0)')" -ge 1

check "control: the echo at other.test's address answers lab-host itself" \
	in_host "$PY" "$T/udp_probe.py" "$LAB_OTHER_V4" 3478 4
probe "a name allowed for TCP only" other.test 3478 4
check "a name only a TCP rule allows gets nothing back" test "$rc" -eq 1
check "... a net.udp deny event for other.test" \
	test "$(events "$r" '.action == "net.udp" and .allowed == false and .resource == "other.test"')" -ge 1

echo "# limits.upload_kib bounds what a run sends to a name over UDP too"
cat >"$T/budget.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/udp_probe.py"]
network:
  allow:
    - { host: allowed.test, proto: udp, ports: [3478] }
limits: {upload_kib: 1}
EOF
wb() { in_host "$W" run -q --audit-log "$A" -p "$T/budget.yaml" -- "$PY" "$T/udp_probe.py" "$@"; }
out=$(wb allowed.test 3478 4 600 2>&1)
rc=$?
echo "# 600 bytes under a 1 KiB budget: rc=$rc ${out:0:40}"
check "control: a datagram within the budget gets its echo" test "$rc" -eq 0
out=$(wb allowed.test 3478 4 2000 2>&1)
rc=$?
r=$(last_run)
echo "# 2000 bytes under a 1 KiB budget: rc=$rc ${out:0:40}"
check "a datagram past the budget is not relayed" test "$rc" -eq 1
check "... a limit.upload event names allowed.test and limits.upload_kib" \
	test "$(events "$r" '.action == "limit.upload" and .resource == "allowed.test" and .rule == "limits.upload_kib" and .proto == "udp"')" -ge 1

probe "the peer's raw address" "$LAB_ALLOWED_V4" 3478 4
check "a raw address gets nothing back" test "$rc" -eq 1
check "... dropped and audited by the nft table as before" \
	test "$(events "$r" ".action == \"net.udp\" and .allowed == false and .dst == \"$LAB_ALLOWED_V4\" and (.reason | test(\"dropped by the nft table\"))")" -ge 1
lab_finish
