#!/bin/bash
# Smoke test of the network test lab itself (tests/lab): topology, DNS zone, HTTP(S), raw services, teardown.
set -u
. "$(dirname "$0")/../lab/lib.sh"
lab_require_root
lab_up

echo "# lab $LAB_NAME ($LAB_DIR)"
host_ns=$LAB_HOST_NS
wan_ns=$LAB_WAN_NS
lab_dir=$LAB_DIR

# --- topology: lab-host reaches only the lab --------------------------------------
check_eq "lab-host has lo and one veth only" "lo veth-wan" \
	bash -c "ip -n $host_ns -o link show | awk -F': ' '{sub(/@.*/, \"\", \$2); print \$2}' | sort | xargs"
check_eq "lab-host has no IPv4 default route" "" in_host ip -4 route show default
check_eq "lab-host has no IPv6 default route" "" in_host ip -6 route show default
check_eq "lab-wan has no IPv4 default route" "" in_wan ip -4 route show default
check_eq "lab-wan has no IPv6 default route" "" in_wan ip -6 route show default
check "control: the same listing shows lab-host's connected routes (v4)" \
	lab_match '^203\.0\.113\.0/24 ' in_host ip -4 route show
check "control: ... (v6)" lab_match '^2001:db8:0:1::/64 ' in_host ip -6 route show
check "control: ... and lab-wan's (v4)" lab_match '^203\.0\.113\.0/24 ' in_wan ip -4 route show
check "control: ... (v6)" lab_match '^2001:db8:0:1::/64 ' in_wan ip -6 route show
# (ip route get exits 2 for "Network is unreachable"; 1 would be a usage error)
check_fails --denied 2 "lab-host has no route to 192.0.2.1" in_host ip route get 192.0.2.1
check_fails --denied 2 "lab-host has no route to 3fff::1" in_host ip -6 route get 3fff::1
check_fails --denied 2 "lab-host has no route to 10.0.0.1" in_host ip route get 10.0.0.1
check "control: lab-host has a route to lab-wan" in_host ip route get "$LAB_WAN_V4"
check "control: ... over IPv6" in_host ip -6 route get "$LAB_WAN_V6"
check "lab-host routes 2001:db8::/32 via lab-wan" \
	bash -c "ip -n $host_ns -6 route get 2001:db8:ffff::1 | grep -q 'via $LAB_WAN_V6'"
check "exec helper runs in lab-host" \
	bash -c "'$LAB_SRC/exec' $LAB_NAME host ip -br addr | grep -q '$LAB_HOST_V4/24'"
check "exec helper runs in lab-wan" \
	bash -c "'$LAB_SRC/exec' $LAB_NAME wan ip -br addr | grep -q '$LAB_ALLOWED_V4/24'"

# --- DNS -------------------------------------------------------------------------
check_eq "allowed.test A" "$LAB_ALLOWED_V4" lab_dig allowed.test A
check_eq "allowed.test AAAA" "$LAB_ALLOWED_V6" lab_dig allowed.test AAAA
check_eq "allowed.test A over IPv6 transport" "$LAB_ALLOWED_V4" \
	in_host dig +short +time=2 +tries=1 @"$LAB_DNS_V6" allowed.test A
check_eq "other.test A" "$LAB_OTHER_V4" lab_dig other.test A
check_eq "metadata.test A" "169.254.169.254" lab_dig metadata.test A
check_eq "loopback.test A" "127.0.0.1" lab_dig loopback.test A
check_eq "loopback.test AAAA" "::1" lab_dig loopback.test AAAA
check_eq "hostself.test A" "$LAB_HOST_V4" lab_dig hostself.test A
check_eq "private10.test A" "10.1.2.3" lab_dig private10.test A
check_eq "private192.test A" "192.168.7.7" lab_dig private192.test A
check_eq "cgnat.test A" "100.64.1.1" lab_dig cgnat.test A
check_eq "multi.test has two A" "$LAB_MULTI_V4" bash -c "ip netns exec $host_ns dig +short @$LAB_DNS_V4 multi.test A | sort | xargs"
check_eq "multi.test has two AAAA" "$LAB_MULTI_V6" bash -c "ip netns exec $host_ns dig +short @$LAB_DNS_V4 multi.test AAAA | sort | xargs"
check_eq "wild.test itself" "$LAB_WILD_V4" lab_dig wild.test A
check_eq "a.b.wild.test (wildcard)" "$LAB_WILD_V4" lab_dig a.b.wild.test A
check_eq "x.wild.test AAAA (wildcard)" "$LAB_WILD_V6" lab_dig x.wild.test AAAA
check_eq "CNAME chain cname1 -> cname2 -> allowed" "cname2.test. allowed.test. $LAB_ALLOWED_V4" \
	bash -c "ip netns exec $host_ns dig +short @$LAB_DNS_V4 cname1.test A | xargs"
check_eq "TXT record" '"warden lab txt record" "second string"' lab_dig txt.test TXT
check_eq "MX for allowed.test" "10 mail.allowed.test." lab_dig allowed.test MX
check "unknown .test name is NXDOMAIN" \
	bash -c "ip netns exec $host_ns dig @$LAB_DNS_V4 nosuch.test A | grep -q 'status: NXDOMAIN'"
check "names outside .test are not forwarded" \
	bash -c "ip netns exec $host_ns dig @$LAB_DNS_V4 example.com A | grep -q 'status: REFUSED'"
check "lab-host's system resolver uses the lab DNS" \
	bash -c "ip netns exec $host_ns getent ahostsv4 allowed.test | grep -q '^$LAB_ALLOWED_V4 '"
never=never-asked-$LAB_NAME.test
for n in allowed.test other.test metadata.test cname1.test txt.test; do
	check "query log shows $n" lab_dns_asked "$n"
done
check_fails "query log does not show $never" lab_dns_asked "$never"

# --- HTTP / HTTPS -------------------------------------------------------------------
check_eq "https://allowed.test/ (system resolver)" "hello from allowed.test" lab_curl https://allowed.test/
check_eq "https://allowed.test/ over IPv4" "hello from allowed.test" \
	lab_curl -4 --resolve "allowed.test:443:$LAB_ALLOWED_V4" https://allowed.test/
check_eq "https://allowed.test/ over IPv6" "hello from allowed.test" \
	lab_curl -6 --resolve "allowed.test:443:[$LAB_ALLOWED_V6]" https://allowed.test/
check_eq "http://allowed.test/ over IPv4" "hello from allowed.test" lab_curl -4 http://allowed.test/
check_eq "http://allowed.test/ over IPv6" "hello from allowed.test" lab_curl -6 http://allowed.test/
check_eq "SNI vhost other.test on allowed.test's address" "hello from other.test" \
	lab_curl --resolve "other.test:443:$LAB_ALLOWED_V4" https://other.test/
check_eq "SNI vhost multi.test" "hello from multi.test" lab_curl https://multi.test/
check_eq "SNI vhost for a wildcard name" "hello from wild.test" lab_curl https://deep.wild.test/
check_eq "/whoami names vhost and SNI" "vhost=other host=other.test sni=other.test scheme=https remote=$LAB_HOST_V4" \
	lab_curl -4 https://other.test/whoami
check_eq "/host echoes the Host header" "anything.example" \
	lab_curl -H "Host: anything.example" "http://$LAB_ALLOWED_V4/host"
check_eq "IP literal gets the default vhost" "hello from default" lab_curl "https://[$LAB_WAN_V6]/"
# (curl 60: the peer's certificate cannot be verified)
check_fails --denied 60 "TLS fails without the lab CA" in_host curl -sS --max-time 5 https://allowed.test/
check "control: the same curl with the lab CA" \
	in_host curl -sS --max-time 5 --cacert "$LAB_CA" -o /dev/null https://allowed.test/
check_fails --denied 60 "TLS fails for a name the certificate lacks" \
	lab_curl --resolve "evil.test:443:$LAB_ALLOWED_V4" https://evil.test/
check "control: the same curl for a name it has" \
	lab_curl -o /dev/null --resolve "other.test:443:$LAB_ALLOWED_V4" https://other.test/
check_eq "big file sha256 over HTTPS" "$LAB_BIGFILE_SHA256" \
	bash -c "ip netns exec $host_ns curl -sS --fail --cacert $LAB_CA https://allowed.test$LAB_BIGFILE_PATH | openssl dgst -sha256 -r | cut -d' ' -f1"

# --- raw services -------------------------------------------------------------------
tcp_echo()
{
	in_host bash -c 'exec 3<>"/dev/tcp/$1/$2" || exit 1; echo "$3" >&3; read -r -t 5 l <&3; echo "$l"' _ "$@"
}
tcp_banner()
{
	in_host bash -c 'exec 3<>"/dev/tcp/$1/$2" || exit 1; read -r -t 5 l <&3; printf "%s\n" "${l%$'"'\r'"'}"' _ "$@"
}
check_eq "TCP echo over IPv4" "hello-v4" tcp_echo "$LAB_ALLOWED_V4" "$LAB_ECHO_PORT" hello-v4
check_eq "TCP echo over IPv6" "hello-v6" tcp_echo "$LAB_OTHER_V6" "$LAB_ECHO_PORT" hello-v6
check_eq "UDP echo over IPv4" "udp-hello" \
	bash -c "echo udp-hello | ip netns exec $host_ns socat -T2 - UDP:$LAB_UDP_ECHO_V4:$LAB_ECHO_PORT"
check_eq "UDP echo over IPv6" "udp-hello6" \
	bash -c "echo udp-hello6 | ip netns exec $host_ns socat -T2 - UDP:[$LAB_UDP_ECHO_V6]:$LAB_ECHO_PORT"
check_eq "banner service greets first (IPv4)" "$LAB_BANNER" tcp_banner "$LAB_ALLOWED_V4" "$LAB_BANNER_PORT"
check_eq "banner service greets first (IPv6)" "$LAB_BANNER" tcp_banner "$LAB_ALLOWED_V6" "$LAB_BANNER_PORT"
check_fails "nothing answers on an unused lab address" \
	in_host curl -sS --connect-timeout 1 --max-time 2 "http://$LAB_UNUSED_V4/"
check "control: the same curl to a used one" \
	in_host curl -sS --connect-timeout 1 --max-time 2 -o /dev/null "http://$LAB_ALLOWED_V4/"

# --- arrival counters in lab-wan -------------------------------------------------------
lab_wan_reset_counters
check_eq "UDP counter starts at zero" 0 lab_wan_count_udp
in_host bash -c "echo x | socat -T0.2 - UDP:$LAB_OTHER_V4:9" 2>/dev/null
in_host bash -c "echo x | socat -T0.2 - UDP:[$LAB_OTHER_V6]:9" 2>/dev/null
check_eq "two UDP datagrams to port 9 arrived" 2 lab_wan_count_udp 9
check_eq "none to port 10" 0 lab_wan_count_udp 10
in_host curl -s --max-time 2 "http://$LAB_OTHER_V4:8080/" >/dev/null
check_eq "one TCP SYN to port 8080 arrived" 1 lab_wan_count_tcp_syn 8080
if in_host ping -c1 -W2 "$LAB_OTHER_V4" >/dev/null 2>&1; then
	check_eq "one ICMP echo request arrived" 1 lab_wan_count icmp
fi

# --- a second lab at the same time, and reaping a leftover -------------------------------
sleep 600 &
owner=$!
env2=$(LAB_OWNER_PID=$owner "$LAB_SRC/up")
name2=$(basename "$(dirname "$env2")")
check "a second lab comes up next to the first" test -n "$name2" -a "$name2" != "$LAB_NAME"
check_eq "the first lab still answers" "hello from allowed.test" lab_curl https://allowed.test/
check "control: the second lab's lab-host and state folder are there" \
	test -e "/run/netns/$name2-host" -a -e "$(dirname "$env2")"
kill "$owner"
wait "$owner" 2>/dev/null
"$LAB_SRC/down" --reap
check_fails "a lab whose owner died is reaped" test -e "/run/netns/$name2-host"
check_fails "its state folder is gone" test -e "$(dirname "$env2")"

# --- processes a test starts in the lab --------------------------------------------------
lab_spawn host spawned bash -c 'echo spawned; unshare -n sleep 3001 & exec sleep 3002'
spawned=$LAB_SPAWNED_PID
check "lab_spawn runs its command inside lab-host" \
	bash -c "[[ \$(readlink /proc/$spawned/ns/net) == net:\[\$(cat $LAB_DIR/ns-host.inode)\] ]]"
sleep 0.2
check "lab_spawn logs to the lab's log folder" grep -qx spawned "$LAB_DIR/log/host-spawned.log"

# --- teardown -------------------------------------------------------------------------
pids=$(cat "$lab_dir"/run/*.pid; ip netns pids "$host_ns"; ip netns pids "$wan_ns"; pgrep -g "$spawned")
name=$LAB_NAME
alive()
{
	local p s
	for p in $pids; do
		s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		s=${s##*) }
		[[ ${s:0:1} == Z ]] || return 0
	done
	return 1
}
# positive controls for the checks after down: the same probes while the lab is up
check "control: the lab's processes are alive" alive
check "control: lab-host, lab-wan, the state folder and the resolv.conf override are there" \
	test -e "/run/netns/$host_ns" -a -e "/run/netns/$wan_ns" -a -e "$lab_dir" -a -e "/etc/netns/$host_ns"
check "control: ip netns lists this lab" bash -c "ip netns list | grep -E '$name'"
lab_down
check_fails "down leaves no lab process (also none moved to another netns)" alive
check_fails "down removes lab-host" test -e "/run/netns/$host_ns"
check_fails "down removes lab-wan" test -e "/run/netns/$wan_ns"
check_fails "down removes the state folder" test -e "$lab_dir"
check_fails "down removes the resolv.conf override" test -e "/etc/netns/$host_ns"
check "down twice is harmless" "$LAB_SRC/down" "$name"
check_fails "ip netns lists none of these labs" bash -c "ip netns list | grep -E '$name|$name2'"

lab_finish
