#!/usr/bin/env bash
# policy_check_cli.sh - `warden policy check` as a new user meets it (issue 27, item 8): a quoted
# version says "a number, not a string"; a URL in network.allow suggests the host:port it meant;
# a glob in a grant is said not to be one; the parser's and the validator's errors come in one
# pass; localhost and the cloud metadata names get a warning that the SSRF guard refuses them;
# `~` in `command` is the home folder (warden run and policy check), and policy check warns of
# a command that is missing or not executable; `-` reads the policy from standard input; --json's verdict is the key `valid` on success
# and on failure. Needs no root and no lab. WARDEN_BIN is the warden binary (CTest sets it).
set -u
# the lab's assertions (no lab is built): a probe that cannot run is an ERROR, not a pass
. "$(dirname "$0")/../lab/lib.sh"
W=${WARDEN_BIN:?WARDEN_BIN must point at the warden binary}
command -v jq >/dev/null || { echo "FAIL: jq is missing"; exit 1; }
T=$(mktemp -d /tmp/wd-policy-check-XXXXXX)
trap 'rm -rf "$T"' EXIT

printf 'version: 1\n' >"$T/ok.yaml"
printf 'version: "1"\n' >"$T/quoted.yaml"
printf 'version: 1\nnetwork:\n  allow: ["https://api.github.com/"]\n' >"$T/url.yaml"
printf 'version: 1\nnetwork:\n  allow: ["api.github.com:443"]\n' >"$T/host.yaml"
mkdir "$T/logs"
printf 'version: 1\nfilesystem:\n  read: ["%s/logs/*.log"]\n' "$T" >"$T/glob.yaml"
printf 'version: 1\nfilesystem:\n  read: ["%s/none"]\nnetwork:\n  allow: ["a.com:99999"]\n' \
	"$T" >"$T/two.yaml"

echo "# messages"
check "control: version: 1 is valid" "$W" policy check "$T/ok.yaml"
check_fails --denied 2 "version: \"1\" is refused" "$W" policy check "$T/quoted.yaml"
check "... as a number written as a string, at 1:10" bash -c \
	'"$0" policy check "$1" 2>&1 | grep -F "quoted.yaml:1:10: error: version: found \`\"1\"\`; expected a number, not a string"' \
	"$W" "$T/quoted.yaml"
check "control: api.github.com:443 is valid" "$W" policy check "$T/host.yaml"
check_fails --denied 2 "a URL in network.allow is refused" "$W" policy check "$T/url.yaml"
check "... saying a host name, not a URL, and suggesting api.github.com:443" bash -c \
	'"$0" policy check "$1" 2>&1 | grep -F "url.yaml:3:11: error: network.allow: \`https://api.github.com/\`: expected a host name, not a URL; did you mean \`api.github.com:443\`?"' \
	"$W" "$T/url.yaml"
check_fails --denied 2 "a glob grant that matches nothing literally is refused" \
	"$W" policy check "$T/glob.yaml"
check "... and the warning says globs are not supported" bash -c \
	'"$0" policy check "$1" 2>&1 | grep -E "glob.yaml:3:[0-9]+: warning: .*globs are not supported"' \
	"$W" "$T/glob.yaml"
printf 'version: 1\nnetwork:\n  allow: [localhost, metadata.google.internal]\n' >"$T/ssrf.yaml"
check "names the SSRF guard refuses are valid (a warning, not an error)" "$W" policy check "$T/ssrf.yaml"
check_eq "... with one warning each, at file:line:col" 2 bash -c \
	'"$0" policy check "$1" 2>&1 >/dev/null | grep -c -E "ssrf.yaml:3:(11|22): warning: .*(loopback|link-local).*SSRF guard"' \
	"$W" "$T/ssrf.yaml"
check_eq "control: an ordinary name gets no warning" 0 bash -c \
	'"$0" policy check "$1" 2>&1 >/dev/null | grep -c -F warning; true' "$W" "$T/host.yaml"
echo "# ~ in command"
mkdir -p "$T/home/bin"
printf '#!/bin/sh\necho hi\n' >"$T/home/bin/hello"
chmod +x "$T/home/bin/hello"
printf 'version: 1\ncommand: ["~/bin/hello", "~/x"]\nfilesystem:\n  read: ["~/bin"]\n' >"$T/cmd.yaml"
printf 'version: 1\ncommand: ["~/bin/nothere"]\n' >"$T/cmdbad.yaml"
# bwrap_line POLICY: `warden run --print-bwrap`'s line (nothing runs); its descriptors' folder,
# named on stderr, is removed
bwrap_line() {
	local out err rc dir
	err=$(mktemp "$T/err.XXXXXX")
	out=$(HOME=$T/home "$W" run -p "$1" --print-bwrap 2>"$err") && rc=0 || rc=$?
	dir=$(grep -o '/tmp/warden-bwrap\.[A-Za-z0-9]*' "$err" | head -1)
	[[ -n $dir ]] && rm -rf "$dir"
	[[ $rc -eq 0 ]] || { cat "$err" >&2; return "$rc"; }
	printf '%s\n' "$out"
}
check "warden run: ~ in command is the home folder, in the program and its arguments" bash -c \
	"$(declare -f bwrap_line); T=\$0 W=\$1; bwrap_line \"\$T/cmd.yaml\" | grep -F -- \"-- \$T/home/bin/hello \$T/home/x \"" \
	"$T" "$W"
check "policy check: a command that resolves gets no warning" bash -c \
	'! HOME=$1/home "$0" policy check "$1/cmd.yaml" 2>&1 >/dev/null | grep -F warning' "$W" "$T"
check "policy check: a command that is not there is a warning at its line:col" bash -c \
	'HOME=$1/home "$0" policy check "$1/cmdbad.yaml" 2>&1 >/dev/null | grep -F "cmdbad.yaml:2:11: warning: command: \`$1/home/bin/nothere\` is not found"' \
	"$W" "$T"
chmod -x "$T/home/bin/hello"
check "... one that is not executable too" bash -c \
	'HOME=$1/home "$0" policy check "$1/cmd.yaml" 2>&1 >/dev/null | grep -F "cmd.yaml:2:11: warning: command: \`$1/home/bin/hello\` is not an executable file"' \
	"$W" "$T"
chmod +x "$T/home/bin/hello"
echo "# every error in one pass"
check_eq "a missing grant (validator) and a bad port (parser): two errors at once" 2 bash -c \
	'"$0" policy check "$1" 2>&1 | grep -c -E "two.yaml:(3:10: error: .*does not exist|5:11: error: .*99999)"' \
	"$W" "$T/two.yaml"
echo "# standard input"
check "control: a file name still works" "$W" policy check "$T/ok.yaml"
check_eq "policy check - reads the policy from stdin" "version: 1" bash -c \
	'"$0" policy check - <"$1"' "$W" "$T/ok.yaml"
check_fails --denied 2 "an invalid policy on stdin is refused" bash -c \
	'"$0" policy check - <"$1"' "$W" "$T/quoted.yaml"
check "... naming (stdin) and the position" bash -c \
	'"$0" policy check - <"$1" 2>&1 | grep -F "(stdin):1:10: error: version"' "$W" "$T/quoted.yaml"
echo "# --json: one key for the verdict"
check_eq "valid: true on success" true bash -c '"$0" policy check --json "$1" | jq -c .valid' \
	"$W" "$T/ok.yaml"
check_eq "... and no old key" null bash -c '"$0" policy check --json "$1" | jq -c .validated' \
	"$W" "$T/ok.yaml"
check_eq "valid: false on failure" false bash -c \
	'"$0" policy check --json "$1" 2>/dev/null | jq -c .valid' "$W" "$T/quoted.yaml"

echo "# --for macos|windows: what another OS's backend would enforce, checked first"
mkdir -p "$T/home/.ssh" "$T/home/proj"
printf 'version: 1\nfilesystem:\n  read: ["~"]\n  write: ["%s/home/proj"]\n' "$T" >"$T/home.yaml"
forp() { HOME=$T/home "$W" policy check "$@" 2>/dev/null; }
# has OS PATTERN [OPTS...]: the rendering for OS holds a line matching the ERE PATTERN
has() { local os=$1 re=$2; shift 2; forp --for "$os" "$@" "$T/home.yaml" | grep -qE -- "$re"; }
# after OS PATTERN NEXT: a line matching PATTERN is followed (within 3 lines) by one holding NEXT
after() { forp --for "$1" "$T/home.yaml" | grep -E -A3 -- "$2" | grep -qF -- "$3"; }
only_loopback_permits() {
	local out
	out=$(forp --for windows "$T/home.yaml") || return 2
	grep -q "permit.*remote=127.0.0.1 port=15080" <<<"$out" &&
		! grep " permit " <<<"$out" | grep -vq "port=15080"
}
check "--for macos: deny by default" has macos '^\(deny default\)$'
check "... the one way out is the proxy on loopback" has macos 'network-outbound \(remote ip "localhost:15080"\)'
check "... --proxy-port moves it" has macos 'localhost:3128' --proxy-port 3128
check "... ~/.ssh under the ~ grant is denied" after macos '^\(deny file-read' "$T/home/.ssh"
check "... the write grant is writable" after macos 'file-write\*' "$T/home/proj"
check "--for windows: the plan permits only the loopback proxy port" only_loopback_permits
check "... ~/.ssh is denied to the container" has windows "^acl deny .*$T/home/.ssh \(mask\)"
check_fails --denied 2 "--for linux is refused (2)" "$W" policy check --for linux "$T/ok.yaml"
check_fails --denied 2 "--proxy-port 0 is refused (2)" "$W" policy check --for macos --proxy-port 0 "$T/ok.yaml"
check_fails --denied 2 "--for with --json is refused (2)" "$W" policy check --for macos --json "$T/ok.yaml"
lab_finish
