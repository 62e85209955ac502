#!/usr/bin/env bash
# run_flags.sh - `warden run --allow HOST[:PORT] --read PATH --write PATH` (issue 27 item 7, the
# quick path without a policy file; docs/policy.md "Flags"): real curl through the gateway to the
# lab's hosts and real programs on real files. --allow alone lets curl reach that host while
# another is denied; merged over -p, the file's host and the flag's are both reachable and a
# third is denied; --read DIR lets cat read a file there and not one outside; --write ./out/
# lets the program make a file there (on the host after) and nowhere else; --print-policy prints
# YAML that `warden policy check -` accepts and that gives the same verdicts through -p; bad
# flag values exit 125 with a message naming the flag, and nothing was started. run_as_user.sh
# runs it as a user (rootless) too.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
lab_up

T=$(lab_tmpdir wd-run-flags)
chmod 0755 "$T"
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
IDS=$(lab_program_ids)

# the project folder the flags' relative paths are taken from (the runs start in it)
P=$T/proj
mkdir -p "$P/in"
echo inside >"$P/in/f.txt"
echo outside >"$P/outside.txt"
chmod -R a+rX "$P"
chown "$IDS" "$P"
cd "$P" || exit 1
lab_on_exit cd /

wr() { in_host "$W" run -q --audit-log "$A" "$@"; }
# get HOST: the lab's web server answers "hello from HOST" (HTTP, through the gateway's proxy
# port that the run's proxy variables name); a name the policy does not allow gets the gateway's
# 403: curl -f exits 22
get() { echo "curl -fsS --max-time 8 http://$1/"; }

echo "# --allow alone (no -p): the flag is the policy"
check_fails --denied 22 "control: no -p, no flag: other.test is not reachable" \
	wr -- sh -c "$(get other.test)"
check_eq "--allow other.test: curl reaches other.test" "hello from other.test" \
	wr --allow other.test -- sh -c "$(get other.test)"
check_fails --denied 22 "--allow other.test: allowed.test is denied" \
	wr --allow other.test -- sh -c "$(get allowed.test)"
check_eq "--allow other.test:80 (a port): reached on 80" "hello from other.test" \
	wr --allow other.test:80 -- sh -c "$(get other.test)"
check_fails --denied 22 "--allow other.test:443: not on 80" \
	wr --allow other.test:443 -- sh -c "$(get other.test)"

echo "# --allow merged over -p: the union"
cat >"$T/a.yaml" <<YAML
version: 1
network:
  allow:
    - allowed.test
YAML
check_eq "control: -p alone reaches allowed.test" "hello from allowed.test" \
	wr -p "$T/a.yaml" -- sh -c "$(get allowed.test)"
check_fails --denied 22 "control: -p alone does not reach other.test" \
	wr -p "$T/a.yaml" -- sh -c "$(get other.test)"
check_eq "-p + --allow other.test: the file's host is reachable" "hello from allowed.test" \
	wr -p "$T/a.yaml" --allow other.test -- sh -c "$(get allowed.test)"
check_eq "-p + --allow other.test: the flag's host is reachable" "hello from other.test" \
	wr -p "$T/a.yaml" --allow other.test -- sh -c "$(get other.test)"
check_fails --denied 22 "-p + --allow other.test: a third host (multi.test) is denied" \
	wr -p "$T/a.yaml" --allow other.test -- sh -c "$(get multi.test)"
check "run.start names the policy file with flags (a.yaml+flags)" bash -c \
	'jq -e -s "[.[] | select(.action == \"run.start\")] | last | .policy | endswith(\"/a.yaml+flags\")" "$0"' \
	"$A"

echo "# --read DIR (relative to the current folder)"
check_eq "--read in: cat reads a file there" "inside" wr --read in -- cat "$P/in/f.txt"
check_fails --denied 1 "--read in: a file outside it is refused" wr --read in -- cat "$P/outside.txt"
check_eq "control: --read . reads that file" "outside" wr --read . -- cat "$P/outside.txt"
check_fails --denied 2 "--read in: the folder is read-only" \
	wr --read in -- sh -c "echo x >'$P/in/new.txt'"
check "... and nothing was written there" test ! -e "$P/in/new.txt"

echo "# --write ./out/ (missing: made as a folder, as a policy's grant)"
check "--write ./out/: the program makes a file there" \
	wr --write ./out/ -- sh -c "echo made >'$P/out/new.txt'"
check_eq "... it is on the host after the run" "made" cat "$P/out/new.txt"
check_eq "... out is a folder" "directory" stat -c %F "$P/out"
check "control: --read . --write ./out/: the program writes in out/" \
	wr --read . --write ./out/ -- sh -c "echo two >'$P/out/two.txt'"
check_eq "... on the host" "two" cat "$P/out/two.txt"
check_fails --denied 2 "--read . --write ./out/: writing beside out/ fails (read-only)" \
	wr --read . --write ./out/ -- sh -c "echo x >'$P/elsewhere.txt'"
wr --write ./out/ -- sh -c "echo x >'$P/elsewhere.txt'"
check "--write ./out/ alone: a file written outside it never reaches the host" \
	test ! -e "$P/elsewhere.txt"

echo "# --print-policy: the effective policy as YAML; nothing runs"
starts() { jq -s '[.[] | select(.action == "run.start")] | length' "$A"; }
n0=$(starts)
wr -p "$T/a.yaml" --allow other.test --read in --write ./out/ --print-policy \
	-- touch "$T/ran" >"$T/eff.yaml" 2>"$T/err"
check_eq "--print-policy exits 0" 0 echo $?
sed 's/^/    | /' "$T/eff.yaml"
check "nothing ran (the command did not)" test ! -e "$T/ran"
check_eq "nothing ran (no run.start)" "$n0" starts
check "it holds the file's host and the flag's" bash -c \
	'grep -qF "host: \"allowed.test\"" "$0" && grep -qF "host: \"other.test\"" "$0"' "$T/eff.yaml"
check "it holds the flags' paths, made absolute" bash -c \
	'grep -qF "\"$1/in\"" "$0" && grep -qF "\"$1/out\"" "$0"' "$T/eff.yaml" "$P"
check "warden policy check - accepts it" bash -c '"$0" policy check - <"$1"' "$W" "$T/eff.yaml"
check_eq "-p of it: allowed.test reachable" "hello from allowed.test" \
	wr -p "$T/eff.yaml" -- sh -c "$(get allowed.test)"
check_eq "-p of it: other.test reachable" "hello from other.test" \
	wr -p "$T/eff.yaml" -- sh -c "$(get other.test)"
check_fails --denied 22 "-p of it: multi.test denied" wr -p "$T/eff.yaml" -- sh -c "$(get multi.test)"
check_eq "-p of it: cat reads in/f.txt" "inside" wr -p "$T/eff.yaml" -- cat "$P/in/f.txt"
check_fails --denied 1 "-p of it: outside.txt refused" wr -p "$T/eff.yaml" -- cat "$P/outside.txt"
check "-p of it: the program writes in out/" \
	wr -p "$T/eff.yaml" -- sh -c "echo again >'$P/out/again.txt'"

echo "# bad flag values: exit 125, the flag named, nothing started"
runs() { ls -1 "$LAB_RUNS_DIR" 2>/dev/null; ip netns list 2>/dev/null | awk '/^wd-/ { print $1 }'; }
bad() { # DESC ERE ARGS...: warden run ARGS -- touch ran exits 125, says ERE, starts nothing
	local desc=$1 ere=$2 rc before
	shift 2
	before=$(runs)
	n0=$(starts)
	wr "$@" -- touch "$T/ran" 2>"$T/err"
	rc=$?
	sed 's/^/    | /' "$T/err"
	check_eq "$desc: exit 125" 125 echo "$rc"
	check "$desc: the message names the flag" grep -qE "$ere" "$T/err"
	check "$desc: the program did not run" test ! -e "$T/ran"
	check_eq "$desc: no run.start" "$n0" starts
	check_eq "$desc: no run state, no namespace made" "" \
		bash -c 'comm -13 <(sort <<<"$0") <(sort <<<"$1")' "$before" "$(runs)"
}
bad "--allow https://x/" '^warden run: --allow https://x/: error: .*expected a host name, not a URL; did you mean `x:443`' \
	--allow https://x/
bad "--allow ''" "^warden run: --allow '': error: " --allow ''
bad "--read ~nobody/x" '^warden run: --read ~nobody/x: error: .*only `~` and `~/...`' --read '~nobody/x'
bad "--read of a missing path" "^warden run: --read missing/x: error: .*does not exist" --read missing/x
bad "over -p: --allow https://x/" '^warden run: --allow https://x/: error: ' -p "$T/a.yaml" --allow https://x/
check "... not a file:line:col that does not exist" bash -c '! grep -qF "a.yaml:" "$0"' "$T/err"
bad "an escape in a flag" '^warden run: --allow .*: error: ' --allow $'x\e[31m.test'
check "... printed escaped (no ESC byte reaches the terminal)" bash -c '! grep -q $'"'"'\e'"'"' "$0"' "$T/err"

echo "# a flag's warning is the policy's, naming the flag (not with -q)"
"$W" run --allow localhost --print-policy >/dev/null 2>"$T/err"
check_eq "--allow localhost --print-policy: exit 0" 0 echo $?
check "... warns as the policy would (the SSRF guard refuses it)" \
	grep -qE "^warden run: --allow localhost: warning: .*SSRF guard" "$T/err"
check "... -q: no warning" bash -c '"$0" run -q --allow localhost --print-policy 2>&1 >/dev/null | wc -c | grep -qx 0' "$W"

echo "# warden trace does not take them (not even as an abbreviation of --allow-socket)"
check_eq "control: warden trace --allow-socket is its own option (a folder that is missing: 2)" 2 \
	bash -c '"$0" trace --allow-socket /nonexistent/x -- true 2>/dev/null; echo $?' "$W"
for f in --allow --read --write; do
	check_eq "warden trace $f: a usage error (2), nothing traced" 2 \
		bash -c '"$0" trace "$1" x -o "$2" -- true 2>"$3"; echo $?' "$W" "$f" "$T/tr.jsonl" "$T/err"
	check "... saying $f is warden run's" grep -qF "warden trace: $f is warden run's" "$T/err"
	check "... and no trace written" test ! -e "$T/tr.jsonl"
done

echo "# help and completions"
check "warden run --help lists the flags" bash -c \
	'"$0" run --help | grep -qE "^ +--allow HOST\[:PORT\]" && "$0" run --help | grep -qE "^ +--print-policy "' "$W"
check "warden help run lists them" bash -c '"$0" help run | grep -qE "^ +--read PATH "' "$W"
check "the bash completion knows them" bash -c \
	'"$0" completion bash | grep -E "run\) words=" | grep -qE -- "--allow .*--read .*--write .*--print-policy"' "$W"

lab_finish
