#!/usr/bin/env bash
# run_shadow_daemon.sh - shadow mode in daemon mode (issue 31 item 6): user A's
# `warden run --shadow` through the host's warden-gateway --manage-nft, under the operator's
# ceiling. A name A's policy does not allow and the ceiling does is reached with --shadow
# (without it: refused, the control), recorded as would_deny in the central log and in A's own;
# a name the ceiling does not allow stays refused in shadow mode, citing the ceiling, beside the
# control reached in the same mode. run_shadow.sh covers root and rootless mode.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

if [[ ${LAB_AS_USER:-} == 1 ]]; then
	echo "SKIP: run_shadow_daemon.sh runs its users itself"
	exit 77
fi
lab_require_root
. "$SRC/tests/integration/daemon/fixture.sh"

cat >"$T/gateway.yaml" <<EOF
version: 1
resolvers: ["$LAB_DNS_V4"]
control: {path: "$SOCK"}
audit: {path: "$CENTRAL"}
ceiling:
  allow:
    - {host: allowed.test, ports: [443]}
    - {host: other.test, ports: [443]}
EOF
cat >"$T/p.yaml" <<EOF
version: 1
filesystem:
  read: ["$LAB_CA"]
network:
  allow:
    - {host: allowed.test, ports: [443]}
EOF
chmod 0644 "$T/p.yaml"

last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$AA"; }
# the events of run $2 in log $1 that match the jq filter $3: at least one
has_event() { jq -e -s --arg r "$2" "any(.[]; .run == \$r and ($3))" "$1" >/dev/null; }
# get [--shadow] NAME: A's run fetches https://NAME/ directly (DNS + TCP)
get() {
	local shadow=()
	[[ $1 == --shadow ]] && shadow=(--shadow) && shift
	ra -p "$T/p.yaml" "${shadow[@]}" -- curl -fsS --max-time 10 --noproxy '*' --cacert "$LAB_CA" "https://$1/"
}
get_shadow() { get --shadow "$1"; }

check "the host's nft table is installed" in_host "$W" nft install
daemon_start
check "the daemon starts with the ceiling" daemon_ready

echo "# without --shadow"
check_eq "control: allowed.test is served" "hello from allowed.test" get allowed.test
check_fails --denied 6 "other.test (the ceiling allows it, A's policy does not) does not resolve" \
	get other.test

echo "# with --shadow"
check_eq "other.test is reached" "hello from other.test" get_shadow other.test
r=$(last_run)
check_eq "... in daemon mode" daemon jq -r -s --arg r "$r" '[.[] | select(.run == $r and .action == "run.start")][0].mode' "$AA"
check "run.start says shadow: true" has_event "$AA" "$r" '.action == "run.start" and .shadow == true'
check "the central log: its connection is a would_deny of A's run, with the policy's reason" \
	has_event "$CENTRAL" "$r" ".action == \"net.connect\" and .resource == \"other.test\" and
	 .allowed == true and .decision == \"would_deny\" and .shadow == true and .uid == $A_UID and
	 (.reason | contains(\"(no network.allow rule matches)\"))"
check "... and its DNS query" has_event "$CENTRAL" "$r" \
	'.type == "dns" and .resource == "other.test" and .decision == "would_deny"'
check "A's own log has them too (the event stream)" has_event "$AA" "$r" \
	'.action == "net.connect" and .resource == "other.test" and .decision == "would_deny"'
check "the daemon's register says shadow mode" has_event "$CENTRAL" "$r" \
	'.action == "run.gateway-register" and (.reason | contains("in shadow mode"))'

echo "# the ceiling still refuses in shadow mode"
check_fails --denied 6 "multi.test (outside the ceiling) does not resolve with --shadow" get_shadow multi.test
r=$(last_run)
check "its DNS refusal cites the host's ceiling, no would_deny" has_event "$CENTRAL" "$r" \
	'.type == "dns" and .resource == "multi.test" and .allowed == false and (has("decision") | not) and
	 (.reason | contains("the host'"'"'s ceiling"))'
check_eq "control next to it: other.test in the same mode" "hello from other.test" get_shadow other.test
check_eq "no process of A's runs is left" "" ours_left

daemon_stop
lab_finish
