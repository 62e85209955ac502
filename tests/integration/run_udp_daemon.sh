#!/usr/bin/env bash
# run_udp_daemon.sh - UDP by name (issue 32 item 1) in daemon mode: user A's run, in A's own
# network namespace plumbed by warden-gateway --manage-nft, reaches a UDP echo peer in lab-wan by
# an allowed name through the daemon's relay (its privileged parent asks conntrack); beside it,
# with the same probe, the same name on a port no udp rule lists gets nothing back. Both
# decisions are net.udp events in A's log.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

if [[ ${LAB_AS_USER:-} == 1 ]]; then
	echo "SKIP: run_udp_daemon.sh runs its users itself"
	exit 77
fi
lab_require_root
. "$SRC/tests/integration/daemon/fixture.sh"

cat >"$T/gateway.yaml" <<EOF
version: 1
resolvers: ["$LAB_DNS_V4"]
control: {path: "$SOCK"}
audit: {path: "$CENTRAL"}
EOF
cp "$SRC/tests/integration/udp_probe.py" "$T/udp_probe.py"
chmod 0755 "$T/udp_probe.py"
cat >"$T/udp.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/udp_probe.py"]
network:
  allow:
    - { host: allowed.test, proto: udp, ports: [3478] }
EOF
chmod 0644 "$T/udp.yaml"

# the echo peer at allowed.test's addresses, ports 3478 and 3479 (bound to each address: its
# answers come from the address the datagram went to)
lab_spawn wan udpecho python3 "$SRC/tests/integration/udp_echo.py" \
	"$LAB_ALLOWED_V4" "$LAB_ALLOWED_V6"
lab_on_exit lab_stop wan udpecho

check "setup: the host's nft table is installed" in_host "$W" nft install
daemon_start
check "setup: the daemon answers" daemon_ready
probe() { ra --mode daemon -p "$T/udp.yaml" -- python3 "$T/udp_probe.py" "$@"; }
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$AA"; }
events() { jq -s --arg r "$1" "[.[] | select(.run == \$r and ($2))] | length" "$AA"; }

out=$(probe allowed.test 3478 4 2>&1)
rc=$?
r=$(last_run)
echo "# allowed name and port: rc=$rc $out"
check "daemon mode: the echo comes back through the relay" test "$rc" -eq 0
check "... a net.udp allow event in A's log" \
	test "$(events "$r" '.action == "net.udp" and .allowed == true and .resource == "allowed.test" and .port == 3478')" -ge 1
out=$(probe allowed.test 3479 4 2>&1)
rc=$?
r=$(last_run)
echo "# another port: rc=$rc $out"
check "daemon mode: the same name on another port gets nothing back" test "$rc" -eq 1
check "... a net.udp deny event in A's log" \
	test "$(events "$r" '.action == "net.udp" and .allowed == false and .port == 3479')" -ge 1
daemon_stop
lab_finish
