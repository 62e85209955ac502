#!/usr/bin/env bash
# recorder_end.sh - a run ends when its program ends (issue 25, item 7): a program that
# ptrace-attaches the sandbox's pid 1 (bubblewrap's reaper) and exits leaves that pid 1 stopped,
# so it never reaps the program and never exits; the run must end anyway, by itself, with the
# program's status. Under `warden trace` (root and rootless mode: the recorder supervises the
# run) and under `warden run` with audit.files (root mode, and as the lab user). Each run is
# bounded by an outer `timeout 60`: a hang is its 124, a failure; the verdict is the status, not
# a time. Beside each, the same program without the attach (the control).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
PY3=/usr/bin/python3
[[ -x $PY3 ]] || { echo "SKIP: python3 missing"; exit 77; }
lab_up
lab_user || { echo "FAIL: no lab user"; exit 1; }

# not in /tmp: the trace's /tmp is its own
T=$(mktemp -d /var/tmp/wd-rec-end-XXXXXX) || exit 1
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
chmod 0755 "$T"
mkdir -p "$T/proj" "$T/logs" "$T/ulogs"
chown "$LAB_USER_UID:$LAB_USER_GID" "$T/proj" "$T/ulogs"
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0

# hold.py attach|keep|none: attach: PTRACE_ATTACH the sandbox's pid 1 and wait until it stopped
# (prints "held"; exit 3 when the kernel refused the attach), then exit 7 without detaching;
# keep: a child of the program does that and stays, holding pid 1 stopped, while the program
# exits 7 once it heard "held"; none: exit 7 at once
cat >"$T/hold.py" <<'EOF'
import ctypes, os, signal, sys

def attach():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    if libc.ptrace(16, 1, None, None) != 0:  # PTRACE_ATTACH
        print("attach refused:", os.strerror(ctypes.get_errno()))
        sys.stdout.flush()
        os._exit(3)
    _, st = os.waitpid(1, 0x40000000)  # __WALL: the tracee's stop
    print("held" if os.WIFSTOPPED(st) else "not stopped")
    sys.stdout.flush()

if sys.argv[1] == "attach":
    attach()
elif sys.argv[1] == "keep":
    r, w = os.pipe()
    if os.fork() == 0:
        os.close(r)
        attach()
        os.write(w, b"x")
        while True:
            signal.pause()
    os.close(w)
    if os.read(r, 1) != b"x":
        sys.exit(4)
sys.exit(7)
EOF
chmod 0644 "$T/hold.py"
cat >"$T/pol.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/hold.py"]
audit:
  files: denied
EOF
chmod 0644 "$T/pol.yaml"

# go MODE VERB WHAT: warden VERB (trace or run) of hold.py WHAT, as root (MODE root) or the lab
# user (MODE user), bounded by timeout 60; prints the program's output and "status N"
go()
{
	local mode=$1 verb=$2 what=$3 rc args
	if [[ $verb == trace ]]; then
		args=(trace -q -o "$T/$([[ $mode == root ]] && echo logs || echo ulogs)/trace-$what.jsonl")
	else
		args=(run -q -p "$T/pol.yaml")
	fi
	if [[ $mode == root ]]; then
		(cd "$T/proj" && in_host timeout 60 "$W" "${args[@]}" --audit-log "$T/logs/audit.jsonl" \
			-- "$PY3" "$T/hold.py" "$what" 2>>"$T/err")
	else
		in_host_user sh -c 'cd "$1" && shift && exec "$@" 2>>"$0"' "$T/ulogs/err" "$T/proj" \
			timeout 60 "$W" "${args[@]}" --audit-log "$T/ulogs/audit.jsonl" \
			-- "$PY3" "$T/hold.py" "$what"
	fi
	rc=$?
	echo "status $rc"
}

for mode in root user; do
	for verb in trace run; do
		echo "# warden $verb ($mode)"
		check_eq "[$verb $mode] the program without the attach: its status comes back (the control)" \
			"status 7" go "$mode" "$verb" none
		check_eq "[$verb $mode] the program stops pid 1 and exits: the run ends by itself with its status" \
			"$(printf 'held\nstatus 7')" go "$mode" "$verb" attach
		check_eq "[$verb $mode] its child holds pid 1 stopped, the program exits: the run ends by itself with its status" \
			"$(printf 'held\nstatus 7')" go "$mode" "$verb" keep
	done
done

lab_finish
