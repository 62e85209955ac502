#!/usr/bin/env bash
# trace_tmp.sh - `warden trace` of a program under the host's /tmp (issue 27, item 13): the
# learning sandbox shows the host's /tmp read-only like the rest of the host, so a program in
# /tmp/xyz that reads its file there is traced and `warden init` grants that file; the
# program's own scratch is $TMPDIR (writable, its own). And a traced program that could not even
# start (not there, not executable) writes no trace and no policy and says so, with no
# "next: warden init" line.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
command -v jq >/dev/null || { echo "FAIL: jq is missing"; exit 1; }
lab_up

# under the host's /tmp on purpose (lab_tmpdir: the user's, as one)
T=$(lab_tmpdir wd-trace-tmp) || exit 1
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
chmod 0755 "$T"
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
IDS=$(lab_program_ids)
H=$T/home
mkdir -p "$T/xyz" "$T/other" "$H" "$T/state" "$T/out"
echo "data in tmp" >"$T/xyz/data.txt"
echo "another tmp file" >"$T/other/more.txt"
cat >"$T/xyz/prog.sh" <<'EOS'
#!/bin/sh
# reads its file in its folder (relative: the cwd is /tmp/...), and one more by absolute path
cat data.txt && cat "$(pwd)/../other/more.txt" >/dev/null
EOS
chmod 0755 "$T/xyz/prog.sh"
echo "not a program" >"$T/xyz/plain.txt"
chmod 0644 "$T/xyz/plain.txt"
chmod -R a+rX "$T"
[[ ${LAB_AS_USER:-} != 1 ]] || chown -R "$IDS" "$T"
# the program's folder is read-only to it: the trace does not bind it writable, so only the
# host's /tmp shows it in the sandbox (the "bwrap: Can't chdir to /tmp/..." of issue 27)
chmod 0555 "$T/xyz"
lab_on_exit chmod 0755 "$T/xyz"

# wt OUT CMD...: warden trace of CMD in /tmp/.../xyz, the trace to OUT (stderr: OUT.err)
wt()
{
	local out=$1
	shift
	(cd "$T/xyz" && HOME=$H XDG_STATE_HOME=$T/state WARDEN_AUDIT_LOG=$T/audit.jsonl \
		in_host "$W" trace -o "$out" -- "$@" 2>"$out.err")
}
# wi ARGS...: warden init in /tmp/.../xyz (stderr: $T/init.err)
wi() { (cd "$T/xyz" && HOME=$H XDG_STATE_HOME=$T/state WARDEN_AUDIT_LOG=$T/audit.jsonl \
	in_host "$W" init "$@" 2>"$T/init.err"); }
# status CMD...: CMD's exit status on stdout (the check compares it: 126/127 are the verdicts
# here, not a probe that could not run)
status() { "$@" >/dev/null 2>&1; echo $?; }

echo "# a program under the host's /tmp"
check_eq "a program whose folder is under /tmp is traced and reads its file there" \
	"data in tmp" wt "$T/out/tmp.jsonl" ./prog.sh
check "... the trace records the read of the file in /tmp" jq -e -s --arg p "$T/xyz/data.txt" \
	'any(.[]; .type == "file" and .op == "read" and .path == $p)' "$T/out/tmp.jsonl"
check "... and of the other /tmp file read by its absolute path" jq -e -s \
	--arg p "$T/other/more.txt" 'any(.[]; .type == "file" and .path == $p)' "$T/out/tmp.jsonl"
check_fails --denied 1,2 "the host's /tmp is read-only in the trace (a write outside the current folder fails)" \
	wt "$T/out/w.jsonl" /bin/sh -c "echo x >'$T/other/new.txt'"
check "... and nothing was made there" test ! -e "$T/other/new.txt"
check_eq "control: the program's own scratch (\$TMPDIR) is writable" "scratch" \
	wt "$T/out/s.jsonl" /bin/sh -c 'echo scratch >"$TMPDIR/s" && cat "$TMPDIR/s"'
check "warden init --from that trace writes a policy" \
	wi --from "$T/out/tmp.jsonl" -o "$T/out/policy.yaml"
check "... which grants the file in /tmp" grep -q "data.txt\|xyz" "$T/out/policy.yaml"
# wr: the program run under that policy, in its folder
wr() { (cd "$T/xyz" && HOME=$H in_host "$W" run -q --audit-log "$T/audit.jsonl" \
	-p "$T/out/policy.yaml" -- ./prog.sh); }
check_eq "... and the program runs under it" "data in tmp" wr

echo "# a host service on a unix socket in the host's /tmp stays out of reach"
PY=/usr/bin/python3
cat >"$T/sock.py" <<'EOS'
import os, socket, sys
if sys.argv[1] == "serve":
    s = socket.socket(socket.AF_UNIX)
    s.bind(sys.argv[2])
    os.chmod(sys.argv[2], 0o777)
    s.listen(8)
    while True:
        c, _ = s.accept()
        c.sendall(b"HOSTSERVICE\n")
        c.close()
c = socket.socket(socket.AF_UNIX)
try:
    c.connect(sys.argv[2])
except OSError as e:
    print(e, file=sys.stderr)
    sys.exit(3)
print(c.recv(64).decode().strip())
EOS
chmod 0644 "$T/sock.py"
"$PY" "$T/sock.py" serve "$T/host.sock" &
srv=$!
lab_on_exit kill "$srv"
for _ in $(seq 50); do [[ -S $T/host.sock ]] && break; sleep 0.1; done
check_eq "control: the host reaches its service on $T/host.sock" "HOSTSERVICE" \
	"$PY" "$T/sock.py" connect "$T/host.sock"
check_fails --denied 3 "a traced program does not (the socket is visible read-only, the connect refused)" \
	wt "$T/out/sock.jsonl" "$PY" "$T/sock.py" connect "$T/host.sock"
check "... and the trace records the refusal" jq -e -s --arg p "$T/host.sock" \
	'any(.[]; .type == "file" and .op == "connect" and .path == $p and has("refused"))' \
	"$T/out/sock.jsonl"

echo "# a program that could not start"
for what in missing plain; do
	case $what in
	missing) cmd=$T/xyz/no-such-program want=127 ;;
	plain) cmd=$T/xyz/plain.txt want=126 ;;
	esac
	check_eq "[$what] warden trace exits $want" "$want" status wt "$T/out/$what.jsonl" "$cmd"
	check "[$what] ... and writes no trace" test ! -e "$T/out/$what.jsonl"
	check "[$what] ... and says the program did not start" \
		grep -q "did not start" "$T/out/$what.jsonl.err"
	check_fails "[$what] ... with no 'next: warden init' line" \
		grep -q "next: warden init" "$T/out/$what.jsonl.err"
	check_eq "[$what] warden init -- it exits $want" "$want" \
		status wi -o "$T/out/$what.yaml" -- "$cmd"
	check "[$what] ... and writes no policy" test ! -e "$T/out/$what.yaml"
	check "[$what] ... and says why" grep -q "did not start" "$T/init.err"
done
# a current folder inside a credential store: the learning sandbox hides the store, so bwrap
# cannot chdir there and fails before the program runs (no exec recorded)
mkdir -p "$H/.aws/sub"
chmod -R a+rX "$H"
[[ ${LAB_AS_USER:-} != 1 ]] || chown -R "$IDS" "$H"
# wth OUT CMD...: warden trace of CMD in ~/.aws/sub (stderr: OUT.err)
wth() { local out=$1; shift; (cd "$H/.aws/sub" && HOME=$H XDG_STATE_HOME=$T/state \
	WARDEN_AUDIT_LOG=$T/audit.jsonl in_host "$W" trace -o "$out" -- "$@" 2>"$out.err"); }
check_eq "[sandbox failed] warden trace of a program whose folder the trace hides exits 125" \
	125 status wth "$T/out/hidden.jsonl" /bin/true
check "[sandbox failed] ... bwrap said why" grep -q "bwrap: Can't chdir" "$T/out/hidden.jsonl.err"
check "[sandbox failed] ... and warden says the program did not start" \
	grep -q "did not start" "$T/out/hidden.jsonl.err"
check "[sandbox failed] ... and writes no trace" test ! -e "$T/out/hidden.jsonl"
check_fails "[sandbox failed] ... with no 'next: warden init' line" \
	grep -q "next: warden init" "$T/out/hidden.jsonl.err"
check_eq "control: the same program in the program's folder is traced (exit 0)" 0 \
	status wt "$T/out/true.jsonl" /bin/true
check "control: ... and its trace is written" test -s "$T/out/true.jsonl"
# r127: a program that ran and exited 127 by itself: its status, then whether its trace is there
r127() { echo "$(status wt "$T/out/r127.jsonl" /bin/sh -c 'exit 127')" \
	"$(test -s "$T/out/r127.jsonl" && echo written)"; }
check_eq "control: a program that ran and exited 127 itself still writes its trace" \
	"127 written" r127

lab_finish
