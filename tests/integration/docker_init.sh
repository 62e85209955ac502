#!/usr/bin/env bash
# docker_init.sh - warden-docker-init (run/docker_init.c, the Docker backend's PROTOTYPE first
# process) without Docker: it runs in a network namespace of the test's with only the
# capabilities a container gets (NET_ADMIN SETUID SETGID SETPCAP), and a launcher outside that
# namespace (docker_init.py) takes its listening sockets, plays the gateway and says go.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
lab_require_root
INIT=${WARDEN_BUILD_DIR:-$SRC/build}/run/warden-docker-init
if [[ ! -x $INIT ]]; then
	echo "FAIL - no $INIT (run/CMakeLists.txt builds it with nft/ and netns/)"
	exit 1
fi
command -v python3 >/dev/null || { echo "SKIP: missing python3"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: missing setpriv"; exit 77; }
# the EXIT trap that runs lab_on_exit's commands (lab_up, which this test does not call, sets
# the same; so does tests/lab/docker.sh)
trap _lab_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
TMP=$(mktemp -d)
chmod 0755 "$TMP"
NS=wdinit-$$
lab_on_exit rm -rf "$TMP"
lab_on_exit ip netns delete "$NS"
LAB_REAL_BEFORE=$(_lab_real_host_state)
ip netns add "$NS" || { echo "FAIL - ip netns add $NS"; exit 1; }
cp "$SRC/tests/integration/docker_init.py" "$INIT" "$TMP/"
PY=$TMP/docker_init.py
# where the program (uid 65534) leaves its mark when it runs
mkdir -m 1777 "$TMP/marks"

# launch MODE NAME [PROGRAM-MODE]: the launcher and the init (in $NS, as a container's root: uid 0 with only
# the four capabilities, no others in the bounding set); output in $TMP/NAME.out
launch() {
	local mode=$1 name=$2 what=${3:-net}
	python3 "$PY" launcher "$mode" "$TMP/$name.sock" 65534 65534 -- \
		ip netns exec "$NS" setpriv --inh-caps=-all \
		--bounding-set=-all,+net_admin,+setuid,+setgid,+setpcap \
		"$TMP/warden-docker-init" "$TMP/$name.sock" -- \
		sh -c 'touch "$0/marks/ran.$1"; exec python3 "$0/docker_init.py" program "$2"' "$TMP" "$name" "$what" \
		>"$TMP/$name.out" 2>&1
	echo "launcher and init ($mode) exited $?" >>"$TMP/$name.out"
	sed 's/^/    /' "$TMP/$name.out"
}
says() { grep -qE -- "$2" "$TMP/$1.out"; }

# --- go: the network is made inside, the sockets cross, the program runs with nothing ------
launch go go
check "go: the init made the table and sent 8 sockets" says go 'init answered err=0 nfds=8 fds=8'
check "go: the listeners are bound in the init's namespace, not the launcher's" \
	says go 'gateway listener 10\.255\.0\.1:15001'
check "go: the program ran" test -e "$TMP/marks/ran.go"
check "go: the program's connection to 192.0.2.80:443 reached the gateway (DNAT)" \
	says go 'gateway: original dst 192\.0\.2\.80:443'
check "go: the program read the gateway's answer" says go 'program: answer via-gateway'
check "go: the program runs as the plan's uid, no capability left, no_new_privs" \
	says go 'program: uid=65534 CapPrm=0+ CapEff=0+ CapBnd=0+ CapAmb=0+ NoNewPrivs=1'
check "go: the exit status is the program's" says go 'exited 0$'
check "go: the run's table is in the namespace" ip netns exec "$NS" nft list table inet warden
check_fails "go: the program's uid cannot flush it" \
	ip netns exec "$NS" setpriv --reuid 65534 --regid 65534 --clear-groups --no-new-privs \
	nft flush ruleset
check "control: root in the namespace can list it" ip netns exec "$NS" nft list ruleset

# --- PID 1's work: the exit status, a signal forwarded --------------------------------------
ip netns delete "$NS" && ip netns add "$NS"
launch go-noconn exit7 exit7
check "exit7: the program's exit status 7 is the init's" says exit7 'exited 7$'
ip netns delete "$NS" && ip netns add "$NS"
launch go-noconn sigfwd sigfwd
# (the init exits 143 itself: killed by the signal, the launcher would say 241, python's -15)
check "sigfwd: a SIGTERM to the init ends the program (128+15)" says sigfwd 'exited 143$'

# --- no go: the program never starts before the launcher says so ---------------------------
ip netns delete "$NS" && ip netns add "$NS"
launch nogo nogo
check "nogo: the init made its sockets (same as go up to here)" says nogo 'nfds=8 fds=8'
check_fails "nogo: the program did not run" test -e "$TMP/marks/ran.nogo"
check "nogo: the init exited 125" says nogo 'exited 125$'

# --- a malformed plan: refused before anything is made --------------------------------------
ip netns delete "$NS" && ip netns add "$NS"
launch badplan badplan
check "badplan: the init refuses it" says badplan 'err=71 nfds=0 fds=0 plan: malformed plan'
check_fails "badplan: the program did not run" test -e "$TMP/marks/ran.badplan"
check_fails "badplan: no table was made" ip netns exec "$NS" nft list table inet warden
check "badplan: the init exited 125" says badplan 'exited 125$'

lab_finish
