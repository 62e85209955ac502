#!/usr/bin/env bash
# run_pool.sh - `warden run` returns the program's status before its teardown, which a detached
# child does; a pool of ready-made run networks: a run leases one (visible in its messages, its
# state and the audit), an idle one is closed (from inside it nothing reaches lab-wan; DNS and
# TCP go only to the gateway and are denied), a broken one is refused, `warden gc` keeps the
# healthy ones and reclaims dead ones, `warden gc --pool` drains them; a teardown child killed
# with SIGKILL is reclaimed by `warden gc`; nothing is left once the teardowns are done.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
command -v nsenter >/dev/null || { echo "SKIP: nsenter missing"; exit 77; }
lab_up

T=$(lab_tmpdir wd-run-pool)
lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
P=/run/warden/pool
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=2
NETNS=$(in_host readlink /proc/self/ns/net | tr -dc 0-9)
# drain our pool before the lab goes (lab down also kills the holders in lab-host)
lab_on_exit in_host "$W" gc -q --pool

wr() { in_host "$W" run -q --audit-log "$A" "$@"; }
# processes in lab-host named $1
# live (not zombie) processes in lab-host named $1
procs() {
	ip netns pids "$LAB_HOST_NS" | xargs -r ps -o pid=,stat=,comm= -p |
		awk -v c="$1" '$3 == c && $2 !~ /^Z/ {print $1}'
}
# no run's state is owned by a live process (a launcher, or its teardown child), and no
# teardown child is still at work (refilling the pool)
teardowns_quiet() { lab_teardowns_quiet "$A"; }
teardowns_done() { lab_wait 20 teardowns_quiet; }
# ready entries of this lab's pool (or of host namespace inode $1): "id holder ifname" lines
entries() {
	local f ns=${1:-$NETNS}
	for f in "$P"/[0-9a-f]*; do
		[[ -e $f ]] || continue
		grep -q "^state=ready .*cfg=net:$ns," "$f" || continue
		sed -n 's/^state=ready pid=\([0-9]*\) start=[0-9]* id=\([0-9a-f]*\) slot=[0-9]* ifname=\([^ ]*\) .*/\2 \1 \3/p' "$f"
	done
}
# gone PID: the process has exited (or is a zombie nobody reaped yet)
gone() { [[ ! -e /proc/$1 ]] || [[ $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d" " -f1) == Z ]]; }
export -f gone
pool_size() { entries | wc -l; }
export -f entries
export P NETNS
elements() {
	in_host nft -j list set inet warden runs_if | jq '[.nftables[].set.elem // [] | .[]] | length'
}

cat >"$T/net.yaml" <<EOF
version: 1
filesystem:
  read: ["$LAB_CA"]
network:
  allow:
    - {host: allowed.test, ports: [443]}
EOF
cat >"$T/gw.yaml" <<EOF
version: 1
control: {path: "$T/gw.sock"}
audit: {path: "$A"}
EOF

echo "# the status comes first, the teardown after"
check "warden gc --pool starts from an empty pool" in_host "$W" gc -q --pool
out=$(wr -- sh -c 'echo hi; exit 3')
rc=$?
check_eq "out=\$(warden run -- ...) gets the output" hi echo "$out"
check_eq "... and the status" 3 echo "$rc"
check "the background teardown finishes" teardowns_done
check "... and refills the pool to WARDEN_POOL=2" lab_wait 10 bash -c '(( $(entries | wc -l) == 2 ))'
check "a pooled network is held by a process outside it with /dev/null and the namespace only" \
	bash -c 'for h in $(entries | cut -d" " -f2); do
		[[ $(readlink /proc/$h/fd/0) == /dev/null && $(readlink /proc/$h/fd/1) == /dev/null &&
		   $(readlink /proc/$h/fd/2) == /dev/null ]] || exit 1
		[[ $(ls /proc/$h/fd | wc -l) == 4 ]] || exit 1
		[[ $(readlink /proc/$h/ns/net) == "net:[$NETNS]" ]] || exit 1
		[[ $(readlink /proc/$h/fd/3) == net:* && $(readlink /proc/$h/fd/3) != "net:[$NETNS]" ]] || exit 1
	done'
check_eq "its nft elements are in the sets (one runs_if element each)" 2 elements
check "warden gc keeps healthy ready networks" bash -c \
	'before=$(entries | sort); ip netns exec "$0" "$1" gc -q && [[ $(entries | sort) == "$before" ]]' \
	"$LAB_HOST_NS" "$W"

for set in runs_if runs_v4 runs_v6; do in_host nft flush set inet warden "$set"; done
out=$(in_host "$W" run --audit-log "$A" -- echo ok 2>"$T/refresh.err")
check_eq "pooled networks whose elements are gone (sets flushed): a run still works" ok \
	echo "$out"
check "... it added them again (after the end-to-end check failed)" \
	grep -q "failed the check; adding its nft elements again" "$T/refresh.err"
check "teardowns done" teardowns_done
check "warden gc --pool drains the pool" in_host "$W" gc -q --pool
check_eq "... the next run makes its own network" ok wr -- echo ok
refilled() { teardowns_quiet && (( $(entries | wc -l) == 2 )); }
check "... and its teardown refills the pool" lab_wait 20 refilled

echo "# an idle pooled network is closed"
lab_spawn host gwd "$GW" --config "$T/gw.yaml" --manage-nft
# (a daemon that did not start says why under the check)
check "setup: the gateway daemon answers on its control socket" lab_wait 10 test -S "$T/gw.sock" ||
	sed 's/^/    | /' "$LAB_DIR/log/host-gwd.log"
read -r _ holder ifn < <(entries | head -n 1)
inside() { nsenter --net="/proc/$holder/fd/3" "$@"; }
gw_addr=$(ip -n "$LAB_HOST_NS" -4 -o addr show dev "$ifn" | awk '{print $4}' | cut -d/ -f1)
# the probes below run in the pooled network (nsenter into its holder's fd 3): without a holder
# they would fail as well, so first prove that they get in there and that curl and dig run
check "control: the probes run in the idle pooled network (its eth0 holds an address)" \
	lab_match 'inet ' inside ip -4 -o addr show dev eth0
check_fails --denied 7 "control: curl runs in there (nothing listens on its loopback: refused)" \
	inside curl -sS --max-time 3 "http://127.0.0.1:9/"
check_eq "control: the dig below, from lab-host, gets lab-wan's resolver's answer (for other.test)" \
	"$LAB_OTHER_V4" in_host dig +short +time=2 +tries=1 "@$LAB_WAN_V4" other.test
lab_wan_reset_counters
check_fails "no TCP to lab-wan from inside it (HTTP to allowed.test's address)" \
	inside curl -sS --max-time 3 "http://$LAB_ALLOWED_V4/"
check_fails "... nor to lab-wan's own address" inside curl -sS --max-time 3 "http://$LAB_WAN_V4/"
check_eq "DNS (to lab-wan's resolver) gets no answer" "" \
	inside dig +short +time=2 +tries=1 "@$LAB_WAN_V4" allowed.test
check_eq "... nor from the gateway's own address" "" \
	inside dig +short +time=2 +tries=1 "@$gw_addr" allowed.test
inside bash -c "echo x >/dev/udp/$LAB_WAN_V4/9999" 2>/dev/null
sleep 0.3
check_eq "nothing of it arrived in lab-wan: TCP SYNs" 0 lab_wan_count tcp_syn
check_eq "... DNS" 0 lab_wan_count dns
check_eq "... other UDP" 0 lab_wan_count udp
# (this check used to pass whatever happened: `bash -c '! lab_dns_asked ...'` ran where the lab's
# functions do not exist, and "command not found" negated to success)
check "the gateway never asked upstream" lab_dns_never_asked allowed.test

echo "# a run leases a pooled network"
before=$(entries | awk '{print $3}')
ip netns exec "$LAB_HOST_NS" "$W" run --gateway "$T/gw.sock" --audit-log "$A" -- sleep 30.5 \
	2>"$T/lease.err" &
lpid=$!
check "a run starts" lab_wait 10 bash -c 'pgrep -f "^/usr/bin/sleep 30.5$" >/dev/null'
leased=$(sed -n 's/.*network: \(wd-[0-9a-f]*\), ready-made (from the pool).*/\1/p' "$T/lease.err")
check "its messages say it is ready-made" test -n "$leased"
check "... and it was one of the pool's" grep -qx -- "$leased" <<<"$before"
check "... it is no longer in the pool" bash -c '! entries | grep -q " $0\$"' "$leased"
check "control: the same probe finds a pooled network that is still there" \
	bash -c 'entries | grep -q " $0\$"' "$(entries | awk 'NR == 1 {print $3}')"
check "control: while the run lives its interface is there" in_host ip link show "$leased"
check "its state records it" bash -c 'grep -lx "ifname=$0" $LAB_RUNS_DIR/*/state' "$leased"
check "the gateway's audit names it at register" jq -e -s --arg i "$leased" \
	'[.[] | select(.action == "run.gateway-register" and .resource == $i)] | length == 1' "$A"
kill -TERM "$lpid" # forwarded to the program
wait "$lpid"
check "the leased network is torn down, never returned" lab_wait 20 bash -c \
	'! ip -n "$0" link show "$1"' "$LAB_HOST_NS" "$leased"
check "... and no name is ever reused" bash -c '! entries | grep -q " $0\$"' "$leased"
check_eq "HTTPS to an allowed name through a pooled network" "hello from allowed.test" \
	wr --gateway "$T/gw.sock" -p "$T/net.yaml" -- \
	curl -sS --max-time 8 --cacert "$LAB_CA" https://allowed.test/
check_fails "a denied name through a pooled network" \
	wr --gateway "$T/gw.sock" -p "$T/net.yaml" -- \
	curl -sS --max-time 8 --cacert "$LAB_CA" https://other.test/
check "control (for the idle network's checks): the lab DNS was asked about allowed.test now" \
	lab_wait 5 lab_dns_asked allowed.test
syn_arrived() { (($(lab_wan_count tcp_syn) > 0)); }
check "control: the arrival counter saw the TCP of that run" syn_arrived
check "control: a run in a pooled network gets DNS answers from its gateway's address" \
	lab_match . wr --gateway "$T/gw.sock" -p "$T/net.yaml" -- dig +short +time=2 +tries=1 allowed.test

echo "# a broken pooled network is refused"
check "teardowns done" teardowns_done
broken=$(entries | awk '{print $3}')
check "control: the pooled networks' interfaces are there (set down now)" bash -c \
	'[[ -n $1 ]] && for i in $1; do ip -n "$0" link set "$i" down || exit 1; done' \
	"$LAB_HOST_NS" "$broken"
check_eq "with every pooled network broken (host side down) a run still works" ok \
	wr --gateway "$T/gw.sock" -- echo ok
check "... the broken ones are gone" lab_wait 20 bash -c \
	'for i in $1; do ! ip -n "$0" link show "$i" || exit 1; done' "$LAB_HOST_NS" "$broken"
check "teardowns done" teardowns_done
read -r _ holder ifn < <(entries | head -n 1)
check "control: its entry is in the pool, its interface in lab-host" bash -c \
	'entries | grep -q " $1\$" && ip -n "$0" link show "$1" >/dev/null' "$LAB_HOST_NS" "$ifn"
kill -KILL "$holder"
check "a pooled network whose holder died is reclaimed by warden gc" bash -c \
	'ip netns exec "$0" "$1" gc -q && ! entries | grep -q " $2\$"' "$LAB_HOST_NS" "$W" "$ifn"
check "... its interface goes" lab_wait 20 bash -c '! ip -n "$0" link show "$1"' \
	"$LAB_HOST_NS" "$ifn"

echo "# a teardown child killed with SIGKILL"
killed=0
for attempt in 1 2 3 4 5 6 7 8; do
	check "teardowns done" teardowns_done
	WARDEN_POOL=16 wr --gateway "$T/gw.sock" -- true
	for i in $(seq 1 400); do
		p=$(ps -o pid= -p "$(procs warden-teardown | paste -sd,)" --sort start_time 2>/dev/null |
			head -n 1 | tr -d ' ')
		[[ -n $p ]] && break
		sleep 0.005
	done
	[[ -n $p ]] || continue
	kill -KILL "$p" 2>/dev/null && killed=$((killed + 1))
	((killed >= 2)) && break
done
check "the other teardowns finish" teardowns_done
check "a teardown child was killed" test "$killed" -ge 1
# (positive controls for the "nothing is left" checks below: the same listings, while a pool is
# there; the killed teardowns may have been the ones that would refill it, so one more run's
# teardown, left alone, refills it first)
WARDEN_POOL=16 wr --gateway "$T/gw.sock" -- true
check "teardowns done" teardowns_done
check "control: lab-host's links show the pool's wd- interfaces" \
	lab_match '^wd-' in_host ip -br link
check "control: lab-host's processes show the pool's holders (warden-pool)" bash -c \
	'ip netns pids "$0" | xargs -r ps -o comm= -p | grep -Ex "warden-pool"' "$LAB_HOST_NS"
check "control: the audit names the runs" \
	jq -e -s '[.[] | select(.action == "run.start")] | length > 0' "$A"
check "warden gc --pool reclaims what it left" in_host "$W" gc -q --pool
check "no run state is left" bash -c \
	'for id in $(jq -r -s ".[] | select(.action == \"run.start\") | .run" "$0"); do
		[[ ! -e $LAB_RUNS_DIR/$id ]] || exit 1; done' "$A"
check "no interface is left in lab-host" lab_wait 20 lab_no_match '^wd-' in_host ip -br link
check_eq "no nft set element is left" 0 elements
check "the daemon holds no run" lab_wait 10 bash -c \
	'(( $(ip netns exec "$0" "$1" ctl --socket "$2" list | jq ".runs | length") == 0 ))' \
	"$LAB_HOST_NS" "$GW" "$T/gw.sock"
check "no warden process is left in lab-host" lab_wait 10 bash -c \
	'! ip netns pids "$0" | xargs -r ps -o comm= -p | grep -Ex "bwrap|warden|warden-pool|warden-teardown"' "$LAB_HOST_NS"
check_eq "the pool is empty" 0 pool_size

echo "# audit"
check "every run.start has a run.exit" jq -e -s '
	([.[] | select(.action == "run.start") | .run] | sort) ==
	([.[] | select(.action == "run.exit") | .run] | sort)' "$A"
check "the exit statuses are the programs'" jq -e -s \
	'[.[] | select(.action == "run.exit") | .exit] | index(3) != null' "$A"
lab_stop host gwd

echo "# /etc"
check "control: the host has /etc/shadow and /etc/hostname" test -e /etc/shadow -a -e /etc/hostname
check "/etc inside holds the base files only (one mount of copies)" wr -- sh -c \
	'test -s /etc/ld.so.cache && test -d /etc/ssl && test -s /etc/passwd &&
	 test ! -e /etc/shadow && test ! -e /etc/hostname &&
	 touch /tmp/probe && ! touch /etc/ld.so.cache'
check "... the copies are the host's files" bash -c \
	'for f in ld.so.cache nsswitch.conf services; do
		[[ ! -e /etc/$f ]] || cmp -s "/etc/$f" "/run/warden/etc/$f" || exit 1; done'
cat >"$T/etc-grant.yaml" <<EOF
version: 1
filesystem:
  read: ["/etc/hostname"]
EOF
check "a grant under /etc: the files are bound one by one and the grant is there" \
	wr -p "$T/etc-grant.yaml" -- sh -c \
	'test -s /etc/hostname && test -s /etc/ld.so.cache && test ! -e /etc/shadow'

echo "# a ready entry whose holder's fd 3 is not its namespace is never leased"
check "teardowns done" teardowns_done
check "the pool is full" lab_wait 20 bash -c '(( $(entries | wc -l) == 2 ))'
holders=$(entries | awk '{print $2}')
ifns=$(entries | awk '{print $3}')
# a decoy with lab-host's own namespace as fd 3 (a freshly forked holder has its maker's fd 3
# there until it moves the pooled namespace in) takes over every ready entry and its slot
rm -f "$T/decoy.pid"
(ip netns exec "$LAB_HOST_NS" bash -c 'echo $$ >"$0"; exec 3</proc/self/ns/net; exec sleep 300' \
	"$T/decoy.pid" &)
lab_wait 10 bash -c '[[ -s $0 && $(readlink /proc/$(cat $0)/fd/3) == net:* &&
	$(cat /proc/$(cat $0)/comm) == sleep ]]' "$T/decoy.pid"
decoy=$(cat "$T/decoy.pid")
dstart=$(sed 's/.*) //' "/proc/$decoy/stat" | awk '{print $20}')
for id in $(entries | awk '{print $1}'); do
	sed -i "s/^state=ready pid=[0-9]* start=[0-9]* /state=ready pid=$decoy start=$dstart /" "$P/$id"
	for f in /run/warden/alloc/[0-9]*; do
		grep -q " id=$id " "$f" 2>/dev/null &&
			sed -i "s/^pid=[0-9]* start=[0-9]* /pid=$decoy start=$dstart /" "$f"
	done
done
check_eq "the decoy holds every ready entry" 2 bash -c "entries | awk '\$2 == $decoy' | wc -l"
out=$(in_host "$W" run --audit-log "$A" -- readlink /proc/self/ns/net 2>"$T/decoy.err")
check "a run still works" test -n "$out"
check "... not in the decoy's namespace (lab-host's own)" test "$out" != "net:[$NETNS]"
check "... in a network made for it" grep -q "made for this run" "$T/decoy.err"
check "control: the forged entries' interfaces are there" bash -c \
	'[[ -n $1 ]] && for i in $1; do ip -n "$0" link show "$i" >/dev/null || exit 1; done' \
	"$LAB_HOST_NS" "$ifns"
kill -KILL "$decoy" $holders 2>/dev/null
check "teardowns done" teardowns_done
check "warden gc --pool reclaims the forged entries" in_host "$W" gc -q --pool
check "... and their interfaces go" lab_wait 20 bash -c \
	'for i in $1; do ! ip -n "$0" link show "$i" || exit 1; done' "$LAB_HOST_NS" "$ifns"

echo "# under sudo, /run/warden as a fresh boot leaves it (0700, made by the first state folder)"
sudo_run() {
	unshare -m --propagation private sh -c \
		'mount -t tmpfs -o mode=0700 tmpfs /run/warden && exec "$@"' sh \
		env WARDEN_POOL=0 SUDO_UID=65534 SUDO_GID=65534 \
		ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" -- "$@"
}
check_eq "a run as the invoking user works, with /etc in one mount" "65534 yes" sudo_run sh -c \
	'test -s /etc/ld.so.cache && echo "$(id -u) $(awk '"'"'$5 == "/etc" {print "yes"}'"'"' /proc/self/mountinfo)"'

echo "# a holder names itself, and goes with its veth"
check "teardowns done" teardowns_done
check_eq "a run (its teardown refills the pool)" ok wr -- echo ok
check "teardowns done" teardowns_done
check "the pool is full" lab_wait 20 bash -c '(( $(entries | wc -l) == 2 ))'
read -r _ holder ifn < <(entries | head -n 1)
check_eq "a holder's command line is \"warden-pool <its namespace>\"" "warden-pool $ifn" \
	bash -c 'tr "\0" " " <"/proc/$0/cmdline" | sed "s/ $//"' "$holder"
check_eq "... and so is its name" "warden-pool" cat "/proc/$holder/comm"
check "control: its entry is in the pool, its element in runs_if" bash -c \
	'entries | grep -q " $1\$" && ip netns exec "$0" nft list set inet warden runs_if | grep -q "\"$1\""' \
	"$LAB_HOST_NS" "$ifn"
check "... it holds the namespace and /dev/null only" bash -c \
	'[[ $(ls /proc/$0/fd | wc -l) == 4 && $(readlink /proc/$0/fd/3) == net:* ]]' "$holder"
check "its veth is deleted" in_host ip link del "$ifn"
check "... and the holder exits" lab_wait 20 gone "$holder"
check "... taking its entry with it" lab_wait 10 bash -c '! entries | grep -q " $0\$"' "$ifn"
check "... and its nft elements" bash -c \
	'! ip netns exec "$0" nft list set inet warden runs_if | grep -q "\"$1\""' "$LAB_HOST_NS" "$ifn"
check "control: the other holder lives on" bash -c '! gone "$0"' "$(entries | awk 'NR == 1 {print $2}')"

echo "# an idle holder exits (WARDEN_POOL_IDLE)"
check "teardowns done" teardowns_done
check "the pool is drained" in_host "$W" gc -q --pool
WARDEN_POOL_IDLE=3 wr -- true
check "teardowns done" teardowns_done
idle=$(entries | awk '{print $2}')
check_eq "the pool was refilled" 2 bash -c 'wc -w <<<"$0"' "$idle"
check "its holders exit after 3 s idle" lab_wait 30 bash -c \
	'for h in $0; do gone "$h" || exit 1; done' "$idle"
check_eq "... and leave no entry" 0 pool_size
check_eq "... nor nft elements" 0 elements
check_eq "control: without WARDEN_POOL_IDLE a new pool stays" ok wr -- echo ok
check "teardowns done" teardowns_done
check "... it is full" lab_wait 20 bash -c '(( $(entries | wc -l) == 2 ))'

echo "# holders of a host namespace that is gone"
# a second lab: its lab-host plays a host namespace that is deleted under its pool
L2ENV=$(LAB_OWNER_PID=$$ LAB_BIGFILE_MIB=1 "$SRC/tests/lab/up")
L2NAME=$(. "$L2ENV" && echo "$LAB_NAME")
lab_on_exit "$SRC/tests/lab/down" "$L2NAME"
H2=$L2NAME-host
NS2=$(ip netns exec "$H2" readlink /proc/self/ns/net | tr -dc 0-9)
check "a run in the second lab's host namespace" \
	ip netns exec "$H2" env WARDEN_POOL=2 "$W" run -q --audit-log "$A" -- true
check "... fills its pool" lab_wait 30 bash -c '(( $(entries "$0" | wc -l) == 2 ))' "$NS2"
read -r h1 h2 < <(entries "$NS2" | awk '{print $2}' | paste -sd" ")
check "control: its two holders are found (and live)" bash -c \
	'[[ -n $0 && -n $1 ]] && ! gone "$0" && ! gone "$1"' "$h1" "$h2"
kill -STOP "$h1" # cannot notice anything: warden gc has to reap it
check "its host namespace is deleted" ip netns delete "$H2"
check "a holder of the deleted namespace exits by itself" lab_wait 30 gone "$h2"
check_fails "the stopped one is still there" gone "$h1"
check "warden gc --pool, in another host namespace, reaps it" in_host "$W" gc -q --pool
check "... it is gone" lab_wait 10 gone "$h1"
check_eq "... and so are the entries of the deleted namespace" 0 bash -c 'entries "$0" | wc -l' "$NS2"

echo "# WARDEN_POOL=0: no pool"
check "teardowns done" teardowns_done
check "the pool is drained" in_host "$W" gc -q --pool
check_eq "a run" ok env WARDEN_POOL=0 ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" -- echo ok
check "teardowns done" teardowns_done
check_eq "... leaves no pooled network" 0 pool_size

lab_finish
