#!/usr/bin/env bash
# trace_spoof.sh - a traced program cannot get into its trace, nor into the policy `warden init`
# makes of it, what it did not reach (issue 16, docs/trace.md "What the program cannot forge"):
#
#   - fake strace lines (`open("/etc/shadow", O_RDONLY) = 3`, `openat(AT_FDCWD,
#     "/home/u/.aws/credentials", ...) = 4`) and fake trace JSON lines on its stdout and stderr;
#   - a path buffer flipped by a second thread between a real file and a forged target while
#     the first opens it in a loop (trace_forge.c race): the bytes a recorder reads need not be
#     the bytes the kernel opens;
#   - a file name with a newline and a trace line in it;
#   - a trace file (-o in its writable cwd) the program writes first, or makes a symlink to a
#     file of root's.
#
# Each forged target exists on the host, readable by whom the program runs as (so a policy that
# granted it would expose it), except the race's, which it may not read at all; each check that
# a forged path is absent has its control: the real file the program read is in the trace and
# granted by the policy.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
command -v jq >/dev/null || { echo "FAIL: jq is missing"; exit 1; }
FORGE=${WD_TRACE_FORGE:-${WARDEN_BUILD_DIR:-$SRC/build}/tests/integration/trace_forge}
[[ -x $FORGE ]] || { echo "FAIL: trace_forge is not built ($FORGE)"; exit 1; }
lab_up

# not in /tmp: a trace's sandbox has a /tmp of its own (empty, as every run's), so the host's
# /tmp is not visible there (docs/trace.md); lab_tmpdir's rules otherwise (the user's, as one)
T=$(mktemp -d /var/tmp/wd-trace-spoof-XXXXXX) || exit 1
if [[ ${LAB_AS_USER:-} == 1 ]]; then
	lab_user && chown "$LAB_USER_UID:$LAB_USER_GID" "$T" || exit 1
fi
chmod 0755 "$T"
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
H=$T/home
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
IDS=$(lab_program_ids)

mkdir -p "$H" "$T/state" "$T/traces" "$T/pol" "$T/bin" "$T/target" "$T/work" "$T/race"
cp "$FORGE" "$T/bin/trace_forge"
echo "real data" >"$T/target/real.txt"
echo "fake, never read" >"$T/target/fake.txt"
echo "fake too, never read" >"$T/target/fake2.txt"
echo "REAL" >"$T/race/r.txt"
# the race's forged target: on the host, not readable by the program
echo "FORGED" >"$T/race/s.txt"
# the second race's: readable, so an open the kernel made of it is a real read
echo "FORGED, readable" >"$T/race/t.txt"
echo "root's file" >"$T/victim"
# a path whose text holds a newline and then a whole trace line (its slashes make it folders)
NL_NAME=$'nl\n{"type":"file","op":"read","path":"'"$T"'/target/fake2.txt"}'
mkdir -p "$T/target/${NL_NAME%/*}"
echo "newline file" >"$T/target/$NL_NAME"
chmod -R a+rX "$T"
# as the user (run_as_user.sh), the user's files but the two of root's
[[ ${LAB_AS_USER:-} != 1 ]] || chown -R "$IDS" "$T"
chown 0:0 "$T/race/s.txt" "$T/victim"
chmod 0600 "$T/race/s.txt" "$T/victim"
chown "$IDS" "$T/work"

cat >"$T/bin/liar.sh" <<EOF
#!/bin/sh
# reads one real file, and says on stdout and stderr that it read others
for fd in 1 2; do
	{
		echo 'open("/etc/shadow", O_RDONLY) = 3'
		echo 'openat(AT_FDCWD, "/home/u/.aws/credentials", O_RDONLY|O_CLOEXEC) = 4'
		echo 'openat(AT_FDCWD, "$T/target/fake.txt", O_RDONLY) = 5'
		echo '12345 openat(AT_FDCWD, "$T/target/fake.txt", O_RDONLY) = 5'
		echo '{"type":"file","op":"read","path":"/etc/shadow","count":1,"comm":"cat"}'
		echo '{"type":"file","op":"read","path":"$T/target/fake.txt","count":1,"comm":"cat"}'
		echo '{"type":"net","host":"evil.test","port":443,"proto":"tls","count":1}'
		echo '{"type":"env","name":"FORGED_ENV"}'
	} >&\$fd
done
cat "$T/target/real.txt"
EOF
cat >"$T/bin/planter.sh" <<'EOF'
#!/bin/sh
# plants the trace file its tracer will write (-o $1 in the cwd): $2 = line: a forged trace
# line in it; $2 = link: a symlink to $3
case $2 in
line) printf '{"type":"file","op":"read","path":"%s","comm":"cat"}\n' "$3" >"$1" ;;
link) ln -sf "$3" "$1" ;;
esac
cat "$4"
EOF
chmod 0755 "$T/bin/liar.sh" "$T/bin/planter.sh"

# wt DIR TRACE CMD...: warden trace of CMD in the lab, its cwd DIR, the trace to TRACE
wt()
{
	local dir=$1 out=$2
	shift 2
	(cd "$dir" && HOME=$H XDG_STATE_HOME=$T/state WARDEN_AUDIT_LOG=$A \
		in_host "$W" trace -o "$out" -- "$@")
}
quiet() { "$@" >/dev/null 2>&1; }
wi() { (cd "$T" && HOME=$H "$W" init --from "$1" -o "$2" 2>"$2.err"); }
pc() { HOME=$H "$W" policy check "$1" >/dev/null; }
# in_trace TRACE JQ-FILTER: the trace has a line the filter selects
in_trace() { jq -e -s --arg t "$T" "[.[] | select($2)] | length > 0" "$1" >/dev/null; }
not_in_trace() { lab_negate in_trace "$@"; }
# names TRACE TEXT: some event of TRACE has TEXT in a path or host
names() { in_trace "$1" "((.path // .host // .name // \"\") | contains(\"$2\"))"; }
not_names() { lab_negate names "$@"; }
# granted POLICY PATH: a line of the policy other than a comment and the traced `command:`
# (whose arguments may name the path) names PATH
granted() { grep -v -e '^[[:space:]]*#' -e '^command:' "$1" | grep -qF -- "$2"; }
not_granted() { lab_negate granted "$@"; }
mentions() { grep -qF -- "$2" "$1"; }
not_mentions() { lab_negate mentions "$@"; }
# every line of TRACE is one JSON object (a newline in a name did not split one)
whole_lines() { [[ $(jq -c . "$1" | wc -l) == "$(grep -c . "$1")" ]]; }

echo "# fake strace and trace lines on stdout and stderr"
TL=$T/traces/liar.jsonl P=$T/pol/liar.yaml
check "warden trace runs the liar" quiet wt "$T/work" "$TL" "$T/bin/liar.sh"
check "control: the trace has the real file read" in_trace "$TL" \
	'.type == "file" and .op == "read" and .path == ($t + "/target/real.txt")'
check "the trace does not name fake.txt" not_names "$TL" "fake.txt"
check "... nor /etc/shadow" not_names "$TL" "/etc/shadow"
check "... nor .aws/credentials" not_names "$TL" ".aws"
check "... nor evil.test" not_names "$TL" "evil.test"
check "... nor FORGED_ENV" not_names "$TL" "FORGED_ENV"
check "warden init --from writes the policy" wi "$TL" "$P"
check "it passes warden policy check" pc "$P"
check "control: it grants real.txt" granted "$P" "$T/target/real.txt"
check "it does not mention fake.txt" not_mentions "$P" "fake.txt"
check "... nor /etc/shadow" not_mentions "$P" "/etc/shadow"
check "... nor .aws" not_mentions "$P" ".aws"
check "... nor evil.test" not_mentions "$P" "evil.test"

echo "# a path flipped between a real file and a forged one while it is opened"
TR=$T/traces/race.jsonl P=$T/pol/race.yaml
check "control: the forged target is on the host and readable by root" grep -q FORGED "$T/race/s.txt"
check "control: whom the program runs as cannot read it" lab_negate \
	setpriv --reuid="${IDS%%:*}" --regid="${IDS##*:}" --clear-groups cat "$T/race/s.txt"
out=$(wt "$T/work" "$TR" "$T/bin/trace_forge" race "$T/race/r.txt" "$T/race/s.txt" 20000 2>"$T/race.err")
echo "# race: $out"
check "the race ran under warden trace" bash -c '[[ $0 =~ ^real=[0-9]+\ forged=[0-9]+\ failed=[0-9]+$ ]]' "$out"
check "control: most opens got the real file" bash -c \
	'r=${0#real=}; r=${r%% *}; ((r > 0))' "$out"
check "the program never got the forged file's content" bash -c '[[ $0 == *" forged=0 "* ]]' "$out"
check "control: the trace has the read of r.txt" in_trace "$TR" \
	'.type == "file" and .op == "read" and .path == ($t + "/race/r.txt")'
check "the trace has no access of s.txt but a failed one" not_in_trace "$TR" \
	'.type == "file" and .path == ($t + "/race/s.txt") and .op != "missing"'
check "warden init --from writes the policy" wi "$TR" "$P"
check "it passes warden policy check" pc "$P"
check "control: it grants r.txt" granted "$P" "$T/race/r.txt"
check "it does not grant s.txt" not_granted "$P" "$T/race/s.txt"
check "... nor the race folder as a whole" not_granted "$P" "\"$T/race\""

echo "# the same race, the forged target readable: the trace counts no more reads of a file"
echo "# than the program got its content"
TR=$T/traces/race2.jsonl
out=$(wt "$T/work" "$TR" "$T/bin/trace_forge" race "$T/race/r.txt" "$T/race/t.txt" 20000 2>"$T/race2.err")
echo "# race: $out"
check "the race ran under warden trace" bash -c '[[ $0 =~ ^real=[0-9]+\ forged=[0-9]+\ failed=[0-9]+$ ]]' "$out"
read -r got_real got_forged <<<"$(sed 's/real=\([0-9]*\) forged=\([0-9]*\).*/\1 \2/' <<<"$out")"
# rcount FILE: the reads of FILE the trace counts
rcount() { jq -s --arg p "$1" '[.[] | select(.type == "file" and .op == "read" and .path == $p) | .count // 1] | add // 0' "$TR"; }
n_real=$(rcount "$T/race/r.txt") n_forged=$(rcount "$T/race/t.txt")
echo "# the trace counts $n_real reads of r.txt, $n_forged of t.txt"
check "control: the trace counts reads of r.txt" test "${n_real:-0}" -gt 0
check "the trace counts no more reads of t.txt than the program got its content ($got_forged)" \
	test "${n_forged:-x}" -le "${got_forged:-0}"
# trace_forge reads r.txt once before the race, to know its content: one read more
check "... nor of r.txt than it got r.txt's ($got_real, and its one read before the race)" \
	test "${n_real:-x}" -le "$((${got_real:-0} + 1))"

echo "# a file name with a newline and a trace line in it"
TN=$T/traces/nl.jsonl P=$T/pol/nl.yaml
check_eq "warden trace runs it (the name opened)" \
	"$T/target/${NL_NAME//$'\n'/\\n}: ok
$T/target/real.txt: ok" wt "$T/work" "$TN" "$T/bin/trace_forge" open "$T/target/$NL_NAME" "$T/target/real.txt"
check "every line of the trace is one JSON object" whole_lines "$TN"
check "control: the trace has the name, newline and all, as one path" jq -e -s \
	--arg p "$T/target/$NL_NAME" '[.[] | select(.type == "file" and .path == $p)] | length == 1' "$TN"
check "the trace has no event of fake2.txt" not_in_trace "$TN" \
	'.type == "file" and .path == ($t + "/target/fake2.txt")'
check "warden init --from writes the policy" wi "$TN" "$P"
check "it passes warden policy check" pc "$P"
check "control: it grants real.txt" granted "$P" "$T/target/real.txt"
check "it does not grant fake2.txt (on no line, nor on one a newline would make)" not_granted "$P" "fake2.txt"
check "... and init warned about the name with a control character" grep -qi 'control' "$P.err"

echo "# the trace file planted by the program (-o in its cwd)"
TP=$T/work/planted.jsonl P=$T/pol/planted.yaml
wt "$T/work" "$TP" "$T/bin/planter.sh" "$TP" line "$T/target/fake.txt" "$T/target/real.txt" >/dev/null 2>&1
rc=$?
echo "# warden trace with a planted trace line: exit $rc"
if ((rc == 0)); then
	check "the trace written starts with its trace line" jq -e -s '.[0].type == "trace"' "$TP"
	check "control: it has the real file read" in_trace "$TP" \
		'.type == "file" and .path == ($t + "/target/real.txt")'
	check "it has not the planted line (fake.txt)" not_names "$TP" "fake.txt"
else
	check "refused: the planted file is not a trace init accepts" lab_negate wi "$TP" "$P"
fi
TP=$T/work/linked.jsonl
wt "$T/work" "$TP" "$T/bin/planter.sh" "$TP" link "$T/victim" "$T/target/real.txt" >/dev/null 2>&1
rc=$?
echo "# warden trace with the trace file a symlink to root's file: exit $rc"
check_eq "root's file behind the planted symlink is unchanged" "root's file" cat "$T/victim"
check_eq "... and still root's, 0600" "0:600" stat -c %u:%a "$T/victim"
if ((rc == 0)); then
	check "control: a trace was written (not through the link)" \
		bash -c '[[ -f $0 && ! -L $0 ]] && jq -e -s ".[0].type == \"trace\"" "$0" >/dev/null' "$TP"
fi

lab_finish
