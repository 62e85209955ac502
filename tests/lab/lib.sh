# Helpers for integration test scripts that run inside a Warden test lab (source this file).
# shellcheck shell=bash
#
#   . "$(dirname "$0")/../lab/lib.sh"
#   lab_require_root            # exit 77 (skip) unless root with usable `ip netns`
#   lab_up                      # lab + env vars + EXIT trap that tears it down
#   check "dns answers" in_host dig +short @"$LAB_DNS_V4" allowed.test
#   check_fails "no route out" in_host ip route get 192.0.2.1
#   check "control: a route in" in_host ip route get "$LAB_WAN_V4"
#   lab_finish                  # prints "N passed, N failed"; exit 1 on failure
#
# A probe that could not run (a missing program, function or file, a usage error) is an
# ERROR, counted as a failure, never a pass: see "Probes that cannot run" below.

LAB_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# the script's own arguments, for lab_require_root's re-exec (a sourced file sees them)
LAB_SCRIPT_ARGS=("$@")
# Where the runs under test keep their state: root mode's folder, or (LAB_AS_USER=1: the run_*
# tests run a second time as an unprivileged user, tests/integration/run_as_user.sh) that
# user's own; exported, so that the checks' `bash -c` children see it too.
export LAB_RUNS_DIR=${LAB_RUNS_DIR:-/run/warden/runs}
# The gateway daemon's signing key (--manage-nft) in the lab's own /run/warden-lab, never the
# machine's /var/lib/warden (warden-gateway(8), "audit.key").
export WARDEN_GATEWAY_AUDIT_KEY=${WARDEN_GATEWAY_AUDIT_KEY:-/run/warden-lab/gateway-audit-key.pem}
LAB_PASSED=0
LAB_FAILED=0
LAB_ERRORS=0
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
	_lab_private_run
	return 0
}

# _lab_private_run: re-executes the script, once, in a mount and a pid namespace of its own
# (LAB_PRIVATE_RUN=1 marks it, and its children inherit both), with empty tmpfs on
# /run/warden (run records, the pool, address slots, a daemon's control socket), /run/netns
# (the lab's and the runs' namespaces), /run/warden-lab (the labs' state) and /etc/netns
# (the runs' resolv.conf). Without this, two suites running at once reclaim each other's
# runs and labs, find each other's daemon, and `pgrep -u` of the test user finds (and a test
# would kill) the other suite's processes. The script is the pid namespace's init: orphans
# of its runs come back to it, and when it ends (or unshare is killed: --kill-child) every
# process it started ends too, and the mounts go with the last of them.
# LAB_SHARED_RUN=1 keeps the machine's folders and pids (to debug a lab from outside).
_lab_private_run()
{
	[[ -n ${LAB_PRIVATE_RUN:-} || -n ${LAB_SHARED_RUN:-} ]] && return 0
	command -v unshare >/dev/null || { echo "SKIP: missing unshare"; exit 77; }
	mkdir -p /run/warden /run/netns /run/warden-lab /etc/netns || exit 1
	export LAB_PRIVATE_RUN=1
	exec unshare --mount --propagation private --pid --fork --kill-child --mount-proc -- \
		bash -c 'for d in /run/warden /run/netns /run/warden-lab /etc/netns; do
			mount -t tmpfs -o mode=0755 warden-lab "$d" || exit 1
		done
		exec bash "$@"' lab "$0" "${LAB_SCRIPT_ARGS[@]}"
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
	_lab_probe_cleanup
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
	# the assertions' probe logs live in the lab (down removes them, whatever happens)
	_lab_probe_cleanup
	LAB_PROBE_DIR=$LAB_DIR/probe
	mkdir -m 0700 "$LAB_PROBE_DIR" 2>/dev/null || LAB_PROBE_DIR=
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
# lab_need_mcp: the MCP tests' client side: sets NODE (node) and MCP (tests/mcp), and installs
# tests/mcp's pinned packages (package-lock.json, `npm ci`) once when the SDK or server-everything
# is missing; skips the test (exit 77) without node or npm, or when npm ci fails.
lab_need_mcp()
{
	MCP=$(cd "$LAB_LIB_DIR/../mcp" && pwd)
	NODE=$(command -v node) || { echo "SKIP: node is not installed"; exit 77; }
	if [[ ! -d $MCP/node_modules/@modelcontextprotocol/sdk ||
		! -e $MCP/node_modules/@modelcontextprotocol/server-everything/dist/index.js ]]; then
		command -v npm >/dev/null || { echo "SKIP: npm is not installed"; exit 77; }
		(cd "$MCP" && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
			{ echo "SKIP: npm ci in tests/mcp failed (no registry access?)"; exit 77; }
	fi
}

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

# lab_accounts CMD...: CMD holding the labs' lock on the machine's user and group files
# (useradd, groupadd, usermod). Suites running at once (ctest -j) would otherwise race to
# create the same user, or find /etc/passwd or /etc/group locked by the other and fail.
lab_accounts()
{
	local d=/run/lock
	[[ -d $d ]] || d=/tmp
	flock -w 120 "$d/warden-lab-accounts.lock" "$@"
}

# lab_user: an unprivileged user for the rootless tests (LAB_USER, default warden-test; made
# with uid LAB_USER_UID, default 1500, when it does not exist). Sets LAB_USER_UID, LAB_USER_GID,
# LAB_USER_HOME. Returns 1 when no such user can be had (a test error, not a skip).
lab_user()
{
	LAB_USER=${LAB_USER:-warden-test}
	if ! id -u "$LAB_USER" >/dev/null 2>&1; then
		lab_accounts sh -c 'id -u "$0" >/dev/null 2>&1 ||
			useradd -m -u "$1" "$0" >/dev/null 2>&1 || useradd -m "$0" >/dev/null 2>&1' \
			"$LAB_USER" "${LAB_USER_UID:-1500}" || return 1
	fi
	LAB_USER_UID=$(id -u "$LAB_USER") LAB_USER_GID=$(id -g "$LAB_USER")
	LAB_USER_HOME=$(getent passwd "$LAB_USER" | cut -d: -f6)
	((LAB_USER_UID != 0)) && [[ -d $LAB_USER_HOME ]] || return 1
	# the user's run state (rootless mode's fallback folder) private to this script too, as
	# /run/warden is (_lab_private_run): two suites as the same user would share it otherwise
	if [[ -n ${LAB_PRIVATE_RUN:-} ]] && ! mountpoint -q "/tmp/warden-$LAB_USER_UID"; then
		if [[ ! -d /tmp/warden-$LAB_USER_UID ]]; then
			install -d -m 0700 -o "$LAB_USER_UID" -g "$LAB_USER_GID" \
				"/tmp/warden-$LAB_USER_UID" || return 1
		fi
		mount -t tmpfs -o "mode=0700,uid=$LAB_USER_UID,gid=$LAB_USER_GID" warden-lab-user \
				"/tmp/warden-$LAB_USER_UID" || return 1
	fi
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
	local id pid pids
	for id in $(jq -r -s '.[] | select(.action == "run.start") | .run' "$1" 2>/dev/null); do
		pid=$(sed -n 's/^pid=//p' "$LAB_RUNS_DIR/$id/state" 2>/dev/null)
		[[ -z $pid ]] || ! kill -0 "$pid" 2>/dev/null || return 1
	done
	# (a namespace that cannot be listed is not quiet)
	pids=$(ip netns pids "$LAB_HOST_NS") || return 1
	[[ -z $pids ]] || ! xargs -r ps -o stat=,comm= -p <<<"$pids" |
		awk '$2 == "warden-teardown" && $1 !~ /^Z/' | grep -q .
}

lab_wait()
{
	local end=$((SECONDS + $1))
	shift
	# only the last attempt's probe errors count (an earlier one may fail before its time)
	while [[ -z ${LAB_PROBE_LOG:-} ]] || : 2>/dev/null >"$LAB_PROBE_LOG"; ! "$@" >/dev/null 2>&1; do
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

# _lab_in NS CMD...: `ip netns exec NS CMD...`, but a namespace that is not there (125) or a
# CMD that is no program (127: ip itself would say 1, like a denial) is a probe error.
_lab_in()
{
	local ns=$1
	shift
	if [[ -z $ns || ! -e /run/netns/$ns ]]; then
		lab_probe_error "no lab namespace '$ns' to run $1 in"
		return 125
	fi
	if ! type -P -- "${1:-}" >/dev/null; then
		lab_probe_error "${1:-(nothing)}: no such program (in_host/in_wan run programs, not shell functions)"
		return 127
	fi
	ip netns exec "$ns" "$@"
}

# in_host CMD...: runs CMD inside lab-host (its /etc/resolv.conf is the lab DNS).
in_host()
{
	_lab_in "${LAB_HOST_NS:-}" "$@"
}

# in_wan CMD...: runs CMD inside lab-wan.
in_wan()
{
	_lab_in "${LAB_WAN_NS:-}" "$@"
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
# TYPE: A, TXT, AXFR, ... as dnsmasq names it); 1 when it does not; 2 (a probe error) when
# the log is missing or no NAME is given.
lab_dns_asked()
{
	if [[ -z ${1:-} ]]; then
		lab_probe_error "lab_dns_asked: no name"
		return 2
	fi
	if [[ ! -r ${LAB_DNS_LOG:-} ]]; then
		lab_probe_error "lab_dns_asked: no DNS log at '${LAB_DNS_LOG:-}'"
		return 2
	fi
	if [[ -n ${2:-} ]]; then
		grep -qiF "query[$2] $1 from " "$LAB_DNS_LOG"
	else
		grep -qiF "] $1 from " "$LAB_DNS_LOG"
	fi
}

# lab_negate CMD...: the negation of a 0/1 probe that keeps its errors: CMD's 0 is 1, its 1 is
# 0, anything else (the probe could not run) is 2.
lab_negate()
{
	local rc=0
	"$@" || rc=$?
	case $rc in
	0) return 1 ;;
	1) return 0 ;;
	*) return 2 ;;
	esac
}

# lab_dns_never_asked NAME [TYPE]: true when the lab DNS log exists and shows no such query.
# A negative check that cannot pass by accident: a missing log (or a bad call) is status 2,
# an error, not "never asked".
lab_dns_never_asked()
{
	lab_negate lab_dns_asked "$@"
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

# --- Probes that cannot run --------------------------------------------------------------
# A negative check ("denied", "never arrives") passes when its probe fails, so a probe that did
# not run at all (a typo, a missing program, function or file, a usage error) would pass too.
# The assertions below therefore tell "it ran and was denied" from "it did not run", and report
# the latter as an ERROR (counted as a failure), whatever the check expected:
#
# - the command must exist (a program, function or builtin) before it is run;
# - exit 125 (a wrapper: env, timeout, `warden run` failed before the program ran), 126 (not
#   executable) and 127 (not found) never count as a result;
# - neither do the statuses in LAB_PROBE_ERRORS of the probe's client: the last program the
#   command line names that the table knows (scanning stops at a shell or interpreter, whose
#   script's arguments follow), e.g. curl 2 (bad option), 3 (bad URL), 77 (CA file), while curl 7
#   (refused), 28 (timeout), 35 (TLS) or 22 (HTTP error) stay denials;
# - a helper that could not do its job says so with lab_probe_error (lab_dns_asked with no DNS
#   log, in_host with no such program, lab_match when its command fails), and bash's
#   command_not_found_handle does too, also inside `bash -c '...'` scripts the check starts:
#   that catches `bash -c '! some_function'` where the function does not exist there;
# - `ip netns exec` saying `exec of "CMD" failed` (its status is 1, like a denial).
#
# Where the generic rule does not fit, say which statuses are the denial:
#   check_fails --denied 1 "ping gets no answer" in_run ping -c1 -W1 "$LAB_WAN_V4"
# (any other non-zero status is then an ERROR). lab_probe_errors PROGRAM STATUS... adds to the
# table (e.g. for a test's own helper that returns 2 when its probe cannot run).

declare -gA LAB_PROBE_ERRORS=(
	# unsupported protocol, failed to start (bad option), bad URL, not built in, read error
	# (-d @file), out of memory, internal error, unknown libcurl option, client certificate, CA file
	[curl]="1 2 3 4 26 27 43 48 58 77"
	# usage or unresolvable server, batch file, internal error (9, no reply, is a denial)
	[dig]="1 8 10"
	[grep]=2 [test]=2 ["["]=2 [printenv]=2
	[jq]="2 3 5"      # usage or file, the filter does not compile, a runtime error
	[python3]=2       # cannot open the script, bad option
	[bash]=2          # syntax error, a builtin misused (or grep's 2 at the end of its pipe)
	[sh]=             # (dash exits 2 when a redirection fails: that is a denial)
	[node]=
	[git]=129         # usage (128, fatal: "unable to access", is a denial)
	[ip]=255          # ip netns exec: no such namespace
	[warden]=2 [warden-gateway]=2   # usage error, invalid input
	[lab_dns_asked]=2 [lab_dns_never_asked]=2 [lab_match]=2 [lab_no_match]=2
)
# programs whose remaining arguments are their script's
LAB_PROBE_INTERPRETERS=" bash sh python3 node "

# lab_probe_errors PROGRAM STATUS...: STATUS... of PROGRAM (a basename or a function) mean
# that the probe did not run.
lab_probe_errors()
{
	local prog=$1
	shift
	LAB_PROBE_ERRORS[$prog]="${LAB_PROBE_ERRORS[$prog]:-} $*"
}

# lab_probe_error MESSAGE...: a probe helper could not do its job: says so on stderr and, inside
# an assertion, makes it an ERROR (also when the helper's status is then negated).
lab_probe_error()
{
	echo "probe error: $*" >&2
	if [[ -n ${LAB_PROBE_LOG:-} ]]; then
		{ printf '%s\n' "$*" >>"$LAB_PROBE_LOG"; } 2>/dev/null
	fi
	return 0
}

# bash runs this for a command it cannot find (in the script, and in the `bash -c` children
# of an assertion, which inherit it).
command_not_found_handle()
{
	printf 'bash: %s: command not found\n' "$1" >&2
	if [[ -n ${LAB_PROBE_LOG:-} ]]; then
		{ printf 'command not found: %s\n' "$1" >>"$LAB_PROBE_LOG"; } 2>/dev/null
	fi
	return 127
}

# _lab_probe_client CMD...: sets LAB_PROBE_CLIENT to the client LAB_PROBE_ERRORS knows in CMD's
# words (see above), or to nothing
_lab_probe_client()
{
	local w b
	LAB_PROBE_CLIENT=
	for w; do
		b=${w##*/}
		[[ $b =~ ^[][A-Za-z0-9_.+-]+$ && -n ${LAB_PROBE_ERRORS[$b]+set} ]] || continue
		LAB_PROBE_CLIENT=$b
		[[ $LAB_PROBE_INTERPRETERS == *" $b "* ]] && break
	done
	return 0
}

# _lab_probe_verdict RC DENIED LOG OUTPUT CMD...: sets LAB_PROBE_WHY to why the probe did not
# run, or to nothing when it did. DENIED: the statuses check_fails --denied accepts (empty: the
# generic rule); LOG: the probe log; OUTPUT: what the probe printed (its stderr at least).
_lab_probe_verdict()
{
	local rc=$1 denied=$2 log=$3 output=$4 s
	shift 4
	LAB_PROBE_WHY=
	if [[ -s $log ]]; then
		LAB_PROBE_WHY=$(head -n 3 "$log" | paste -sd '|' | sed 's/|/; /g')
		return 0
	fi
	if [[ $output =~ exec\ of\ \"([^\"]*)\"\ failed ]]; then
		LAB_PROBE_WHY="ip netns exec could not run ${BASH_REMATCH[1]}"
		return 0
	fi
	((rc != 0)) || return 0
	if [[ -n $denied ]]; then
		[[ " ${denied//,/ } " == *" $rc "* ]] ||
			LAB_PROBE_WHY="exit $rc is not one of the denials ($denied)"
		return 0
	fi
	case $rc in
	125) LAB_PROBE_WHY="a wrapper (env, timeout, warden run) failed before the program ran" ;;
	126) LAB_PROBE_WHY="not executable" ;;
	127) LAB_PROBE_WHY="not found" ;;
	esac
	[[ -z $LAB_PROBE_WHY ]] || return 0
	_lab_probe_client "$@"
	[[ -n $LAB_PROBE_CLIENT ]] || return 0
	for s in ${LAB_PROBE_ERRORS[$LAB_PROBE_CLIENT]}; do
		if ((s == rc)); then
			LAB_PROBE_WHY="$LAB_PROBE_CLIENT exits $rc when it cannot do its job (usage, a file it cannot open)"
			return 0
		fi
	done
	return 0
}

# _lab_probe_start / _lab_probe_end: the probe log of one assertion, LAB_PROBE_LOGFILE: a name of
# its own in a private folder (LAB_PROBE_DIR: in the lab's folder once lab_up ran, else made in
# /tmp on first use and removed by lab_finish and the lab's EXIT trap), created only when
# something is written to it (a process the assertion left behind that writes later writes to
# a name nobody reads). No program runs for it: an assertion costs what it did before.
LAB_PROBE_DIR=
LAB_PROBE_SEQ=0
_lab_probe_start()
{
	if [[ -z $LAB_PROBE_DIR || ! -d $LAB_PROBE_DIR ]]; then
		LAB_PROBE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/wdlab-probe.XXXXXX") || LAB_PROBE_DIR=
	fi
	LAB_PROBE_SEQ=$((LAB_PROBE_SEQ + 1))
	if [[ -n $LAB_PROBE_DIR ]]; then
		LAB_PROBE_LOGFILE=$LAB_PROBE_DIR/$BASHPID.$LAB_PROBE_SEQ
	else
		LAB_PROBE_LOGFILE=/dev/null
	fi
}

_lab_probe_end()
{
	[[ $LAB_PROBE_LOGFILE == /dev/null || ! -e $LAB_PROBE_LOGFILE ]] || rm -f "$LAB_PROBE_LOGFILE"
}

# _lab_probe_cleanup: removes LAB_PROBE_DIR (made by this shell)
_lab_probe_cleanup()
{
	[[ -z $LAB_PROBE_DIR || ! -d $LAB_PROBE_DIR ]] || rm -rf "$LAB_PROBE_DIR"
	LAB_PROBE_DIR=
}

# _lab_count ok|fail|error DESC [DETAIL]: counts and prints one result (DETAIL follows DESC as is)
_lab_count()
{
	case $1 in
	ok)
		LAB_PASSED=$((LAB_PASSED + 1))
		echo "ok - $2"
		return 0
		;;
	error)
		LAB_FAILED=$((LAB_FAILED + 1))
		LAB_ERRORS=$((LAB_ERRORS + 1))
		echo "ERROR - $2${3:-}"
		;;
	*)
		LAB_FAILED=$((LAB_FAILED + 1))
		echo "FAIL - $2${3:-}"
		;;
	esac
	return 1
}

# _lab_runnable DESC CMD...: CMD names a program, function or builtin (else an ERROR)
_lab_runnable()
{
	local desc=$1
	shift
	[[ $# -gt 0 ]] && type -t -- "$1" >/dev/null && return 0
	_lab_count error "$desc" " (the probe cannot run: no program, function or builtin '${1:-}')"
}

_lab_run_check()
{
	local expect=$1 denied=$2 desc=$3 out rc
	shift 3
	_lab_runnable "$desc" "$@" || return 1
	_lab_probe_start
	out=$(export LAB_PROBE_LOG=$LAB_PROBE_LOGFILE
		export -f command_not_found_handle
		"$@" 2>&1) && rc=0 || rc=$?
	_lab_probe_verdict "$rc" "$denied" "$LAB_PROBE_LOGFILE" "$out" "$@"
	_lab_probe_end
	if [[ -n $LAB_PROBE_WHY ]]; then
		_lab_count error "$desc" " (exit $rc; the probe did not run: $LAB_PROBE_WHY): $*"
	elif { [[ $expect == ok ]] && ((rc == 0)); } || { [[ $expect == fail ]] && ((rc != 0)); }; then
		_lab_count ok "$desc"
		return 0
	else
		_lab_count fail "$desc" " (exit $rc, wanted $expect): $*"
	fi
	[[ -n $out ]] && printf '%s\n' "$out" | tail -n 15 | sed 's/^/    | /'
	return 1
}

# check DESC CMD...: passes when CMD exits 0. Counts and prints the result.
check()
{
	_lab_run_check ok "" "$@"
}

# check_fails [--denied STATUS[,STATUS...]] DESC CMD...: passes when CMD ran and exited non-zero
# (with --denied: with one of those statuses; any other is an ERROR). Give it a positive control:
# the same probe, pointed at something allowed, passing a `check` next to it.
check_fails()
{
	local denied=
	if [[ ${1:-} == --denied ]]; then
		denied=${2:-}
		shift 2
		if [[ ! $denied =~ ^[0-9]+(,[0-9]+)*$ ]]; then
			_lab_count error "${1:-}" " (check_fails --denied wants STATUS[,STATUS...], not '$denied')"
			return 1
		fi
	fi
	_lab_run_check fail "$denied" "$@"
}

# check_eq DESC WANT CMD...: passes when CMD's stdout (trailing newlines stripped) equals WANT;
# its stderr is shown only on failure. A probe that did not run is an ERROR, also when its
# (empty) output is what was wanted.
check_eq()
{
	local desc=$1 want=$2 got errf rc
	shift 2
	_lab_runnable "$desc" "$@" || return 1
	_lab_probe_start
	errf=$LAB_PROBE_LOGFILE.err
	[[ $LAB_PROBE_LOGFILE != /dev/null ]] || errf=/dev/null
	got=$(export LAB_PROBE_LOG=$LAB_PROBE_LOGFILE
		export -f command_not_found_handle
		"$@" 2>"$errf") && rc=0 || rc=$?
	_lab_probe_verdict "$rc" "" "$LAB_PROBE_LOGFILE" "$(<"$errf")" "$@"
	_lab_probe_end
	if [[ -n $LAB_PROBE_WHY ]]; then
		_lab_count error "$desc" " (exit $rc; the probe did not run: $LAB_PROBE_WHY): $*"
	elif [[ $got == "$want" ]]; then
		_lab_count ok "$desc"
		[[ $errf == /dev/null ]] || : >"$errf"
		return 0
	else
		_lab_count fail "$desc" ": wanted '$want', got '$got'"
	fi
	[[ -s $errf ]] && tail -n 15 "$errf" | sed 's/^/    | /'
	[[ $errf == /dev/null ]] || rm -f "$errf"
	return 1
}

# lab_match ERE CMD...: CMD's stdout has a line matching the extended regular expression ERE:
# 0 yes, 1 no; 2 (a probe error) when CMD fails or cannot run. Use it instead of
# `CMD | grep -q ERE`, which cannot tell "no such line" from "CMD did not run".
lab_match()
{
	local ere=$1 out rc=0
	shift
	out=$("$@") || rc=$?
	if ((rc != 0)); then
		lab_probe_error "lab_match: '$*' failed (exit $rc)"
		return 2
	fi
	grep -Eq -- "$ere" <<<"$out"
}

# lab_no_match ERE CMD...: CMD runs and no line of its stdout matches ERE: 0; a line matches: 1;
# 2 (a probe error) when CMD fails or cannot run. The positive control is lab_match with the
# same CMD and an ERE that does match.
lab_no_match()
{
	lab_negate lab_match "$@"
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
	_lab_probe_cleanup
	((LAB_ERRORS == 0)) ||
		echo "# $LAB_ERRORS of the failures are ERRORs: probes that did not run (see above)"
	echo "$LAB_PASSED passed, $LAB_FAILED failed"
	((LAB_FAILED == 0)) || exit 1
	exit 0
}
