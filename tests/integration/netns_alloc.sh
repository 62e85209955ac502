#!/bin/bash
# netns_alloc.sh - the address allocator under pressure, inside lab-host: two
# launchers creating 20 runs each at the same moment never share a slot, a name
# or an address; a launcher killed with SIGKILL leaves slots that gc reclaims,
# both when its namespaces died with it (ip netns exec: private mount
# namespace) and when their bind mounts outlive it (nsenter: the machine's
# mount namespace), in which case gc also deletes the surviving veth.
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
N=20
lab_up
STATE=$(mktemp -d /tmp/wd-netns-alloc.XXXXXX)
lab_on_exit rm -rf "$STATE"
# on the way out (also after a failure), free whatever slots are left
cleanup_gc() { nsenter --net="/run/netns/$LAB_HOST_NS" "$HELPER" --state "$STATE/slots" gc >/dev/null 2>&1; }
lab_on_exit cleanup_gc
GO=$STATE/go

count_wd_links() { in_host ip -o link show 2>/dev/null | awk -F': ' '{ print $2 }' | grep -c '^wd-'; }
wait_no_links()
{
	local i
	for ((i = 0; i < 100; i++)); do
		[[ $(count_wd_links) == 0 ]] && return 0
		sleep 0.1
	done
	return 1
}
# wait_ready FILE PID: until FILE has READY (or PID died).
wait_ready()
{
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q '^READY$' "$1" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# --- two allocators at the same time -------------------------------------
pids=()
for k in 1 2; do
	mkfifo "$STATE/in$k"
	ip netns exec "$LAB_HOST_NS" "$HELPER" --state "$STATE/slots" --start-file "$GO" --wait \
		cycle "$N" <"$STATE/in$k" >"$STATE/out$k" 2>"$STATE/err$k" &
	pids+=($!)
	eval "exec $((k + 2))>\"\$STATE/in$k\""
done
sleep 0.2
touch "$GO"
for k in 1 2; do
	check "allocator $k created $N runs" wait_ready "$STATE/out$k" "${pids[k - 1]}"
	[[ -s $STATE/err$k ]] && sed "s/^/    helper $k: /" "$STATE/err$k"
done
cat "$STATE/out1" "$STATE/out2" | awk '$1 == "run"' >"$STATE/runs"
check_eq "$((2 * N)) runs in all" "$((2 * N))" bash -c "wc -l <'$STATE/runs'"
check_eq "no slot handed out twice" "$((2 * N))" bash -c "awk '{ print \$2 }' '$STATE/runs' | sort -u | wc -l"
check_eq "no interface name twice" "$((2 * N))" bash -c "awk '{ print \$3 }' '$STATE/runs' | sort -u | wc -l"
check_eq "no sandbox IPv4 address twice" "$((2 * N))" bash -c "awk '{ print \$6 }' '$STATE/runs' | sort -u | wc -l"
check_eq "no sandbox IPv6 address twice" "$((2 * N))" bash -c "awk '{ print \$8 }' '$STATE/runs' | sort -u | wc -l"
check_eq "$((2 * N)) wd-* interfaces live in lab-host" "$((2 * N))" count_wd_links
check_eq "$((2 * N)) slots recorded" "$((2 * N))" in_host "$HELPER" --state "$STATE/slots" slots
# Whether the two really overlapped depends on scheduling: report, do not assert.
switches=$({
	awk '$1 == "run" { print $2, 1 }' "$STATE/out1"
	awk '$1 == "run" { print $2, 2 }' "$STATE/out2"
} | sort -n | awk 'NR > 1 && $2 != p { n++ } { p = $2 } END { print n + 0 }')
echo "    note: slots switched owner $switches times in slot order (>1: the allocators overlapped)"
echo go >&3 2>/dev/null
echo go >&4 2>/dev/null
exec 3>&- 4>&-
for k in 1 2; do
	wait "${pids[k - 1]}"
	check_eq "allocator $k tore down" 0 echo $?
done
check "no wd-* interface left" wait_no_links
check_eq "no slot left" 0 in_host "$HELPER" --state "$STATE/slots" slots

# --- a launcher killed mid-run, namespaces private to it -----------------
mkfifo "$STATE/in4"
ip netns exec "$LAB_HOST_NS" "$HELPER" --state "$STATE/slots" --wait cycle 3 \
	<"$STATE/in4" >"$STATE/crash1" 2>&1 &
crash=$!
exec 6>"$STATE/in4"
check "first launcher created 3 runs" wait_ready "$STATE/crash1" "$crash"
kill -9 "$crash"
wait "$crash" 2>/dev/null
exec 6>&-
mapfile -t names < <(awk '$1 == "run" { print $3 }' "$STATE/crash1")
check_eq "killed launcher had 3 runs" 3 echo "${#names[@]}"
check_eq "its 3 slots are still recorded" 3 in_host "$HELPER" --state "$STATE/slots" slots
check_eq "its namespace files are still in /run/netns" 3 \
	bash -c "cd /run/netns && ls | grep -cxF -f <(printf '%s\n' ${names[*]})"
check "its veths went away with its mount namespace" wait_no_links
check_eq "gc reclaims 3 slots" "reclaimed 3" in_host "$HELPER" --state "$STATE/slots" gc
check_eq "no slot left after gc" 0 in_host "$HELPER" --state "$STATE/slots" slots
check_eq "gc removed the namespace files" 0 \
	bash -c "cd /run/netns && ls | grep -cxF -f <(printf '%s\n' ${names[*]})"
check_eq "a second gc finds nothing" "reclaimed 0" in_host "$HELPER" --state "$STATE/slots" gc

# --- a launcher killed mid-run, bind mounts outliving it ------------------
mkfifo "$STATE/in3"
nsenter --net="/run/netns/$LAB_HOST_NS" "$HELPER" --state "$STATE/slots" --wait cycle 3 \
	<"$STATE/in3" >"$STATE/crash2" 2>&1 &
crash=$!
exec 5>"$STATE/in3"
check "second launcher created 3 runs" wait_ready "$STATE/crash2" "$crash"
kill -9 "$crash"
wait "$crash" 2>/dev/null
exec 5>&-
mapfile -t names < <(awk '$1 == "run" { print $3 }' "$STATE/crash2")
sleep 0.3
check_eq "its veths survive (namespaces still mounted)" 3 count_wd_links
check "ip netns exec works on a leftover namespace" ip netns exec "${names[0]}" ip link show eth0
# a new allocation skips those slots: their owner is dead but the interfaces
# exist. Point the allocator's cursor (the lock file) at the first of them.
first_slot=$(awk '$1 == "run" { print $2 }' "$STATE/crash2" | sort -n | head -1)
printf '%010u\n' "$first_slot" >"$STATE/slots/lock"
out=$(in_host "$HELPER" --state "$STATE/slots" cycle 1)
new_slot=$(awk '$1 == "run" { print $2 }' <<<"$out")
check "a new run got a slot" test -n "$new_slot"
check "a new run does not take a slot whose interface survives" \
	bash -c "! awk '\$1 == \"run\" { print \$2 }' '$STATE/crash2' | grep -qx '$new_slot'"
check "control: the same probe finds a slot that survives" \
	bash -c "awk '\$1 == \"run\" { print \$2 }' '$STATE/crash2' | grep -qx '$first_slot'"
check_eq "gc reclaims 3 slots" "reclaimed 3" \
	nsenter --net="/run/netns/$LAB_HOST_NS" "$HELPER" --state "$STATE/slots" gc
check_eq "gc deleted the surviving veths" 0 count_wd_links
check_eq "gc unmounted and removed the namespaces" 0 \
	bash -c "ip netns list 2>/dev/null | awk '{ print \$1 }' | grep -cxF -f <(printf '%s\n' ${names[*]})"
check_eq "no slot left" 0 in_host "$HELPER" --state "$STATE/slots" slots
lab_finish
