#!/usr/bin/env bash
# docker_init.sh - warden-docker-init (run/docker_init.c, the Docker backend's first process;
# run/docker_proto.h is the protocol) without Docker: it runs in a network namespace of the
# test's with only the capabilities a container gets (NET_ADMIN SETUID SETGID SETPCAP), and a
# launcher outside that namespace (docker_init.py) sends the plan, takes the 10 descriptors
# (the gateway's listeners, the NFLOG socket, the liveness probe's), has a grant checked,
# plays the gateway, says go and holds the connection for the run (its end ends the program).
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
# the file every launcher grants (the init stats it: it sees the test's files)
echo granted >"$TMP/granted"
# where the program (uid 65534) leaves its marks: ran.NAME when it starts (after the init's
# drop), after.NAME when it outlived its sleep; close.NAME tells run die's launcher to go
mkdir -m 1777 "$TMP/marks"
PROG_UID=65534

# launch MODE NAME [PROGRAM-WHAT]: the launcher and the init (in $NS, as a container's root:
# uid 0 with only the four capabilities, no others in the bounding set); output in $TMP/NAME.out
launch() {
	local mode=$1 name=$2 what=${3:-net}
	python3 "$PY" launcher "$mode" "$TMP/$name.sock" "$PROG_UID" "$PROG_UID" \
		"$TMP/granted" "$TMP/marks/close.$name" -- \
		ip netns exec "$NS" setpriv --inh-caps=-all \
		--bounding-set=-all,+net_admin,+setuid,+setgid,+setpcap \
		"$TMP/warden-docker-init" "$TMP/$name.sock" -- \
		sh -c 'touch "$0/marks/ran.$1"; exec python3 "$0/docker_init.py" program "$2" "$0/marks" "$1"' \
		"$TMP" "$name" "$what" >"$TMP/$name.out" 2>&1
	echo "launcher and init ($mode) exited $?" >>"$TMP/$name.out"
	sed 's/^/    /' "$TMP/$name.out"
}
says() { grep -qE -- "$2" "$TMP/$1.out"; }
# live_pids UID: the processes of UID in the script's pid namespace, zombies left out
live_pids() { ps -e -o uid=,stat=,pid= | awk -v u="$1" '$1 == u && $2 !~ /^Z/ {print $3}'; }
fresh_ns() { ip netns delete "$NS" && ip netns add "$NS"; }

# --- go: the network is made inside, the sockets cross, the program runs with nothing ------
launch go go
check "go: the init made the table and sent 10 descriptors" \
	says go 'init answered the plan err=0 nfds=10 fds=10 $'
# nft/inside.c's order: transparent, proxy, DNS over UDP, DNS over TCP; IPv4 then IPv6 of each
G4='10\.255\.0\.1' G6=fd77::1
check "go: the 8 listeners, bound in the init's namespace, in nft/inside.c's order" \
	says go "listeners tcp $G4:15001, tcp $G6:15001, tcp $G4:15080, tcp $G6:15080, \
udp $G4:15053, udp $G6:15053, tcp $G4:15053, tcp $G6:15053\$"
check "go: the 9th is the NFLOG socket (netlink)" says go 'fd 8 netlink NETLINK_NETFILTER$'
check "go: the 10th is the liveness probe's UDP socket, bound to sbx4" \
	says go 'fd 9 udp 10\.255\.0\.2:[0-9]+$'
check "go: the grant of a file the init sees as the launcher does passes" \
	says go 'init answered the grants err=0 nfds=0 fds=0 $'
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

# --- a grant that is not the launcher's file: refused, the program never runs ---------------
fresh_ns
launch badgrant badgrant
check "badgrant: the init made its sockets (same as go up to here)" says badgrant 'nfds=10 fds=10'
check "badgrant: a grant of the wrong inode is refused with EXDEV, naming the path" \
	says badgrant "init answered the grants err=18 nfds=0 fds=0 \
grants: the grant $TMP/granted in the container is not the file the launcher opened there"
check_fails "badgrant: the program did not run" test -e "$TMP/marks/ran.badgrant"
check "badgrant: the init exited 125" says badgrant 'exited 125$'

# --- PID 1's work: the exit status, a signal forwarded --------------------------------------
fresh_ns
launch run exit7 exit7
check "exit7: the program's exit status 7 is the init's" says exit7 'exited 7$'
fresh_ns
launch run sigfwd sigfwd
# (the init exits 143 itself: killed by the signal, the launcher would say 241, python's -15)
check "sigfwd: a SIGTERM to the init ends the program (128+15)" says sigfwd 'exited 143$'

# --- the launcher's death ends the run: first a launcher that stays, then one that dies -----
fresh_ns
touch "$TMP/marks/close.sleep"
launch run sleep sleep
check "sleep: with the launcher there, the program outlives its sleep" \
	test -e "$TMP/marks/after.sleep"
check "sleep: and exits 0" says sleep 'exited 0$'
fresh_ns
launch die die sleep &
DIE=$!
lab_wait 30 test -e "$TMP/marks/ran.die" || echo "    (the program of run die did not start in 30 s)"
check "die: while the launcher lives, the program runs (a process of uid $PROG_UID)" \
	lab_match '^[0-9]+$' live_pids "$PROG_UID"
touch "$TMP/marks/close.die"
wait "$DIE"
# (SIGKILL is sent, not yet done: give the kernel its moment before the probe)
lab_wait 10 lab_negate lab_match '^[0-9]+$' live_pids "$PROG_UID" || true
check "die: the launcher closed the connection while the program slept" \
	says die 'told to, closing the connection'
check "die: the init exited 137" says die 'exited 137$'
check_fails "die: no process of uid $PROG_UID remains" lab_match '^[0-9]+$' live_pids "$PROG_UID"
check_fails "die: the program never outlived its sleep" test -e "$TMP/marks/after.die"

# --- no go: the program never starts before the launcher says so ---------------------------
fresh_ns
launch nogo nogo
check "nogo: the init made its sockets and passed the grant (same as go up to here)" \
	says nogo 'init answered the grants err=0'
check_fails "nogo: the program did not run" test -e "$TMP/marks/ran.nogo"
check "nogo: the init exited 125" says nogo 'exited 125$'

# --- a malformed plan, a plan for uid 0: refused before anything is made --------------------
fresh_ns
launch badplan badplan
check "badplan: the init refuses it" says badplan 'err=71 nfds=0 fds=0 plan: malformed plan'
check_fails "badplan: the program did not run" test -e "$TMP/marks/ran.badplan"
check_fails "badplan: no table was made" ip netns exec "$NS" nft list table inet warden
check "badplan: the init exited 125" says badplan 'exited 125$'
fresh_ns
launch root root
check "root: a plan whose uid is 0 is refused" says root 'err=71 nfds=0 fds=0 plan: malformed plan'
check_fails "root: the program did not run" test -e "$TMP/marks/ran.root"
check_fails "root: no table was made" ip netns exec "$NS" nft list table inet warden
check "root: the init exited 125" says root 'exited 125$'

lab_finish
