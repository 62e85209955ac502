#!/usr/bin/env bash
# run_print_bwrap.sh - `warden run --print-bwrap` (issue 13, performance): the bubblewrap
# command line a run builds, printed as one shell line, runs as printed (inside lab-host, as
# the caller: root, or the test user under run_as_user.sh); it is the line the launcher execs
# (the options a real run hands bwrap, WARDEN_DEBUG_BWRAP, word for word but the descriptor
# numbers); printing runs nothing (no program, no run.start) and a bad policy prints nothing.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
for need in /usr/bin/python3 /usr/bin/bash; do
	[[ -x $need ]] || { echo "FAIL - $need is missing"; echo "0 passed, 1 failed"; exit 1; }
done
lab_up
if [[ ${LAB_AS_USER:-} == 1 ]]; then
	lab_user || { echo "FAIL - no test user"; echo "0 passed, 1 failed"; exit 1; }
fi

T=$(lab_tmpdir wd-run-print-bwrap)
lab_on_exit rm -rf "$T"
chmod 0755 "$T"
mkdir -p "$T/rw" "$T/tmp"
chmod 0777 "$T/rw" "$T/tmp"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW
cat >"$T/p.yaml" <<EOF
version: 1
filesystem:
  write: ["$T/rw"]
network:
  allow: [allowed.test]
EOF
printf 'version: 1\nnetwork:\n  allow: [[[\n' >"$T/bad.yaml"

# the printed line runs as whoever called warden: the test user under run_as_user.sh
as_caller()
{
	if [[ ${LAB_AS_USER:-} == 1 ]]; then
		in_host_user "$@"
	else
		in_host env -i PATH=/usr/bin:/bin "$@"
	fi
}
wr() { in_host env TMPDIR="$T/tmp" "$W" run --audit-log "$A" "$@"; }
# print_line ARGS...: the printed line (stdout) of --print-bwrap, into $T/line
print_line() { wr -q -p "$T/p.yaml" --print-bwrap "$@" >"$T/line"; }
# words FILE: the shell words of the line in FILE, without its redirections, setpriv, env -i
words()
{
	python3 -c 'import re, shlex, sys
w = shlex.split(open(sys.argv[1]).read())
while w and w[-1][:1].isdigit() and re.match(r"^[0-9]+[<>]", w[-1]):
    w.pop()
if w and w[0] == "setpriv":
    w = w[w.index("env"):]
if w[:2] == ["env", "-i"]:
    w = w[2:]
print("\n".join(w))' "$1"
}
# norm: the descriptor numbers of bwrap's options as N
norm()
{
	awk 'f { print "N"; f = 0; next }
	/^--(seccomp|info-fd|ro-bind-data|bind-data|bind-fd|ro-bind-fd|args)$/ { f = 1 } { print }'
}

echo "# the printed line runs"
check "--print-bwrap -- /bin/echo exits 0" print_line -- /bin/echo "printed line" ran
check_eq "... with one line on stdout" 1 wc -l <"$T/line"
check_eq "the line, run by the caller in lab-host, runs the program in the sandbox" \
	"printed line ran" as_caller bash -c "$(cat "$T/line")"
check_eq "... as the program's user of a real run" "$(wr -q -p "$T/p.yaml" -- /usr/bin/id -u)" \
	as_caller bash -c "$(wr -q -p "$T/p.yaml" --print-bwrap -- /usr/bin/id -u 2>/dev/null)"
check_eq "... with the run's hostname" warden \
	as_caller bash -c "$(wr -q -p "$T/p.yaml" --print-bwrap -- /bin/cat /proc/sys/kernel/hostname)"
check_eq "... under the seccomp filter" "2" as_caller bash -c \
	"$(wr -q -p "$T/p.yaml" --print-bwrap -- /bin/sh -c 'sed -n "s/^Seccomp:[[:space:]]*//p" /proc/self/status')"
check_eq "... with the run's generated /etc/resolv.conf" "nameserver 10.213.0.1" as_caller bash -c \
	"$(wr -q -p "$T/p.yaml" --print-bwrap -- /bin/sh -c 'grep ^nameserver /etc/resolv.conf | head -n1')"

echo "# nothing runs when printing"
rm -f "$T/rw/ran"
: >"$A"
check "--print-bwrap -- touch a file in the write grant exits 0" print_line -- /usr/bin/touch "$T/rw/ran"
check_fails "... and the program did not run: no file" test -e "$T/rw/ran"
check_fails "... and no run.start was written" grep -q '"run.start"' "$A"
check "control: the printed line makes the file (the grant is bound through its descriptor)" \
	as_caller bash -c "$(cat "$T/line")"
check "... it is there" test -e "$T/rw/ran"
check "control: a real run of the same policy, to the same log, exits 0" wr -q -p "$T/p.yaml" -- /bin/true
check "... and writes run.start" grep -q '"run.start"' "$A"

echo "# the line is the one a real run execs"
WARDEN_DEBUG_BWRAP=1 wr -q -p "$T/p.yaml" -- /bin/echo same words 2>"$T/real.err" >/dev/null
grep -m1 '^/usr/bin/bwrap ' "$T/real.err" | tr ' ' '\n' | norm >"$T/real.words"
check "a real run's bwrap options were captured (WARDEN_DEBUG_BWRAP)" test -s "$T/real.words"
print_line -- /bin/echo same words
words "$T/line" | norm >"$T/print.words"
check "the printed line's words are the real run's, but the descriptor numbers" \
	diff "$T/real.words" "$T/print.words"

echo "# refusals"
check_fails --denied 125 "a policy that does not parse: --print-bwrap fails with 125" \
	wr -q -p "$T/bad.yaml" --print-bwrap -- /bin/true
# (its stdout alone; the status was checked above)
bad_stdout() { wr -q -p "$T/bad.yaml" --print-bwrap -- /bin/true 2>/dev/null; return 0; }
check_eq "... and prints no line" "" bad_stdout
check_fails --denied 127 "a command that does not exist: --print-bwrap fails with 127" \
	wr -q -p "$T/p.yaml" --print-bwrap -- /nonexistent/prog
check "control: the same with a command that exists prints" print_line -- /bin/true

lab_finish
