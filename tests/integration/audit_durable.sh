#!/usr/bin/env bash
# audit_durable.sh - run.start is on disk before the program runs (issue 27, item 11): its
# fdatasync is no longer done before the network is built, but by a helper process while it is
# built, and the launcher waits for it at the last stage before exec. Shown two ways:
#  - the order, under strace -f (root and rootless): the fdatasync of the audit log returns
#    before bubblewrap is executed and before the program is (strace reports a tracee's
#    syscall return before that tracee goes on; the launcher waits for the helper's exit, so
#    the order is causal, not timing);
#  - a sync that fails fails the run closed: an audit log on a FUSE file system whose fsync
#    answers EIO (tests/integration/fuse_nosync.c) takes run.start's write, cannot sync it,
#    and the run exits 125 before the program ran; positive control: the same file system
#    with fsync working, the same run starts and the program prints.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
command -v strace >/dev/null || { echo "FAIL - strace is missing (deploy/install-deps)"; echo "0 passed, 1 failed"; exit 1; }
command -v setpriv >/dev/null || { echo "FAIL: setpriv is missing"; exit 1; }
FN=${WD_FUSE_NOSYNC:-}
# deploy/debian-packages brings libfuse3-dev: a helper that is missing is an error, never a skip
[[ -n $FN && -x $FN ]] || {
	echo "FAIL - fuse_nosync is not built (libfuse3-dev missing: deploy/install-deps)"
	echo "0 passed, 1 failed"
	exit 1
}
[[ -c /dev/fuse ]] || { echo "SKIP: no /dev/fuse"; exit 77; }
lab_user || { echo "FAIL: no unprivileged test user (useradd failed)"; exit 1; }
lab_up

# on the disk (not tmpfs: there fdatasync does nothing worth ordering)
T=$(mktemp -d /var/tmp/wd-audit-durable-XXXXXX) || exit 1
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
chmod 0755 "$T"
install -d -m 0700 -o "$LAB_USER_UID" -g "$LAB_USER_GID" "$T/user"
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
P=$SRC/deploy/examples/minimal.yaml

# order TRACE LOG: "synced-first" when in strace's output the fdatasync of LOG returned (= 0)
# before the first execve of bwrap and before the program's (/bin/true) execve
order()
{
	python3 - "$1" "$2" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
log = sys.argv[2]
pending = {}   # pid -> index of an unfinished fdatasync of the log
synced = bwrap = prog = None
for i, l in enumerate(lines):
    m = re.match(r'(\d+)\s+(.*)', l)
    if not m:
        continue
    pid, rest = m.groups()
    if rest.startswith('fdatasync(') and log in rest:
        if rest.endswith('= 0'):
            synced = synced if synced is not None else i
        elif '<unfinished' in rest:
            pending[pid] = i
    elif rest.startswith('<... fdatasync resumed>') and pid in pending and rest.endswith('= 0'):
        synced = synced if synced is not None else i
    elif rest.startswith('execve(') and bwrap is None and '/bwrap"' in rest.split(',')[0]:
        bwrap = i
    elif rest.startswith('execve(') and re.match(r'execve\("(/usr)?/bin/true"', rest) and \
            ' = 0' in rest and prog is None:
        prog = i
if synced is None or bwrap is None or prog is None:
    print(f"missing: synced={synced} bwrap={bwrap} program={prog}")
    sys.exit(1)
print("synced-first" if synced < bwrap < prog else f"out of order: synced={synced} bwrap={bwrap} program={prog}")
EOF
}

# --- the order, root and rootless (LeakSanitizer cannot run under ptrace: off for these two runs
# of a sanitizer build; a release build ignores the variable)
check "root: a run under strace -f exits 0" in_host strace -f -qq -y -e trace=fdatasync,execve \
	-o "$T/root.st" env ASAN_OPTIONS=detect_leaks=0 WARDEN_AUDIT_LOG="$T/root.jsonl" "$W" run -q -p "$P" -- /bin/true
check_eq "root: run.start's fdatasync returned before bwrap and the program were executed" \
	synced-first order "$T/root.st" "$T/root.jsonl"
check "rootless: a run under strace -f exits 0" in_host_user strace -f -qq -y \
	-e trace=fdatasync,execve -o "$T/user/user.st" env ASAN_OPTIONS=detect_leaks=0 \
	WARDEN_AUDIT_LOG="$T/user/audit.jsonl" \
	"$W" run -q -p "$P" -- /bin/true
check_eq "rootless: run.start's fdatasync returned before bwrap and the program were executed" \
	synced-first order "$T/user/user.st" "$T/user/audit.jsonl"
check_eq "control: the log synced is the run's (run.start first, run.exit last)" \
	"run.start run.exit" jq -r -s 'map(.action) | [first, last] | join(" ")' "$T/user/audit.jsonl"

# --- a sync that fails: the run never starts (root mode; the mounts are this script's own)
for m in fail ok; do
	mkdir -p "$T/$m"
	"$FN" "$T/$m" "$m" 2>"$T/fuse-$m.err" &
	fpid=$!
	lab_on_exit sh -c "kill $fpid 2>/dev/null; :"
	lab_on_exit umount -l "$T/$m"
	for _ in $(seq 100); do
		mountpoint -q "$T/$m" && break
		sleep 0.05
	done
	mountpoint -q "$T/$m" || { echo "FAIL: fuse_nosync did not mount: $(cat "$T/fuse-$m.err")"; exit 1; }
done
# fr MODE: a run whose program prints "ran", its log on the MODE mount; stdout, then the status
fr()
{
	local out rc=0
	out=$(in_host "$W" run -q --audit-log "$T/$1/audit.jsonl" -p "$P" -- /bin/echo ran \
		2>"$T/fr-$1.err") || rc=$?
	echo "$out $rc"
}
check_eq "control: with fsync working on that file system, the program runs (exit 0)" "ran 0" fr ok
check_eq "control: ... its run.start and run.exit are in the log" "run.start run.exit" \
	jq -r -s 'map(.action) | [first, last] | join(" ")' "$T/ok/audit.jsonl"
check_eq "fsync failing (EIO): the program never ran, the run exits 125" " 125" fr fail
check "... and says run.start could not be made durable" grep -q \
	"run.start could not be .*durabl.*Input/output error" "$T/fr-fail.err"
check_eq "... run.start was written (the sync, not the write, failed)" run.start \
	jq -r -s 'map(.action) | first' "$T/fail/audit.jsonl"
check "the file system was asked to sync" grep -q "fsync -> EIO" "$T/fuse-fail.err"

lab_finish
