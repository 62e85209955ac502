#!/usr/bin/env bash
# nft_ruleset.sh - `warden nft render|install|audit|run-add|run-del` against a real kernel,
# inside lab-host: render = golden = what install creates, audit clean, tampering caught.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
lab_require_root
W=${WARDEN_BIN:-$SRC/build/launcher/warden}
GOLDEN=$SRC/tests/nft/golden
TMP=$(mktemp -d)
lab_on_exit rm -rf "$TMP"
lab_up

wd() { in_host "$W" nft "$@"; }
listing() { in_host nft list table inet "${1:-warden}"; }
# reinstall: a clean table and no other tables, before each tampering
reset() {
	in_host nft flush ruleset && wd install
}
# audit_says WANT_RC PATTERN: the audit exits WANT_RC and prints a line matching PATTERN
audit_says() {
	local want=$1 pat=$2 out rc
	out=$(wd audit "${@:3}" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/    /'
	[[ $rc -eq $want ]] && grep -qE -- "$pat" <<<"$out"
}

# --- render --------------------------------------------------------------------
check "render (defaults) equals the golden file" diff -u "$GOLDEN/default.nft" <("$W" nft render)
check "render --config custom.yaml equals the golden file" \
	diff -u "$GOLDEN/custom.nft" <("$W" nft render --config "$GOLDEN/custom.yaml")
"$W" nft render >"$TMP/default.nft"
"$W" nft render --config "$GOLDEN/custom.yaml" >"$TMP/custom.nft"
check "nft -c accepts the default rendering" in_host nft -c -f "$TMP/default.nft"
check "nft -c accepts the custom rendering" in_host nft -c -f "$TMP/custom.nft"
check_fails --denied 2 "render rejects an unknown option (usage error: 2)" "$W" nft render --bogus
check_eq "render with a broken config exits 2" 2 \
	bash -c '"$0" nft render --config /nonexistent.yaml >/dev/null 2>&1; echo $?' "$W"

# --- install == render -----------------------------------------------------------
in_host nft -f "$TMP/default.nft"
listing >"$TMP/list-rendered"
check "audit is clean on the table loaded from the rendering (same expressions)" \
	audit_says 0 "0 violations"
in_host nft delete table inet warden
check "install creates the table" wd install
listing >"$TMP/list-installed"
check "nft list after install equals nft list after nft -f render" \
	diff -u "$TMP/list-rendered" "$TMP/list-installed"
check "install again (replace) succeeds" wd install
check "audit after install: exit 0, clean" audit_says 0 "0 violations, 0 notes"
check "audit --json says ok" audit_says 0 '"ok":true' --json
in_host nft flush ruleset
in_host nft -f "$TMP/custom.nft"
listing wdtest >"$TMP/list-rendered-custom"
in_host nft flush ruleset
check "install --config custom.yaml" wd install --config "$GOLDEN/custom.yaml"
listing wdtest >"$TMP/list-installed-custom"
check "custom: nft list after install equals nft -f render" \
	diff -u "$TMP/list-rendered-custom" "$TMP/list-installed-custom"
check "custom: audit clean" audit_says 0 "0 violations" --config "$GOLDEN/custom.yaml"
check "default audit on a host with only the custom table fails" \
	audit_says 1 "table inet warden: missing"

# --- run elements --------------------------------------------------------------
reset
RUN1=(wd-abc123 --v4 10.213.0.2 --gw4 10.213.0.1 --v6 fd77:7764:6e00::2 --gw6 fd77:7764:6e00::1)
check "run-add v4+v6" wd run-add "${RUN1[@]}"
check "runs_v4 holds the pair" bash -c "ip netns exec $LAB_HOST_NS nft list set inet warden runs_v4 | grep -q '\"wd-abc123\" . 10.213.0.2'"
check "runs_v6 holds the pair" bash -c "ip netns exec $LAB_HOST_NS nft list set inet warden runs_v6 | grep -q '\"wd-abc123\" . fd77:7764:6e00::2'"
check "runs_if holds the interface" bash -c "ip netns exec $LAB_HOST_NS nft list set inet warden runs_if | grep -q '\"wd-abc123\"'"
check "gw_v4 holds the run's own gateway address" bash -c "ip netns exec $LAB_HOST_NS nft list set inet warden gw_v4 | grep -q '\"wd-abc123\" . 10.213.0.1'"
check "gw_v6 holds the run's own gateway address" bash -c "ip netns exec $LAB_HOST_NS nft list set inet warden gw_v6 | grep -q '\"wd-abc123\" . fd77:7764:6e00::1'"
check "run-add again is not an error" wd run-add "${RUN1[@]}"
check "audit counts the run" audit_says 0 "runs: 1 interfaces, 1 v4, 1 v6 \(gateway addresses: 1 v4, 1 v6\)"
check "run-del removes every element" wd run-del "${RUN1[@]}"
check "audit: no runs left" audit_says 0 "runs: 0 interfaces, 0 v4, 0 v6 \(gateway addresses: 0 v4, 0 v6\)"
check "run-del again (all absent) is fine" wd run-del "${RUN1[@]}"
wd run-add wd-half --v4 10.213.0.6
check "run-del of a half-registered run (v6 absent) deletes the rest" \
	wd run-del wd-half --v4 10.213.0.6 --gw4 10.213.0.5 --v6 fd77:7764:6e00::6 --gw6 fd77:7764:6e00::5
check "audit: the half run is gone" audit_says 0 "runs: 0 interfaces, 0 v4, 0 v6 \(gateway addresses: 0 v4, 0 v6\)"
check_eq "run-add of a gateway address without its sandbox address exits 2" 2 \
	bash -c '"$@" >/dev/null 2>&1; echo $?' _ ip netns exec "$LAB_HOST_NS" "$W" nft run-add wd-x --v6 fd77::2 --gw4 10.0.0.1
check_eq "run-add of an interface outside the prefix exits 2" 2 \
	bash -c '"$@" >/dev/null 2>&1; echo $?' _ ip netns exec "$LAB_HOST_NS" "$W" nft run-add eth0 --v4 10.0.0.2
check_eq "run-add with a bad address exits 2" 2 \
	bash -c '"$@" >/dev/null 2>&1; echo $?' _ ip netns exec "$LAB_HOST_NS" "$W" nft run-add wd-x --v4 10.0.0.256

# --- tampering -----------------------------------------------------------------
reset
in_host nft insert rule inet warden input iifname '"wd-*"' accept
check "tamper: an input accept for wd-* is a violation" \
	audit_says 1 'violation: chain inet warden input: unexpected rule \(handle [0-9]+\) accepts traffic from wd-\* interfaces: iifname "wd-\*" accept'

reset
h=$(in_host nft -a list chain inet warden forward | sed -n 's/.*iifname "wd-\*" drop # handle \([0-9]*\)/\1/p')
in_host nft delete rule inet warden forward handle "$h"
check "tamper: deleting the forward drop is a violation" \
	audit_says 1 'chain inet warden forward: missing rule #1: iifname "wd-\*" drop'

reset
in_host nft flush chain inet warden forward
in_host nft delete chain inet warden forward
in_host nft add chain inet warden forward '{ type filter hook forward priority 10; policy accept; }'
in_host nft add rule inet warden forward iifname '"wd-*"' drop
in_host nft add rule inet warden forward oifname '"wd-*"' drop
check "tamper: a changed chain priority is a violation" \
	audit_says 1 'chain inet warden forward: priority is 10, expected 0'

reset
in_host nft insert rule inet warden divert iifname '"wd-*"' tcp dport 22 accept
check "tamper: a redirect exemption in divert is a violation" \
	audit_says 1 'chain inet warden divert: unexpected rule .* accepts traffic'

# the gateway's ports only at the run's own gateway address: a rule that accepts them by port
# alone (at every address of the host, as before issue 11) is caught in each chain
replace_rule() { # CHAIN PATTERN NEW-RULE...: replace the rule whose text matches PATTERN
	local h
	h=$(in_host nft -a list chain inet warden "$1" | grep -F -- "$2" | sed -n 's/.* # handle \([0-9]*\)$/\1/p' | head -n1)
	[[ -n $h ]] || { echo "no rule matching $2 in $1"; return 1; }
	in_host nft replace rule inet warden "$1" handle "$h" "${@:3}"
}
reset
check "tamper setup: input's own-address TCP accept replaced" replace_rule input \
	'iifname . ip daddr @gw_v4 tcp dport @gw_tcp accept' tcp dport @gw_tcp accept
check "tamper: input accepting the gateway's TCP ports by port alone is a violation" \
	audit_says 1 'violation: chain inet warden input: unexpected rule .* by port alone, at any address of this host'
reset
check "tamper setup: input's own-address UDP accept replaced" replace_rule input \
	'iifname . ip6 daddr @gw_v6 udp dport @gw_udp accept' udp dport 15053 accept
check "tamper: input accepting the DNS port by port alone is a violation" \
	audit_says 1 'violation: chain inet warden input: unexpected rule .* by port alone'
reset
check "tamper setup: divert's proxy exemption replaced" replace_rule divert \
	'iifname . ip daddr @gw_v4 tcp dport 15080 accept' tcp dport 15080 fib daddr type local accept
check "tamper: a proxy exemption at every host address is a violation" \
	audit_says 1 'violation: chain inet warden divert: unexpected rule .* by port alone'
reset
check "tamper setup: udp_audit's DNS exemption replaced" replace_rule udp_audit \
	'iifname . ip daddr @gw_v4 udp dport 15053 accept' udp dport 15053 fib daddr type local accept
check "tamper: a DNS exemption at every host address is a violation" \
	audit_says 1 'violation: chain inet warden udp_audit: unexpected rule .* by port alone'
reset
check "tamper setup: the per-run connection limit is removed" bash -c \
	'h=$(ip netns exec "$0" nft -a list chain inet warden input | sed -n "s/.*ct count over .* # handle \([0-9]*\)$/\1/p"); [[ -n $h ]] && ip netns exec "$0" nft delete rule inet warden input handle "$h"' \
	"$LAB_HOST_NS"
check "tamper: a missing connection limit is a violation" \
	audit_says 1 'chain inet warden input: missing rule #2: ct state new add @run_conns'

reset
check "tamper setup: the full-meter drop of run_rate is removed" bash -c \
	'h=$(ip netns exec "$0" nft -a list chain inet warden input | sed -n "s/.*iifname != @run_rate .* # handle \([0-9]*\)$/\1/p"); [[ -n $h ]] && ip netns exec "$0" nft delete rule inet warden input handle "$h"' \
	"$LAB_HOST_NS"
check "tamper: a missing full-meter drop is a violation" \
	audit_says 1 'chain inet warden input: missing rule #5: ct state new iifname != @run_rate'

reset
in_host nft add element inet warden gw_tcp '{ 22 }'
check "tamper: an extra gateway port is a violation" \
	audit_says 1 'set inet warden gw_tcp: holds 4 ports'

reset
h=$(in_host nft -a list chain inet warden input | sed -n 's/.*ct state established,related accept # handle \([0-9]*\)/\1/p')
in_host nft delete rule inet warden input handle "$h"
in_host nft add rule inet warden input ct state established,related accept
check "tamper: reordered rules are a violation" audit_says 1 'not in the model.s order'

reset
in_host nft add table ip foreign
in_host nft add chain ip foreign in '{ type filter hook input priority -500; policy accept; }'
in_host nft add rule ip foreign in accept
check "foreign table with an input accept: exit 0, reported as a note" \
	audit_says 0 'note: chain ip foreign in: rule \(handle [0-9]+\) accepts traffic'

in_host nft add chain ip foreign pre '{ type nat hook prerouting priority -150; policy accept; }'
in_host nft add rule ip foreign pre tcp dport 443 dnat to 203.0.113.2
check "foreign DNAT before warden's redirect is a violation" \
	audit_says 1 'violation: chain ip foreign pre: rule .* may NAT traffic from wd-\* interfaces before'
in_host nft flush chain ip foreign pre
in_host nft add rule ip foreign pre iifname veth-wan tcp dport 443 dnat to 203.0.113.2
check "foreign DNAT restricted to another interface is not a violation" audit_says 0 "0 violations"

reset
in_host nft add chain inet warden extra '{ type filter hook input priority -400; policy accept; }'
check "tamper: an extra chain in our table is a violation" \
	audit_says 1 'chain inet warden extra: not part of the model'

reset
in_host nft delete table inet warden
check "no table: audit exits 1 and says so" audit_says 1 'table inet warden: missing'
check "no table: run-add exits 2 naming the element" \
	bash -c 'out=$("$@" 2>&1); [[ $? -eq 2 && $out == *"add element wd-x to set inet warden runs_if"* ]]' \
	_ ip netns exec "$LAB_HOST_NS" "$W" nft run-add wd-x --v4 10.0.0.2
check "no table: run-del is fine" wd run-del wd-x --v4 10.0.0.2
check "uninstall of an absent table is fine" wd uninstall
wd install
check "control: nft lists the installed table" in_host nft list table inet warden
check "uninstall removes the table" wd uninstall
check_fails --denied 1 "the table is gone" in_host nft list table inet warden

lab_finish
