#!/usr/bin/env bash
# udp_conntrack.sh - the UDP relay's conntrack lookup (gateway/ctmsg.c) on a real kernel (issue 32
# item 1): two namespaces of the test's own joined by a veth, the "gateway" one redirecting UDP to
# the synthetic pools (100.96.0.0/12, fd77:7764:5300::/48) to port 15054 as the table's divert
# chain will; tests/integration/ct_lookup.c takes the redirected datagram there and asks
# conntrack by the flow's reply tuple for the original destination, IPv4 and IPv6. Beside each:
# the same question with the client's port off by one finds nothing (-ENOENT), and a datagram
# sent to the gateway's own address (not redirected) is reported as sent there.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
lab_require_root
CT=${WD_CT_LOOKUP:-${WARDEN_BUILD_DIR:-$SRC/build}/tests/integration/ct_lookup}
[[ -x $CT ]] || { echo "FAIL: $CT is not built"; exit 1; }
for tool in nft python3 ip; do
	command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing"; exit 1; }
done
lab_up

T=$LAB_DIR/udpct
mkdir -p "$T"
C=wdctc$$
G=wdctg$$
ip netns add "$C" || { echo "FAIL - netns $C"; exit 1; }
lab_on_exit ip netns delete "$C"
ip netns add "$G" || { echo "FAIL - netns $G"; exit 1; }
lab_on_exit ip netns delete "$G"
ip -n "$G" link add wdg0 type veth peer name wdc0 netns "$C"
for ns in "$C" "$G"; do ip -n "$ns" link set lo up; done
ip -n "$G" addr add 10.77.0.1/30 dev wdg0
ip -n "$G" addr add fd00:77::1/64 dev wdg0 nodad
ip -n "$C" addr add 10.77.0.2/30 dev wdc0
ip -n "$C" addr add fd00:77::2/64 dev wdc0 nodad
ip -n "$G" link set wdg0 up
ip -n "$C" link set wdc0 up
ip -n "$C" route add 100.96.0.0/12 via 10.77.0.1
ip -n "$C" -6 route add fd77:7764:5300::/48 via fd00:77::1
ip netns exec "$G" nft -f - <<'NFT'
table inet wdct {
	chain divert {
		type nat hook prerouting priority dstnat; policy accept;
		iifname "wdg0" ip daddr 100.96.0.0/12 meta l4proto udp redirect to :15054
		iifname "wdg0" ip6 daddr fd77:7764:5300::/48 meta l4proto udp redirect to :15054
	}
}
NFT

# ask FAMILY DEST PORT SPORT: ct_lookup in the gateway namespace, one datagram from the client's
# SPORT to DEST:PORT; prints ct_lookup's last line
ask() {
	rm -f "$T/ct.out"
	ip netns exec "$G" "$CT" "$1" 15054 10 >"$T/ct.out" 2>&1 &
	local pid=$!
	lab_wait 5 grep -q '^listening$' "$T/ct.out"
	ip netns exec "$C" python3 -c 'import socket, sys
fam = socket.AF_INET if sys.argv[1] == "4" else socket.AF_INET6
s = socket.socket(fam, socket.SOCK_DGRAM)
s.bind(("0.0.0.0" if fam == socket.AF_INET else "::", int(sys.argv[4])))
s.sendto(b"probe", (sys.argv[2], int(sys.argv[3])))' "$@"
	wait "$pid" 2>/dev/null
	tail -n 1 "$T/ct.out"
}

out=$(ask 4 100.96.0.7 3478 40000)
echo "# $out"
check "IPv4: the redirected flow's original destination is the synthetic address and port" \
	grep -qx "ok dst=100.96.0.7 dport=3478 wrong=-2" <<<"$out"
out=$(ask 6 fd77:7764:5300::7 443 40001)
echo "# $out"
check "IPv6: the redirected flow's original destination is the synthetic address and port" \
	grep -qx "ok dst=fd77:7764:5300::7 dport=443 wrong=-2" <<<"$out"
out=$(ask 4 10.77.0.1 15054 40002)
echo "# $out"
check "a datagram sent to the gateway's own port is reported as sent there (not synthetic)" \
	grep -qx "ok dst=10.77.0.1 dport=15054 wrong=-2" <<<"$out"
lab_finish
