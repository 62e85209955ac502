#!/usr/bin/env bash
# nft_traffic.sh - real packets through Warden's table before any gateway exists: a run
# namespace + veth inside lab-host (a test fixture made with plain `ip`), registered with
# `warden nft run-add`; stand-in listeners (socat) play the gateway's ports on lab-host.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
lab_require_root
W=${WARDEN_BIN:-$SRC/build/launcher/warden}
TMP=$(mktemp -d)
lab_on_exit rm -rf "$TMP"
lab_up

RUN=wdnft-run$$
IF=wd-t$$
H4=10.213.0.1 S4=10.213.0.2 SPOOF4=10.213.0.99
H6=fd77:7764:6e00::1 S6=fd77:7764:6e00::2 SPOOF6=fd77:7764:6e00::99

in_run() { ip netns exec "$RUN" "$@"; }

# --- fixture: the run's namespace and veth, the table, forwarding ON in lab-host --------
lab_run_netns "$RUN" "$IF" "$H4" "$S4" "$H6" "$S6" || { echo "run fixture failed"; exit 1; }
# forwarding on, so only the table stands between a run and lab-wan (the negative checks below
# would pass with it off: a setup step that fails is a failure)
check "setup: forwarding is on in lab-host" \
	in_host sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
in_host "$W" nft install || { echo "install failed"; exit 1; }
check "run-add registers the run" \
	in_host "$W" nft run-add "$IF" --v4 "$S4" --gw4 "$H4" --v6 "$S6" --gw6 "$H6"
check "audit is clean with the run registered" \
	bash -c 'ip netns exec "$0" "$1" nft audit | grep -q "0 violations, 0 notes; runs: 1 interfaces, 1 v4, 1 v6 (gateway addresses: 1 v4, 1 v6)"' \
	"$LAB_HOST_NS" "$W"

# --- client helpers (inside the run namespace) ---------------------------------
# tcp_read ADDR PORT [BIND]: prints what the server sends; fails when no connection
tcp_read() {
	local bind=${3:+,bind=$3}
	timeout 8 ip netns exec "$RUN" socat -T3 -u "TCP:$1:$2,connect-timeout=3$bind" - 2>&1
}
tcp_refused() { tcp_read "$@" | grep -q "Connection refused"; }
tcp_says() { local want=$1; shift; [[ $(tcp_read "$@") == "$want" ]]; }
tcp_fails() { ! tcp_read "$@" | grep -q gateway && ! tcp_read "$@" | grep -q service; }
# tcp_spoofed ADDR PORT BIND: a connection from source BIND gets no service (0); one that gets
# an answer is 1; a socat that could not bind BIND (the address is not there: the probe did not
# run) is 2, a probe error, never "no connection"
tcp_spoofed() {
	local out
	out=$(tcp_read "$@")
	if grep -q 'bind(' <<<"$out"; then
		lab_probe_error "socat could not bind $3: $out"
		return 2
	fi
	! grep -qE 'gateway|service' <<<"$out"
}
# udp_ask ADDR PORT [BIND]: sends one datagram (from BIND), prints the first answer (if any)
udp_ask() {
	local bind=${3:+,bind=$3}
	echo q | timeout 6 ip netns exec "$RUN" socat -T3 - "UDP:$1:$2$bind" 2>/dev/null
}
# udp_spoofed ADDR PORT BIND: a datagram from source BIND gets no answer (0), one that does is 1;
# a socat that could not bind BIND is 2 (a probe error)
udp_spoofed() {
	local out rc=0
	out=$(echo q | timeout 6 ip netns exec "$RUN" socat -T3 - "UDP:$1:$2,bind=$3" 2>&1) || rc=$?
	if grep -q 'bind(' <<<"$out" || ((rc != 0)); then
		lab_probe_error "socat from $3 could not run (exit $rc): $out"
		return 2
	fi
	[[ -z $out ]]
}
# a forked socat UDP child may still swallow a datagram meant for the next client: ask
# up to 5 times, a second apart (more than -T1 leaves a child idle on a loaded machine)
udp_says() {
	local want=$1 i
	shift
	for i in 1 2 3 4 5; do
		[[ $(udp_ask "$@") == "$want" ]] && return 0
		sleep 1
	done
	return 1
}
udp_silent() { [[ -z $(udp_ask "$@") ]]; }
wan_zero() { [[ $("$@") == 0 ]]; }
wan_atleast() { local n=$1 got; shift; got=$("$@") && [[ -n $got ]] && ((got >= n)); }

# listen NAME SOCAT-ADDRESS: a stand-in service in lab-host answering "NAME" on connect
# (-T1: a forked UDP child exits after 1 s idle instead of competing for later datagrams)
listen() {
	ip netns exec "$LAB_HOST_NS" socat -T1 "$2" "SYSTEM:echo $1" 2>/dev/null &
	lab_on_exit kill "$!"
}
wait_port() {
	local i
	for ((i = 0; i < 50; i++)); do
		in_host ss -Hlnt "sport = :$1" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

# --- before any gateway listens ------------------------------------------------
lab_wan_reset_counters
check "v4 TCP to lab-wan:80 is refused by lab-host (redirected, nothing listens)" \
	tcp_refused "$LAB_ALLOWED_V4" 80
check "v6 TCP to lab-wan:80 is refused by lab-host" tcp_refused "[$LAB_ALLOWED_V6]" 80
check "no TCP SYN reached lab-wan" wan_zero lab_wan_count_tcp_syn

# --- stand-in gateway ports ------------------------------------------------------
listen gateway-transparent TCP6-LISTEN:15001,ipv6only=0,reuseaddr,fork
listen gateway-dns-tcp TCP6-LISTEN:15053,ipv6only=0,reuseaddr,fork
listen gateway-dns-udp UDP6-RECVFROM:15053,ipv6only=0,reuseaddr,fork
listen gateway-proxy TCP6-LISTEN:15080,ipv6only=0,reuseaddr,fork
listen host-service TCP6-LISTEN:8080,ipv6only=0,reuseaddr,fork
ip netns exec "$LAB_HOST_NS" socat -u UDP6-RECVFROM:5353,ipv6only=0,reuseaddr,fork \
	"OPEN:$TMP/udp-service,creat,append" 2>/dev/null &
lab_on_exit kill "$!"
for p in 15001 15053 15080 8080; do
	check "setup: the stand-in listener on lab-host port $p is up" wait_port "$p"
done

lab_wan_reset_counters
check "v4 TCP to lab-wan:80 lands on the transparent port" \
	tcp_says gateway-transparent "$LAB_ALLOWED_V4" 80
check "v4 TCP to lab-wan:443 lands on the transparent port" \
	tcp_says gateway-transparent "$LAB_OTHER_V4" 443
check "v6 TCP to lab-wan:80 lands on the transparent port" \
	tcp_says gateway-transparent "[$LAB_ALLOWED_V6]" 80
check "v4 UDP DNS to the lab resolver lands on the DNS port" \
	udp_says gateway-dns-udp "$LAB_WAN_V4" 53
check "v4 UDP DNS to an unused address lands on the DNS port" \
	udp_says gateway-dns-udp "$LAB_UNUSED_V4" 53
check "v6 UDP DNS lands on the DNS port" udp_says gateway-dns-udp "[$LAB_WAN_V6]" 53
check "v4 TCP DNS lands on the DNS port" tcp_says gateway-dns-tcp "$LAB_WAN_V4" 53
check "v6 TCP DNS lands on the DNS port" tcp_says gateway-dns-tcp "[$LAB_WAN_V6]" 53
check "the explicit proxy port on the host is reachable (v4)" tcp_says gateway-proxy "$H4" 15080
check "the explicit proxy port on the host is reachable (v6)" tcp_says gateway-proxy "[$H6]" 15080
check "lab-host's own TCP service (v4) is not reachable: redirected" \
	tcp_says gateway-transparent "$H4" 8080
check "lab-host's own TCP service on its lab address is not reachable" \
	tcp_says gateway-transparent "$LAB_HOST_V4" 8080
check "lab-host's own TCP service (v6) is not reachable" \
	tcp_says gateway-transparent "[$H6]" 8080
# the gateway's ports exist only at the run's own gateway address ($H4, $H6): the same
# listeners (on every address of lab-host) are not reachable at lab-host's other addresses
check "the proxy port at lab-host's lab address is not reachable (v4)" \
	tcp_fails "$LAB_HOST_V4" 15080
check "the proxy port at lab-host's lab address is not reachable (v6)" \
	tcp_fails "[$LAB_HOST_V6]" 15080
check "the DNS port at lab-host's lab address gets no datagram (v4)" udp_silent "$LAB_HOST_V4" 15053
check "the DNS port at lab-host's lab address gets no datagram (v6)" \
	udp_silent "[$LAB_HOST_V6]" 15053
check "control: the DNS port at the run's own gateway address answers (v4)" \
	udp_says gateway-dns-udp "$H4" 15053
# the gateway's NFLOG group sees the dropped UDP (helper built from nft_nflog.c)
# (a helper that is missing is an error, and the NFLOG checks below then fail: never a skip)
NFLOG=${WD_NFT_NFLOG:-${WARDEN_BUILD_DIR:-$SRC/build}/tests/integration/nft_nflog}
nflog_pid=
: >"$TMP/nflog"
if check "setup: the nft_nflog helper is built ($NFLOG)" test -x "$NFLOG"; then
	ip netns exec "$LAB_HOST_NS" "$NFLOG" 7000 15 5 >"$TMP/nflog" 2>&1 &
	nflog_pid=$!
	check "setup: the nft_nflog helper listens on NFLOG group 7000" \
		lab_wait 5 grep -q ready "$TMP/nflog"
fi
check "UDP echo on lab-wan (v4) gets no answer" udp_silent "$LAB_UDP_ECHO_V4" 7
check "UDP echo on lab-wan (v6) gets no answer" udp_silent "[$LAB_UDP_ECHO_V6]" 7
check "UDP-lite to lab-wan gets nowhere" bash -c \
	'timeout 6 ip netns exec "$0" /usr/bin/python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDPLITE); s.sendto(b\"q\", (\"$1\", 7))"' \
	"$RUN" "$LAB_UDP_ECHO_V4"
check "the DNS port at lab-host's lab address is dropped again (logged)" \
	udp_silent "$LAB_HOST_V4" 15053
check "the proxy port at lab-host's lab address is dropped again (logged)" \
	tcp_fails "$LAB_HOST_V4" 15080
[[ -z $nflog_pid ]] || wait "$nflog_pid"
sed "s/^/    nflog: /" "$TMP/nflog"
check "the dropped v4 UDP was logged to NFLOG group 7000" \
	grep -q "family=4 proto=17 dport=7$" "$TMP/nflog"
check "the dropped v6 UDP was logged to NFLOG group 7000" \
	grep -q "family=6 proto=17 dport=7$" "$TMP/nflog"
check "the dropped UDP-lite was logged to NFLOG group 7000" \
	grep -q "family=4 proto=136 dport=7$" "$TMP/nflog"
check "TCP to the proxy port at lab-host's lab address was logged as a host attempt" \
	grep -q "family=4 proto=6 dport=15080 prefix=warden-host$" "$TMP/nflog"
check "UDP to the DNS port at lab-host's lab address was logged as a host attempt" \
	grep -q "family=4 proto=17 dport=15053 prefix=warden-host$" "$TMP/nflog"
udp_ask "$H4" 5353 >/dev/null
udp_ask "[$H6]" 5353 >/dev/null
check "lab-host's own UDP service never got a datagram" \
	bash -c '[[ ! -s "$0" ]]' "$TMP/udp-service"
in_host bash -c 'echo control | socat -u - UDP:127.0.0.1:5353'
check "control: a datagram from lab-host itself does reach that service" \
	lab_wait 5 test -s "$TMP/udp-service"
# (ping exits 1 when no reply comes; 2 is an error)
check "control: ping works in the run's namespace (its own address)" in_run ping -c1 -W1 "$S4"
check "control: ... over IPv6" in_run ping -6 -c1 -W1 "$S6"
check_fails --denied 1 "ping lab-wan (v4) fails" in_run ping -c1 -W1 "$LAB_WAN_V4"
check_fails --denied 1 "ping lab-wan (v6) fails" in_run ping -6 -c1 -W1 "$LAB_WAN_V6"
check_fails --denied 1 "ping lab-host's veth (v4) fails" in_run ping -c1 -W1 "$H4"
check_fails --denied 1 "ping lab-host's veth (v6) fails" in_run ping -6 -c1 -W1 "$H6"
check "no DNS reached lab-wan" wan_zero lab_wan_count dns
check "no UDP reached lab-wan" wan_zero lab_wan_count udp
check "no ICMP reached lab-wan" wan_zero lab_wan_count icmp
check "no TCP SYN reached lab-wan" wan_zero lab_wan_count_tcp_syn
# positive controls for those (after them: they count): lab-wan answers the same ping and UDP
# echo from lab-host itself, and the counters count them
check "control: lab-wan answers ping from lab-host (v4)" in_host ping -c1 -W1 "$LAB_WAN_V4"
check "control: ... (v6)" in_host ping -6 -c1 -W1 "$LAB_WAN_V6"
check_eq "control: lab-wan's UDP echo answers lab-host" q \
	bash -c 'echo q | timeout 6 ip netns exec "$0" socat -T3 - "UDP:$1:7"' "$LAB_HOST_NS" "$LAB_UDP_ECHO_V4"
check "control: the ICMP counter counted those pings" wan_atleast 2 lab_wan_count icmp
check "IPv6 neighbour discovery works on the veth" \
	bash -c 'ip -n "$0" -6 neigh show "$1" dev eth0 | grep -qE "REACHABLE|STALE|DELAY|PROBE"' \
	"$RUN" "$H6"

# --- anti-spoofing ---------------------------------------------------------------
# the run takes a second address of its own choosing; each probe from it has a control beside
# it: the same probe bound to the run's registered address gets its answer
check "setup: the run's namespace holds a spoofed v4 address" \
	in_run ip addr add "$SPOOF4/32" dev eth0
check "setup: ... and a spoofed v6 one" in_run ip addr add "$SPOOF6/128" dev eth0 nodad
check "a spoofed v4 source gets no connection" tcp_spoofed "$LAB_ALLOWED_V4" 80 "$SPOOF4"
check "control: the same connection from the run's own v4 address lands" \
	tcp_says gateway-transparent "$LAB_ALLOWED_V4" 80 "$S4"
check "a spoofed v6 source gets no connection" tcp_spoofed "[$LAB_ALLOWED_V6]" 80 "[$SPOOF6]"
check "control: the same connection from the run's own v6 address lands" \
	tcp_says gateway-transparent "[$LAB_ALLOWED_V6]" 80 "[$S6]"
check "a spoofed v4 source gets no DNS answer" udp_spoofed "$LAB_WAN_V4" 53 "$SPOOF4"
check "control: the same datagram from the run's own v4 address is answered" \
	udp_says gateway-dns-udp "$LAB_WAN_V4" 53 "$S4"
check "the real source still works (no bind)" tcp_says gateway-transparent "$LAB_ALLOWED_V4" 80

# --- forwarding, the other way -----------------------------------------------------
check "setup: lab-wan routes the run's v4 prefix via lab-host" \
	in_wan ip route add 10.213.0.0/30 via "$LAB_HOST_V4"
check "setup: ... and its v6 prefix" in_wan ip -6 route add fd77:7764:6e00::/64 via "$LAB_HOST_V6"
check_fails --denied 1 "lab-wan cannot reach the run through lab-host (v4)" in_wan ping -c1 -W1 "$S4"
check_fails --denied 1 "lab-wan cannot reach the run through lab-host (v6)" in_wan ping -6 -c1 -W1 "$S6"
check "control: lab-wan reaches lab-host itself (v4)" in_wan ping -c1 -W1 "$LAB_HOST_V4"
check "control: ... (v6)" in_wan ping -6 -c1 -W1 "$LAB_HOST_V6"
check_fails "lab-wan cannot open TCP to the run" \
	in_wan socat -u "TCP:$S4:22,connect-timeout=2" -
check_eq "control: the same socat reaches a service on lab-host itself" gateway-proxy \
	in_wan socat -u "TCP:$LAB_HOST_V4:15080,connect-timeout=2" -
in_wan ip route del 10.213.0.0/30
in_wan ip -6 route del fd77:7764:6e00::/64
lab_wan_reset_counters

# --- after run-del: still closed ---------------------------------------------------
check "run-del unregisters the run" \
	in_host "$W" nft run-del "$IF" --v4 "$S4" --gw4 "$H4" --v6 "$S6" --gw6 "$H6"
check "after run-del, v4 TCP goes nowhere (not even the gateway)" tcp_fails "$LAB_ALLOWED_V4" 80
check "after run-del, v6 TCP goes nowhere" tcp_fails "[$LAB_ALLOWED_V6]" 80
check "after run-del, DNS gets no answer" udp_silent "$LAB_WAN_V4" 53
check_fails "after run-del, ping lab-wan fails" in_run ping -c1 -W1 "$LAB_WAN_V4"
check "after run-del, nothing reached lab-wan (TCP)" wan_zero lab_wan_count_tcp_syn
check "after run-del, nothing reached lab-wan (DNS)" wan_zero lab_wan_count dns
check "after run-del, nothing reached lab-wan (ICMP)" wan_zero lab_wan_count icmp
check "audit stays clean, no runs" \
	bash -c 'ip netns exec "$0" "$1" nft audit | grep -q "0 violations, 0 notes; runs: 0 interfaces"' \
	"$LAB_HOST_NS" "$W"

lab_finish
