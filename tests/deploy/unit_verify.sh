#!/usr/bin/env bash
# unit_verify.sh - deploy/warden-gateway.service passes `systemd-analyze verify` with no
# complaint at all (verify exits 0 on unknown keys and bad values and only prints them, so
# any output is a failure), and its hardening keeps `systemd-analyze security` at or below an
# exposure of 5.0. The unit's binaries are pointed at this build's (verify checks that they
# exist), and its gateway finds its worker image (`warden-gateway check-worker`). No systemd
# needs to run: none can here (docs/deploy.md, "Checking the unit"). A checker that would pass
# a broken unit is a test error.
# Usage: unit_verify.sh UNIT BUILD_DIR
set -u
unit=$1 build=$2
passed=0 failed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
fail() { echo "FAIL - $*"; failed=$((failed + 1)); }
error() { echo "FAIL - $* (test error)"; echo "$passed passed, $((failed + 1)) failed"; exit 2; }
command -v systemd-analyze >/dev/null || error "no systemd-analyze (the systemd package, deploy/debian-packages)"
[[ -r $unit ]] || error "no unit $unit"
for b in "$build/gateway/warden-gateway" "$build/launcher/warden"; do
	[[ -x $b ]] || error "$b is not built"
done
tmp=$(mktemp -d /tmp/wd-unit-XXXXXX) || error "mktemp"
trap 'rm -rf "$tmp"' EXIT
copy=$tmp/warden-gateway.service
sed -e "s#/usr/sbin/warden-gateway#$build/gateway/warden-gateway#g" \
	-e "s#/usr/bin/warden #$build/launcher/warden #g" "$unit" >"$copy"

# verify UNIT: systemd-analyze verify's output (stdout and stderr); its status in $vrc
verify() { out=$(SYSTEMD_LOG_COLOR=0 systemd-analyze verify --man=no "$1" 2>&1) && vrc=0 || vrc=$?; }

# the controls: a unit with an unknown key and a bad value is reported, a missing binary fails
printf '[Service]\nType=simple\nExecStart=/bin/true\nFooBar=1\nProtectSystem=bogus\n' >"$tmp/bad.service"
verify "$tmp/bad.service"
[[ $out == *FooBar* && $out == *bogus* ]] || error "systemd-analyze verify did not report a broken unit: $out"
ok "control: a unit with an unknown key and a bad value is reported"
printf '[Service]\nType=simple\nExecStart=/nonexistent/warden-gateway\n' >"$tmp/missing.service"
verify "$tmp/missing.service"
((vrc != 0)) || error "systemd-analyze verify passed a unit whose binary is missing"
ok "control: a unit whose binary is missing fails"

verify "$copy"
if ((vrc == 0)) && [[ -z $out ]]; then
	ok "systemd-analyze verify: $(basename "$unit") is clean"
else
	fail "systemd-analyze verify (exit $vrc):"
	printf '%s\n' "$out" | sed 's/^/    | /'
fi
for key in Type=notify NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
	RuntimeDirectory=warden StateDirectory=warden LogsDirectory=warden \
	RuntimeDirectoryPreserve=yes; do
	if grep -qx "$key" "$unit"; then ok "the unit sets $key"; else fail "the unit lacks $key"; fi
done
# the daemon makes the runs' cgroups and, on cgroup v2, moves their first processes in
# (cgroup_join): its cgroup is delegated and the hierarchy stays writable for it
for key in Delegate=yes KillMode=mixed; do
	if grep -qx "$key" "$unit"; then ok "the unit sets $key"; else fail "the unit lacks $key"; fi
done
if grep -qxE 'ProtectControlGroups=(yes|true|1|on)' "$unit"; then
	fail "the unit sets ProtectControlGroups: the daemon could not make the runs' cgroups"
else
	ok "the unit leaves /sys/fs/cgroup writable (no ProtectControlGroups)"
fi
# ExecStart's gateway starts its data plane: its worker image is found and safe to exec
# (`warden-gateway check-worker`, the lookup of every start); control: a copy without one fails
if wk=$("$build/gateway/warden-gateway" check-worker 2>&1); then
	ok "ExecStart's warden-gateway finds its worker image ($wk)"
else
	fail "ExecStart's warden-gateway cannot start its data plane: $wk"
fi
install -d -m 0755 "$tmp/bare"
install -m 0755 "$build/gateway/warden-gateway" "$tmp/bare/"
if "$tmp/bare/warden-gateway" check-worker >/dev/null 2>&1 &&
	[[ ! -e /usr/local/libexec/warden/warden-gateway-worker ]]; then
	error "warden-gateway check-worker passed a gateway without its worker"
fi
ok "control: a gateway without its worker image fails check-worker"
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit")
for cap in $caps; do
	case $cap in
	CAP_NET_ADMIN | CAP_SYS_ADMIN | CAP_SETUID | CAP_SETGID | CAP_CHOWN | CAP_FOWNER | CAP_KILL | CAP_DAC_OVERRIDE | CAP_SYS_PTRACE) ;;
	*) fail "CapabilityBoundingSet holds $cap, which the parent does not need (docs/deploy.md)" ;;
	esac
done
[[ -n $caps ]] && ok "CapabilityBoundingSet is bounded: $caps" || fail "no CapabilityBoundingSet"

sec=$(SYSTEMD_LOG_COLOR=0 systemd-analyze security --offline=yes --threshold=50 "$copy" 2>&1) && src=0 || src=$?
level=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$sec")
if [[ -z $level ]]; then
	fail "systemd-analyze security printed no exposure level (exit $src)"
elif ((src == 0)); then
	ok "systemd-analyze security: exposure $level (at most 5.0)"
else
	fail "systemd-analyze security: exposure $level, above 5.0:"
	grep '✗' <<<"$sec" | sed 's/^/    | /'
fi
echo "$passed passed, $failed failed"
((failed == 0))
