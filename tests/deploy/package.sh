#!/usr/bin/env bash
# package.sh - the .deb an operator installs (deploy/package.cmake): built with cpack from this
# (release) build, installed with `apt-get install ./warden_*.deb`, used from the installed
# paths (warden --version, warden doctor, the man pages gzipped, the shell completions, the
# copyright file, the installed warden-gateway serving in the lab with its worker from
# /usr/libexec/warden as the package's user), then `apt-get purge`d: every
# file dpkg -L listed is gone, and so are the package's folders, user and group `warden`; only
# the central audit log (with the group warden-audit that may read it) is left, and then this
# test removes those too. It changes the machine (dpkg, /etc, /usr, users): everything it adds
# is taken away again by an EXIT trap, also when it fails midway, and it refuses to run
# (skip) where a warden package or an installed copy is already present.
# Usage: package.sh BUILD_DIR        (ctest label `package`; release builds only)
set -u
BUILD=$1
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/tests/lab/lib.sh"
lab_require_root
for tool in cpack apt-get dpkg dpkg-query dpkg-deb getent groupdel userdel stat; do
	command -v "$tool" >/dev/null || { echo "FAIL - missing $tool (test error)"; echo "0 passed, 1 failed"; exit 2; }
done
if dpkg-query -W warden >/dev/null 2>&1; then
	echo "SKIP: a warden package is known to dpkg on this machine; not touching it"
	exit 77
fi
PATHS=(/usr/bin/warden /usr/sbin/warden-gateway /usr/libexec/warden /etc/warden /var/lib/warden
	/usr/share/doc/warden /usr/lib/systemd/system/warden-gateway.service
	/lib/systemd/system/warden-gateway.service)
for p in "${PATHS[@]}"; do
	if [[ -e $p ]]; then
		echo "SKIP: $p exists (an installed Warden?); not touching it"
		exit 77
	fi
done
# what exists before, to take away exactly what the test added
had_group() { getent group "$1" >/dev/null; }
had_user() { getent passwd "$1" >/dev/null; }
declare -A BEFORE
for g in warden warden-audit warden-gateway; do had_group "$g" && BEFORE[g:$g]=1; done
had_user warden-gateway && BEFORE[u:warden-gateway]=1
[[ -e /var/log/warden ]] && BEFORE[logdir]=$(stat -c '%u:%g %a' /var/log/warden)
[[ -e /var/log/warden/audit.jsonl ]] && BEFORE[log]=1

# A group `warden` of the operator's own (or another test's) must survive the purge: when
# there is none, the test makes one, as an operator who set it up before installing would
if [[ -z ${BEFORE[g:warden]:-} ]]; then
	groupadd --system warden || { echo "FAIL - groupadd warden (test error)"; exit 2; }
fi
TMP=$(mktemp -d /tmp/wd-package-XXXXXX)
restore() {
	if dpkg-query -W warden >/dev/null 2>&1; then
		echo "# cleanup: purging the warden package"
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq warden >/dev/null 2>&1 ||
			dpkg --purge warden >/dev/null 2>&1 || echo "# cleanup: could not purge warden"
	fi
	for p in "${PATHS[@]}"; do rm -rf "$p"; done
	if [[ -z ${BEFORE[log]:-} ]]; then rm -f /var/log/warden/audit.jsonl; fi
	if [[ -z ${BEFORE[logdir]:-} ]]; then
		rmdir /var/log/warden 2>/dev/null || true
	elif [[ -d /var/log/warden ]]; then
		chown "${BEFORE[logdir]% *}" /var/log/warden
		chmod "${BEFORE[logdir]#* }" /var/log/warden
	fi
	[[ -n ${BEFORE[u:warden-gateway]:-} ]] || ! had_user warden-gateway || userdel warden-gateway
	for g in warden warden-gateway warden-audit; do
		[[ -n ${BEFORE[g:$g]:-} ]] || ! had_group "$g" || groupdel "$g"
	done
	rm -rf "$TMP"
}
lab_on_exit restore
lab_up

# --- build ---------------------------------------------------------------------------------
check "cpack builds the .deb" bash -c 'cd "$0" && cpack -G DEB -B "$1" >"$1/cpack.log" 2>&1 || { cat "$1/cpack.log"; exit 1; }' "$BUILD" "$TMP"
DEB=$(ls "$TMP"/warden_*.deb 2>/dev/null | head -n1)
[[ -n $DEB ]] || { echo "FAIL - no warden_*.deb in $TMP"; lab_finish; }
field() { dpkg-deb -f "$DEB" "$1"; }
check_eq "the package is named warden" warden field Package
for lib in libc6 libyaml-0-2 libjansson4 libnftnl11 libmnl0 libnl-3-200 libnl-route-3-200 libc-ares2 libseccomp2 libssl3; do
	check "Depends names $lib (from the linked libraries, dpkg-shlibdeps)" lab_match "(^|, )$lib( |,|$)" field Depends
done
check "Depends names bubblewrap and nftables (what it runs)" lab_match "bubblewrap.*nftables" field Depends
check "the .deb holds the worker in /usr/libexec/warden" lab_match '^\./usr/libexec/warden/warden-gateway-worker$' \
	bash -c 'dpkg-deb --fsys-tarfile "$0" | tar -t' "$DEB"
check "the .deb holds the docker backend's init in /usr/libexec/warden" \
	lab_match '^\./usr/libexec/warden/warden-docker-init$' \
	bash -c 'dpkg-deb --fsys-tarfile "$0" | tar -t' "$DEB"
# Debian's layout (issue 27): man pages gzip -9n'd (no name, no time stamp in the header), the
# shell completions, the copyright file, one gateway.yaml (the conffile)
debfiles() { dpkg-deb --fsys-tarfile "$DEB" | tar -t; }
for m in man1/warden.1 man5/warden-policy.5 man8/warden-gateway.8; do
	check "the .deb holds $m.gz" lab_match "^\./usr/share/man/$m\.gz\$" debfiles
done
check_eq "... and no man page uncompressed" "" bash -c 'dpkg-deb --fsys-tarfile "$0" | tar -t | grep -E "/share/man/.*\.[0-9]\$"; true' "$DEB"
# gzip_n FILE: FILE (in the .deb) is gzip with no file name (FLG bit 3) and MTIME 0, as -n writes
gzip_n() {
	local h
	h=$(dpkg-deb --fsys-tarfile "$DEB" | tar -xO "$1" | head -c 8 | od -An -tx1 | tr -d ' \n')
	[[ $h == 1f8b08* ]] || { echo "not gzip: $h"; return 1; }
	(( (0x${h:6:2} & 0x08) == 0 )) && [[ ${h:8:8} == 00000000 ]] || { echo "header $h"; return 1; }
}
check "warden.1.gz is gzip -n (no name, no time stamp)" gzip_n ./usr/share/man/man1/warden.1.gz
for f in bash-completion/completions/warden zsh/vendor-completions/_warden \
	fish/vendor_completions.d/warden.fish doc/warden/copyright; do
	check "the .deb holds /usr/share/$f" lab_match "^\./usr/share/$f\$" debfiles
done
check_eq "the .deb holds one gateway.yaml: /etc/warden/gateway.yaml" "./etc/warden/gateway.yaml" \
	bash -c 'dpkg-deb --fsys-tarfile "$0" | tar -t | grep "/gateway.yaml$"' "$DEB"
# what the package holds, and which of those paths exist before it is installed (folders as
# /usr/bin do): after the purge, none of the others may be left
dpkg-deb --fsys-tarfile "$DEB" | tar -t | sed -e 's|^\./|/|' -e 's|/$||' | grep -v '^/\?$' >"$TMP/paths"
while read -r p; do [[ -e $p ]] && echo "$p"; done <"$TMP/paths" >"$TMP/existed"
check "the package's paths are listed" test -s "$TMP/paths"

# --- install -------------------------------------------------------------------------------
APT=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 -y -qq --no-install-recommends)
check "apt-get install ./warden_*.deb" bash -c 'cd "$0" && "${@:2}" install "./$(basename "$1")" >"$0/apt.log" 2>&1 || { cat "$0/apt.log"; exit 1; }' \
	"$TMP" "$DEB" "${APT[@]}"
check_eq "dpkg says it is installed" "install ok installed" dpkg-query -W -f='${Status}' warden
dpkg -L warden 2>/dev/null | grep -v '^/\.$' | sort >"$TMP/files"
check_eq "dpkg -L lists what the .deb holds" "" bash -c 'comm -3 "$0" <(sort "$1")' "$TMP/files" "$TMP/paths"
VERSION=$(field Version)
check_eq "/usr/bin/warden --version" "warden $VERSION" /usr/bin/warden --version
check_eq "/usr/sbin/warden-gateway --version" "warden-gateway $VERSION" /usr/sbin/warden-gateway --version
check "the worker is installed" test -x /usr/libexec/warden/warden-gateway-worker
for m in man1/warden.1 man5/warden-policy.5 man8/warden-gateway.8; do
	check "man page $m.gz" test -s "/usr/share/man/$m.gz"
done
check "... and warden.1.gz reads as the man page" lab_match '^\.TH WARDEN 1' zcat /usr/share/man/man1/warden.1.gz
check_eq "the installed bash completion loads" "complete -o bashdefault -o default -F _warden warden" \
	bash -c 'source /usr/share/bash-completion/completions/warden && complete -p warden'
check "/usr/share/doc/warden/copyright names the licence" grep -qx "License: MIT" /usr/share/doc/warden/copyright
check "the unit is installed" test -s /usr/lib/systemd/system/warden-gateway.service
check "the installed unit verifies (its binaries are the installed ones)" bash -c \
	'out=$(systemd-analyze verify --man=no "$0" 2>&1) && [[ -z $out ]] || { echo "$out"; exit 1; }' \
	/usr/lib/systemd/system/warden-gateway.service
check "/etc/warden/gateway.yaml is a conffile" lab_match '^ /etc/warden/gateway.yaml [0-9a-f]{32}$' \
	dpkg-query -W -f='${Conffiles}\n' warden
check "the shipped gateway.yaml is a valid config" /usr/bin/warden nft render --config /etc/warden/gateway.yaml
for g in warden warden-audit; do check "group $g exists" getent group "$g"; done
check "the postinst lists what it made (warden-audit and the user, not the group warden that was there)" \
	bash -c 'grep -qx "group warden-audit" "$0" && grep -qx "user warden-gateway" "$0" && ! grep -qx "group warden" "$0"' \
	/var/lib/warden/package-created
check "user warden-gateway exists, with no shell" lab_match ':/nonexistent:/usr/sbin/nologin$' getent passwd warden-gateway
check_fails "... and no home folder was made" test -e /nonexistent
check_eq "/var/log/warden is 0750 root:warden-audit" "750 root:warden-audit" stat -c '%a %U:%G' /var/log/warden
check_eq "the central log is 0640 root:warden-audit" "640 root:warden-audit" stat -c '%a %U:%G' /var/log/warden/audit.jsonl

# warden doctor from the installed path, in the lab's host namespace (it checks the network in
# throwaway namespaces of its own); its audit check writes to a file of the test
doctor() {
	in_host env HOME="$TMP" WARDEN_AUDIT_LOG="$TMP/doctor.jsonl" /usr/bin/warden doctor
}
check "warden doctor (installed) finds no problem" doctor
check "... and names the installed gateway" lab_match '/usr/sbin/warden-gateway' doctor

# the installed gateway serves in the lab: its worker from /usr/libexec/warden, as the
# package's user; the audit log of the test is root:warden-audit 0640, as the central one
cat >"$TMP/gateway.yaml" <<EOF
version: 1
user: warden-gateway
control: {path: "$TMP/gw.sock"}
audit: {path: "$TMP/gw-audit.jsonl"}
resolvers: ["$LAB_DNS_V4"]
EOF
install -m 0640 -g warden-audit /dev/null "$TMP/gw-audit.jsonl"
lab_spawn host installed-gw /usr/sbin/warden-gateway --config "$TMP/gateway.yaml"
GWPID=$LAB_SPAWNED_PID
check "the installed warden-gateway starts" lab_wait 10 test -S "$TMP/gw.sock"
check "... and answers its control socket" in_host /usr/sbin/warden-gateway ctl --socket "$TMP/gw.sock" stats
WPID=$(pgrep -P "$GWPID" | head -n1)
check_eq "its worker is /usr/libexec/warden/warden-gateway-worker" /usr/libexec/warden/warden-gateway-worker \
	readlink "/proc/${WPID:-0}/exe"
check_eq "... running as warden-gateway" "$(id -u warden-gateway)" stat -c %u "/proc/${WPID:-0}"
check "... holding the audit log it was handed" bash -c 'ls -l /proc/$0/fd | grep -q "$1"' "${WPID:-0}" "$TMP/gw-audit.jsonl"
lab_stop host installed-gw

# --- purge ---------------------------------------------------------------------------------
# the central log holds a record now (as a gateway would have written): purge must keep it
printf '%s\n' '{"ts":"2026-12-01T00:00:00.000000Z","run":"","type":"run","action":"run.start","allowed":true,"resource":"x","reason":""}' \
	>>/var/log/warden/audit.jsonl
check "apt-get purge -y warden" bash -c '"$@" purge warden >"$0/purge.log" 2>&1 || { cat "$0/purge.log"; exit 1; }' \
	"$TMP" "${APT[@]}"
check_fails "dpkg no longer knows warden" dpkg-query -W warden
left() {
	local f n=0
	while read -r f; do
		[[ -e $f || -L $f ]] || continue
		grep -qxF -- "$f" "$TMP/existed" && continue # it was there before (/usr/bin, ...)
		echo "left: $f"
		n=$((n + 1))
	done <"$TMP/files"
	((n == 0))
}
check "nothing dpkg -L listed is left (but what existed before)" left
for p in /etc/warden /var/lib/warden /usr/libexec/warden /usr/share/doc/warden; do
	check_fails "$p is gone" test -e "$p"
done
check "control: test -e sees what exists" test -e /usr/bin
check_fails --denied 2 "user warden-gateway (the package made it) is gone" getent passwd warden-gateway
check_fails --denied 2 "... and its group" getent group warden-gateway
check "group warden, there before the package, is kept" getent group warden
check "the central audit log is kept" test -s /var/log/warden/audit.jsonl
check "... and the group that may read it" getent group warden-audit
lab_finish
