#!/usr/bin/env bash
# trace_outlink.sh - the traced program cannot steer where the launcher writes the trace (issue
# 25, docs/trace.md "Where the trace is written, and as whom"). The program owns its writable
# current folder; during the run it replaces the folder the trace is to go to with a symbolic
# link to a folder of root's (0700). The launcher, root in root mode, must not create nor
# truncate anything there: the trace lands in the folder it opened before the program started,
# or the trace fails (exit 125) saying the folder was replaced. Cases:
#
#   -o out/t.jsonl      out/ swapped for a link to a root-only folder holding a t.jsonl of
#                       root's (truncation), and to an empty one (creation)
#   the default folder  ${XDG_STATE_HOME}/warden/traces in the current folder, XDG_STATE_HOME
#                       swapped for a link to a root-only folder
#   under sudo          (root mode, SUDO_UID the lab user, who is then the program) the same
#                       swap; and -o into a root-only folder is refused before the program
#                       runs: the trace is written as the person who asked, never as root
#   warden init -o      `warden init -o sub/policy.yaml -- CMD`, sub/ swapped the same way
#
# Each refusal has its positive control beside it: the same command, nothing swapped, writes
# the trace (or the policy) where it was asked. Root mode; run_as_user.sh reruns it as the lab
# user (rootless: the launcher is the user, the sudo part is skipped).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
command -v jq >/dev/null || { echo "FAIL: jq is missing"; exit 1; }
lab_up

# not in /tmp: a trace's sandbox has a /tmp of its own
T=$(mktemp -d /var/tmp/wd-trace-outlink-XXXXXX) || exit 1
if [[ ${LAB_AS_USER:-} == 1 ]]; then
	lab_user && chown "$LAB_USER_UID:$LAB_USER_GID" "$T" || exit 1
fi
chmod 0755 "$T"
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
H=$T/home
mkdir -m 0700 "$T/key"
[[ ${LAB_AS_USER:-} == 1 ]] && chown "$LAB_USER_UID:$LAB_USER_GID" "$T/key"
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
IDS=$(lab_program_ids)

mkdir -p "$H" "$T/bin" "$T/data" "$T/state"
echo "real data" >"$T/data/real.txt"
# swap.sh FOLDER TARGET: reads real.txt, then replaces FOLDER (in the cwd; moved to
# FOLDER.orig) with a link to TARGET, or plants the link when there is no FOLDER yet
cat >"$T/bin/swap.sh" <<EOF
#!/bin/sh
cat "$T/data/real.txt" || exit 3
[ -z "\${1:-}" ] && exit 0
if [ -e "\$1" ] || [ -L "\$1" ]; then mv "\$1" "\$1.orig" || exit 4; fi
ln -s "\$2" "\$1" || exit 4
EOF
chmod 0755 "$T/bin/swap.sh"
chmod -R a+rX "$T"
[[ ${LAB_AS_USER:-} != 1 ]] || chown -R "$IDS" "$T"

# rootonly NAME [FILE]: a folder of root's, 0700, holding FILE (root's, 0600) when given
rootonly()
{
	install -d -m 0700 -o 0 -g 0 "$T/$1" && if [[ -n ${2:-} ]]; then
		echo "root's data" >"$T/$1/$2" && chmod 0600 "$T/$1/$2"
	fi
}
# listing DIR: what DIR holds, with owner, mode and size (root reads it whoever ran warden)
listing() { (cd "$1" && find . -mindepth 1 -printf '%p %U:%G %m %s\n' | sort); }
# work NAME: a current folder of the program's own, with out/ in it
work()
{
	mkdir -p "$T/$1/out" && chown -R "$IDS" "$T/$1"
}
# wt DIR ERR ARGS...: `warden trace ARGS` from DIR in the lab, its stderr to ERR
wt()
{
	local dir=$1 err=$2
	shift 2
	# the audit signing key outside the current folder: with XDG_STATE_HOME in it (wd0, wd1), a
	# key there would keep the folder read-only (no grant may hold the key)
	(cd "$dir" && HOME=$H XDG_STATE_HOME=${XS:-$T/state} WARDEN_AUDIT_LOG=$A \
		WARDEN_AUDIT_KEY=${WARDEN_AUDIT_KEY:-$T/key/audit-key.pem} \
		in_host "$W" trace "$@" 2>"$err" >/dev/null)
}
is_trace() { [[ -f $1 && ! -L $1 ]] && jq -e -s '.[0].type == "trace"' "$1" >/dev/null; }
has_real() { jq -e -s --arg p "$T/data/real.txt" 'any(.[]; .type == "file" and .path == $p)' "$1" >/dev/null; }
is_link() { [[ -L $1 ]]; }
# outcome RC TRACE ERR: the trace is in the original folder (exit 0), or the trace failed
# (exit 125) saying that the folder was replaced; prints which
outcome()
{
	if (($1 == 0)); then
		is_trace "$2" && has_real "$2"
	else
		(($1 == 125)) && grep -Eqi 'replaced|moved' "$3"
	fi
}

echo "# control: -o out/t.jsonl with nothing swapped"
work w0
rc=0
wt "$T/w0" "$T/w0.err" -o out/t.jsonl -- "$T/bin/swap.sh" || rc=$?
check_eq "warden trace exits 0" 0 echo "$rc"
check "the trace is out/t.jsonl, a trace with the real file read" is_trace "$T/w0/out/t.jsonl"
check "... the real file read in it" has_real "$T/w0/out/t.jsonl"
check "the summary names it" grep -qF "trace written to $T/w0/out/t.jsonl" "$T/w0.err"

for kind in truncate create; do
	echo "# -o out/t.jsonl, out/ swapped during the run for a link to a root-only folder ($kind)"
	work "w-$kind"
	rootonly "ro-$kind" $([[ $kind == truncate ]] && echo t.jsonl)
	before=$(listing "$T/ro-$kind")
	rc=0
	wt "$T/w-$kind" "$T/w-$kind.err" -o out/t.jsonl -- "$T/bin/swap.sh" out "$T/ro-$kind" || rc=$?
	echo "# warden trace: exit $rc: $(grep -v '^warden trace: \(files\|names\|environment\|measured\|the current\)' "$T/w-$kind.err" | tr '\n' ' ')"
	check "control: the program did swap out/ for the link" is_link "$T/w-$kind/out"
	check_eq "nothing was created or truncated in the root-only folder" "$before" listing "$T/ro-$kind"
	if [[ $kind == truncate ]]; then
		check_eq "... root's t.jsonl there is unchanged" "root's data" cat "$T/ro-$kind/t.jsonl"
	fi
	check "the trace is in the original folder (out.orig/), or it failed saying the folder was replaced" \
		outcome "$rc" "$T/w-$kind/out.orig/t.jsonl" "$T/w-$kind.err"
done

echo "# the default traces folder, XDG_STATE_HOME in the current folder"
work wd0
rc=0
XS=$T/wd0/st wt "$T/wd0" "$T/wd0.err" -- "$T/bin/swap.sh" || rc=$?
check_eq "control: warden trace exits 0" 0 echo "$rc"
check "control: a trace in the default folder" bash -c \
	'f=$(sed -n "s/^warden: trace written to //p" "$0"); [[ $f == "$1"/* ]] && jq -e -s ".[0].type == \"trace\"" "$f" >/dev/null' \
	"$T/wd0.err" "$T/wd0/st/warden/traces"
work wd1
rootonly ro-default
before=$(listing "$T/ro-default")
rc=0
XS=$T/wd1/st wt "$T/wd1" "$T/wd1.err" -- "$T/bin/swap.sh" st "$T/ro-default" || rc=$?
echo "# warden trace: exit $rc: $(grep -v '^warden trace: \(files\|names\|environment\|measured\|the current\)' "$T/wd1.err" | tr '\n' ' ')"
check "control: the program did swap st/ for the link" is_link "$T/wd1/st"
check_eq "nothing was made in the root-only folder" "$before" listing "$T/ro-default"
check "the trace is in the original folder, or it failed saying the folder was replaced" bash -c \
	'if (($0 == 0)); then f=$(sed -n "s/^warden: trace written to //p" "$1"); [[ $f == "$2"/* && -f ${f/\/st\//\/st.orig\/} ]]; else (($0 == 125)) && grep -Eqi "replaced|moved" "$1"; fi' \
	"$rc" "$T/wd1.err" "$T/wd1/st/warden/traces"

echo "# warden init -o sub/policy.yaml -- CMD, sub/ swapped"
# wi DIR ERR ARGS...: `warden init ARGS` from DIR in the lab
wi()
{
	local dir=$1 err=$2
	shift 2
	(cd "$dir" && HOME=$H XDG_STATE_HOME=$T/state WARDEN_AUDIT_LOG=$A \
		in_host "$W" init "$@" 2>"$err" >/dev/null)
}
work wi0
mkdir -p "$T/wi0/sub" && chown "$IDS" "$T/wi0/sub"
rc=0
wi "$T/wi0" "$T/wi0.err" -o sub/policy.yaml -- "$T/bin/swap.sh" || rc=$?
check_eq "control: warden init -o sub/policy.yaml exits 0" 0 echo "$rc"
check "control: the policy is there" grep -q '^version: 1' "$T/wi0/sub/policy.yaml"
work wi1
mkdir -p "$T/wi1/sub" && chown "$IDS" "$T/wi1/sub"
# without --force into an empty one (a policy made there), with it over root's policy.yaml
rootonly ro-init-new
rootonly ro-init policy.yaml
for force in "" --force; do
	ro=$T/ro-init-new
	[[ -z $force ]] || ro=$T/ro-init
	before=$(listing "$ro")
	rc=0
	wi "$T/wi1" "$T/wi1.err" -o sub/policy.yaml $force -- "$T/bin/swap.sh" sub "$ro" || rc=$?
	echo "# warden init ${force:+$force }with sub/ swapped: exit $rc: $(tr '\n' ' ' <"$T/wi1.err" | tail -c 400)"
	check "control: the program did swap sub/ for the link" is_link "$T/wi1/sub"
	check_eq "nothing was made or replaced in the root-only folder${force:+ (--force)}" "$before" listing "$ro"
	check "the policy is in the original folder, or init failed saying the folder was replaced" bash -c \
		'if (($0 == 0)); then [[ -f $1 ]] && grep -q "^version: 1" "$1"; else grep -Eqi "replaced|moved" "$2"; fi' \
		"$rc" "$T/wi1/sub.orig/policy.yaml" "$T/wi1.err"
	rm -rf "$T/wi1/sub" "$T/wi1/sub.orig"
	mkdir -p "$T/wi1/sub" && chown "$IDS" "$T/wi1/sub"
done

if [[ ${LAB_AS_USER:-} == 1 ]]; then
	echo "# (under sudo: not as the user, whose warden is no sudo's)"
else
	lab_user || { echo "FAIL: no lab user"; exit 1; }
	U=$LAB_USER_UID:$LAB_USER_GID
	# ws DIR ERR ARGS...: `warden trace ARGS` as root under sudo for the lab user
	ws()
	{
		local dir=$1 err=$2
		shift 2
		(cd "$dir" && SUDO_UID=$LAB_USER_UID SUDO_GID=$LAB_USER_GID HOME=$H \
			XDG_STATE_HOME=$T/state WARDEN_AUDIT_LOG=$A \
			in_host "$W" trace "$@" 2>"$err" >/dev/null)
	}
	echo "# under sudo: control, -o out/t.jsonl with nothing swapped"
	mkdir -p "$T/s0/out" && chown -R "$U" "$T/s0"
	rc=0
	ws "$T/s0" "$T/s0.err" -o out/t.jsonl -- "$T/bin/swap.sh" || rc=$?
	check_eq "warden trace exits 0" 0 echo "$rc"
	check "the trace is out/t.jsonl" is_trace "$T/s0/out/t.jsonl"
	check_eq "... the invoking user's file, 0600 (written as the person who asked)" "$U 600" \
		stat -c '%u:%g %a' "$T/s0/out/t.jsonl"

	echo "# under sudo: out/ swapped for a link to a root-only folder"
	mkdir -p "$T/s1/out" && chown -R "$U" "$T/s1"
	rootonly ro-sudo t.jsonl
	before=$(listing "$T/ro-sudo")
	rc=0
	ws "$T/s1" "$T/s1.err" -o out/t.jsonl -- "$T/bin/swap.sh" out "$T/ro-sudo" || rc=$?
	echo "# warden trace: exit $rc: $(grep -v '^warden trace: \(files\|names\|environment\|measured\|the current\)' "$T/s1.err" | tr '\n' ' ')"
	check "control: the program did swap out/ for the link" is_link "$T/s1/out"
	check_eq "nothing was created or truncated in the root-only folder" "$before" listing "$T/ro-sudo"
	check "the trace is in the original folder, or it failed saying the folder was replaced" \
		outcome "$rc" "$T/s1/out.orig/t.jsonl" "$T/s1.err"

	echo "# under sudo: -o into a root-only folder the invoking user cannot write"
	mkdir -p "$T/s2" && chown -R "$U" "$T/s2"
	rootonly ro-sudo2
	rc=0
	ws "$T/s2" "$T/s2.err" -o "$T/ro-sudo2/t.jsonl" -- /bin/sh -c "touch '$T/s2/ran'" || rc=$?
	echo "# warden trace: exit $rc: $(tr '\n' ' ' <"$T/s2.err" | tail -c 300)"
	check_eq "warden trace exits 125" 125 echo "$rc"
	check_eq "nothing was made in the root-only folder" "" listing "$T/ro-sudo2"
	check "the error names the folder and why" grep -qE "$T/ro-sudo2.*(Permission denied|may not write)" "$T/s2.err"
	check "the program did not run (refused before it started)" test ! -e "$T/s2/ran"
	check "control: the same command with -o in the user's folder runs and writes" bash -c \
		'cd "$0" && SUDO_UID=$1 SUDO_GID=$2 HOME=$3 XDG_STATE_HOME=$4 WARDEN_AUDIT_LOG=$5 \
		ip netns exec "$6" "$7" trace -o "$0/t.jsonl" -- /bin/sh -c "touch $0/ran" 2>/dev/null >/dev/null &&
		test -e "$0/ran" && jq -e -s ".[0].type == \"trace\"" "$0/t.jsonl" >/dev/null' \
		"$T/s2" "$LAB_USER_UID" "$LAB_USER_GID" "$H" "$T/state" "$A" "$LAB_HOST_NS" "$W"
fi

lab_finish
