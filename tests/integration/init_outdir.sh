#!/usr/bin/env bash
# init_outdir.sh - `warden init -- COMMAND` and the files a program writes (issue 27, item 2):
# a file the program created, which was not there before, gets its folder granted (`./out/`,
# with the trailing `/` that says "a folder"), never a grant of the file itself, so that the run
# under the policy works again after the file is removed; a file that was there and was
# written stays a file grant. And `warden init -q` prints nothing on success (item 10).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
lab_up

T=$(lab_tmpdir wd-init-out) || exit 1
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
chmod 0755 "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
IDS=$(lab_program_ids)
P=$T/proj
mkdir -p "$P/out" "$T/state"
echo "an old line" >"$P/app.log"
cat >"$P/prog.sh" <<'EOS'
#!/bin/sh
# makes its result in ./out, and adds a line to the log that is there already
echo "the result" >out/result.txt || exit 3
echo "a new line" >>app.log || exit 4
cat out/result.txt
EOS
chmod 0755 "$P/prog.sh"
chmod -R a+rX "$T"
# the program writes in its folder: the folder is whom the program runs as
chown -R "$IDS" "$P"

# wi ARGS...: warden init in the project (stderr: $T/init.err)
wi() { (cd "$P" && XDG_STATE_HOME=$T/state WARDEN_AUDIT_LOG=$A in_host "$W" init "$@" \
	2>"$T/init.err"); }
# wr: the program under the policy
wr() { (cd "$P" && in_host "$W" run -q --audit-log "$A" -p "$P/policy.yaml" 2>"$T/run.err"); }

check "warden init -- ./prog.sh writes a policy" wi -o "$P/policy.yaml" -- ./prog.sh
sed 's/^/    | /' "$P/policy.yaml"
check "the folder the program made its file in is granted, as a folder (./out/)" \
	grep -Eq '^    - "\./out/" ' "$P/policy.yaml"
check_fails "... and the file itself is not" grep -q 'out/result.txt"' "$P/policy.yaml"
check "the file that was there and was written stays a file grant" \
	grep -Eq '^    - "\./app\.log" ' "$P/policy.yaml"
check "the policy passes warden policy check" "$W" policy check "$P/policy.yaml"
rm -rf "$P/out/result.txt"
check_eq "the program runs under it after rm -rf out/result.txt" "the result" wr
check "... and made its result, a file" test -f "$P/out/result.txt"
check "... and wrote the log" grep -q "a new line" "$P/app.log"

echo "# warden init -q"
check "warden init -q -- ./prog.sh succeeds" wi -q -o "$P/q.yaml" -- ./prog.sh
check "... and writes the policy" test -s "$P/q.yaml"
check_eq "... and prints nothing on stderr" "" cat "$T/init.err"
check "control: without -q it says what it did" wi -o "$P/loud.yaml" -- ./prog.sh
check "... (its summary line)" grep -q "warden init: .*read grants" "$T/init.err"
check_fails "... and no 'next: warden init' line (that is warden trace's)" \
	grep -q "next: warden init" "$T/init.err"

lab_finish
