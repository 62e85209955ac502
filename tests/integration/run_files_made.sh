#!/usr/bin/env bash
# run_files_made.sh - a write grant that does not exist at run time (issue 27 item 2, docs/files.md
# "Write grants that do not exist yet"): `out/result.txt` (a file name) is made as an empty
# regular file, never a folder, so a real program writes it; `{ path: X, type: file }` too;
# `X/` and `{ path: X, type: dir }` are made as folders; an ambiguous name (`out/plain`) is a
# folder with a warning naming the two spellings; `warden policy check` says what will be made;
# a run that fails before its program starts removes what it made. run_as_user.sh runs it as
# a user (rootless).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
lab_up

T=$(lab_tmpdir wd-run-files-made)
chmod 0755 "$T"
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
P=$T/proj
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
IDS=$(lab_program_ids)

mkdir -p "$P/out" "$P/ro"
chown -R "$IDS" "$P"
# a folder nobody may make anything in (a read-only mount of this test's own mount namespace):
# the grant made there fails the run before its program starts
mount --bind "$P/ro" "$P/ro" && mount -o remount,bind,ro "$P/ro" ||
	{ echo "FAIL: cannot make $P/ro read-only"; exit 1; }
lab_on_exit umount "$P/ro"

pol() { # NAME GRANT...: a policy in the project folder writing the grants
	local name=$1 g
	shift
	{
		echo "version: 1"
		echo "filesystem:"
		echo "  write:"
		for g in "$@"; do echo "    - $g"; done
	} >"$P/$name.yaml"
}
pol result 'out/result.txt'
pol typed '{ path: out/data, type: file }'
pol slash 'out/made/'
pol typedir '{ path: out/d2, type: dir }'
pol plain 'out/plain'
pol failing 'out/gone.txt' 'out/gonedir/' 'ro/x'
pol nofail 'out/kept.txt' 'out/keptdir/'

# wr POLICY ARGS...: warden run inside lab-host with the test's audit log
wr() { local p=$1; shift; in_host "$W" run -q --audit-log "$A" -p "$P/$p.yaml" "$@"; }

echo "# out/result.txt missing: made as an empty file, the program writes it"
check "policy check says it will be made as an empty file" lab_match \
	"out/result.txt.* will be created as an empty file" bash -c '"$0" policy check "$1" 2>&1' "$W" "$P/result.yaml"
check "a real program writes out/result.txt" wr result sh -c "echo hi > '$P/out/result.txt'"
check_eq "... it is a regular file on the host" "regular file" stat -c %F "$P/out/result.txt"
check_eq "... holding what the program wrote" "hi" cat "$P/out/result.txt"
check_eq "... owned by the program's user" "$IDS" stat -c %u:%g "$P/out/result.txt"
check "... and the program outside warden writes it again (nothing broken)" \
	sh -c "echo again > '$P/out/result.txt'"

echo "# the explicit spellings"
check "{ type: file }: the program finds an empty regular file" wr typed sh -c "test -f '$P/out/data' && test ! -s '$P/out/data'"
check_eq "... on the host too" "regular empty file" stat -c %F "$P/out/data"
check "out/made/ (a trailing /): the program writes a file into the folder" wr slash sh -c "echo x > '$P/out/made/x'"
check_eq "... a folder on the host" "directory" stat -c %F "$P/out/made"
check "{ type: dir }: a folder" wr typedir sh -c "test -d '$P/out/d2'"
check_eq "... on the host too" "directory" stat -c %F "$P/out/d2"

echo "# an ambiguous name: a folder, with a warning naming the two spellings"
check "policy check warns, naming out/plain/ and { path: out/plain, type: file }" lab_match \
	'out/plain.*`out/plain/`.*type: file' bash -c '"$0" policy check "$1" 2>&1' "$W" "$P/plain.yaml"
check "the run makes it a folder" wr plain sh -c "test -d '$P/out/plain'"

echo "# a run that fails before its program starts removes what it made"
check "control: the same grants without the read-only one make both" wr nofail true
check_eq "... the file" "regular empty file" stat -c %F "$P/out/kept.txt"
check_eq "... the folder" "directory" stat -c %F "$P/out/keptdir"
check_fails --denied 125 "a third grant that cannot be made fails the run (125)" wr failing true
check_fails "... and out/gone.txt, made before it, is gone" test -e "$P/out/gone.txt"
check_fails "... and so is out/gonedir" test -e "$P/out/gonedir"

lab_finish
