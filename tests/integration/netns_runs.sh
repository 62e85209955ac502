#!/bin/bash
# netns_runs.sh - 50 runs' network plumbing inside lab-host: namespace + veth +
# addresses + routes (+ nft set elements after fw_install when nft/ is built),
# all live at once, checked, torn down; afterwards nothing is left: no wd-*
# interface, namespace, address, nft element or allocation slot.
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
N=50
lab_up
STATE=$(mktemp -d /tmp/wd-netns-runs.XXXXXX)
lab_on_exit rm -rf "$STATE"
# on the way out (also after a failure), free whatever slots are left
cleanup_gc() { in_host "$HELPER" --state "$STATE" gc >/dev/null 2>&1; }
lab_on_exit cleanup_gc
OUT=$STATE/out
FIFO=$STATE/in
mkfifo "$FIFO"

nft_opt=()
if "$HELPER" --state "$STATE" has-nft >/dev/null; then
	nft_opt=(--nft)
fi

# The helper creates N runs, prints READY and waits for a line on stdin.
ip netns exec "$LAB_HOST_NS" "$HELPER" --state "$STATE" "${nft_opt[@]}" --wait cycle "$N" <"$FIFO" >"$OUT" 2>"$STATE/err" &
helper=$!
exec 3>"$FIFO"
for ((i = 0; i < 600; i++)); do
	grep -q '^READY$' "$OUT" && break
	kill -0 "$helper" 2>/dev/null || break
	sleep 0.1
done
check "helper created $N runs" grep -q '^READY$' "$OUT"
[[ -s $STATE/err ]] && sed 's/^/    helper: /' "$STATE/err"

mapfile -t names < <(awk '$1 == "run" { print $3 }' "$OUT")
mapfile -t sbx4 < <(awk '$1 == "run" { print $6 }' "$OUT")
mapfile -t host4 < <(awk '$1 == "run" { print $5 }' "$OUT")
first=${names[0]:-none}

count_wd_links() { in_host ip -o link show 2>/dev/null | awk -F': ' '{ print $2 }' | grep -c '^wd-'; }
count_pool_addrs() { in_host ip -o addr show 2>/dev/null | grep -cE ' (10\.213\.|fd77:7764:6e00:)'; }

check_eq "$N distinct interface names" "$N" bash -c "printf '%s\n' ${names[*]} | sort -u | wc -l"
check_eq "$N distinct sandbox addresses" "$N" bash -c "printf '%s\n' ${sbx4[*]} | sort -u | wc -l"
check_eq "host names are wd- plus 12 hex digits" "$N" \
	bash -c "printf '%s\n' ${names[*]} | grep -cE '^wd-[0-9a-f]{12}\$'"
check_eq "$N wd-* interfaces in lab-host" "$N" count_wd_links
check_eq "$N allocation slots recorded" "$N" in_host "$HELPER" --state "$STATE" slots
check_eq "host end has its IPv4 address" "inet ${host4[0]:-none}" \
	bash -c "ip netns exec $LAB_HOST_NS ip -o -4 addr show dev $first | awk '{ print \$3, \$4 }'"
check_eq "host end has v4 and v6 pool addresses ($((2 * N)))" "$((2 * N))" count_pool_addrs
check "host end is up" bash -c "ip netns exec $LAB_HOST_NS ip -o link show dev $first | grep -q 'state UP'"
check_eq "rp_filter strict on $first" 1 in_host sysctl -n "net.ipv4.conf.$first.rp_filter"
check_eq "IPv4 forwarding off on $first" 0 in_host sysctl -n "net.ipv4.conf.$first.forwarding"
check_eq "IPv6 forwarding off on $first" 0 in_host sysctl -n "net.ipv6.conf.$first.forwarding"
check_eq "accept_ra off on $first" 0 in_host sysctl -n "net.ipv6.conf.$first.accept_ra"
check_eq "accept_redirects off on $first" 0 in_host sysctl -n "net.ipv4.conf.$first.accept_redirects"
check_eq "$N namespaces listed by ip netns" "$N" bash -c "ip netns list 2>/dev/null | awk '{ print \$1 }' | grep -cxF -f <(printf '%s\n' ${names[*]})"
if ((${#nft_opt[@]})); then
	check_eq "$N interfaces in nft set runs_if" "$N" \
		bash -c "ip netns exec $LAB_HOST_NS nft -j list set inet warden runs_if | grep -o '\"wd-[0-9a-f]*\"' | sort -u | wc -l"
	check "$first paired with its address in runs_v4" bash -c \
		"ip netns exec $LAB_HOST_NS nft list set inet warden runs_v4 | tr -d '\n' | grep -q '\"$first\" \\. ${sbx4[0]:-none}'"
fi

# Tear down: the helper runs fw_run_del + destroy (twice) for every run.
echo go >&3 2>/dev/null
exec 3>&-
wait "$helper"
rc=$?
check_eq "helper tore down cleanly" 0 echo "$rc"
check "helper printed DONE" grep -q '^DONE$' "$OUT"
grep '^timing' "$OUT" | sed 's/^/    /'

# The kernel removes the veth pairs asynchronously once the namespaces are gone.
for ((i = 0; i < 100; i++)); do
	[[ $(count_wd_links) == 0 ]] && break
	sleep 0.1
done
check_eq "no wd-* interface left in lab-host" 0 count_wd_links
check_eq "no pool address left in lab-host" 0 count_pool_addrs
check_eq "no namespace of ours left" 0 bash -c "ip netns list 2>/dev/null | awk '{ print \$1 }' | grep -cxF -f <(printf '%s\n' ${names[*]})"
check_eq "no namespace file of ours left in /run/netns" 0 \
	bash -c "cd /run/netns && ls | grep -cxF -f <(printf '%s\n' ${names[*]})"
check_eq "no allocation slot left" 0 in_host "$HELPER" --state "$STATE" slots
if ((${#nft_opt[@]})); then
	check_eq "no element left in runs_if" 0 \
		bash -c "ip netns exec $LAB_HOST_NS nft -j list set inet warden runs_if | grep -c '\"wd-' || true"
	check_eq "no element left in runs_v4/runs_v6" 0 \
		bash -c "ip netns exec $LAB_HOST_NS nft list table inet warden | grep -c 'wd-[0-9a-f]\{12\}' || true"
fi
lab_finish
