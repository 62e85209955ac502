#!/bin/bash
# tests/vm/guest.sh - the checks that run inside the Debian 12 VM (tests/vm/run copies this
# file and the warden .deb onto the test disk; the image's warden-vm-test.service runs it at
# boot and powers off after). It checks a real systemd host: systemd as PID 1, the unified
# cgroup v2 hierarchy, the package's postinst, the unit (Type=notify, its hardening's
# `systemd-analyze security` figure), `warden doctor`, the journal, a rootless `warden run`
# and the stop. Every line it prints starts with "VM: " (the serial console also carries the
# kernel's and systemd's lines); the last is "VM: END". A negative check stands beside the
# same probe where it must succeed; a probe that cannot run counts as a failure.
# Usage (in the VM, as root): guest.sh TEST_DISK_DIR
set -u
DISK=${1:-/mnt/warden-test}
PASSED=0
FAILED=0
WORK=$(mktemp -d /tmp/warden-vm-XXXXXX)
T0=$(cut -d' ' -f1 /proc/uptime)

say() { echo "VM: $*"; }
# show FILE: the first lines of FILE, indented, after a failure
show() { sed -n '1,25s/^/VM:     /p' "$1"; }
ok() { PASSED=$((PASSED + 1)); say "ok - $1"; }
fail() { FAILED=$((FAILED + 1)); say "FAIL - $1"; }
# check NAME CMD...: CMD succeeds
check()
{
	local name=$1
	shift
	if "$@" >"$WORK/out" 2>&1; then ok "$name"; else fail "$name"; show "$WORK/out"; fi
}
# check_fails NAME CMD...: CMD runs and fails (exit 1..125: 126/127 mean it could not run)
check_fails()
{
	local name=$1 rc
	shift
	"$@" >"$WORK/out" 2>&1
	rc=$?
	if ((rc == 0)); then
		fail "$name (it succeeded)"
		show "$WORK/out"
	elif ((rc >= 126)); then
		fail "$name (ERROR: the probe could not run, exit $rc)"
		show "$WORK/out"
	else
		ok "$name"
	fi
}
# check_eq NAME WANT CMD...: CMD succeeds and prints exactly WANT
check_eq()
{
	local name=$1 want=$2 got
	shift 2
	if got=$("$@" 2>"$WORK/err") && [[ $got == "$want" ]]; then
		ok "$name"
	else
		fail "$name (want '$want', got '$got')"
		show "$WORK/err"
	fi
}

say "guest.sh: kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print $2 " kB"}' /proc/meminfo)"

# --- the host: systemd, cgroup v2 ----------------------------------------------------------
check_eq "PID 1 is systemd" /usr/lib/systemd/systemd readlink /proc/1/exe
state=$(timeout 300 systemctl is-system-running --wait 2>&1)
say "figure system state: $state"
case $state in
running | degraded) ok "the system reached running/degraded ($state)" ;;
*) fail "the system reached running/degraded (it is '$state')" ;;
esac
if [[ $state == degraded ]]; then
	systemctl --failed --no-legend --plain | sed 's/^/VM:     failed unit: /'
fi
check_eq "/sys/fs/cgroup is cgroup2 (unified)" cgroup2fs stat -fc %T /sys/fs/cgroup
check_fails "... and there is no cgroup v1 hierarchy mounted" grep -q ' cgroup ' /proc/mounts
check "... (control: the cgroup2 mount is in /proc/mounts)" grep -q ' cgroup2 ' /proc/mounts
check_eq "systemd runs with a delegated-capable controller set (memory pids)" "memory pids" \
	bash -c 'tr " " "\n" </sys/fs/cgroup/cgroup.controllers | grep -xE "memory|pids" | sort | xargs'

# --- the package ---------------------------------------------------------------------------
DEB=$(ls "$DISK"/warden_*.deb 2>/dev/null | head -n1)
[[ -n $DEB ]] || fail "the test disk holds warden_*.deb (ERROR: none in $DISK)"
cp "$DEB" "$WORK/" && DEB=$WORK/$(basename "$DEB")
chmod 0755 "$WORK"
chmod 0644 "$DEB"
check_fails "before the install there is no warden-gateway unit" systemctl cat warden-gateway.service
check "apt-get install ./warden_*.deb (postinst for real, no network)" \
	env DEBIAN_FRONTEND=noninteractive apt-get -y -q --no-install-recommends install "$DEB"
check_eq "dpkg says it is installed" "install ok installed" dpkg-query -W -f='${Status}' warden
check "... and now the unit is there (control)" systemctl cat warden-gateway.service
for g in warden warden-audit; do check "postinst made group $g" getent group "$g"; done
check "postinst made user warden-gateway" getent passwd warden-gateway
check_eq "/var/log/warden is 0750 root:warden-audit" "750 root:warden-audit" stat -c '%a %U:%G' /var/log/warden

# --- the service ---------------------------------------------------------------------------
check_fails "before the start the journal has no 'serving:' line of the gateway" \
	bash -c 'journalctl -q -u warden-gateway.service -o cat | grep -q "serving: transparent"'
check_fails "before the start warden-gateway is not active" systemctl is-active --quiet warden-gateway
t=$(cut -d' ' -f1 /proc/uptime)
check "systemctl enable --now warden-gateway" systemctl enable --now warden-gateway.service
say "figure gateway start: $(awk -v a="$t" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN {printf "%.1f s", b - a}')"
check_eq "systemctl is-active warden-gateway" active systemctl is-active warden-gateway
check_eq "... it is Type=notify" notify systemctl show -P Type warden-gateway
check_eq "... and systemd saw READY=1 (status text from sd_notify)" serving systemctl show -P StatusText warden-gateway
check_eq "... no restart happened" 0 systemctl show -P NRestarts warden-gateway
check_eq "... enabled for multi-user.target" enabled systemctl is-enabled warden-gateway
check "the control socket is there" test -S /run/warden/gateway.sock
check "journalctl -u warden-gateway has the gateway's start message" \
	bash -c 'journalctl -q -u warden-gateway.service -o cat | grep "serving: transparent"'
journalctl -q -u warden-gateway.service -o cat | grep "serving: transparent" | head -n1 | sed 's/^/VM:     /'
systemd-analyze security warden-gateway.service >"$WORK/security" 2>&1
exposure=$(grep -o 'Overall exposure level for warden-gateway.service: .*' "$WORK/security")
say "figure systemd-analyze security: ${exposure:-none}"
check "systemd-analyze security prints the unit's exposure" test -n "$exposure"

# --- warden doctor -------------------------------------------------------------------------
/usr/bin/warden doctor >"$WORK/doctor" 2>&1
rc=$?
sed 's/^/VM:     doctor: /' "$WORK/doctor"
if ((rc == 0)); then ok "warden doctor runs (exit 0)"; else fail "warden doctor runs (exit $rc)"; fi

# --- a user's rootless run -----------------------------------------------------------------
POLICY=/usr/share/doc/warden/examples/minimal.yaml
useradd -m -s /bin/bash wdvmuser
check_fails "the user is not in group warden (so the run is rootless)" \
	bash -c 'id -nG wdvmuser | tr " " "\n" | grep -qx warden'
check "loginctl enable-linger wdvmuser" loginctl enable-linger wdvmuser
uid=$(id -u wdvmuser)
check "the user's systemd manager runs (user@$uid.service)" \
	timeout 120 bash -c 'until systemctl is-active --quiet user@$0.service; do sleep 1; done' "$uid"
asuser() {
	runuser -u wdvmuser -- env XDG_RUNTIME_DIR=/run/user/$uid \
		DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$uid/bus "$@"
}
export uid
export -f asuser
check "the user's manager answers (systemctl --user is-system-running)" \
	bash -c 'asuser systemctl --user is-system-running --wait | grep -xE "running|degraded"'
check "as the user: warden run -p minimal.yaml -- true" asuser /usr/bin/warden run -q -p "$POLICY" -- /bin/true
check_fails "as the user: warden run -p minimal.yaml -- false (its exit status comes through)" \
	asuser /usr/bin/warden run -q -p "$POLICY" -- /bin/false

# --- limits: rootless (the user's manager delegates) and daemon mode (the gateway's cgroup) --
# a memory hog is killed by the kernel at memory_mb (137, a limit.memory event in the run's
# audit); the control: the same policy runs `true` (0), so the policy itself is not the cause
printf 'version: 1\nlimits:\n  memory_mb: 64\n  pids: 32\n  timeout_s: 120\n' >"$WORK/limits.yaml"
chmod 0644 "$WORK/limits.yaml"
useradd -m -s /bin/bash -G warden wdvmmember
check "the member user is in group warden (so its run is daemon mode)" \
	bash -c 'id -nG wdvmmember | tr " " "\n" | grep -qx warden'
asmember() { runuser -u wdvmmember -- "$@"; }
export -f asmember
# limits_of WHO USER MODE: WHO (asuser/asmember) runs true, then a memory hog, under limits.yaml
limits_of()
{
	local who=$1 label=$2 mode=$3 log rc
	log=$(getent passwd "$label" | cut -d: -f6)/audit.jsonl
	check "$label: warden run -p limits.yaml -- true (control)" \
		"$who" /usr/bin/warden run -q --audit-log "$log" -p "$WORK/limits.yaml" -- /bin/true
	check_eq "$label: the run is $mode mode (its run.start)" "\"mode\":\"$mode\"" \
		bash -c 'grep "\"action\":\"run.start\"" "$0" | tail -n1 | grep -o "\"mode\":\"[a-z]*\""' "$log"
	say "figure $label isolation: $(grep '"action":"run.start"' "$log" | tail -n1 | grep -o '"isolation":"[^"]*"')"
	check_fails "$label: before the hog its audit has no limit.memory event" \
		grep -q '"action":"limit.memory"' "$log"
	"$who" /usr/bin/warden run -q --audit-log "$log" -p "$WORK/limits.yaml" -- sh -c 'x=a; while :; do x=$x$x; done' >"$WORK/out" 2>&1
	rc=$?
	if ((rc == 137)); then
		ok "$label: a memory hog is killed at memory_mb: 64 (137)"
	else
		fail "$label: a memory hog is killed at memory_mb: 64 (exit $rc, want 137)"
		show "$WORK/out"
	fi
	check "$label: ... with a limit.memory event in the run's audit" grep -q '"action":"limit.memory"' "$log"
	grep -h '"action":"limit.memory"' "$log" /var/log/warden/audit.jsonl | grep "\"uid\":$(id -u "$label")" |
		tail -n1 | grep -o '"reason":"[^"]*"' | sed 's/^/VM:     limit.memory: /'
	grep -h '"action":"run.end"' "$log" | tail -n1 | cut -c1-400 | sed 's/^/VM:     its run.end: /'
}
limits_of asuser wdvmuser rootless
limits_of asmember wdvmmember daemon

# --- the stop ------------------------------------------------------------------------------
check "systemctl stop warden-gateway" systemctl stop warden-gateway.service
check_fails "... and it is not active any more" systemctl is-active --quiet warden-gateway
check_fails "... its control socket is gone" test -e /run/warden/gateway.sock

say "figure test time: $(awk -v a="$T0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN {printf "%.0f s", b - a}')"
say "figure boot: $(systemd-analyze time 2>/dev/null | head -n1)"
say "$PASSED passed, $FAILED failed"
rm -rf "$WORK"
say END
