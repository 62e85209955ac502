#!/usr/bin/env bash
# recorder_caps.sh - the file-access recorder is a process of its own that holds nothing of
# root's (issue 26, docs/files.md "Identity"): during `warden trace` in root mode (the program
# runs as nobody) the test finds the recorder by its name (warden-recorder, PR_SET_NAME), a
# child of the launcher, while the program blocks on a fifo the test holds, and reads its
# /proc/PID/status: no capability in its effective, permitted and bounding sets, all four
# uids and gids the program's user's and not 0, no_new_privs, not dumpable (its /proc files
# are root's). The positive control: the same reader on the launcher (root) shows capabilities
# and uid 0.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
PY3=/usr/bin/python3
[[ -x $PY3 ]] || { echo "SKIP: python3 missing"; exit 77; }
lab_up

# not in /tmp: the trace's /tmp is its own
T=$(mktemp -d /var/tmp/wd-rec-caps-XXXXXX) || exit 1
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
chmod 0755 "$T"
mkdir -p "$T/proj" "$T/logs"
mkfifo -m 0666 "$T/go"
chmod -R a+rX "$T"
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
NOBODY=$(id -u nobody)

# the program: blocks opening the fifo for reading until the test opens it for writing
(cd "$T/proj" && in_host "$W" trace -q --audit-log "$T/logs/audit.jsonl" -o "$T/t.trace" -- \
	"$PY3" -c 'import sys; open(sys.argv[1]).read()' "$T/go" >"$T/out" 2>"$T/err") &
tpid=$!
# should a check fail before the release: the fifo's writer ends the program
lab_on_exit sh -c "exec 3<>'$T/go'; sleep 0.1; exec 3>&-; :"

# ready: the program blocks in its open of the fifo (openat, 257, in /proc/PID/syscall), which
# the recorder answered: its process is past its setup and in its loop (waited for, never
# timed: the verdicts do not depend on it)
ready=
for _ in $(seq 600); do
	for p in $(pgrep -x python3); do
		grep -qF "$T/go" "/proc/$p/cmdline" 2>/dev/null &&
			[[ $(cut -d' ' -f1 "/proc/$p/syscall" 2>/dev/null) == 257 ]] && ready=$p
	done
	[[ -n $ready ]] && break
	sleep 0.05
done
check "the program blocks in its open of the fifo" test -n "$ready"
rec=$(pgrep -x warden-recorder | head -1)
check "the recorder's process is found by its name (warden-recorder)" test -n "$rec"
rec=${rec:-0}
launcher=$(awk '/^PPid:/ {print $2}' "/proc/$rec/status" 2>/dev/null)
launcher=${launcher:-0}
check_eq "... a child of the launcher (warden)" warden cat "/proc/$launcher/comm"

# field PID NAME: the value of NAME: in /proc/PID/status
field() { awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "/proc/$1/status"; }
zero=0000000000000000
echo "# the recorder (during the run)"
check_eq "CapEff is 0" $zero field "$rec" CapEff
check_eq "CapPrm is 0" $zero field "$rec" CapPrm
check_eq "CapBnd is 0 (an empty bounding set)" $zero field "$rec" CapBnd
check_eq "CapAmb is 0" $zero field "$rec" CapAmb
check_eq "Uid: real, effective, saved and fs are the program's user's" \
	"$NOBODY $NOBODY $NOBODY $NOBODY" field "$rec" Uid
NOGRP=$(id -g nobody)
check_eq "Gid: the same" "$NOGRP $NOGRP $NOGRP $NOGRP" \
	field "$rec" Gid
check_fails --denied 1 "... none of them 0" grep -qE '^(Uid|Gid):.*\b0\b' "/proc/$rec/status"
check_eq "NoNewPrivs is 1" 1 field "$rec" NoNewPrivs
# the kernel gives a process's /proc files (not the folder itself) to root when it is not
# dumpable: the program's own (dumpable, the same user) is the control
check_eq "not dumpable: its /proc/PID/environ is root's, not its user's" 0 \
	stat -c %u "/proc/$rec/environ"
check_eq "... while the program's (dumpable, the same user) is its user's (the control)" \
	"$NOBODY" stat -c %u "/proc/${ready:-0}/environ"
echo "# the positive control: the same reader on the launcher (root)"
check_fails --denied 1 "the launcher's CapEff is not 0" test "$(field "$launcher" CapEff)" = $zero
check_eq "the launcher's effective uid is 0" 0 sh -c "awk '/^Uid:/ {print \$3}' /proc/$launcher/status"

# release the program: the trace ends well
exec 3>"$T/go"
exec 3>&-
wait "$tpid"
check_eq "the trace ended well once released" 0 echo "$?"
check "... and the trace was written" test -s "$T/t.trace"
check_fails --denied 1 "... and the recorder is gone" pgrep -x warden-recorder
lab_finish
