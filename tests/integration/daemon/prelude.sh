# Prelude of the daemon-mode lab tests that start their own daemon (source it first; not a test
# itself): the lab library, a skip under run_as_user.sh (these tests run their users
# themselves), root and the private run (lab_require_root), the daemon fixture (fixture.sh),
# and the daemon's configuration in $T/gateway.yaml (control socket $SOCK, central log
# $CENTRAL, the lab's resolver).
# shellcheck shell=bash
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

if [[ ${LAB_AS_USER:-} == 1 ]]; then
	echo "SKIP: $(basename "$0") runs its users itself"
	exit 77
fi
lab_require_root
. "$SRC/tests/integration/daemon/fixture.sh"
cat >"$T/gateway.yaml" <<EOF2
version: 1
resolvers: ["$LAB_DNS_V4"]
control: {path: "$SOCK"}
audit: {path: "$CENTRAL"}
EOF2
