#!/usr/bin/env bash
# doctor_hints.sh - every hint `warden doctor` and `warden run` give is true for the situation it
# names (issue 27, item 9), each made for real, as a user and as root, beside a positive control:
#   - the sysctls that close user namespaces (user.max_user_namespaces = 0,
#     kernel.unprivileged_userns_clone = 0, kernel.apparmor_restrict_unprivileged_userns = 1),
#     faked in a mount namespace of the check's own (a file bound over the /proc/sys entry, or
#     over /proc/sys/kernel a copy of it holding the entry), never the machine's: the fix sets it
#     now (with sudo for a user, without as root) and names the /etc/sysctl.d file and its line;
#   - bubblewrap that cannot start a sandbox (WARDEN_BWRAP=/bin/false): the fix points at the
#     userns check *above* (it is printed before) and prints the probe, which runs as printed
#     with the real bwrap;
#   - WARDEN_GATEWAY_BIN naming no file, or a file that is not executable: doctor and run say
#     that of the path, with a fix that is not "set WARDEN_GATEWAY_BIN"; run does not point at a
#     gateway message that was never printed; a gateway that ran and said why has it quoted;
#   - a grant the program may not read: a user's run (rootless) and root's run through sudo are
#     not told "run warden through sudo" (the program already runs as them); root's direct run
#     (the program as the sandbox user) is.
# The mode line of a user's doctor with a daemon is in gateway_doctor.sh.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
command -v setpriv >/dev/null || { echo "FAIL: setpriv is missing"; exit 1; }
command -v unshare >/dev/null || { echo "FAIL: unshare is missing"; exit 1; }
lab_user || { echo "FAIL: no unprivileged test user (useradd failed)"; exit 1; }
lab_up

T=$(mktemp -d /tmp/wd-doctor-hints-XXXXXX)
lab_on_exit rm -rf "$T"
chown "$LAB_USER_UID:$LAB_USER_GID" "$T"
export WARDEN_GATEWAY_BIN=$GW
A=$T/audit.jsonl

# doctor WHO [VAR=VALUE...]: `warden doctor` as the user (u) or root (root) in lab-host with
# those variables; its report (exit 1, a failing check, is a report too). WRAP (set by
# fake_sysctl, fake_kernel) is a command prefix that runs before lab-host is entered.
WRAP=()
doctor() {
	local who=$1 rc=0
	shift
	if [[ $who == u ]]; then
		"${WRAP[@]}" ip netns exec "$LAB_HOST_NS" setpriv --reuid="$LAB_USER_UID" \
			--regid="$LAB_USER_GID" --init-groups env -i HOME="$LAB_USER_HOME" \
			USER="$LAB_USER" LOGNAME="$LAB_USER" PATH=/usr/local/bin:/usr/bin:/bin \
			LANG=C.UTF-8 WARDEN_GATEWAY_BIN="$GW" "$@" "$W" doctor || rc=$?
	else
		"${WRAP[@]}" ip netns exec "$LAB_HOST_NS" env WARDEN_AUDIT_LOG="$T/root-doctor.jsonl" \
			"$@" "$W" doctor || rc=$?
	fi
	((rc == 0 || rc == 1))
}
# fake_sysctl PATH VALUE FUNCTION ARGS...: FUNCTION (doctor) whose command runs in a mount
# namespace of its own where the /proc/sys file PATH reads VALUE (a file bound over it)
fake_sysctl() {
	local f
	f=$(mktemp "$T/sysctl.XXXXXX") || return 125
	printf '%s\n' "$2" >"$f"
	chmod 0644 "$f"
	local WRAP=(unshare -m --propagation private bash -c
		'mount --bind "$1" "$2" || exit 125; shift 2; exec "$@"' _ "$f" "$1")
	"${@:3}"
}
# fake_kernel NAME VALUE FUNCTION ARGS...: the same where /proc/sys/kernel is a copy of the real
# one (what can be read of it) with NAME reading VALUE: for entries this kernel does not have
fake_kernel() {
	local d f
	d=$(mktemp -d "$T/kernel.XXXXXX") || return 125
	for f in /proc/sys/kernel/*; do
		[[ -f $f && -r $f ]] && cat "$f" >"$d/${f##*/}" 2>/dev/null
	done
	printf '%s\n' "$2" >"$d/$1"
	chmod -R a+rX "$d"
	local WRAP=(unshare -m --propagation private bash -c
		'mount --bind "$1" /proc/sys/kernel || exit 125; shift; exec "$@"' _ "$d")
	"${@:3}"
}

echo "# user namespaces closed by a sysctl: the fix sets it and keeps it"
check "control: as the user, the userns check passes on this machine" lab_match '^ok +userns +user namespaces are available' doctor u
check "control: ... and as root" lab_match '^ok +userns ' doctor root
MAXU=/proc/sys/user/max_user_namespaces
check "as the user, user.max_user_namespaces = 0 fails the userns check" lab_match \
	'^FAIL userns +user namespaces are disabled \(user.max_user_namespaces = 0\)' fake_sysctl "$MAXU" 0 doctor u
check "... the fix sets it now through sudo" lab_match \
	'^ +fix: sudo sysctl -w user.max_user_namespaces=15000; ' fake_sysctl "$MAXU" 0 doctor u
check "... and keeps it: the /etc/sysctl.d file and its exact line, pasteable (no backslash)" lab_match \
	"to keep it after a reboot, /etc/sysctl.d/60-warden-user.max_user_namespaces.conf holding the one line \`user.max_user_namespaces = 15000\`: echo 'user.max_user_namespaces = 15000' \| sudo tee /etc/sysctl.d/60-warden-user.max_user_namespaces.conf\$" \
	fake_sysctl "$MAXU" 0 doctor u
# pasted SED-SCRIPT FUNCTION ARGS...: the shell command sed picks out of FUNCTION's output, run
# by bash as a person would paste it (only the part before `| sudo tee`: nothing is written)
pasted() {
	local cmd
	cmd=$("${@:2}" | sed -n "$1" | head -1)
	[[ -n $cmd ]] || { echo "no command found"; return 2; }
	bash -c "$cmd"
}
# joined CMD...: CMD's output lines joined by "|"
joined() {
	local out
	out=$("$@") || return $?
	paste -sd '|' <<<"$out"
}
check_eq "... that line, pasted, is what the file must hold" "user.max_user_namespaces = 15000" \
	pasted "s/.*holding the one line .*: \(echo '[^']*'\) | sudo tee .*/\1/p" fake_sysctl "$MAXU" 0 doctor u
check "as root, the same fix without sudo" lab_match \
	"^ +fix: sysctl -w user.max_user_namespaces=15000; .*echo 'user.max_user_namespaces = 15000' \| tee /etc/sysctl.d/" \
	fake_sysctl "$MAXU" 0 doctor root
check "kernel.unprivileged_userns_clone = 0 (Debian's older kernels): the fix with sudo and its file" lab_match \
	"^ +fix: sudo sysctl -w kernel.unprivileged_userns_clone=1; .*holding the one line \`kernel.unprivileged_userns_clone = 1\`" \
	fake_kernel unprivileged_userns_clone 0 doctor u
check "control: the copied /proc/sys/kernel alone changes nothing (userns ok)" lab_match '^ok +userns ' \
	fake_kernel unprivileged_userns_clone 1 doctor u
check "AppArmor's restriction as root: a warning whose sysctl fix is kept in /etc/sysctl.d" lab_match \
	"^ +fix: allow bwrap in AppArmor .*, or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0; to keep it after a reboot, /etc/sysctl.d/60-warden-kernel.apparmor_restrict_unprivileged_userns.conf" \
	fake_kernel apparmor_restrict_unprivileged_userns 1 doctor root
check "AppArmor's restriction as the user: the profile written through sudo" lab_match \
	"^ +fix: once: \\{ echo 'abi <abi/4.0>,'; .*; echo '\\}'; \\} \\| sudo tee /etc/apparmor.d/warden; sudo apparmor_parser -r /etc/apparmor.d/warden" \
	fake_kernel apparmor_restrict_unprivileged_userns 1 doctor u
check_eq "... whose profile, pasted, is the five lines AppArmor reads" \
	"abi <abi/4.0>,|include <tunables/global>|profile warden $(realpath "$W") flags=(unconfined) {|  userns,|}" \
	joined pasted "s/.*once: \({.*}\) | sudo tee.*/\1/p" \
	fake_kernel apparmor_restrict_unprivileged_userns 1 doctor u

echo "# bubblewrap that cannot start: the userns check is above, the probe printed"
# before A B WHO VAR=VALUE...: doctor's line matching the ERE A comes before the one matching B
before() {
	local out a b
	out=$(doctor "${@:3}") || return 2
	a=$(grep -nE -m1 -- "$1" <<<"$out" | cut -d: -f1)
	b=$(grep -nE -m1 -- "$2" <<<"$out" | cut -d: -f1)
	[[ -n $a && -n $b ]] && ((a < b))
}
check "as the user with WARDEN_BWRAP=/bin/false: the bwrap check fails" lab_match \
	'^FAIL bwrap +bubblewrap could not start a sandbox \(exit 1\)' doctor u WARDEN_BWRAP=/bin/false
check "... its fix points at the userns check above" lab_match \
	'^ +fix: if the userns check above failed, fix that first; else run the probe by hand to see bubblewrap.s message: /bin/false --unshare-user ' \
	doctor u WARDEN_BWRAP=/bin/false
check "... which is above: printed before the bwrap check" before '^[a-zA-Z]+ +userns ' '^FAIL bwrap ' \
	u WARDEN_BWRAP=/bin/false
check "... and the network check's fix says the same (above)" lab_match \
	'^ +fix: see the userns and bwrap checks above$' doctor u WARDEN_BWRAP=/bin/false
# the probe as printed, with the real bwrap in its place, as the user: it starts
probe=$(doctor u WARDEN_BWRAP=/bin/false | sed -n 's/^ *fix: .*to see bubblewrap.s message: \/bin\/false //p' | head -1)
check "the printed probe is a command line" test -n "$probe"
# shellcheck disable=SC2086 # the probe is words, as printed
check "... that runs as printed with /usr/bin/bwrap (as the user)" in_host_user /usr/bin/bwrap $probe
check "as root (the sandbox user runs it): the fix says as whom to run the probe" lab_match \
	'^ +fix: if the userns check above failed, fix that first; else run the probe by hand as the sandbox user [a-z0-9_-]+ \(uid [0-9]+\) to see' \
	doctor root WARDEN_BWRAP=/bin/false

echo "# WARDEN_GATEWAY_BIN naming nothing usable"
install -m 0644 "$GW" "$T/not-executable"
check "control: with the build's gateway, the user's gateway check passes" lab_match '^ok +gateway ' doctor u
for who in u root; do
	check "doctor ($who), WARDEN_GATEWAY_BIN=/nonexistent: says the path does not exist" lab_match \
		'^FAIL gateway .*WARDEN_GATEWAY_BIN=/nonexistent: No such file or directory$' \
		doctor "$who" WARDEN_GATEWAY_BIN=/nonexistent
	check "... and the fix is to point it at warden-gateway or unset it" lab_match \
		'^ +fix: point WARDEN_GATEWAY_BIN at the warden-gateway program, or unset it' \
		doctor "$who" WARDEN_GATEWAY_BIN=/nonexistent
	check "doctor ($who), a file that is not executable: says so" lab_match \
		"^FAIL gateway .*WARDEN_GATEWAY_BIN=$T/not-executable is not an executable file\$" \
		doctor "$who" WARDEN_GATEWAY_BIN="$T/not-executable"
	check "... never \"set WARDEN_GATEWAY_BIN\"" lab_no_match "set WARDEN_GATEWAY_BIN" \
		doctor "$who" WARDEN_GATEWAY_BIN=/nonexistent
done

# run_out WHO [VAR=VALUE...] -- ARGS: `warden run ARGS` as the user (u) or root, its exit status
# on the first line, then its stderr
run_out() {
	local who=$1 rc=0 out
	shift
	local vars=()
	while [[ $1 != -- ]]; do vars+=("$1"); shift; done
	shift
	if [[ $who == u ]]; then
		out=$(in_host_user env "${vars[@]}" "$W" run --audit-log "$A" "$@" 2>&1 >/dev/null) || rc=$?
	else
		out=$(in_host env "${vars[@]}" "$W" run --audit-log "$T/root-audit.jsonl" "$@" 2>&1 >/dev/null) || rc=$?
	fi
	printf '%s\n%s\n' "$rc" "$out"
}
for who in u root; do
	check "control: run ($who) with the build's gateway: the program runs" lab_match '^0$' run_out "$who" -- -q -- true
	check "run ($who), WARDEN_GATEWAY_BIN=/nonexistent: 125" lab_match '^125$' \
		run_out "$who" WARDEN_GATEWAY_BIN=/nonexistent -- -q -- true
	check "... the path does not exist" lab_match \
		'^warden run: gateway: embedded gateway: WARDEN_GATEWAY_BIN=/nonexistent: No such file or directory$' \
		run_out "$who" WARDEN_GATEWAY_BIN=/nonexistent -- -q -- true
	check "... the fix names the variable's remedy" lab_match \
		'^  fix: point WARDEN_GATEWAY_BIN at the warden-gateway program, or unset it' \
		run_out "$who" WARDEN_GATEWAY_BIN=/nonexistent -- -q -- true
	check "... and points at no gateway message (none was printed) nor says \"set WARDEN_GATEWAY_BIN\"" \
		lab_no_match "message above|set WARDEN_GATEWAY_BIN" run_out "$who" WARDEN_GATEWAY_BIN=/nonexistent -- -q -- true
done
# a "gateway" that starts and says why it stops: its words are quoted, and the fix says where
cat >"$T/talking-gw" <<'EOF'
#!/bin/sh
echo "warden-gateway: the test's gateway refuses to start" >&2
exit 1
EOF
cat >"$T/silent-gw" <<'EOF'
#!/bin/sh
exit 1
EOF
chmod 0755 "$T/talking-gw" "$T/silent-gw"
check "run (root), a gateway that exits saying why: its words end the error line" lab_match \
	"^warden run: gateway: embedded gateway: the embedded gateway exited at start: warden-gateway: the test's gateway refuses to start\$" \
	run_out root WARDEN_GATEWAY_BIN="$T/talking-gw" -- -q -- true
check "... and the fix says so" lab_match "^  fix: the gateway's own message ends the line above" \
	run_out root WARDEN_GATEWAY_BIN="$T/talking-gw" -- -q -- true
check "run (root), a gateway that exits without a word: says so" lab_match "exited at start without a word" \
	run_out root WARDEN_GATEWAY_BIN="$T/silent-gw" -- -q -- true
check "... and points at no message" lab_no_match "message" run_out root WARDEN_GATEWAY_BIN="$T/silent-gw" -- -q -- true

echo "# a grant the program may not read: sudo only where it changes who the program is"
install -m 0600 -o root -g root /dev/null "$T/root-secret"
# the sandbox user (root's direct run) may pass through the test's folder to the grants
chmod 0755 "$T"
install -m 0600 -o "$LAB_USER_UID" -g "$LAB_USER_GID" /dev/null "$T/user-secret"
install -m 0644 -o "$LAB_USER_UID" -g "$LAB_USER_GID" /dev/null "$T/open"
for f in root-secret user-secret open; do
	printf 'version: 1\nfilesystem:\n  read: ["%s"]\n' "$T/$f" >"$T/$f.yaml"
	chown "$LAB_USER_UID" "$T/$f.yaml"
done
check "control: the user's run of a readable grant runs" lab_match '^0$' run_out u -- -q -p "$T/open.yaml" -- true
check "the user's run of root's 0600 file: 125" lab_match '^125$' run_out u -- -q -p "$T/root-secret.yaml" -- true
check "... not readable by you, whom the program runs as" lab_match \
	"read grant $T/root-secret is not readable by you \\(uid $LAB_USER_UID\\), whom the program runs as" \
	run_out u -- -q -p "$T/root-secret.yaml" -- true
check "... the fix is for the user: make it readable by you" lab_match \
	'^  fix: make it readable by you \(chmod, or an ACL: see docs/run.md\), or drop the grant' \
	run_out u -- -q -p "$T/root-secret.yaml" -- true
check "... and never sudo" lab_no_match sudo run_out u -- -q -p "$T/root-secret.yaml" -- true
check "control: root's direct run (the program as the sandbox user) of the user's 0600 file is told sudo" lab_match \
	'^  fix: .*or run warden through sudo so the program runs as you' \
	run_out root -- -q -p "$T/user-secret.yaml" -- true
check "root's run through sudo (the program as the user already) of root's 0600 file: 125" lab_match '^125$' \
	run_out root SUDO_UID="$LAB_USER_UID" SUDO_GID="$LAB_USER_GID" -- -q -p "$T/root-secret.yaml" -- true
check "... and not told to run warden through sudo" lab_no_match "through sudo" \
	run_out root SUDO_UID="$LAB_USER_UID" SUDO_GID="$LAB_USER_GID" -- -q -p "$T/root-secret.yaml" -- true
check "... but to make it so for the user" lab_match "^  fix: make it so for that user \\(chown, chmod, or an ACL" \
	run_out root SUDO_UID="$LAB_USER_UID" SUDO_GID="$LAB_USER_GID" -- -q -p "$T/root-secret.yaml" -- true
lab_finish
