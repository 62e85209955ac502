#!/usr/bin/env bash
# recorder_identity.sh - the file-access recorder acts with the program's whole identity, not
# root's (issue 25, item 4; docs/files.md "Identity"): a FUSE mount made by root without
# allow_other admits a caller by its real, effective and saved uid, not by its file system uid.
# Root reads the mount's secret on the host (the positive control), `nobody` cannot (the
# control of the refusal); `warden trace` in root mode (the program runs as nobody) must not
# get it through the recorder, which carries the program's opens out; `warden run` with a read
# grant on it is refused, as it always was. Beside each, the same probe on an ordinary
# readable file succeeds.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
PY3=/usr/bin/python3
[[ -x $PY3 ]] || { echo "SKIP: python3 missing"; exit 77; }
FS=${WD_FUSE_SECRET:-}
# deploy/debian-packages brings libfuse3-dev: a helper that is missing is an error, never a skip
[[ -n $FS && -x $FS ]] || {
	echo "FAIL - fuse_secret is not built (libfuse3-dev missing: deploy/install-deps)"
	echo "0 passed, 1 failed"
	exit 1
}
[[ -c /dev/fuse ]] || { echo "SKIP: no /dev/fuse"; exit 77; }
lab_up

# not in /tmp: the trace's /tmp is its own
T=$(mktemp -d /var/tmp/wd-rec-id-XXXXXX) || exit 1
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
chmod 0755 "$T"
mkdir -p "$T/mnt" "$T/proj" "$T/logs"
echo "readable" >"$T/open.txt"
chmod -R a+rX "$T"
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
SECRET=wd-fuse-secret-$$-$RANDOM$RANDOM

# the mount lives in this script's own mount namespace (lab_require_root's), root's, no
# allow_other
"$FS" "$T/mnt" "$SECRET" 2>"$T/fuse.err" &
fpid=$!
lab_on_exit sh -c "kill $fpid 2>/dev/null; :"
lab_on_exit umount -l "$T/mnt"
for _ in $(seq 100); do
	mountpoint -q "$T/mnt" && break
	sleep 0.05
done
mountpoint -q "$T/mnt" || { echo "FAIL: fuse_secret did not mount: $(cat "$T/fuse.err")"; exit 1; }

# rd FILE: FILE's bytes on stdout, exit 1 when it cannot be opened or read; a plain open and
# read, no fstat (cat's fstat is refused by the mount on its own, after the open)
cat >"$T/rd.py" <<'EOF'
import os, sys
try:
    fd = os.open(sys.argv[1], os.O_RDONLY)
    sys.stdout.write(os.read(fd, 200).decode())
except OSError as e:
    print("refused:", e.strerror, file=sys.stderr)
    sys.exit(1)
EOF
chmod 0644 "$T/rd.py"

echo "# the mount: root reads it, nobody does not"
check_eq "root reads the secret on the host" "$SECRET" "$PY3" "$T/rd.py" "$T/mnt/secret"
check_eq "nobody reads an ordinary file on the host (the control of the next)" "readable" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$PY3" "$T/rd.py" "$T/open.txt"
check_fails --denied 1 "nobody cannot read the secret on the host (the mount's owner check)" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$PY3" "$T/rd.py" "$T/mnt/secret"
check "... but root with only its file system ids nobody's reads it (what the recorder was)" \
	"$PY3" -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.setfsgid(65534); libc.setfsuid(65534)
sys.exit(0 if os.read(os.open(sys.argv[1], os.O_RDONLY), 200) else 1)
' "$T/mnt/secret"

# tr OUT CMD...: CMD under warden trace (root mode: the program runs as nobody) from
# $T/proj; its stdout into OUT, the trace into OUT.trace
tr()
{
	local out=$1
	shift
	(cd "$T/proj" && in_host "$W" trace -q --audit-log "$T/logs/audit.jsonl" \
		-o "$out.trace" -- "$@" >"$out" 2>"$out.err")
}

echo "# warden trace (root mode): the recorder opens as the program would"
check "a trace reads an ordinary host file (the control)" tr "$T/t1" "$PY3" "$T/rd.py" "$T/open.txt"
check_eq "... and the program got its bytes" "readable" cat "$T/t1"
check "... and the trace records the read" grep -qF "\"$T/open.txt\"" "$T/t1.trace"
check_fails --denied 1 "a trace of the same reader on the root-only FUSE file fails" \
	tr "$T/t2" "$PY3" "$T/rd.py" "$T/mnt/secret"
check_fails --denied 1 "... the secret is not in the program's output" grep -qF "$SECRET" "$T/t2"
check "... the trace was written" test -s "$T/t2.trace"
check_fails --denied 1 "... the secret is not in the trace" grep -qF "$SECRET" "$T/t2.trace"
check_fails --denied 1 "... and the trace records no read of it (warden init would grant it)" \
	grep -qF "\"op\":\"read\",\"path\":\"$T/mnt/secret\"" "$T/t2.trace"
check "... the same trace recorded the reader's read of itself (the control of the last)" \
	grep -qF "\"op\":\"read\",\"path\":\"$T/rd.py\"" "$T/t2.trace"

echo "# warden run with a read grant on it: refused, as before"
for p in open secret; do
	{
		echo "version: 1"
		echo "filesystem:"
		if [[ $p == open ]]; then
			echo "  read: [\"$T/open.txt\", \"$T/rd.py\"]"
		else
			echo "  read: [\"$T/open.txt\", \"$T/rd.py\", \"$T/mnt/secret\"]"
		fi
		echo "audit:"
		echo "  files: all"
	} >"$T/pol-$p.yaml"
done
# wr POLICY OUT CMD...: warden run, stdout into OUT, stderr into OUT.err
wr()
{
	local p=$1 out=$2
	shift 2
	in_host "$W" run -q --audit-log "$T/logs/audit.jsonl" -p "$p" -- "$@" >"$out" 2>"$out.err"
}
check "a run granted an ordinary file reads it (the control)" \
	wr "$T/pol-open.yaml" "$T/r1" "$PY3" "$T/rd.py" "$T/open.txt"
check_eq "... its bytes" "readable" cat "$T/r1"
wr "$T/pol-secret.yaml" "$T/r2" "$PY3" "$T/rd.py" "$T/mnt/secret"
check_eq "a run granted the FUSE file is refused before it starts (125)" 125 echo "$?"
check "... because the program's user may not open it" \
	grep -qE "opening grant $T/mnt/secret as uid 65534 .*Permission denied" "$T/r2.err"
check_fails --denied 1 "... the secret is not in its output" grep -qF "$SECRET" "$T/r2"

echo "# audit.files: denied judges as the program's user: what it may not look up is denied"
mkdir -m 0700 "$T/rootonly"
echo "root only" >"$T/rootonly/f"
printf 'version: 1\nfilesystem:\n  read: ["%s"]\naudit:\n  files: denied\n' "$T/rd.py" \
	>"$T/pol-denied.yaml"
A=$T/logs/audit.jsonl
# denied RUN PATH: the file events of RUN on PATH that say denied
denied() { jq -s --arg r "$1" --arg p "$2" '[.[] | select(.run == $r and .type == "file" and .resource == $p and .allowed == false)] | length' "$A"; }
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
check_fails --denied 1 "a run without grants cannot read a root-only folder's file" \
	wr "$T/pol-denied.yaml" "$T/r3" "$PY3" "$T/rd.py" "$T/rootonly/f"
run3=$(last_run)
check_eq "... and its attempt is recorded as denied (the user cannot even look it up)" 1 \
	denied "$run3" "$T/rootonly/f"
check_fails --denied 1 "a run without grants cannot read the FUSE secret" \
	wr "$T/pol-denied.yaml" "$T/r4" "$PY3" "$T/rd.py" "$T/mnt/secret"
run4=$(last_run)
check_eq "... and its attempt is recorded as denied" 1 denied "$run4" "$T/mnt/secret"
check_fails --denied 1 "a run's attempt on a missing file fails too (the control)" \
	wr "$T/pol-denied.yaml" "$T/r5" "$PY3" "$T/rd.py" "$T/nowhere"
run5=$(last_run)
check_eq "... not recorded as denied" 0 denied "$run5" "$T/nowhere"

check "the FUSE server is still serving (the probes above met the mount)" kill -0 "$fpid"
check_eq "... and root still reads the secret" "$SECRET" "$PY3" "$T/rd.py" "$T/mnt/secret"
lab_finish
