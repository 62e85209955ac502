#!/usr/bin/env bash
# trace_sandbox.sh - the shape of `warden trace`'s learning sandbox (docs/trace.md): the host
# read-only, the current folder writable, the home folder read-only, the credential stores
# and Warden's own files hidden, no /sys, the host's /tmp read-only with a scratch of its own
# ($TMPDIR), and no host service reachable
# through a unix socket under /run (the read-only view must not become a way out). Each
# negative probe has its positive control next to it: the same probe pointed at something the
# sandbox shows. Root mode under sudo (the lab user's program) and rootless mode (as the lab
# user).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
PY=/usr/bin/python3
[[ -x $PY ]] || { echo "SKIP: python3 missing"; exit 77; }
lab_up
lab_user || { echo "FAIL: no lab user"; exit 1; }

# not in /tmp (the tests of the trace's own /tmp, when it had one, were written so)
T=$(mktemp -d /var/tmp/wd-trace-sbx-XXXXXX) || exit 1
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
chmod 0755 "$T"
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
U=$LAB_USER_UID:$LAB_USER_GID
H=$T/home
mkdir -p "$T/proj" "$T/outside" "$H/.local/state/warden" "$T/logs" "$T/ulogs" "$T/rtrace"
echo "readable" >"$T/outside/open.txt"
echo "an approval" >"$H/.local/state/warden/approval"
HOSTTMP=$(mktemp /tmp/wd-trace-sbx-host.XXXXXX) || exit 1
lab_on_exit rm -f "$HOSTTMP"
echo "host tmp" >"$HOSTTMP"
chmod 0644 "$HOSTTMP"
chmod -R a+rX "$T"
# under sudo the trace is written as the invoking user (docs/trace.md): a folder of theirs
chown -R "$U" "$T/proj" "$H" "$T/ulogs" "$T/rtrace"

# a host service on a unix socket under /run, and a client for it
SOCKD=$(mktemp -d /run/wd-trace-sbx.XXXXXX) || exit 1
chmod 0755 "$SOCKD"
lab_on_exit rm -rf "$SOCKD"
$PY -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.listen(8)
while True:
    c, _ = s.accept()
    c.sendall(b"HOSTSERVICE\n")
    c.close()
' "$SOCKD/s" &
srv=$!
lab_on_exit kill "$srv"
for _ in $(seq 50); do [[ -S $SOCKD/s ]] && break; sleep 0.1; done
cat >"$T/client.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("refused:", e.strerror)
    sys.exit(3)
print(s.recv(100).decode().strip())
EOF
chmod 0644 "$T/client.py"

# tr MODE CMD...: CMD under warden trace from $T/proj, as the lab user (root mode through
# SUDO_UID, or rootless), the trace under $T; its stdout is the program's
tr()
{
	local mode=$1
	shift
	if [[ $mode == root ]]; then
		(cd "$T/proj" && SUDO_UID=$LAB_USER_UID SUDO_GID=$LAB_USER_GID HOME=$H \
			in_host "$W" trace -q --audit-log "$T/logs/audit.jsonl" \
			-o "$T/rtrace/trace.jsonl" -- "$@" 2>/dev/null)
	else
		in_host_user sh -c 'cd "$1" && shift && exec "$@" 2>>"$0"' "$T/ulogs/err" "$T/proj" \
			"$W" trace -q --audit-log "$T/ulogs/audit.jsonl" -o "$T/ulogs/trace.jsonl" -- "$@"
	fi
}

# tr_vanish MODE DIR CMD...: tr with vanish.so preloaded: the sandbox's first process, about to
# exec bwrap, waits while DIR (and its socket) is removed from the host
cat >"$T/vanish.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The sandbox's first process, about to exec bwrap (its mounts are made from the arguments
 * the launcher built): tell the test (WD_VANISH_GO) and wait for its word (WD_VANISH_ACK). */
int execve(const char *path, char *const argv[], char *const envp[])
{
	int (*real)(const char *, char *const[], char *const[]) =
		(int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve");
	const char *go = getenv("WD_VANISH_GO"), *ack = getenv("WD_VANISH_ACK");
	const char *base = strrchr(path, '/');
	char c;
	int fd;

	if (go && ack && !strcmp(base ? base + 1 : path, "bwrap")) {
		fd = open(go, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			(void)!write(fd, "g", 1);
			close(fd);
		}
		fd = open(ack, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			(void)!read(fd, &c, 1);
			close(fd);
		}
	}
	return real(path, argv, envp);
}
EOF
mkdir -p "$T/vanish"
mkfifo "$T/vanish/go" "$T/vanish/ack"
chown -R "$U" "$T/vanish"
cc -shared -fPIC -o "$T/vanish/vanish.so" "$T/vanish.c" -ldl || {
	echo "FAIL: cannot build the test's vanish.so (cc)"
	exit 1
}
chmod a+rx "$T/vanish" "$T/vanish/vanish.so"
# an ASan launcher refuses a preload ahead of its runtime unless told
VANISH_ASAN=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
tr_vanish()
{
	local mode=$1 dir=$2 rm_pid ret
	shift 2
	# the remover: on the word of the sandbox's first process, DIR goes; then its answer
	(read -r -n1 _ <"$T/vanish/go" && rm -r "$dir" && echo "$dir/s" >"$T/vanish/done"
	 echo a >"$T/vanish/ack") &
	rm_pid=$!
	if [[ $mode == root ]]; then
		(cd "$T/proj" && SUDO_UID=$LAB_USER_UID SUDO_GID=$LAB_USER_GID HOME=$H \
			LD_PRELOAD=$T/vanish/vanish.so WD_VANISH_GO=$T/vanish/go \
			WD_VANISH_ACK=$T/vanish/ack ASAN_OPTIONS=$VANISH_ASAN \
			in_host "$W" trace -q --audit-log "$T/logs/audit.jsonl" \
			-o "$T/rtrace/vanish.jsonl" -- "$@" 2>>"$T/logs/vanish-err")
	else
		in_host_user sh -c 'cd "$1" && shift && exec "$@" 2>>"$0"' "$T/ulogs/vanish-err" \
			"$T/proj" env LD_PRELOAD="$T/vanish/vanish.so" WD_VANISH_GO="$T/vanish/go" \
			WD_VANISH_ACK="$T/vanish/ack" ASAN_OPTIONS="$VANISH_ASAN" \
			"$W" trace -q --audit-log "$T/ulogs/audit.jsonl" -o "$T/ulogs/vanish.jsonl" -- "$@"
	fi
	ret=$?
	# a run that never reached bwrap leaves the remover waiting: it is ours, by pid
	kill "$rm_pid" 2>/dev/null
	wait "$rm_pid" 2>/dev/null
	return $ret
}

echo "# the service answers on the host (the control of the socket probes)"
check_eq "the client reaches the host service outside any sandbox" "HOSTSERVICE" \
	"$PY" "$T/client.py" "$SOCKD/s"

# the lab user's own home names `~` in both modes (under sudo: the user's passwd entry)
mkdir -p "$LAB_USER_HOME/.ssh"
echo "FAKE PRIVATE KEY" >"$LAB_USER_HOME/.ssh/wd_trace_sbx_key"
echo "in the home folder" >"$LAB_USER_HOME/wd_trace_sbx_notes"
chown "$U" "$LAB_USER_HOME/.ssh" "$LAB_USER_HOME/.ssh/wd_trace_sbx_key" \
	"$LAB_USER_HOME/wd_trace_sbx_notes"
lab_on_exit rm -f "$LAB_USER_HOME/.ssh/wd_trace_sbx_key" "$LAB_USER_HOME/wd_trace_sbx_notes" \
	"$LAB_USER_HOME/wd_trace_sbx_new"
KEY=$LAB_USER_HOME/.ssh/wd_trace_sbx_key
NOTES=$LAB_USER_HOME/wd_trace_sbx_notes

for mode in root rootless; do
	echo "# $mode mode"
	check_eq "[$mode] the program runs and its status is passed on" "ran" \
		tr "$mode" /bin/sh -c 'echo ran'
	check_fails --denied 7 "[$mode] ... a status of 7 comes back as 7" \
		tr "$mode" /bin/sh -c 'exit 7'
	check "[$mode] the current folder is writable" tr "$mode" /bin/sh -c 'echo w >written.txt'
	check "[$mode] ... and the write landed on the host" test -s "$T/proj/written.txt"
	check_eq "[$mode] a host file outside the current folder is readable" "readable" \
		tr "$mode" /bin/cat "$T/outside/open.txt"
	check_fails --denied 1,2 "[$mode] ... but not writable" \
		tr "$mode" /bin/sh -c "echo x >'$T/outside/new.txt'"
	check "[$mode] ... and nothing was made there" test ! -e "$T/outside/new.txt"
	check_eq "[$mode] a file of the home folder is readable" "in the home folder" \
		tr "$mode" /bin/cat "$NOTES"
	check_fails --denied 1,2 "[$mode] ... but the home folder is read-only (no scratch overlay in bubblewrap 0.8)" \
		tr "$mode" /bin/sh -c "echo x >'$LAB_USER_HOME/wd_trace_sbx_new'"
	check_fails --denied 1 "[$mode] the credential store ~/.ssh is hidden" \
		tr "$mode" /bin/cat "$KEY"
	check "[$mode] ... while it is there on the host" test -s "$KEY"
	log=$T/logs/audit.jsonl
	[[ $mode == root ]] || log=$T/ulogs/audit.jsonl
	check_eq "[$mode] the audit log reads as empty (masked)" "" tr "$mode" /bin/cat "$log"
	check "[$mode] ... while it is there on the host" grep -q '"run.start"' "$log"
	if [[ $mode == root ]]; then
		check_fails --denied 1 "[$mode] Warden's state folder in the home is hidden" \
			tr "$mode" /bin/cat "$H/.local/state/warden/approval"
	fi
	check_eq "[$mode] /run/warden is empty" "" tr "$mode" /bin/ls -A /run/warden
	check_eq "[$mode] /sys is empty" "" tr "$mode" /bin/ls -A /sys
	check_eq "[$mode] the host's /tmp is visible (read-only, as the rest of the host)" \
		"host tmp" tr "$mode" /bin/cat "$HOSTTMP"
	check_fails --denied 1,2 "[$mode] ... but not writable" \
		tr "$mode" /bin/sh -c "echo x >'$HOSTTMP.new'"
	check "[$mode] ... and nothing was made there" test ! -e "$HOSTTMP.new"
	check_eq "[$mode] control: the program's own scratch (\$TMPDIR) is writable" "scratch" \
		tr "$mode" /bin/sh -c 'echo scratch >"$TMPDIR/s" && cat "$TMPDIR/s"'
	check_eq "[$mode] /run is visible read-only otherwise (its folders listed)" "yes" \
		tr "$mode" /bin/sh -c "test -d '$SOCKD' && echo yes"
	check_fails --denied 3 "[$mode] a host service on a socket under /run is not reachable" \
		tr "$mode" "$PY" "$T/client.py" "$SOCKD/s"
	check "[$mode] the trace was written" test -s "$([[ $mode == root ]] && echo "$T/rtrace/trace.jsonl" || echo "$T/ulogs/trace.jsonl")"
	check_eq "[$mode] ... the socket is covered in the sandbox's view, not only refused" \
		"character special file" tr "$mode" /usr/bin/stat -c %F "$SOCKD/s"
	check_eq "[$mode] ... while the host shows a socket there" "socket" stat -c %F "$SOCKD/s"

	# /run's sockets come and go: one that is gone between the look at /run and the sandbox's
	# start must not stop the trace (it did: bwrap could not make the mount point of its mask
	# in the read-only view, "Can't mkdir parents"). It is removed while the sandbox's first
	# process waits at its exec of bwrap (tr_vanish): a handshake, no timing involved.
	vd=$(mktemp -d /run/wd-trace-vanish.XXXXXX) || exit 1
	lab_on_exit rm -rf "$vd"
	chmod 0755 "$vd"
	"$PY" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$vd/s"
	rm -f "$T/vanish/done"
	check "[$mode] a socket under /run that will be gone is there when the trace starts" test -S "$vd/s"
	check_eq "[$mode] ... the trace runs although it is removed before the sandbox starts" "ran" \
		tr_vanish "$mode" "$vd" /bin/sh -c 'echo ran'
	check "[$mode] ... (it was removed then: the probe ran)" grep -qx "$vd/s" "$T/vanish/done"
	check "[$mode] ... and is gone from the host" test ! -e "$vd"
done

if ((LAB_FAILED)); then
	for f in "$T/logs/vanish-err" "$T/ulogs/vanish-err" "$T/ulogs/err"; do
		[[ -s $f ]] && tail -20 "$f" | sed "s#^#    | $(basename "$f"): #"
	done
fi
lab_finish
