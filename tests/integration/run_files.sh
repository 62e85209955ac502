#!/usr/bin/env bash
# run_files.sh - `file` events of a run (issue 16, audit.files, docs/files.md): an attempt to
# reach a host path the grants do not expose is one event with the path, the operation and the
# process; a granted file is read and makes none; 10,000 granted files make none; the
# credential stores masked in a home grant are denied attempts; a loop over one such path is
# one event with a count; `audit.files: off` (the default) records nothing and `all` the granted
# reads too; the program cannot forge events (fake lines on stderr, paths with newlines, quotes
# and bytes that are not UTF-8 are escaped into their one event); `warden logs --type file`.
# Every negative check has its control next to it. run_as_user.sh runs it as a user.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
PY=/usr/bin/python3
[[ -x $PY ]] || { echo "SKIP: python3 missing"; exit 77; }
command -v jq >/dev/null || { echo "FAIL: jq is missing"; exit 1; }
lab_up

T=$(lab_tmpdir wd-run-files)
chmod 0755 "$T"
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0

mkdir -p "$T/granted/many" "$T/secret" "$T/home/.ssh" "$T/home/proj"
echo "granted text" >"$T/granted/file"
echo "top secret" >"$T/secret/file"
ln -s "$T/secret/file" "$T/granted/escape"
ln -s file "$T/granted/inside"
echo "PRIVATE KEY" >"$T/home/.ssh/id_ed25519"
echo "project" >"$T/home/proj/readme"
# names a program could use to break a log line: a newline and a forged event, quotes, and
# bytes that are not UTF-8
NL_NAME=$'evil\n{"run":"x","type":"file","action":"file.open","allowed":true}'
Q_NAME='q"uo\te'
BAD_NAME=$'bad\xff\xfe'
echo x >"$T/secret/$NL_NAME"
echo x >"$T/secret/$Q_NAME"
echo x >"$T/secret/$BAD_NAME"
$PY -c '
import os, sys
d = sys.argv[1]
for i in range(10000):
    with open(os.path.join(d, "f%05d" % i), "w") as f:
        f.write("x")
' "$T/granted/many"
chmod -R a+rX "$T"

policy() { # NAME FILES-MODE (empty: the default)
	{
		echo "version: 1"
		echo "filesystem:"
		echo "  read: [\"$T/granted\", \"$T/home\"]"
		[[ -z $2 ]] || printf 'audit:\n  files: %s\n' "$2"
	} >"$T/$1.yaml"
}
policy default ""
policy denied denied
policy off off
policy all all

# wr POLICY ARGS...: warden run inside lab-host with the test's audit log and home
wr() { local p=$1; shift; HOME=$T/home in_host "$W" run -q --audit-log "$A" -p "$T/$p.yaml" "$@"; }
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
# files RUN [JQ-FILTER]: how many file events of RUN (that match)
files() { jq -s --arg r "$1" "[.[] | select(.run == \$r and .type == \"file\" and (${2:-true}))] | length" "$A"; }
# one RUN JQ-FILTER: the file event of RUN that matches, compact
one() { jq -c -s --arg r "$1" "[.[] | select(.run == \$r and .type == \"file\" and ($2))][0]" "$A"; }

echo "# a not-granted file that exists on the host: exactly one event"
check_eq "control: the granted file is read" "granted text" wr denied cat "$T/granted/file"
r=$(last_run)
check_eq "... and makes no file event" 0 files "$r"
check_fails "the not-granted file is not readable" wr denied cat "$T/secret/file"
r=$(last_run)
check_eq "... and makes exactly one file event" 1 files "$r"
ev=$(one "$r" "true")
check "... with its path, denied, op read, the process cat" \
	jq -e --arg p "$T/secret/file" '.resource == $p and .allowed == false and .op == "read" and .comm == "cat" and .action == "file.open" and (.proc_pid | type) == "number"' <<<"$ev"
check "... saying the policy did not grant it" \
	jq -e '.reason | test("not granted by policy denied.yaml")' <<<"$ev"
check_eq "both in one run: the granted one read, one event (the other's)" "granted text" \
	wr denied sh -c "cat '$T/granted/file'; cat '$T/secret/file' 2>/dev/null; exit 0"
r=$(last_run)
check_eq "... one file event" 1 files "$r"
check_eq "... for the not-granted path" 1 files "$r" ".resource == \"$T/secret/file\""
check_fails "a path that is nowhere: ENOENT" wr denied cat "$T/secret/nowhere"
r=$(last_run)
check_eq "... and no file event (nothing on the host was out of reach)" 0 files "$r"

echo "# a symbolic link in a grant"
check_eq "control: a link to a granted file is followed" "granted text" wr denied cat "$T/granted/inside"
r=$(last_run)
check_eq "... and makes no file event" 0 files "$r"
check_fails "a link in a grant to a not-granted file leads nowhere" wr denied cat "$T/granted/escape"
r=$(last_run)
check_eq "... and is one denied file event, the path as the program named it" 1 files "$r" \
	".resource == \"$T/granted/escape\" and .allowed == false"
check_eq "control: lstat of that link (not followed) makes none" 0 bash -c \
	'HOME=$0/home ip netns exec "$1" "$2" run -q --audit-log "$3" -p "$0/denied.yaml" -- stat -c %F "$0/granted/escape" >/dev/null &&
	jq -s --arg r "$(jq -r -s "[.[] | select(.action == \"run.start\")] | last | .run" "$3")" \
	"[.[] | select(.run == \$r and .type == \"file\")] | length" "$3"' "$T" "$LAB_HOST_NS" "$W" "$A"

echo "# 10,000 granted files: no event"
check_eq "the program reads 10,000 granted files" 10000 wr denied $PY -c '
import os, sys
d = sys.argv[1]; n = 0
for name in os.listdir(d):
    with open(os.path.join(d, name)) as f:
        n += len(f.read())
print(n)' "$T/granted/many"
r=$(last_run)
check_eq "... and the log has no file event of it" 0 files "$r"
check "control: run.exit of that run is there" \
	jq -e -s --arg r "$r" '[.[] | select(.run == $r and .action == "run.exit")] | length == 1' "$A"

echo "# credential stores in a home grant are denied attempts"
check_eq "control: the home grant is visible" "project" wr denied cat "$T/home/proj/readme"
check_fails "~/.ssh/id_ed25519 is hidden" wr denied cat "$T/home/.ssh/id_ed25519"
r=$(last_run)
check_eq "... and is one denied file event" 1 files "$r" \
	".resource == \"$T/home/.ssh/id_ed25519\" and .allowed == false"
check_fails "a python program reading it fails too" wr denied $PY -c "open('$T/home/.ssh/id_ed25519').read()"
r=$(last_run)
check_eq "... and it is in the log with the process python3" 1 files "$r" \
	".resource == \"$T/home/.ssh/id_ed25519\" and (.comm | startswith(\"python3\"))"

echo "# a loop over one not-granted path is one event with a count"
check_eq "the program tries 500 times" 500 wr denied $PY -c "
n = 0
for i in range(500):
    try: open('$T/secret/file')
    except OSError: n += 1
print(n)"
r=$(last_run)
check_eq "... one file event" 1 files "$r"
check_eq "... counting 500" 500 jq -r -s --arg r "$r" '[.[] | select(.run == $r and .type == "file")][0].count' "$A"

echo "# audit.files: off, denied, all; the default is off (docs/files.md, Cost)"
check_fails "no audit.files in the policy: the not-granted file is not readable" wr default cat "$T/secret/file"
r=$(last_run)
check_eq "... and no file event (the default is off)" 0 files "$r"
check_fails "off: the not-granted file is not readable" wr off cat "$T/secret/file"
r=$(last_run)
check_eq "... and no file event" 0 files "$r"
check_fails "control: denied (written out): the same run" wr denied cat "$T/secret/file"
r=$(last_run)
check_eq "... makes one" 1 files "$r"
check_eq "all: the granted file is read" "granted text" wr all cat "$T/granted/file"
r=$(last_run)
check_eq "... and its read is an allowed file event" 1 files "$r" \
	".resource == \"$T/granted/file\" and .allowed == true and .op == \"read\""
check "... among the other accesses (the program's exec, its libraries)" \
	test "$(files "$r" '.allowed == true')" -gt 2
check_eq "... and no denied one" 0 files "$r" '.allowed == false'
printf 'version: 1\naudit:\n  files: sometimes\n' >"$T/bad.yaml"
check_fails --denied 2 "a policy with audit.files: sometimes is refused" "$W" policy check "$T/bad.yaml"
check "... naming the line and the choices" bash -c \
	'"$1" policy check "$0/bad.yaml" 2>&1 | grep -E "bad.yaml:3:[0-9]+: .*audit.files: .sometimes. .*off, denied, all"' "$T" "$W"
check "control: audit.files: all passes policy check" "$W" policy check "$T/all.yaml"

echo "# the program cannot forge events"
check_fails "a run that prints a fake file event on stderr" wr denied sh -c \
	"echo '{\"ts\":\"2026-01-01T00:00:00.000000Z\",\"run\":\"forged\",\"type\":\"file\",\"action\":\"file.open\",\"allowed\":true,\"resource\":\"/forged\",\"reason\":\"\"}' >&2; cat '$T/secret/file'"
r=$(last_run)
check_eq "... has one file event (its real attempt)" 1 files "$r"
check_eq "... and nothing of run 'forged' is in the log" 0 jq -s '[.[] | select(.run == "forged" or .resource == "/forged")] | length' "$A"
check_fails "a path with a newline and a forged event in its name" wr denied cat "$T/secret/$NL_NAME"
r=$(last_run)
check_eq "... is one file event" 1 files "$r"
check "... whose path is the exact name (the newline escaped)" \
	jq -e -s --arg r "$r" --arg p "$T/secret/$NL_NAME" '[.[] | select(.run == $r and .type == "file")][0].resource == $p' "$A"
check_eq "... and no event of run 'x' appeared" 0 jq -s '[.[] | select(.run == "x")] | length' "$A"
check_fails "a path with quotes and a tab" wr denied cat "$T/secret/$Q_NAME"
r=$(last_run)
check "... is one file event with the exact name" \
	jq -e -s --arg r "$r" --arg p "$T/secret/$Q_NAME" '[.[] | select(.run == $r and .type == "file")] | length == 1 and .[0].resource == $p' "$A"
check_fails "a path that is not UTF-8" wr denied cat "$T/secret/$BAD_NAME"
r=$(last_run)
check_eq "... is one file event" 1 files "$r"
check_eq "... whose exact bytes are kept under raw (hex)" \
	"$(printf '%s' "$T/secret/$BAD_NAME" | od -An -tx1 | tr -d ' \n')" \
	jq -r -s --arg r "$r" '[.[] | select(.run == $r and .type == "file")][0].raw.resource' "$A"
check "every line of the log is one valid JSON object" bash -c \
	'jq -e -c "objects" "$0" >/dev/null && [ "$(jq -c . "$0" | wc -l)" = "$(wc -l <"$0")" ]' "$A"

echo "# warden logs --type file"
check "warden logs --type file shows the denied attempt (the table)" bash -c \
	'"$0" logs --audit-log "$1" --type file | grep -E "file +file.open +DENY .*id_ed25519"' "$W" "$A"
check_eq "... and only file events" "file" bash -c \
	'"$0" logs --audit-log "$1" --type file --json | jq -r .type | sort -u' "$W" "$A"
check "control: without --type the run events are there too" bash -c \
	'"$0" logs --audit-log "$1" --json | jq -r .type | sort -u | grep -qx run' "$W" "$A"
check_fails --denied 2 "--type with an unknown type is a usage error" "$W" logs --audit-log "$A" --type nope

lab_finish
