#!/usr/bin/env bash
# run_files_daemon.sh - `file` events in daemon mode (issue 16, docs/files.md): user A's run
# through the host's warden-gateway --manage-nft records its attempt at a not-granted file in
# A's own audit log, exactly once, with the path and the process; a granted file is read and
# recorded as nothing; `audit.files: off` records nothing (control: the same run with denied
# does). run_files.sh covers root and rootless mode (run_as_user.sh).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

if [[ ${LAB_AS_USER:-} == 1 ]]; then
	echo "SKIP: run_files_daemon.sh runs its users itself"
	exit 77
fi
lab_require_root
. "$SRC/tests/integration/daemon/fixture.sh"

cat >"$T/gateway.yaml" <<EOF
version: 1
resolvers: ["$LAB_DNS_V4"]
control: {path: "$SOCK"}
audit: {path: "$CENTRAL"}
EOF
mkdir -p "$T/granted" "$T/secret"
echo "granted text" >"$T/granted/file"
echo "top secret" >"$T/secret/file"
for m in denied off; do
	printf 'version: 1\nfilesystem:\n  read: ["%s"]\naudit:\n  files: %s\n' "$T/granted" "$m" \
		>"$T/$m.yaml"
done
chmod -R a+rX "$T/granted" "$T/secret" "$T"/*.yaml

last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$AA"; }
files() { jq -s --arg r "$1" "[.[] | select(.run == \$r and .type == \"file\" and (${2:-true}))] | length" "$AA"; }

check "the host's nft table is installed" in_host "$W" nft install
daemon_start
check "the daemon starts as root in lab-host (--manage-nft)" daemon_ready

check_eq "control: A's run reads the granted file" "granted text" ra -p "$T/denied.yaml" -- cat "$T/granted/file"
r=$(last_run)
check_eq "... in daemon mode" daemon jq -r -s --arg r "$r" '[.[] | select(.run == $r and .action == "run.start")][0].mode' "$AA"
check_eq "... and no file event" 0 files "$r"
check_fails "A's run cannot read the not-granted file" ra -p "$T/denied.yaml" -- cat "$T/secret/file"
r=$(last_run)
check_eq "... and A's log has exactly one file event of it" 1 files "$r"
check_eq "... with the path, the operation and the process" 1 files "$r" \
	".resource == \"$T/secret/file\" and .op == \"read\" and .comm == \"cat\" and .allowed == false and .mode == \"daemon\" and .uid == $A_UID"
check_eq "... and the daemon's central log has none (it is the launcher's)" 0 \
	jq -s --arg r "$r" '[.[] | select(.run == $r and .type == "file")] | length' "$CENTRAL"
check_fails "audit.files: off: the same attempt" ra -p "$T/off.yaml" -- cat "$T/secret/file"
r=$(last_run)
check_eq "... makes no file event" 0 files "$r"
check_eq "no process of A's runs is left" "" ours_left

daemon_stop
lab_finish
