#!/usr/bin/env bash
# run_gw_ready.sh - how `warden run` learns that its embedded gateway is ready (docs/run.md,
# "The embedded gateway"): a READY=1 datagram on the run's own $NOTIFY_SOCKET, counted only
# from the gateway's pid. Stand-in gateways (python3) that send it from their own pid, from a
# child, or exit: the first gets the run past the gateway stage (positive control), the
# second does not (the launcher waits its 5 s and stops it), the third is reported at once.
# The gateway's $NOTIFY_SOCKET is the run's, not one warden itself inherited.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
lab_up

T=$(lab_tmpdir wd-run-gw-ready)
lab_on_exit rm -rf "$T"
chmod 0755 "$T"
A=$T/audit.jsonl

# the stand-in: its name says from where READY=1 goes (own-gw: its pid; child-gw: a child's);
# it notes the $NOTIFY_SOCKET it got, then waits to be stopped
cat >"$T/own-gw" <<'PY'
#!/usr/bin/python3
import os, socket, sys, time
path = os.environ.get("NOTIFY_SOCKET", "")
with open(os.environ["WD_TEST_NOTE"], "w") as f:
    f.write(path + "\n")
def ready():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(b"READY=1\nSTATUS=serving", path)
if os.path.basename(sys.argv[0]) == "child-gw":
    pid = os.fork()
    if pid == 0:
        ready()
        os._exit(0)
    os.waitpid(pid, 0)
else:
    ready()
time.sleep(30)
PY
chmod 0755 "$T/own-gw"
ln -s own-gw "$T/child-gw"

# run_gw NAME: `warden run -- true` as root with the stand-in NAME; its exit status, then its
# stderr; NOTIFY_SOCKET as a service manager would have set it for warden itself
run_gw() {
	local rc=0 out
	out=$(in_host env WARDEN_GATEWAY_BIN="$T/$1" WD_TEST_NOTE="$T/note-$1" \
		NOTIFY_SOCKET="$T/outer.sock" "$W" run --audit-log "$A" -- true 2>&1 >/dev/null) || rc=$?
	printf '%s\n%s\n' "$rc" "$out"
}

echo "# READY=1 from the gateway's pid: ready"
run_gw own-gw >"$T/own.out"
check "the stand-in ran (control: it noted its NOTIFY_SOCKET)" test -s "$T/note-own-gw"
check "... which is the run's gw.ready, not the one warden inherited" \
	grep -qE '^/.+/gw\.ready$' "$T/note-own-gw"
check_fails "... (not the outer one)" grep -q outer.sock "$T/note-own-gw"
check "the run went past the gateway stage (the stand-in answers no register)" \
	grep -q "^warden run: gateway: registering run" "$T/own.out" || cat "$T/own.out"
check_fails "... not stopped as a gateway that is not ready" grep -q "not ready" "$T/own.out"

echo "# READY=1 from another process: not taken"
run_gw child-gw >"$T/child.out"
check "the stand-in ran (control)" test -s "$T/note-child-gw"
check "the run fails at the gateway stage: not ready within 5 s" \
	grep -q "^warden run: gateway: .*the embedded gateway was not ready within 5 s" "$T/child.out" ||
	cat "$T/child.out"
check_eq "... with status 125" 125 head -n 1 "$T/child.out"
check_fails "... and never reached register" grep -q "registering run" "$T/child.out"

echo "# a gateway that exits at start: said at once"
cat >"$T/exit-gw" <<'EOF2'
#!/bin/sh
echo "warden-gateway: the stand-in stops" >&2
exit 1
EOF2
chmod 0755 "$T/exit-gw"
run_gw exit-gw >"$T/exit.out"
check "its words end the error line" \
	grep -q "exited at start: warden-gateway: the stand-in stops" "$T/exit.out" || cat "$T/exit.out"
check_fails "... no wait for readiness" grep -q "not ready" "$T/exit.out"
check "no readiness socket is left in a state folder" \
	test -z "$(find /run/warden -name gw.ready 2>/dev/null)"
lab_finish
