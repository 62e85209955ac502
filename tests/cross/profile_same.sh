#!/usr/bin/env bash
# profile_same.sh WARDEN-PROFILE WARDEN: tests/cross/profile.c (warden-profile, what
# tests/macos/seatbelt.sh renders with on a Mac) prints what `warden policy check --for macos`
# and `--for windows` print for the same policy and port, byte for byte, beside its refusals (a
# usage error 2, an invalid policy 1). CTest unit.cross_profile.
set -u
wp=$1 warden=$2
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
failed=0
ok() { echo "ok - $*"; }
bad() { echo "FAIL - $*"; failed=1; }
[[ -x $wp && -x $warden ]] || { echo "ERROR - $wp or $warden is not built"; exit 2; }
mkdir -p "$t/granted" "$t/out"
printf 'version: 1\nfilesystem:\n  read: ["%s/granted"]\n  write: ["%s/out"]\nnetwork:\n  allow: [example.test]\n' \
	"$t" "$t" >"$t/p.yaml"
for os in macos windows; do
	"$wp" "$os" "$t/p.yaml" 15080 >"$t/wp.$os" 2>"$t/wp.$os.err"
	rc=$?
	"$warden" policy check --for "$os" --proxy-port 15080 "$t/p.yaml" >"$t/w.$os" 2>"$t/w.$os.err"
	wrc=$?
	if ((rc != 0 || wrc != 0)); then
		bad "$os: exit $rc / warden's $wrc: $(cat "$t/wp.$os.err" "$t/w.$os.err")"
	elif [[ ! -s $t/wp.$os ]]; then
		bad "$os: empty output"
	elif cmp -s "$t/wp.$os" "$t/w.$os"; then
		ok "$os: warden-profile prints warden policy check --for $os's output ($(wc -l <"$t/wp.$os") lines)"
	else
		bad "$os: the outputs differ: $(diff "$t/w.$os" "$t/wp.$os" | head -5)"
	fi
done
grep -q "localhost:15080" "$t/wp.macos" && ok "macos: the profile names the proxy port" ||
	bad "macos: no localhost:15080 in the profile"
"$wp" macos "$t/p.yaml" 70000 >/dev/null 2>&1
rc=$?
((rc == 2)) && ok "port 70000 is a usage error (2)" || bad "port 70000: exit $rc, wanted 2"
printf 'version: 1\nfilesystem: {read: [relative/../x]}\nbogus: 1\n' >"$t/bad.yaml"
"$wp" macos "$t/bad.yaml" >/dev/null 2>&1
rc=$?
((rc == 1)) && ok "an invalid policy: exit 1" || bad "an invalid policy: exit $rc, wanted 1"
"$wp" beos "$t/p.yaml" >/dev/null 2>&1
rc=$?
((rc == 2)) && ok "an OS it does not render for: exit 2" || bad "beos: exit $rc, wanted 2"
exit "$failed"
