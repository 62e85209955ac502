# Shared fixture for the daemon-mode lab tests (source it after lab_require_root; not a test
# itself): two unprivileged users A (LAB_USER) and B (warden-test2) in the group `warden`, a
# folder T with their audit folders, and helpers to start warden-gateway --manage-nft as root
# in lab-host and to run `warden` as A or B there. The caller writes $T/gateway.yaml (control
# path $SOCK, audit path $CENTRAL) before daemon_start.
# shellcheck shell=bash

lab_need_run_tools
for tool in setpriv nsenter python3 jq pgrep; do
	command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing"; exit 1; }
done
lab_user || { echo "FAIL: no unprivileged test user (useradd failed)"; exit 1; }
A_UID=$LAB_USER_UID A_GID=$LAB_USER_GID A_HOME=$LAB_USER_HOME A_NAME=$LAB_USER
B_NAME=warden-test2
if ! id -u "$B_NAME" >/dev/null 2>&1; then
	lab_accounts sh -c 'id -u "$0" >/dev/null 2>&1 || useradd -m -u 1501 "$0" >/dev/null 2>&1 ||
		useradd -m "$0" >/dev/null 2>&1' "$B_NAME" || { echo "FAIL: no second test user"; exit 1; }
fi
B_UID=$(id -u "$B_NAME") B_GID=$(id -g "$B_NAME") B_HOME=$(getent passwd "$B_NAME" | cut -d: -f6)
if [[ ! -d /tmp/warden-$B_UID ]]; then
	install -d -m 0700 -o "$B_UID" -g "$B_GID" "/tmp/warden-$B_UID" || exit 1
fi
mountpoint -q "/tmp/warden-$B_UID" ||
	mount -t tmpfs -o "mode=0700,uid=$B_UID,gid=$B_GID" warden-lab-user2 "/tmp/warden-$B_UID" ||
	exit 1
# the control socket's group: the daemon's users are in it (it stays, as the test users do)
# (under lab_accounts: usermod locks /etc/group, and another suite may hold it)
lab_accounts sh -c 'getent group warden >/dev/null || groupadd -r warden ||
	getent group warden >/dev/null' || { echo "FAIL: groupadd warden"; exit 1; }
lab_accounts usermod -a -G warden "$A_NAME" && lab_accounts usermod -a -G warden "$B_NAME" ||
	exit 1
lab_up

T=$(mktemp -d /tmp/wd-daemon-XXXXXX)
lab_on_exit rm -rf "$T"
chmod 0755 "$T"
CENTRAL=$T/central.jsonl
AA=$T/a/audit.jsonl
BA=$T/b/audit.jsonl
install -d -o "$A_UID" -g "$A_GID" "$T/a"
install -d -o "$B_UID" -g "$B_GID" "$T/b"
SOCK=/run/warden/gateway.sock
CLIENT=$SRC/tests/integration/ctl_client.py

# hostns CMD...: CMD in lab-host's network namespace only (nsenter: unlike `ip netns exec` it
# keeps this mount namespace's /sys, so the daemon and the launcher see the same cgroup folders)
hostns() { nsenter --net="/run/netns/$LAB_HOST_NS" "$@"; }
# asu UID GID HOME NAME CMD...: CMD as that user inside lab-host, a clean environment
asu() {
	local uid=$1 gid=$2 home=$3 name=$4
	shift 4
	hostns setpriv --reuid="$uid" --regid="$gid" --init-groups env -i HOME="$home" USER="$name" \
		LOGNAME="$name" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
		WARDEN_GATEWAY_BIN="$GW" WD_DAEMON_TEST_MARK="$T" "$@"
}
# ours_left: the processes of A and B this script started (marked in their environment); a
# sandbox's program, whose environment is filtered, lives in its run's cgroup
ours_left() {
	local p
	for p in $(pgrep -u "$A_UID"; pgrep -u "$B_UID"); do
		grep -qz "^WD_DAEMON_TEST_MARK=$T\$" "/proc/$p/environ" 2>/dev/null && echo "$p"
	done
	return 0
}
as_a() { asu "$A_UID" "$A_GID" "$A_HOME" "$A_NAME" "$@"; }
as_b() { asu "$B_UID" "$B_GID" "$B_HOME" "$B_NAME" "$@"; }
ra() { as_a "$W" run -q --audit-log "$AA" "$@"; }
rb() { as_b "$W" run -q --audit-log "$BA" "$@"; }
status_of() { "$@" >/dev/null 2>&1; echo $?; }
# client UID GID WHAT [ARG]: the crafted control client (it drops to UID:GID itself)
client() { hostns python3 "$CLIENT" "$SOCK" "$@"; }
client_a() { client "$A_UID" "$A_GID" "$@"; }
client_b() { client "$B_UID" "$B_GID" "$@"; }
export -f hostns asu as_a as_b ra rb client client_a client_b ours_left
export LAB_HOST_NS A_UID A_GID A_HOME A_NAME B_UID B_GID B_HOME B_NAME W GW AA BA SOCK CLIENT T

# daemon_start: the daemon as root in lab-host, in the background (GWPID); daemon_ready waits
daemon_start() {
	setsid nsenter --net="/run/netns/$LAB_HOST_NS" "$GW" --config "$T/gateway.yaml" \
		--manage-nft --control-group warden </dev/null >>"$T/daemon.log" 2>&1 &
	GWPID=$!
}
daemon_ready() {
	lab_wait 10 test -S "$SOCK" && lab_wait 10 hostns "$GW" ctl --socket "$SOCK" stats && return 0
	tail -n 20 "$T/daemon.log"
	return 1
}
daemon_stop() {
	[[ -n ${GWPID:-} ]] && kill "$GWPID" 2>/dev/null && wait "$GWPID" 2>/dev/null
	GWPID=
}
lab_on_exit daemon_stop
lab_on_exit bash -c 'for p in $("$0"); do kill -9 "$p"; done' ours_left

# ns_of HOLDER: the pid of HOLDER's process (an `unshare -Urn CMD` started in the background with
# as_a/as_b) that is in the new user and network namespaces, once it is there; nothing when it
# never is. HOLDER is the background shell; the process that unshares is HOLDER itself or its
# child, which may not exist yet. Compared with this shell's own user namespace: pid 1's is not
# readable on every machine (a container's init), and an empty name would match at once.
ns_of() {
	local pid=$1 me end p u
	me=$(readlink /proc/$$/ns/user) || return 1
	end=$((SECONDS + 10))
	while ((SECONDS < end)); do
		for p in "$pid" $(pgrep -P "$pid"); do
			u=$(readlink "/proc/$p/ns/user" 2>/dev/null) || continue
			[[ $u != "$me" ]] && { echo "$p"; return 0; }
		done
		sleep 0.05
	done
	return 1
}
# the runs' host-side veths in lab-host
wd_links() { ip -n "$LAB_HOST_NS" -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' |
	grep '^wd-' || true; }
no_wd_links() { [[ -z $(wd_links) ]]; }
have_wd_links() { [[ -n $(wd_links) ]]; }
