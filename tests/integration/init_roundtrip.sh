#!/usr/bin/env bash
# init_roundtrip.sh - `warden init`: the starter policy, and the round trip from a trace to a
# policy that `warden run` enforces in the lab: the traced program runs under the policy made
# from its trace; a variant that reads one more file or reaches one more name is denied, and
# the audit log says so; a credential store the program read is not granted.
# The trace is written here by hand in the format `warden trace` writes (docs/trace.md), so
# this tests init and run, not the recorder (tests of `warden trace` itself are in their own
# scripts).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
lab_up

T=$(lab_tmpdir wd-init)
lab_on_exit rm -rf "$T"
chmod 0755 "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW
P=$T/proj
mkdir -p "$P/lib" "$T/other" "$T/home/.ssh"
echo "project data" >"$P/data.txt"
for f in a b c d e; do echo "lib $f" >"$P/lib/$f.sh"; done
echo "not granted" >"$T/other/extra.txt"
echo "PRIVATE KEY" >"$T/home/.ssh/id_ed25519"
chmod -R a+rX "$T"
cat >"$P/prog.sh" <<'EOF'
#!/bin/sh
# what was traced: read the project's files, fetch one lab URL; $1 is an extra file to read,
# $2 an extra URL (the variants)
cat "$(dirname "$0")/data.txt"
for f in "$(dirname "$0")"/lib/*.sh; do read -r line <"$f"; done
curl -fsS --max-time 8 --noproxy '*' --cacert "$CA" https://allowed.test/ || exit 3
[ -z "${1:-}" ] || cat "$1" || exit 4
[ -z "${2:-}" ] || curl -fsS --max-time 8 --noproxy '*' --cacert "$CA" "$2" || exit 5
EOF
chmod 0755 "$P/prog.sh"

# the trace of `prog.sh` (what warden trace records: runtime base reads, the project's
# files, the CA bundle, one name, the environment, a credential store it also peeked at)
trace=$T/prog.jsonl
{
	printf '{"type":"trace","version":1,"command":["%s"],"cwd":"%s","home":"%s"}\n' \
		"$P/prog.sh" "$P" "$T/home"
	printf '{"type":"file","op":"exec","path":"%s","comm":"prog.sh"}\n' "$P/prog.sh"
	printf '{"type":"file","op":"exec","path":"/usr/bin/curl","comm":"prog.sh"}\n'
	printf '{"type":"file","op":"read","path":"/etc/ld.so.cache","count":4,"comm":"curl"}\n'
	printf '{"type":"file","op":"read","path":"%s","comm":"cat"}\n' "$P/data.txt"
	for f in a b c d e; do
		printf '{"type":"file","op":"read","path":"%s","comm":"prog.sh"}\n' "$P/lib/$f.sh"
	done
	printf '{"type":"file","op":"read","path":"%s","comm":"curl"}\n' "$LAB_CA"
	printf '{"type":"file","op":"read","path":"%s","comm":"prog.sh"}\n' "$T/home/.ssh/id_ed25519"
	printf '{"type":"file","op":"missing","path":"%s","comm":"curl"}\n' "$T/home/.curlrc"
	printf '{"type":"net","host":"allowed.test","port":443,"proto":"tls","count":1}\n'
	printf '{"type":"env","name":"CA"}\n{"type":"env","name":"PATH"}\n'
	printf '{"type":"limits","peak_memory_kib":20000,"peak_pids":3,"wall_ms":900}\n'
} >"$trace"

wi() { (cd "$P" && HOME=$T/home "$W" init "$@"); }
wr() { HOME=$T/home CA=$LAB_CA in_host "$W" run -q --audit-log "$A" "$@"; }

echo "# the starter policy"
check "warden init writes a starter policy" wi -o "$T/starter.yaml"
check "the starter policy passes warden policy check" "$W" policy check "$T/starter.yaml"
check_fails --denied 2 "warden init keeps an existing file" wi -o "$T/starter.yaml"
check "... and replaces it with --force" wi --force -o "$T/starter.yaml"
check_fails --denied 2 "warden init --from TRACE -- COMMAND is a usage error (exit 2)" \
	wi --from "$P/data.txt" -o "$T/y.yaml" -- true
check "... and nothing was written" test ! -e "$T/y.yaml"
check_fails --denied 2 "warden init -- with no command is a usage error (exit 2)" wi -o "$T/y.yaml" --
check_fails --denied 2 "warden init -- COMMAND keeps an existing file before anything runs" \
	wi -o "$T/starter.yaml" -- "$P/prog.sh"
check_fails --denied 2 "a trace that is not one is refused" wi --from "$P/data.txt" -o "$T/x.yaml"
check "... and nothing was written" test ! -e "$T/x.yaml"
check "the refusal names the file and line" bash -c \
	'cd "$1" && "$0" init --from "$1/data.txt" -o "$2" 2>&1 | grep -qF "$1/data.txt:1: not JSON"' \
	"$W" "$P" "$T/x.yaml"

echo "# from the trace to a policy"
check "warden init --from TRACE writes the policy" wi --from "$trace" -o "$P/policy.yaml"
check "the policy passes warden policy check" env HOME="$T/home" "$W" policy check "$P/policy.yaml"
check "the five lib files are one grant, ./lib (4 or more folded)" \
	grep -q '^    - "./lib"   # read by prog.sh: 5 paths under ./lib' "$P/policy.yaml"
check "data.txt is granted alone" grep -q '^    - "./data.txt"' "$P/policy.yaml"
check "prog.sh is granted (executed)" grep -q '^    - "./prog.sh"' "$P/policy.yaml"
check "the runtime base is not granted" bash -c '! grep -q "/usr\|ld.so.cache" "$0"' "$P/policy.yaml"
check "the credential store is commented out, not granted" \
	grep -q '^    # - { path: "~/.ssh/id_ed25519", sensitive: true }' "$P/policy.yaml"
check "the name and its port are allowed" grep -q '^    - "allowed.test:443"' "$P/policy.yaml"
check "env.allow has what was given" grep -q '^    - CA$' "$P/policy.yaml"

echo "# the round trip"
: >"$A"
check_eq "the traced program runs under its policy" "project data
hello from allowed.test" wr -p "$P/policy.yaml" -- "$P/prog.sh"
check_fails --denied 4 "a variant that reads one more file is denied" \
	wr -p "$P/policy.yaml" -- "$P/prog.sh" "$T/other/extra.txt"
check "... while the same probe on a granted file passes" \
	wr -p "$P/policy.yaml" -- "$P/prog.sh" "$P/data.txt"
check_fails --denied 4 "the credential store the trace saw is not readable" \
	wr -p "$P/policy.yaml" -- "$P/prog.sh" "$T/home/.ssh/id_ed25519"
check_fails --denied 5 "a variant that reaches one more name is denied" \
	wr -p "$P/policy.yaml" -- "$P/prog.sh" "" https://other.test/
check "... while the same probe on the traced name passes" \
	wr -p "$P/policy.yaml" -- "$P/prog.sh" "" https://allowed.test/
check "the audit log says other.test was denied" jq -e -s \
	'[.[] | select(.allowed == false and .resource == "other.test")] | length > 0' "$A"
check "... and allowed.test allowed" jq -e -s \
	'[.[] | select(.allowed == true and .resource == "allowed.test")] | length > 0' "$A"

lab_finish
