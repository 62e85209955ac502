#!/usr/bin/env bash
# cli_conventions.sh BUILD_DIR WARDEN - the command line's conventions (issue 27, item 10), no
# root needed: `warden help VERB` prints what `warden VERB --help` prints, for every verb of
# the table; `warden run`'s usage errors exit 2 with the message, a one-line usage and "see
# `warden run --help`" (three lines on stderr, as warden(1) says), while a launcher failure
# that is not a usage error still exits 125; and the shell completions the build generated
# from the verb table (BUILD_DIR/deploy/completions) name every verb, are what `warden
# completion SHELL` prints now, and work in bash (sourced, `complete -p warden`, and
# completing verbs, options and sub-verbs). zsh and fish are not on the test machines: their
# scripts are checked as text (every verb with its summary, each verb's options).
set -u
BUILD=${1:?usage: cli_conventions.sh BUILD_DIR WARDEN}
W=${2:?usage: cli_conventions.sh BUILD_DIR WARDEN}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/tests/lab/lib.sh"
[[ -x $W ]] || { echo "ERROR - $W is not executable"; echo "0 passed, 1 failed (test error)"; exit 2; }
T=$(mktemp -d /tmp/wd-cli-XXXXXX)
trap 'rm -rf "$T"' EXIT
export HOME=$T WARDEN_AUDIT_LOG=$T/audit.jsonl

# the verbs of `warden help` (its "verbs:" block)
mapfile -t VERBS < <("$W" help | awk '/^verbs:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}')
check "warden help lists the verbs (run, policy, help among them)" bash -c \
	'[[ " $* " == *" run "* && " $* " == *" policy "* && " $* " == *" help "* ]]' _ "${VERBS[@]}"

echo "# warden help VERB is warden VERB --help"
# same VERB: `help VERB` and `VERB --help` print the same, exit 0, and it is not the global help
same() {
	local a b
	a=$("$W" help "$1") || return 1
	b=$("$W" "$1" --help) || return 1
	[[ -n $a && $a == "$b" ]]
}
for v in "${VERBS[@]}"; do
	check "warden help $v = warden $v --help" same "$v"
done
check "warden help run is run's usage, not the verb list" lab_match '^usage: warden run ' "$W" help run
check "... and the control: warden help alone is the verb list" lab_match '^usage: warden VERB ' "$W" help
check_eq "warden help NOSUCHVERB exits 2" 2 bash -c '"$0" help nosuchverb 2>/dev/null; echo $?' "$W"
check "... and says which verb is unknown" lab_match "unknown verb 'nosuchverb'" \
	bash -c '"$0" help nosuchverb 2>&1; true' "$W"

echo "# warden run: usage errors exit 2 with a short usage"
# usage_err ARGS...: `warden run ARGS` exits 2, its stderr three lines: the error, the usage
# line, "see `warden run --help`"; nothing on stdout
usage_err() {
	local out err rc=0
	out=$("$W" run "$@" 2>"$T/err") || rc=$?
	err=$(<"$T/err")
	((rc == 2)) || { echo "exit $rc, wanted 2"; echo "$err"; return 1; }
	[[ -z $out ]] || { echo "stdout: $out"; return 1; }
	[[ $(wc -l <"$T/err") == 3 ]] || { echo "not 3 lines:"; echo "$err"; return 1; }
	[[ $(sed -n 1p "$T/err") == "warden run: "* ]] || { echo "$err"; return 1; }
	[[ $(sed -n 2p "$T/err") == "usage: warden run "* ]] || { echo "$err"; return 1; }
	[[ $(sed -n 3p "$T/err") == 'see `warden run --help`' ]] || { echo "$err"; return 1; }
}
check "an unknown long option" usage_err --bogus -- true
check "an unknown short option" usage_err -x -- true
check "an option without its argument" usage_err --timeout
check "a bad --timeout" usage_err --timeout 0 -- true
check "a bad --mode" usage_err --mode sideways -- true
check "no command and no policy command" usage_err
check "the unknown option is named as typed" lab_match "^warden run: unknown option \`--bogus\`" \
	bash -c '"$0" run --bogus -- true 2>&1; true' "$W"
check "control: warden run --help exits 0 with the long usage" lab_match '^  -p, --policy FILE' \
	"$W" run --help
check_eq "a launcher failure that is not a usage error (a policy that is not there) stays 125" 125 \
	bash -c '"$0" run -q -p "$1/nonexistent.yaml" -- true >/dev/null 2>&1; echo $?' "$W" "$T"

echo "# the shell completions"
C=$BUILD/deploy/completions
for f in warden _warden warden.fish; do
	check "the build generated $f" test -s "$C/$f"
done
check_eq "bash's is what warden completion bash prints" "" bash -c 'diff <("$0" completion bash) "$1"' "$W" "$C/warden"
check_eq "zsh's is what warden completion zsh prints" "" bash -c 'diff <("$0" completion zsh) "$1"' "$W" "$C/_warden"
check_eq "fish's is what warden completion fish prints" "" bash -c 'diff <("$0" completion fish) "$1"' "$W" "$C/warden.fish"
check_eq "warden completion with no shell exits 2" 2 bash -c '"$0" completion >/dev/null 2>&1; echo $?' "$W"
check_eq "bash: sourced, complete -p warden names its function" "complete -o bashdefault -o default -F _warden warden" \
	bash -c 'source "$0" && complete -p warden' "$C/warden"
# comp FILE WORD...: what the bash completion offers for `WORD...` (the last one being typed)
comp() {
	bash -c 'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _warden;
		printf "%s\n" "${COMPREPLY[@]}" | sort' "$@"
}
check_eq "bash: warden <TAB> offers every verb of the table" "$(printf '%s\n' "${VERBS[@]}" | sort)" \
	comp "$C/warden" warden ""
check_eq "bash: warden he<TAB> offers help" help comp "$C/warden" warden he
check "bash: warden run --p<TAB> offers --policy (from run's --help)" lab_match '^--policy$' \
	comp "$C/warden" warden run --p
check "bash: warden nft <TAB> offers its sub-verbs" lab_match '^render$' comp "$C/warden" warden nft ""
check_eq "bash: warden help <TAB> offers every verb" "$(printf '%s\n' "${VERBS[@]}" | sort)" \
	comp "$C/warden" warden help ""
check_eq "bash: after --, the command's words are left to the shell (files)" "" \
	comp "$C/warden" warden run -- cat ""
# every verb in zsh's and fish's scripts, with its summary
for v in "${VERBS[@]}"; do
	summary=$("$W" help | awk -v v="$v" '/^verbs:/ {on = 1; next} on && $1 == v {sub(/^  [a-z]+ +/, ""); print; exit}')
	check "zsh names $v with its summary" grep -qF -- "'$v:${summary//\'/\'\\\'\'}'" "$C/_warden"
	check "fish names $v with its summary" grep -qF -- "-a $v -d '${summary//\'/\\\'}'" "$C/warden.fish"
done
check "zsh completes run's options" grep -q '^	run) opts=(-p .*--policy' "$C/_warden"
check "fish completes run's --policy" grep -qx "complete -c warden -n '__fish_seen_subcommand_from run' -l policy" \
	"$C/warden.fish"
grep -hv '^#' "$C/warden" "$C/_warden" "$C/warden.fish" >"$T/scripts"
check_fails "the hidden verb completion is in no script" grep -qw completion "$T/scripts"
check "control: that grep finds a verb that is there" grep -qw doctor "$T/scripts"
lab_finish
