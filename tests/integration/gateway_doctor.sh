#!/usr/bin/env bash
# gateway_doctor.sh - `warden doctor` checks the gateway's installation (issue 14): the worker
# image warden-gateway execs (warden-gateway-worker, next to it, in ../libexec/warden from it,
# or in the compiled-in libexec folder: `warden-gateway check-worker` finds it as the gateway
# does) and, in daemon mode, that the image the daemon runs its worker from is still installed
# (its `stats` names it; a restart execs that path again). As user A and as root, each with a
# positive control next to the negative: the build's gateway (its worker beside it) is ok; a copy
# of warden-gateway in a folder of its own, without the worker (the libexec folders hidden under
# an empty tmpfs in this test's private mount namespace, never the machine's), fails with the
# fix; a daemon started from a copy whose worker image was replaced afterwards (an upgrade: restart
# it), then removed (a restart would fail) is a warning with the fix. A user's first line (the
# mode) and last (the gateway) agree: rootless without the daemon, daemon mode with it.
set -u
. "$(dirname "$0")/daemon/prelude.sh"
# the folders a copied gateway would look in besides its own: hidden, in this mount namespace
# (the copies' ../libexec/warden is $T/libexec/warden: not there)
LIBEXEC=$(grep -aoE -m1 '/[[:alnum:]/._-]*/libexec/warden' "$GW" | head -1)
if [[ -n $LIBEXEC && -d $LIBEXEC ]]; then
	mount -t tmpfs -o mode=0755 wd-doctor-empty "$LIBEXEC" ||
		{ echo "FAIL: cannot hide $LIBEXEC"; exit 1; }
	lab_on_exit umount "$LIBEXEC"
fi

# A copy of warden-gateway without its worker, and one with it (for a daemon)
install -d -m 0755 "$T/bare" "$T/gwd"
install -m 0755 "$GW" "$T/bare/warden-gateway"
install -m 0755 "$GW" "$T/gwd/warden-gateway"
install -m 0755 "$(dirname "$GW")/warden-gateway-worker" "$T/gwd/warden-gateway-worker"

# doctor_as WHO GATEWAY: `warden doctor` as A (a) or root (root) in lab-host with that gateway;
# its report (exit 1, a failing check, is a report too)
doctor_as() {
	local rc=0
	if [[ $1 == a ]]; then
		as_a env WARDEN_GATEWAY_BIN="$2" "$W" doctor || rc=$?
	else
		hostns env WARDEN_GATEWAY_BIN="$2" "$W" doctor || rc=$?
	fi
	((rc == 0 || rc == 1))
}

echo "# the gateway's worker image, as a user and as root"
check "warden-gateway check-worker names the build's worker" lab_match \
	"/warden-gateway-worker\$" "$GW" check-worker
check_fails "... and a copy without one fails" "$T/bare/warden-gateway" check-worker
check "as A: ok, with the worker's path (the build's gateway)" lab_match \
	"^ok +gateway +rootless runs start an embedded gateway as you .*its worker .*/warden-gateway-worker\\)" \
	doctor_as a "$GW"
check "as A: a gateway without its worker fails" lab_match \
	"^FAIL +gateway +the gateway $T/bare/warden-gateway cannot start its data plane: warden-gateway-worker not found next to warden-gateway" \
	doctor_as a "$T/bare/warden-gateway"
check "... with the fix" lab_match "^ +fix: install warden-gateway-worker where warden-gateway looks for it" \
	doctor_as a "$T/bare/warden-gateway"
check "as A with no daemon: the first line says runs are rootless, as the last does" lab_match \
	"^ok +mode +uid [0-9]+, not root: runs are rootless \\(a user and network namespace of your own, no daemon" \
	doctor_as a "$GW"
check_eq "... and doctor's exit status says so" 1 \
	bash -c '"$@" >/dev/null 2>&1; echo $?' _ as_a env WARDEN_GATEWAY_BIN="$T/bare/warden-gateway" "$W" doctor
check "as root: ok, with the worker's path" lab_match \
	"^ok +gateway +no daemon on $SOCK: runs start an embedded gateway .*its worker .*/warden-gateway-worker\\)" \
	doctor_as root "$GW"
check "as root: a gateway without its worker fails, with the fix" lab_match \
	"^FAIL +gateway +the gateway $T/bare/warden-gateway cannot start its data plane" \
	doctor_as root "$T/bare/warden-gateway"

echo "# the daemon's worker image"
check "the host's nft table is installed" in_host "$W" nft install
GW=$T/gwd/warden-gateway daemon_start
check "a daemon starts from a copy of warden-gateway and its worker" daemon_ready
check "its stats name the worker's image" bash -c \
	'"$@" | jq -e --arg w "$0" ".worker == \$w"' "$T/gwd/warden-gateway-worker" \
	hostns "$GW" ctl --socket "$SOCK" stats
check "as A: ok, the daemon plumbs A's runs" lab_match \
	"^ok +gateway +the warden-gateway daemon on $SOCK plumbs your runs" doctor_as a "$GW"
# the first line and the last agree (issue 27): both say daemon mode
check "as A with the daemon: the first line says daemon mode too" lab_match \
	"^ok +mode +uid [0-9]+, not root: runs use daemon mode \\(.*plumbed by the warden-gateway daemon on $SOCK" \
	doctor_as a "$GW"
check "... and not that runs are rootless" lab_no_match "runs are rootless|no daemon" doctor_as a "$GW"
# an upgrade replaces the file (a new inode at the same path): the daemon runs the old one
install -m 0755 "$(dirname "$GW")/warden-gateway-worker" "$T/gwd/new-worker"
mv -f "$T/gwd/new-worker" "$T/gwd/warden-gateway-worker"
check "the worker image replaced: as A, a warning to restart the daemon" lab_match \
	"^warn +gateway +the daemon on $SOCK runs an older worker than the one installed at $T/gwd/warden-gateway-worker" \
	doctor_as a "$GW"
check "... with the fix" lab_match "^ +fix: ask the operator to restart the daemon" doctor_as a "$GW"
rm -f "$T/gwd/warden-gateway-worker"
check "the worker image removed (an upgrade gone wrong): as A, a warning" lab_match \
	"^warn +gateway +the daemon on $SOCK runs its worker from $T/gwd/warden-gateway-worker \\(deleted\\), which is no longer installed" \
	doctor_as a "$GW"
check "... with the fix" lab_match "^ +fix: ask the operator to install warden-gateway-worker" \
	doctor_as a "$GW"
check "as root: the same warning" lab_match \
	"^warn +gateway +the daemon on $SOCK runs its worker from .*\\(deleted\\)" doctor_as root "$GW"
check "the daemon still serves meanwhile" hostns "$GW" ctl --socket "$SOCK" stats
daemon_stop
check "the daemon's log has no sanitizer report" bash -c \
	'! grep -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$0"' "$T/daemon.log"
lab_finish
