#!/usr/bin/env bash
# trace_sockets.sh - `warden trace`'s learning sandbox reaches no host service through a unix
# socket the person did not name (docs/trace.md, "Unix sockets"). The host's `/` is visible
# read-only there, and a connect needs no write permission on the mount: a container engine's
# API in the home folder (Colima's ~/.colima/default/docker.sock, Rancher Desktop's
# ~/.rd/docker.sock) or a root service under /var/lib (LXD, Incus) would run what the traced
# program tells it. Here a stand-in service that writes a marker file on the host when told to
# listens on such sockets; the traced client must be refused (no marker on the host), the trace
# must record the attempt as refused, and the policy `warden init` makes from it must not grant
# the socket (a commented line with a warning). Controls: the same client reaches every service
# from the host, a socket named with `warden trace --allow-socket PATH` is reached in the trace
# (its grant says it is a socket), and a host service on an abstract socket is out of reach
# because the sandbox has its own network namespace. Root mode under sudo (the lab user's
# program: the recorder answered CONTINUE, the kernel connected) and rootless mode as the lab
# user (the recorder carried the connect out itself).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
PY=/usr/bin/python3
[[ -x $PY ]] || { echo "SKIP: python3 missing"; exit 77; }
command -v jq >/dev/null || { echo "FAIL: jq is missing"; exit 1; }
lab_up
lab_user || { echo "FAIL: no lab user"; exit 1; }

# not in /tmp (the tests of the trace's own /tmp, when it had one, were written so)
T=$(mktemp -d /var/tmp/wd-trace-sock-XXXXXX) || exit 1
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
chmod 0755 "$T"
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
U=$LAB_USER_UID:$LAB_USER_GID
H=$T/home
# rtr: root-mode traces (through SUDO_UID, the trace is written as that user: a folder of theirs)
mkdir -p "$T/proj" "$T/bin" "$T/marks" "$T/named" "$T/logs" "$T/ulogs" "$T/rtr" "$H"
chmod -R a+rX "$T"
chown -R "$U" "$T/proj" "$H" "$T/ulogs" "$T/rtr" "$T/named"
# the markers' folder: the services (root) write there, nobody else may
chmod 0755 "$T/marks"

# the stand-in service: "touch PATH" makes PATH on the host, as a container engine's API would
# run what it is told; it answers DONE
cat >"$T/service.py" <<'EOF'
import os, socket, sys
addr = sys.argv[1]
s = socket.socket(socket.AF_UNIX)
if addr.startswith("@"):
    s.bind("\0" + addr[1:])
else:
    s.bind(addr)
    os.chmod(addr, int(sys.argv[2], 8))
    if len(sys.argv) > 3:
        os.chown(addr, int(sys.argv[3]), -1)
s.listen(8)
while True:
    c, _ = s.accept()
    line = c.makefile().readline().split()
    if len(line) == 2 and line[0] == "touch":
        open(line[1], "w").write("the service ran this\n")
        c.sendall(b"DONE\n")
    c.close()
EOF
# the client: connect, tell it to touch MARKER; 3 when the connect is refused
cat >"$T/bin/client.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
addr = sys.argv[1]
try:
    s.connect("\0" + addr[1:] if addr.startswith("@") else addr)
except OSError as e:
    print("refused:", e.strerror)
    sys.exit(3)
s.sendall(("touch %s\n" % sys.argv[2]).encode())
print(s.recv(100).decode().strip())
EOF
chmod 0644 "$T/service.py" "$T/bin/client.py"

# the services' sockets: in the lab user's home (theirs, 0600, as an engine run by the user
# makes it), under /var/lib (root's, 0666 as a group socket would be to its members), one the
# person names, one abstract
HOMESOCK_DIR=$LAB_USER_HOME/.colima/default
mkdir -p "$HOMESOCK_DIR"
chown -R "$U" "$LAB_USER_HOME/.colima"
lab_on_exit rm -rf "$LAB_USER_HOME/.colima"
HOMESOCK=$HOMESOCK_DIR/docker.sock
RD=$LAB_USER_HOME/.rd
mkdir -p "$RD"
chown "$U" "$RD"
lab_on_exit rm -rf "$RD"
RDSOCK=$RD/docker.sock
VARDIR=$(mktemp -d /var/lib/wd-trace-sock.XXXXXX) || exit 1
chmod 0755 "$VARDIR"
lab_on_exit rm -rf "$VARDIR"
VARSOCK=$VARDIR/unix.socket
NAMED=$T/named/app.sock
ABSTRACT=@wd-trace-sock-$$

start_service()
{
	in_host "$PY" "$T/service.py" "$@" &
	lab_on_exit kill $!
}
start_service "$HOMESOCK" 0600 "$LAB_USER_UID"
start_service "$RDSOCK" 0600 "$LAB_USER_UID"
start_service "$VARSOCK" 0666
start_service "$NAMED" 0600 "$LAB_USER_UID"
start_service "$ABSTRACT"
for s in "$HOMESOCK" "$RDSOCK" "$VARSOCK" "$NAMED"; do
	for _ in $(seq 50); do [[ -S $s ]] && break; sleep 0.1; done
done
for _ in $(seq 50); do
	in_host ss -xl | grep -qF "${ABSTRACT}" && break
	sleep 0.1
done

# tr MODE TRACE CMD...: CMD under warden trace (-o TRACE) from $T/proj as the lab user (root
# mode through SUDO_UID, or rootless), options before `--` in TR_OPTS; its stdout is the
# program's
TR_OPTS=()
tr()
{
	local mode=$1 out=$2
	shift 2
	if [[ $mode == root ]]; then
		(cd "$T/proj" && SUDO_UID=$LAB_USER_UID SUDO_GID=$LAB_USER_GID HOME=$H \
			in_host "$W" trace -q --audit-log "$T/logs/audit.jsonl" -o "$out" \
			"${TR_OPTS[@]}" -- "$@" 2>>"$T/logs/err")
	else
		in_host_user sh -c 'cd "$1" && shift && exec "$@" 2>>"$0"' "$T/ulogs/err" "$T/proj" \
			"$W" trace -q --audit-log "$T/ulogs/audit.jsonl" -o "$out" "${TR_OPTS[@]}" \
			-- "$@"
	fi
}

# refused_in TRACE PATH: the trace has a connect of PATH marked refused
refused_in()
{
	jq -e -s --arg p "$2" \
		'[.[] | select(.type == "file" and .op == "connect" and .path == $p and (.refused | type) == "string")] | length == 1' \
		"$1" >/dev/null
}
# connected_in TRACE PATH: the trace has a connect of PATH that was let through
connected_in()
{
	jq -e -s --arg p "$2" \
		'[.[] | select(.type == "file" and .op == "connect" and .path == $p and (has("refused") | not))] | length == 1' \
		"$1" >/dev/null
}
# granted POLICY TEXT: a grant of POLICY (an uncommented list item) holds TEXT
granted()
{
	grep -E '^[[:space:]]*- ' "$1" | grep -qF -- "$2"
}
# init_policy TRACE POLICY: warden init --from TRACE (as root: it reads only the trace)
init_policy()
{
	"$W" init --from "$1" -o "$2" --force 2>>"$T/logs/init-err"
}

echo "# the services answer on the host, outside any sandbox (the controls of the refusals)"
for s in "$HOMESOCK" "$RDSOCK" "$VARSOCK" "$NAMED" "$ABSTRACT"; do
	m=$T/marks/host-$(basename "$s")
	check_eq "from the host, the lab user reaches $s (the service writes a host file)" "DONE" \
		in_host_user "$PY" "$T/bin/client.py" "$s" "$m"
	check "... and the file is there" test -s "$m"
	rm -f "$m"
done

for mode in root rootless; do
	echo "# $mode mode"
	TR_OPTS=()
	n=0
	errf=$T/$([[ $mode == root ]] && echo logs || echo ulogs)/err
	for s in "$HOMESOCK" "$RDSOCK" "$VARSOCK"; do
		n=$((n + 1))
		trace=$T/$([[ $mode == root ]] && echo rtr || echo ulogs)/t-$mode-$n.jsonl
		m=$T/marks/$mode-$n
		check_fails --denied 3 "[$mode] the traced program cannot connect to the host service on $s" \
			tr "$mode" "$trace" "$PY" "$T/bin/client.py" "$s" "$m"
		check "[$mode] ... and the service wrote nothing on the host" test ! -e "$m"
		check "[$mode] ... the trace records the attempt as refused" refused_in "$trace" "$s"
		check "[$mode] ... and the summary warns of it" \
			grep -qF -- "refused (a service outside the sandbox) and warden init will not grant it: trace again with --allow-socket $s" "$errf"
		pol=$T/logs/p-$mode-$n.yaml
		check "[$mode] ... warden init makes a policy from the trace" init_policy "$trace" "$pol"
		check_fails "[$mode] ... which does not grant the socket" granted "$pol" "$(basename "$(dirname "$s")")/$(basename "$s")"
		check "[$mode] ... and says why in a comment" \
			grep -qE "^[[:space:]]*#.*$(basename "$s").*unix socket" "$pol"
		check "[$mode] ... while the service is still up (the host reaches it)" \
			in_host_user "$PY" "$T/bin/client.py" "$s" "$T/marks/ctl-$mode-$n"
	done

	trace=$T/$([[ $mode == root ]] && echo rtr || echo ulogs)/t-$mode-thread.jsonl
	check_fails --denied 3 "[$mode] ... nor from a second thread of the program (its own pidfd)" \
		tr "$mode" "$trace" "$PY" -c '
import runpy, sys, threading
sys.argv = sys.argv[1:]
r = []
def go():
    try:
        runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as e:
        r.append(e.code)
t = threading.Thread(target=go)
t.start()
t.join()
sys.exit(r[0] if r else 0)' "$T/bin/client.py" "$VARSOCK" "$T/marks/$mode-thread"
	check "[$mode] ... and the service wrote nothing" test ! -e "$T/marks/$mode-thread"
	check "[$mode] ... the trace records it as refused" refused_in "$trace" "$VARSOCK"

	n=$((n + 1))
	trace=$T/$([[ $mode == root ]] && echo rtr || echo ulogs)/t-$mode-$n.jsonl
	check_fails --denied 3 "[$mode] a host service on an abstract socket is out of reach (the sandbox's own network namespace)" \
		tr "$mode" "$trace" "$PY" "$T/bin/client.py" "$ABSTRACT" "$T/marks/$mode-abstract"
	check "[$mode] ... and it wrote nothing" test ! -e "$T/marks/$mode-abstract"

	trace=$T/$([[ $mode == root ]] && echo rtr || echo ulogs)/t-$mode-own.jsonl
	check_eq "[$mode] control: the program's own service on a socket in its own scratch (\$TMPDIR) is reached" \
		"OWN" tr "$mode" "$trace" "$PY" -c '
import os, socket
p = os.path.join(os.environ["TMPDIR"], "own.sock")
s = socket.socket(socket.AF_UNIX)
s.bind(p)
s.listen(1)
c = socket.socket(socket.AF_UNIX)
c.connect(p)
a, _ = s.accept()
a.sendall(b"OWN")
print(c.recv(3).decode())'
	check_eq "[$mode] ... and a TCP connection through the learning gateway works (the recorder carries it out)" \
		"200" tr "$mode" "$T/$([[ $mode == root ]] && echo rtr || echo ulogs)/t-$mode-tcp.jsonl" \
		curl -sS --max-time 8 --noproxy '*' -o /dev/null -w "%{http_code}" http://other.test/

	n=$((n + 1))
	trace=$T/$([[ $mode == root ]] && echo rtr || echo ulogs)/t-$mode-$n.jsonl
	m=$T/marks/$mode-named
	TR_OPTS=(--allow-socket "$NAMED")
	check_eq "[$mode] control: a socket named with --allow-socket is reached in the trace" "DONE" \
		tr "$mode" "$trace" "$PY" "$T/bin/client.py" "$NAMED" "$m"
	check "[$mode] ... the service ran what it was told" test -s "$m"
	check "[$mode] ... the trace records the connect, not refused" connected_in "$trace" "$NAMED"
	pol=$T/logs/p-$mode-$n.yaml
	check "[$mode] ... warden init makes a policy from it" init_policy "$trace" "$pol"
	check "[$mode] ... which grants the named socket" granted "$pol" "$NAMED"
	check "[$mode] ... saying in its comment that it is a unix socket" \
		grep -qE "^[[:space:]]*- .*app\.sock.*#.*unix socket" "$pol"
	check_fails --denied 3 "[$mode] ... while in the same trace an unnamed one stays refused" \
		tr "$mode" "$trace.2" "$PY" "$T/bin/client.py" "$VARSOCK" "$T/marks/$mode-named-var"
	check "[$mode] ... and its service wrote nothing" test ! -e "$T/marks/$mode-named-var"
	check "[$mode] ... and that trace records it as refused" refused_in "$trace.2" "$VARSOCK"
	TR_OPTS=()
done

# on a failure, what warden said (both modes' stderr) is the first thing to read
if ((LAB_FAILED)); then
	for f in "$T/logs/err" "$T/ulogs/err"; do
		[[ -s $f ]] && tail -40 "$f" | sed "s#^#    | $(basename "$(dirname "$f")"): #"
	done
fi
lab_finish
