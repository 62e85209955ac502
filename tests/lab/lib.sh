# Helpers for integration test scripts that run inside a Warden test lab (source this file).
# shellcheck shell=bash
#
#   . "$(dirname "$0")/../lab/lib.sh"
#   lab_require_root            # exit 77 (skip) unless root with usable `ip netns`
#   lab_up                      # lab + env vars + EXIT trap that tears it down
#   check "dns answers" in_host dig +short @"$LAB_DNS_V4" allowed.test
#   check_fails "no route out" in_host ip route get 192.0.2.1
#   lab_finish                  # prints "N passed, N failed"; exit 1 on failure

LAB_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Where the runs under test keep their state: root mode's folder, or (LAB_AS_USER=1: the run_*
# tests run a second time as an unprivileged user, tests/integration/run_as_user.sh) that
# user's own; exported, so that the checks' `bash -c` children see it too.
export LAB_RUNS_DIR=${LAB_RUNS_DIR:-/run/warden/runs}
LAB_PASSED=0
LAB_FAILED=0
LAB_CLEANUPS=()
LAB_ENV=
LAB_FINISHED=

# lab_require_root: exits 77 (skip) when not root or network namespaces are
# unusable here, or when a tool the lab needs is missing.
lab_require_root()
{
	local probe=wdlab-probe$$ tool
	if [[ $EUID -ne 0 ]]; then
		echo "SKIP: needs root"
		exit 77
	fi
	for tool in ip nft dnsmasq nginx openssl socat curl dig; do
		if ! command -v "$tool" >/dev/null; then
			echo "SKIP: missing $tool"
			exit 77
		fi
	done
	if ! ip netns add "$probe" 2>/dev/null; then
		echo "SKIP: ip netns unusable"
		exit 77
	fi
	ip netns delete "$probe" 2>/dev/null
	return 0
}

# lab_on_exit CMD...: runs CMD at exit, before the lab goes down (last
# registered runs first). Use it instead of your own EXIT trap.
lab_on_exit()
{
	LAB_CLEANUPS=("$(printf '%q ' "$@")" "${LAB_CLEANUPS[@]}")
}

_lab_exit()
{
	local rc=$? c
	trap - EXIT INT TERM
	if [[ -z $LAB_FINISHED && $rc -ne 77 ]]; then
		# The script died before lab_finish (set -e, a stray exit, a
		# signal): that is a failure, and ctest still gets its line.
		LAB_FAILED=$((LAB_FAILED + 1))
		echo "FAIL - script exited with status $rc before lab_finish"
		echo "$LAB_PASSED passed, $LAB_FAILED failed"
		((rc != 0)) || rc=1
	fi
	for c in "${LAB_CLEANUPS[@]}"; do
		eval "$c" || true
	done
	if [[ -n ${LAB_NAME:-} ]]; then
		"$LAB_LIB_DIR/down" "$LAB_NAME" || true
	fi
	exit "$rc"
}

# lab_up: creates a lab, sources its env file (LAB_* variables, see
# docs/lab.md) and arranges for it to be torn down when the script exits.
# Exits the script with 1 when the lab cannot be built.
lab_up()
{
	trap _lab_exit EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	local rc=0
	LAB_ENV=$(LAB_OWNER_PID=$$ "$LAB_LIB_DIR/up") || rc=$?
	if ((rc == 77)); then
		echo "SKIP: the lab cannot run here"
		exit 77
	elif ((rc != 0)); then
		echo "FAIL - lab_up: cannot build the lab"
		exit 1
	fi
	# shellcheck disable=SC1090
	. "$LAB_ENV"
	LAB_REAL_BEFORE=$(_lab_real_host_state)
	return 0
}

# _lab_real_host_state: what of Warden is in the namespace the test started in (the
# machine's own): its nft table and wd-* links. Tests must leave it as they found it.
_lab_real_host_state()
{
	nft list table inet warden >/dev/null 2>&1 && echo "table inet warden"
	ip -o link show 2>/dev/null | awk -F': ' '$2 ~ /^wd-/ {print "link " $2}'
	return 0
}

# lab_run_netns NS IF H4 S4 H6 S6: a run-like namespace NS joined to lab-host by
# a veth IF (lab-host side, H4/30 and H6/64) <-> eth0 (NS side, S4/30 and S6/64,
# default routes via IF), built with plain `ip` as a test fixture; removed at exit.
lab_run_netns()
{
	local ns=$1 ifn=$2 h4=$3 s4=$4 h6=$5 s6=$6

	ip netns add "$ns" || return 1
	lab_on_exit ip netns delete "$ns"
	ip netns exec "$ns" sh -c 'for k in all default; do
		echo 0 >/proc/sys/net/ipv6/conf/$k/accept_dad; done'
	ip -n "$LAB_HOST_NS" link add "$ifn" type veth peer name eth0 netns "$ns" || return 1
	ip -n "$LAB_HOST_NS" -batch - <<EOB || return 1
addr add $h4/30 dev $ifn
addr add $h6/64 dev $ifn nodad
link set $ifn up
EOB
	ip -n "$ns" -batch - <<EOB
link set lo up
addr add $s4/30 dev eth0
addr add $s6/64 dev eth0 nodad
link set eth0 up
route add default via $h4
route add default via $h6
EOB
}

# lab_down: tears the lab down now (the EXIT trap then has nothing to do).
lab_down()
{
	[[ -n ${LAB_NAME:-} ]] || return 0
	"$LAB_LIB_DIR/down" "$LAB_NAME"
	LAB_NAME=
}

# lab_spawn host|wan TAG CMD...: starts CMD in the background inside a lab
# namespace, in its own session, output to $LAB_DIR/log/<role>-<TAG>.log.
# Sets LAB_SPAWNED_PID. down kills its whole process group, so children it
# moved to other namespaces (a sandbox) go too. Returns 2 on a bad argument.
lab_spawn()
{
	local role=$1 tag=$2
	shift 2
	[[ $role == host || $role == wan ]] || return 2
	[[ $tag =~ ^[A-Za-z0-9_.-]+$ ]] || return 2
	setsid ip netns exec "$LAB_NAME-$role" "$@" \
		</dev/null >>"$LAB_DIR/log/$role-$tag.log" 2>&1 &
	LAB_SPAWNED_PID=$!
	echo "$LAB_SPAWNED_PID" >"$LAB_DIR/run/$role-$tag.pid"
	# Return once it is inside the namespace, so lab_stop/down see it there.
	local want i
	want="net:[$(cat "$LAB_DIR/ns-$role.inode")]"
	for ((i = 0; i < 200; i++)); do
		[[ $(readlink "/proc/$LAB_SPAWNED_PID/ns/net" 2>/dev/null) == "$want" ]] && break
		kill -0 "$LAB_SPAWNED_PID" 2>/dev/null || break
		sleep 0.01
	done
	return 0
}

# lab_stop host|wan TAG: stops a process started with lab_spawn (its group).
lab_stop()
{
	local f=$LAB_DIR/run/$1-$2.pid
	[[ -e $f ]] || return 0
	(. "$LAB_LIB_DIR/common.sh" &&
		lab_kill_pidfile "$f" "$(cat "$LAB_DIR/ns-$1.inode")")
	rm -f "$f"
}

# lab_wait SECONDS CMD...: runs CMD every 50 ms until it succeeds; returns 1
# when SECONDS pass first. For readiness, never for asserting timings.
# lab_need_run_tools: sets W (warden) and GW (warden-gateway) for the `warden run` tests
# (WARDEN_BIN, WARDEN_BUILD_DIR, else the build under $SRC) and skips the test (exit 77)
# when either is not built or bubblewrap is not installed.
lab_need_run_tools()
{
	W=${WARDEN_BIN:-$SRC/build/launcher/warden}
	GW=${WARDEN_BUILD_DIR:-$SRC/build}/gateway/warden-gateway
	[[ -x $W && -x $GW ]] || { echo "SKIP: warden or warden-gateway not built"; exit 77; }
	[[ -x /usr/bin/bwrap ]] || { echo "SKIP: bubblewrap not installed"; exit 77; }
}

# lab_user: an unprivileged user for the rootless tests (LAB_USER, default warden-test; made
# with uid LAB_USER_UID, default 1500, when it does not exist). Sets LAB_USER_UID, LAB_USER_GID,
# LAB_USER_HOME. Returns 1 when no such user can be had (a test error, not a skip).
lab_user()
{
	LAB_USER=${LAB_USER:-warden-test}
	if ! id -u "$LAB_USER" >/dev/null 2>&1; then
		useradd -m -u "${LAB_USER_UID:-1500}" "$LAB_USER" >/dev/null 2>&1 ||
			useradd -m "$LAB_USER" >/dev/null 2>&1 || return 1
	fi
	LAB_USER_UID=$(id -u "$LAB_USER") LAB_USER_GID=$(id -g "$LAB_USER")
	LAB_USER_HOME=$(getent passwd "$LAB_USER" | cut -d: -f6)
	((LAB_USER_UID != 0)) && [[ -d $LAB_USER_HOME ]]
}

# as_user CMD...: runs CMD as LAB_USER (lab_user) with a clean environment of its own.
as_user()
{
	setpriv --reuid="$LAB_USER_UID" --regid="$LAB_USER_GID" --init-groups \
		env -i HOME="$LAB_USER_HOME" USER="$LAB_USER" LOGNAME="$LAB_USER" \
		PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 ${WARDEN_GATEWAY_BIN:+WARDEN_GATEWAY_BIN="$WARDEN_GATEWAY_BIN"} \
		"$@"
}

# in_host_user CMD...: as_user CMD inside lab-host.
in_host_user()
{
	ip netns exec "$LAB_HOST_NS" setpriv --reuid="$LAB_USER_UID" --regid="$LAB_USER_GID" \
		--init-groups env -i HOME="$LAB_USER_HOME" USER="$LAB_USER" LOGNAME="$LAB_USER" \
		PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
		${WARDEN_GATEWAY_BIN:+WARDEN_GATEWAY_BIN="$WARDEN_GATEWAY_BIN"} "$@"
}

# lab_tmpdir NAME: a fresh folder /tmp/NAME-XXXXXX for a test's files; with LAB_AS_USER=1 it
# belongs to LAB_USER (lab_user), who runs warden then, so its audit log can live there.
lab_tmpdir()
{
	local d
	d=$(mktemp -d "/tmp/$1-XXXXXX") || return 1
	if [[ ${LAB_AS_USER:-} == 1 ]]; then
		lab_user && chown "$LAB_USER_UID:$LAB_USER_GID" "$d" || return 1
	fi
	echo "$d"
}

# lab_program_ids: "uid:gid" of whom the program of a run runs as: nobody for root's runs
# (not under sudo), LAB_USER for a user's (LAB_AS_USER=1).
lab_program_ids()
{
	if [[ ${LAB_AS_USER:-} == 1 ]]; then
		lab_user && echo "$LAB_USER_UID:$LAB_USER_GID"
	else
		echo 65534:65534
	fi
}

# lab_teardowns_quiet AUDIT: the detached teardowns of the `warden run`s whose run.start is
# in audit log AUDIT are done: no run's state is owned by a live process (its launcher or
# its teardown child), and no live (non-zombie) `warden-teardown` child in lab-host is still
# at work refilling the pool. Use it with lab_wait (docs/run.md, teardown after the status).
lab_teardowns_quiet()
{
	local id pid
	for id in $(jq -r -s '.[] | select(.action == "run.start") | .run' "$1" 2>/dev/null); do
		pid=$(sed -n 's/^pid=//p' "$LAB_RUNS_DIR/$id/state" 2>/dev/null)
		[[ -z $pid ]] || ! kill -0 "$pid" 2>/dev/null || return 1
	done
	! ip netns pids "$LAB_HOST_NS" | xargs -r ps -o stat=,comm= -p |
		awk '$2 == "warden-teardown" && $1 !~ /^Z/' | grep -q .
}

lab_wait()
{
	local end=$((SECONDS + $1))
	shift
	while ! "$@" >/dev/null 2>&1; do
		((SECONDS < end)) || return 1
		sleep 0.05
	done
	return 0
}

_lab_listening()
{
	[[ -n $(ip netns exec "$LAB_NAME-$1" ss -Hln"$3" "sport = :$2" 2>/dev/null) ]]
}

# lab_wait_listen host|wan PORT [tcp|udp]: waits (up to 10 s) until something
# listens on PORT inside that namespace; returns 1 otherwise.
lab_wait_listen()
{
	local proto=t
	[[ ${3:-tcp} == udp ]] && proto=u
	lab_wait 10 _lab_listening "$1" "$2" "$proto"
}

# in_host CMD...: runs CMD inside lab-host (its /etc/resolv.conf is the lab DNS).
in_host()
{
	ip netns exec "$LAB_HOST_NS" "$@"
}

# in_wan CMD...: runs CMD inside lab-wan.
in_wan()
{
	ip netns exec "$LAB_WAN_NS" "$@"
}

# lab_curl ARGS...: curl inside lab-host trusting the lab CA, quiet, failing
# on HTTP errors, 10 s cap.
lab_curl()
{
	in_host curl -sS --fail --max-time 10 --cacert "$LAB_CA" "$@"
}

# lab_dig ARGS...: dig +short against the lab DNS from lab-host.
lab_dig()
{
	in_host dig +short +time=2 +tries=1 @"$LAB_DNS_V4" "$@"
}

# lab_dns_asked NAME [TYPE]: true when the lab DNS log shows a query for exactly NAME (of
# TYPE: A, TXT, AXFR, ... as dnsmasq names it); false otherwise, also when the log is missing.
lab_dns_asked()
{
	[[ -r $LAB_DNS_LOG ]] || { echo "lab_dns_asked: no DNS log at $LAB_DNS_LOG" >&2; return 2; }
	if [[ -n ${2:-} ]]; then
		grep -qiF "query[$2] $1 from " "$LAB_DNS_LOG"
	else
		grep -qiF "] $1 from " "$LAB_DNS_LOG"
	fi
}

# lab_dns_never_asked NAME [TYPE]: true when the lab DNS log exists and shows no such query.
# A negative check that cannot pass by accident: a missing log (or a bad call) is status 2,
# an error, not "never asked".
lab_dns_never_asked()
{
	local rc=0
	[[ $# -ge 1 && -n $1 ]] || { echo "lab_dns_never_asked: no name" >&2; return 2; }
	lab_dns_asked "$@" || rc=$?
	case $rc in
	0) return 1 ;;
	1) return 0 ;;
	*) return 2 ;;
	esac
}

# lab_wan_counters: prints lab-wan's arrival counters (nft table inet lab).
lab_wan_counters()
{
	in_wan nft list table inet lab
}

# lab_wan_count dns|udp|tcp_syn|icmp: prints how many such packets arrived in
# lab-wan from lab-host since the lab started (or the last reset).
lab_wan_count()
{
	in_wan nft list counter inet lab "$1_in" |
		sed -n 's/.*packets \([0-9]*\).*/\1/p'
}

_lab_wan_port_count()
{
	local n
	n=$(in_wan nft list set inet lab "$1" |
		tr -d '\n' | grep -o "[{,] *$2 counter packets [0-9]*" | grep -o '[0-9]*$')
	echo "${n:-0}"
}

# lab_wan_count_udp [PORT]: UDP packets (not to port 53) that arrived in
# lab-wan; with PORT, only those to that destination port.
lab_wan_count_udp()
{
	if [[ $# -eq 0 ]]; then
		lab_wan_count udp
	else
		_lab_wan_port_count udp_ports "$1"
	fi
}

# lab_wan_count_tcp_syn [PORT]: TCP connection attempts (SYN) that arrived
# in lab-wan; with PORT, only those to that destination port.
lab_wan_count_tcp_syn()
{
	if [[ $# -eq 0 ]]; then
		lab_wan_count tcp_syn
	else
		_lab_wan_port_count tcp_syn_ports "$1"
	fi
}

# lab_wan_reset_counters: zeroes every arrival counter in lab-wan.
lab_wan_reset_counters()
{
	in_wan nft reset counters table inet lab >/dev/null &&
		in_wan nft flush set inet lab udp_ports &&
		in_wan nft flush set inet lab tcp_syn_ports
}

_lab_run_check()
{
	local expect=$1 desc=$2 out rc
	shift 2
	out=$("$@" 2>&1) && rc=0 || rc=$?
	if { [[ $expect == ok ]] && ((rc == 0)); } ||
		{ [[ $expect == fail ]] && ((rc != 0)); }; then
		LAB_PASSED=$((LAB_PASSED + 1))
		echo "ok - $desc"
		return 0
	fi
	LAB_FAILED=$((LAB_FAILED + 1))
	echo "FAIL - $desc (exit $rc, wanted $expect): $*"
	[[ -n $out ]] && printf '%s\n' "$out" | tail -n 15 | sed 's/^/    | /'
	return 1
}

# check DESC CMD...: passes when CMD exits 0. Counts and prints the result.
check()
{
	_lab_run_check ok "$@"
}

# check_fails DESC CMD...: passes when CMD exits non-zero.
check_fails()
{
	_lab_run_check fail "$@"
}

# check_eq DESC WANT CMD...: passes when CMD's stdout (trailing newlines
# stripped) equals WANT; its stderr is shown only on failure.
check_eq()
{
	local desc=$1 want=$2 got errf
	shift 2
	errf=$(mktemp) || return 1
	got=$("$@" 2>"$errf") || true
	if [[ $got == "$want" ]]; then
		rm -f "$errf"
		LAB_PASSED=$((LAB_PASSED + 1))
		echo "ok - $desc"
		return 0
	fi
	LAB_FAILED=$((LAB_FAILED + 1))
	echo "FAIL - $desc: wanted '$want', got '$got'"
	[[ -s $errf ]] && tail -n 15 "$errf" | sed 's/^/    | /'
	rm -f "$errf"
	return 1
}

# lab_finish: prints the closing line "N passed, N failed" and exits 1 when
# anything failed (0 otherwise). The lab goes down through the EXIT trap.
lab_finish()
{
	local now
	if [[ -n ${LAB_REAL_BEFORE+set} ]]; then
		now=$(_lab_real_host_state)
		if [[ $now != "$LAB_REAL_BEFORE" ]]; then
			echo "FAIL - the machine's own namespace changed (a command ran outside the lab):"
			echo "$now"
			LAB_FAILED=$((LAB_FAILED + 1))
		else
			echo "ok - the machine's own namespace is untouched"
			LAB_PASSED=$((LAB_PASSED + 1))
		fi
	fi
	LAB_FINISHED=1
	echo "$LAB_PASSED passed, $LAB_FAILED failed"
	((LAB_FAILED == 0)) || exit 1
	exit 0
}
