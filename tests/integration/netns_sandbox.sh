#!/bin/bash
# netns_sandbox.sh - what a run sees from inside its namespace (created in
# lab-host, no nft table yet): eth0 with its addresses (IPv6 not tentative),
# lo up, default routes via the host end, ping and TCP to the host end over
# IPv4 and IPv6 at once (no DAD wait), the sandbox's IPv6 defaults; a pool
# that is full fails with a message naming the step; netns_run_adopt() plumbs
# a namespace someone else created (user + net) and unplumbs it again.
set -u
. "$(dirname "$0")/../lab/lib.sh"
lab_require_root
# A helper that died must fail its checks, not kill this script on a write to its fifo.
trap '' PIPE
HELPER=${WD_NETNS_HELPER:-}
if [[ ! -x $HELPER ]]; then
	# the test's own helper, built with the tree: missing, it is an error, never a skip
	echo "FAIL - netns_helper not built (WD_NETNS_HELPER)"
	echo "0 passed, 1 failed"
	exit 1
fi
lab_up
STATE=$(mktemp -d /tmp/wd-netns-sandbox.XXXXXX)
lab_on_exit rm -rf "$STATE"
# on the way out (also after a failure), free whatever slots are left
cleanup_gc() { in_host "$HELPER" --state "$STATE" gc >/dev/null 2>&1; }
lab_on_exit cleanup_gc
PORT=7707

# A TCP service on the host side of every run: answers "hello-from-host".
ip netns exec "$LAB_HOST_NS" socat TCP6-LISTEN:$PORT,ipv6only=0,reuseaddr,fork SYSTEM:'echo hello-from-host' \
	>/dev/null 2>&1 &
listener=$!
lab_on_exit kill "$listener"
for ((i = 0; i < 50; i++)); do
	in_host ss -Hltn "sport = :$PORT" | grep -q . && break
	sleep 0.1
done

# The sandbox: the very first thing it does is ping the host end over IPv6 and
# note whether its IPv6 address is tentative; then it records its pid and waits
# so the checks below can look inside with nsenter.
cat >"$STATE/sandbox.sh" <<'EOF'
cd "$1"
ip -6 -o addr show dev eth0 scope global >addr6.early
ping -6 -n -c1 -W2 "$WD_HOST6" >ping6.early 2>&1
echo $? >ping6.rc
printf '%s %s %s %s %s\n' "$WD_HOST4" "$WD_SBX4" "$WD_HOST6" "$WD_SBX6" "$WD_IFNAME" >info
echo $$ >pid
exec sleep 120
EOF
ip netns exec "$LAB_HOST_NS" "$HELPER" --state "$STATE" exec -- sh "$STATE/sandbox.sh" "$STATE" >"$STATE/out" 2>"$STATE/err" &
helper=$!
for ((i = 0; i < 100; i++)); do
	[[ -s $STATE/pid ]] && break
	sleep 0.1
done
check "run created and sandbox started" test -s "$STATE/pid"
[[ -s $STATE/err ]] && sed 's/^/    helper: /' "$STATE/err"
read -r H4 S4 H6 S6 IFN <"$STATE/info"
spid=$(cat "$STATE/pid")
in_sbx() { nsenter -t "$spid" -n "$@"; }

check "IPv6 ping to the host end succeeded as the sandbox's first act" grep -qx 0 "$STATE/ping6.rc"
check_fails "sandbox IPv6 address was not tentative at start" grep -q tentative "$STATE/addr6.early"
check "sandbox IPv6 address carries nodad" grep -q nodad "$STATE/addr6.early"
check "eth0 is up" bash -c "nsenter -t $spid -n ip -o link show dev eth0 | grep -q 'UP'"
check "lo is up" bash -c "nsenter -t $spid -n ip -o link show dev lo | grep -q 'UP'"
check_eq "only lo and eth0 in the sandbox" "eth0 lo" \
	bash -c "nsenter -t $spid -n ip -o link show 2>/dev/null | awk -F': ' '{ print \$2 }' | sed 's/@.*//' | sort | xargs"
check_eq "eth0 has its IPv4 address" "$S4/30" \
	bash -c "nsenter -t $spid -n ip -o -4 addr show dev eth0 | awk '{ print \$4 }'"
check_eq "eth0 has its IPv6 address" "$S6/64" \
	bash -c "nsenter -t $spid -n ip -o -6 addr show dev eth0 scope global | awk '{ print \$4 }'"
check_eq "IPv4 default route via the host end" "default via $H4 dev eth0" \
	bash -c "nsenter -t $spid -n ip -4 route show default | awk '{ print \$1, \$2, \$3, \$4, \$5 }'"
check_eq "IPv6 default route via the host end" "default via $H6 dev eth0" \
	bash -c "nsenter -t $spid -n ip -6 route show default | awk '{ print \$1, \$2, \$3, \$4, \$5 }'"
check "ping the host end over IPv4" in_sbx ping -n -c1 -W2 "$H4"
check "ping the host end over IPv6" in_sbx ping -6 -n -c1 -W2 "$H6"
check_eq "TCP to the host end over IPv4" hello-from-host in_sbx socat -T3 - "TCP4:$H4:$PORT"
check_eq "TCP to the host end over IPv6" hello-from-host in_sbx socat -T3 - "TCP6:[$H6]:$PORT"
# (the control: "ping the host end" above; ping exits 1 when no reply comes, 2 on an error)
check_fails --denied 1 "no route beyond the host end (lab-wan unreachable, no forwarding)" \
	in_sbx ping -n -c1 -W1 "$LAB_WAN_V4"
check_eq "sandbox eth0 accept_ra=0" 0 in_sbx cat /proc/sys/net/ipv6/conf/eth0/accept_ra
check_eq "host side accept_ra=0" 0 in_host cat "/proc/sys/net/ipv6/conf/$IFN/accept_ra"
check_eq "host side rp_filter=1" 1 in_host cat "/proc/sys/net/ipv4/conf/$IFN/rp_filter"
check_eq "host side IPv4 forwarding=0" 0 in_host cat "/proc/sys/net/ipv4/conf/$IFN/forwarding"
check "host end sees the sandbox as a neighbour on $IFN" \
	bash -c "ip netns exec $LAB_HOST_NS ip neigh show dev $IFN | grep -q '$S4'"

# While this run lives, a pool with a single slot has no room for another.
one=(--pool4 10.213.0.0/30 --pool6 fd77:7764:6e00::/64)
out=$(in_host "$HELPER" --state "$STATE" "${one[@]}" cycle 1 2>&1)
rc=$?
check_eq "full pool: creating fails" 1 echo "$rc"
check "full pool: the message names the step" \
	grep -q "address pool exhausted: all 1 slots" <<<"$out"

check "control: the host end is there while the run lives" in_host ip link show dev "$IFN"
check_eq "control: the run holds one allocation slot" 1 in_host "$HELPER" --state "$STATE" slots
kill "$spid"
wait "$helper"
check_eq "helper exits with the sandbox's status (SIGTERM)" 143 echo $?
for ((i = 0; i < 50; i++)); do
	in_host ip link show dev "$IFN" >/dev/null 2>&1 || break
	sleep 0.1
done
check_fails "host end gone after teardown" in_host ip link show dev "$IFN"
check_eq "no allocation slot left" 0 in_host "$HELPER" --state "$STATE" slots

# --- adopting a namespace someone else made (user + net, as an unprivileged
# launcher would): the veth goes into it, and destroy removes the veth while
# the namespace lives on.
ip netns exec "$LAB_HOST_NS" unshare --user --map-root-user --net sleep 120 &
owner=$!
lab_on_exit kill "$owner"
host_ns=$(in_host readlink /proc/self/ns/net)
for ((i = 0; i < 50; i++)); do
	# unshare has run once the process has a network namespace of its own
	ns=$(readlink "/proc/$owner/ns/net")
	[[ -n $ns && $ns != "$host_ns" ]] && break
	sleep 0.1
done
out=$(in_host "$HELPER" --state "$STATE" adopt /proc/self/ns/net 2>&1)
check_eq "adopt: refuses lab-host's own namespace" 1 echo $?
check "adopt: the refusal says why" grep -q "is the host's own: refusing to adopt" <<<"$out"
check_eq "adopt: a refused adoption leaves no slot" 0 in_host "$HELPER" --state "$STATE" slots
mkfifo "$STATE/adopt.in"
ip netns exec "$LAB_HOST_NS" "$HELPER" --state "$STATE" --wait adopt "/proc/$owner/ns/net" \
	<"$STATE/adopt.in" >"$STATE/adopt.out" 2>"$STATE/adopt.err" &
adopter=$!
exec 3>"$STATE/adopt.in"
for ((i = 0; i < 100; i++)); do
	grep -q '^READY$' "$STATE/adopt.out" && break
	kill -0 "$adopter" 2>/dev/null || break
	sleep 0.1
done
check "adopt: run created in the given namespace" grep -q '^READY$' "$STATE/adopt.out"
[[ -s $STATE/adopt.err ]] && sed 's/^/    helper: /' "$STATE/adopt.err"
read -r _ _ AIF _ AH4 AS4 _ _ < <(grep '^run ' "$STATE/adopt.out")
check_eq "adopt: eth0 inside has the sandbox address" "${AS4}/30" \
	bash -c "nsenter -t $owner -n ip -o -4 addr show dev eth0 | awk '{ print \$4 }'"
check "adopt: ping the host end from inside" nsenter -t "$owner" -n ping -n -c1 -W2 "${AH4%/*}"
check "control: the host end is there before teardown" in_host ip link show dev "$AIF"
check "control: ... and eth0 in the adopted namespace" nsenter -t "$owner" -n ip link show dev eth0
echo go >&3 2>/dev/null
exec 3>&-
wait "$adopter"
check_eq "adopt: helper tore down" 0 echo $?
check_fails "adopt: host end deleted at once (the namespace lives on)" in_host ip link show dev "$AIF"
check_fails "adopt: eth0 gone from the adopted namespace" nsenter -t "$owner" -n ip link show dev eth0
check "adopt: the adopted namespace itself survives" kill -0 "$owner"
check_eq "adopt: no allocation slot left" 0 in_host "$HELPER" --state "$STATE" slots
lab_finish
