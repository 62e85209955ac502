#!/usr/bin/env bash
# run_audit.sh - what the audit log must not miss (issue 11, item 8): UDP a run sends right
# before it exits is still audited (the NFLOG queue is drained before run.exit), UDP-lite is
# audited like UDP, and when the gateway dies during a run (embedded or daemon) run.exit says
# that its counts are incomplete instead of silently dropping them. Positive controls: a run
# whose gateway lives has complete counts, plain UDP is audited.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
PY=/usr/bin/python3
[[ -x $PY ]] || { echo "SKIP: python3 missing"; exit 77; }
lab_up

T=$(lab_tmpdir wd-run-audit)
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
    - {host: allowed.test, ports: [443, 15999]}
EOF
cat >"$T/gw.yaml" <<EOF
version: 1
control: {path: "$T/gw.sock"}
audit: {path: "$A"}
EOF

wr() { in_host "$W" run -q --audit-log "$A" -p "$T/net.yaml" "$@"; }
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
# events RUN JQ-FILTER: how many events of RUN match
events() { jq -s --arg r "$1" "[.[] | select(.run == \$r and ($2))] | length" "$A"; }
exit_of() { jq -c -s --arg r "$1" '[.[] | select(.run == $r and .action == "run.exit")][0]' "$A"; }

echo "# UDP sent right before the run exits is audited"
for i in 1 2 3; do
	wr -- sh -c "echo x | socat -u - UDP4:$LAB_WAN_V4:999$i"
	r=$(last_run)
	check "run $i: its last datagram (to port 999$i) has a net.udp event" \
		test "$(events "$r" ".action == \"net.udp\" and .port == 999$i and .dst == \"$LAB_WAN_V4\"")" -ge 1
	check "run $i: run.exit counts it as a denial" \
		jq -e -s --arg r "$r" '[.[] | select(.run == $r and .action == "run.exit")][0].denials >= 1' "$A"
done

echo "# UDP-lite is audited like UDP"
wr -- sh -c "$PY '$T/probe.py' udplite $LAB_WAN_V4 7 && $PY '$T/probe.py' udplite $LAB_WAN_V6 7 &&
	echo x | socat -u - UDP4:$LAB_WAN_V4:9995"
r=$(last_run)
check "control: the plain UDP datagram of the same run is audited" \
	test "$(events "$r" '.action == "net.udp" and .port == 9995 and .proto == "udp"')" -ge 1
check "the UDP-lite datagram (v4) is audited, proto udplite" \
	test "$(events "$r" ".action == \"net.udp\" and .proto == \"udplite\" and .dst == \"$LAB_WAN_V4\" and .port == 7")" -ge 1
check "the UDP-lite datagram (v6) is audited, proto udplite" \
	test "$(events "$r" ".action == \"net.udp\" and .proto == \"udplite\" and .dst == \"$LAB_WAN_V6\" and .port == 7")" -ge 1
check_eq "nothing of it reached lab-wan" 0 lab_wan_count udp
in_host bash -c "echo x | socat -u - UDP4:$LAB_WAN_V4:9"
check_eq "control: the same counter counts a datagram from lab-host itself" 1 lab_wan_count udp

echo "# bytes of a connection still open when the program ends are in run.exit"
# The server sends 64 KiB, then ignores the client's end and holds the connection for 20 s:
# the gateway still relays it when the launcher asks for the run's counters.
lab_spawn wan holder $PY -c '
import socket, time
s = socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0); s.bind(("::", 15999)); s.listen(8)
held = []
while True:
    c, _ = s.accept(); c.sendall(b"x" * 65536); held.append((c, time.time()))
    held = [h for h in held if time.time() - h[1] < 20 or h[0].close()]
'
lab_wait_listen wan 15999
check "control: a connection to the holder relays its 64 KiB" wr -- bash -c \
	'exec 3<>/dev/tcp/allowed.test/15999; test "$(head -c 65536 <&3 | wc -c)" = 65536'
r=$(last_run)
check "run.exit counts the bytes of the connection the server still holds open" bash -c \
	'jq -e ".bytes_down >= 65536" <<<"$0"' "$(exit_of "$r")"

echo "# the gateway dies during the run"
slow() { # a download that is still going when the gateway is killed
	echo "curl -sS --max-time 20 --limit-rate 64k --cacert '$LAB_CA' -o /dev/null https://allowed.test/big.bin; echo curl=\$?"
}
check "control: a run whose gateway lives" wr -- curl -sS --max-time 8 --cacert "$LAB_CA" \
	-o /dev/null https://allowed.test/
r=$(last_run)
check "control: its run.exit has bytes and no counts_incomplete" bash -c \
	'jq -e "(.bytes_down > 0) and (has(\"counts_incomplete\") | not)" <<<"$0"' "$(exit_of "$r")"

wr -- sh -c "$(slow)" >"$T/embedded.out" 2>&1 &
wpid=$!
gwpid() { # the embedded gateway of the newest run, once its download is under way
	local id pid
	id=$(last_run)
	pid=$(sed -n 's/^gw_pid=//p' "$LAB_RUNS_DIR/$id/state" 2>/dev/null)
	[[ -n $pid && $pid != 0 ]] &&
		(($(ip netns exec "$LAB_HOST_NS" ss -Htn state established "sport = :443 or dport = :443" | wc -l) > 0)) &&
		echo "$pid"
}
lab_wait 15 gwpid
pid=$(gwpid)
check "the embedded gateway relays the download" test -n "$pid"
[[ -n $pid ]] && kill -KILL "$pid"
wait "$wpid"
r=$(last_run)
check "control: the download ended with its status line (curl=N)" grep -q "^curl=[0-9]" "$T/embedded.out"
check_fails "the download failed with the gateway (it did not finish: curl=0)" grep -q "curl=0" "$T/embedded.out"
ex=$(exit_of "$r")
check "run.exit says the counts are incomplete" bash -c 'jq -e ".counts_incomplete == true" <<<"$0"' "$ex"
check "... and why: the gateway died" bash -c \
	'jq -e ".reason | test(\"gateway\") and test(\"died|killed|lost\")" <<<"$0"' "$ex"
check "... the run itself ran (allowed)" bash -c 'jq -e ".allowed == true" <<<"$0"' "$ex"

echo "# with a daemon (embedded gateways cannot bind its ports meanwhile)"
wd_gw() { in_host "$W" run -q --audit-log "$A" -p "$T/net.yaml" --gateway "$T/gw.sock" "$@"; }
lab_spawn host gwd "$GW" --config "$T/gw.yaml" --manage-nft
# (a daemon that did not start says why under the check)
check "setup: the gateway daemon answers on its control socket" lab_wait 10 test -S "$T/gw.sock" ||
	sed 's/^/    | /' "$LAB_DIR/log/host-gwd.log"
wd_gw -- sh -c "echo x | socat -u - UDP4:$LAB_WAN_V4:9994"
r=$(last_run)
check "with a daemon too: the last datagram has a net.udp event" \
	test "$(events "$r" '.action == "net.udp" and .port == 9994')" -ge 1
wd_gw -- sh -c "$(slow)" >"$T/daemon.out" 2>&1 &
wpid=$!
busy() { (($(ip netns exec "$LAB_HOST_NS" ss -Htn state established "dport = :443" | wc -l) > 0)); }
check "the daemon relays the download" lab_wait 15 busy
gpid=$(cat "$LAB_DIR/run/host-gwd.pid")
kill -KILL -- "-$gpid"
wait "$wpid"
r=$(last_run)
ex=$(exit_of "$r")
check "daemon killed: run.exit says the counts are incomplete" \
	bash -c 'jq -e ".counts_incomplete == true" <<<"$0"' "$ex"
check "... and why" bash -c 'jq -e ".reason | test(\"gateway\")" <<<"$0"' "$ex"

lab_finish
