#!/usr/bin/env bash
# trace_roundtrip.sh - `warden trace` then `warden init --from` then `warden run` (issue 16,
# docs/trace.md): for each program below, the trace `warden trace -o T -- CMD` writes becomes a
# policy (`warden init --from T`), the policy passes `warden policy check`, and `warden run -p
# policy -- CMD` runs the program under it in the lab; a variant of the program that reads one
# more file or reaches one more name is denied (its exit status, and the audit log's denial),
# each next to the same probe pointed at what the trace saw (the positive control). Programs:
#
#   tour.sh   a shell script: reads two files, writes one in its cwd, curls https://allowed.test
#             and http://other.test
#   git       `git clone` over HTTPS from the lab (dumb HTTP, the lab's /git/lab.git) into cwd
#   node      a script that reads a JSON file and fetch()es the URL it names
#   peek.sh   reads ~/.ssh/id_ed25519 (a fake key) and a notes file: init does not grant the
#             key (commented out, a warning), the run cannot read it while the rest works
#
# Also: the trace's default place, its modes and stderr line, the exit status passed on, and
# `warden init -- CMD` (trace and init in one step). Root mode; run_as_user.sh reruns it as
# the lab's unprivileged user (rootless mode).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
for t in jq git node; do
	command -v "$t" >/dev/null || { echo "FAIL: $t is missing"; exit 1; }
done
lab_up

# not in /tmp: a trace's sandbox has a /tmp of its own (empty, as every run's), so the host's
# /tmp is not visible there (docs/trace.md); lab_tmpdir's rules otherwise (the user's, as one)
T=$(mktemp -d /var/tmp/wd-trace-rt-XXXXXX) || exit 1
if [[ ${LAB_AS_USER:-} == 1 ]]; then
	lab_user && chown "$LAB_USER_UID:$LAB_USER_GID" "$T" || exit 1
fi
chmod 0755 "$T"
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
H=$T/home
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0
IDS=$(lab_program_ids)

mkdir -p "$H/.ssh" "$T/state" "$T/traces" "$T/pol" "$T/bin" "$T/data" \
	"$T/shell" "$T/gitwork" "$T/nodeproj" "$T/sshprog"
echo "alpha" >"$T/data/a.txt"
echo "beta" >"$T/data/b.txt"
echo "gamma, never read by the traced program" >"$T/data/c.txt"
echo "FAKE PRIVATE KEY" >"$H/.ssh/id_ed25519"
echo "notes of the project" >"$T/sshprog/notes.txt"

cat >"$T/bin/tour.sh" <<'EOF'
#!/bin/sh
# reads two files, writes one in the cwd, fetches an allowed lab name over https and another
# over http; $1 is one more file to read (exit 4), $2 one more URL (exit 5)
cat "$DATA/a.txt" "$DATA/b.txt" >out.txt || exit 3
curl -fsS --max-time 8 --noproxy '*' --cacert "$CA" https://allowed.test/ >>out.txt || exit 3
curl -fsS --max-time 8 --noproxy '*' http://other.test/ >>out.txt || exit 3
[ -z "${1:-}" ] || cat "$1" >>out.txt || exit 4
[ -z "${2:-}" ] || curl -fsS --max-time 8 --noproxy '*' --cacert "$CA" "$2" >>out.txt || exit 5
cat out.txt
EOF
# warden init -- COMMAND passes no -e: this one needs no environment
cat >"$T/bin/onestep.sh" <<EOF
#!/bin/sh
cat "$T/data/a.txt" && curl -fsS --max-time 8 --noproxy '*' http://other.test/
EOF
cat >"$T/nodeproj/config.json" <<'EOF'
{ "url": "https://allowed.test/", "greeting": "node here" }
EOF
cat >"$T/nodeproj/app.js" <<'EOF'
// reads config.json, fetches the URL it names; argv[2]: one more file (exit 4), argv[3]: one
// more URL (exit 5)
const fs = require("fs");
const path = require("path");
const cfg = JSON.parse(fs.readFileSync(path.join(__dirname, "config.json"), "utf8"));
async function get(url) {
	const r = await fetch(url, { signal: AbortSignal.timeout(8000) });
	if (!r.ok) throw new Error(url + ": HTTP " + r.status);
	return (await r.text()).trim();
}
(async () => {
	console.log(cfg.greeting);
	console.log(await get(cfg.url));
	const [extra, url2] = process.argv.slice(2);
	if (extra) {
		try { fs.readFileSync(extra); } catch (e) { console.error(e.message); process.exit(4); }
	}
	if (url2) {
		try { await get(url2); } catch (e) { console.error(String(e.cause || e)); process.exit(5); }
	}
})().catch((e) => { console.error(String(e.cause || e)); process.exit(3); });
EOF
cat >"$T/sshprog/peek.sh" <<'EOF'
#!/bin/sh
# reads the user's ssh key if it can, then its notes; $1 is one more file (exit 4)
cat "$HOME/.ssh/id_ed25519" 2>/dev/null || echo "no key"
cat "$(dirname "$0")/notes.txt" || exit 3
[ -z "${1:-}" ] || cat "$1" || exit 4
EOF
chmod 0755 "$T/bin/tour.sh" "$T/bin/onestep.sh" "$T/sshprog/peek.sh"
chmod -R a+rX "$T"
# the folders the programs write in belong to whom the program runs as; as the user
# (run_as_user.sh), every file is the user's
[[ ${LAB_AS_USER:-} != 1 ]] || chown -R "$IDS" "$T"
chown "$IDS" "$T/shell" "$T/gitwork"

# the environment the programs are given (and which their policies' env.allow then name)
export DATA=$T/data CA=$LAB_CA GIT_SSL_CAINFO=$LAB_CA NODE_EXTRA_CA_CERTS=$LAB_CA
ENVS=(-e DATA -e CA -e GIT_SSL_CAINFO -e NODE_EXTRA_CA_CERTS)

# wt DIR TRACE CMD...: warden trace of CMD in the lab, its cwd DIR, the trace to TRACE
wt()
{
	local dir=$1 out=$2
	shift 2
	(cd "$dir" && HOME=$H XDG_STATE_HOME=$T/state WARDEN_AUDIT_LOG=$A \
		in_host "$W" trace -o "$out" "${ENVS[@]}" -- "$@")
}
# wi TRACE POLICY: warden init --from TRACE -o POLICY (stderr: POLICY.err)
wi() { (cd "$T" && HOME=$H "$W" init --from "$1" -o "$2" 2>"$2.err"); }
# pc POLICY: warden policy check
pc() { HOME=$H "$W" policy check "$1" >/dev/null; }
# wr DIR POLICY CMD...: warden run of CMD under POLICY in the lab, its cwd DIR
wr()
{
	local dir=$1 pol=$2
	shift 2
	(cd "$dir" && HOME=$H in_host "$W" run -q --audit-log "$A" -p "$pol" -- "$@")
}
# audited POLICY: a copy of POLICY (POLICY-audit.yaml, the same folder) that records denied
# file attempts (audit.files: denied), for the audit log's side of the file variants
audited()
{
	local out=${1%.yaml}-audit.yaml
	if grep -q '^audit:' "$1"; then
		sed 's/^audit:$/audit:\n  files: denied/' "$1" | awk '!(/^  files:/ && seen++)' >"$out"
	else
		{ cat "$1"; printf 'audit:\n  files: denied\n'; } >"$out"
	fi
	echo "$out"
}
# the last run's id in the audit log
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
# denied_net HOST: the last run's audit has a denial of HOST
denied_net()
{
	jq -e -s --arg r "$(last_run)" --arg h "$1" \
		'[.[] | select(.run == $r and .allowed == false and .resource == $h)] | length > 0' "$A"
}
allowed_net()
{
	jq -e -s --arg r "$(last_run)" --arg h "$1" \
		'[.[] | select(.run == $r and .allowed == true and .resource == $h)] | length > 0' "$A"
}
# denied_file PATH: the last run's audit has a file event of PATH, not allowed
denied_file()
{
	jq -e -s --arg r "$(last_run)" --arg p "$1" \
		'[.[] | select(.run == $r and .type == "file" and .allowed == false and .resource == $p)] | length > 0' "$A"
}
# in_trace TRACE JQ-FILTER: the trace has a line the filter selects (given $T as $t)
in_trace() { jq -e -s --arg t "$T" "[.[] | select($2)] | length > 0" "$1" >/dev/null; }
# granted POLICY TEXT: an uncommented line of POLICY holds TEXT
granted() { grep -v '^[[:space:]]*#' "$1" | grep -qF -- "$2"; }
not_granted() { lab_negate granted "$@"; }

echo "# warden trace itself: where the trace goes, the stderr line, the exit status"
out=$( (cd "$T/shell" && HOME=$H XDG_STATE_HOME=$T/state WARDEN_AUDIT_LOG=$A \
	in_host "$W" trace -- /bin/sh -c 'echo traced; exit 7') 2>"$T/default.err")
rc=$?
check_eq "the program's stdout passes through" traced echo "$out"
check_eq "warden trace exits with the program's status (7)" 7 echo "$rc"
def=$(sed -n 's/^warden: trace written to //p' "$T/default.err" | tail -n 1)
check "stderr says 'warden: trace written to PATH'" test -n "$def"
check "... PATH is STATE/warden/traces/<UTC time>-sh.jsonl" \
	bash -c '[[ $0 =~ ^$1/warden/traces/[0-9]{8}T[0-9]{6}Z-sh\.jsonl$ ]]' "$def" "$T/state"
check "... and is there" test -f "$def"
check_eq "... mode 0600" 600 stat -c %a "$def"
check_eq "... its folders 0700" "700 700" \
	bash -c 'echo $(stat -c %a "$0/warden" "$0/warden/traces")' "$T/state"
check "... its first line is the trace line, version 1, the command" jq -e -s \
	'.[0].type == "trace" and .[0].version == 1 and .[0].command[0] == "/bin/sh"' "$def"
check "warden trace with no command is a usage error (2)" bash -c \
	'"$0" trace >/dev/null 2>&1; [ $? -eq 2 ]' "$W"

echo "# tour.sh: two files read, one written in the cwd, an https and an http name"
TT=$T/traces/tour.jsonl P=$T/pol/tour.yaml
check_eq "warden trace runs it" "alpha
beta
hello from allowed.test
hello from other.test" wt "$T/shell" "$TT" "$T/bin/tour.sh"
check "the trace has the reads of a.txt and b.txt" in_trace "$TT" \
	'.type == "file" and .op == "read" and (.path == ($t + "/data/a.txt") or .path == ($t + "/data/b.txt"))'
check "the trace has the write in the cwd (out.txt)" in_trace "$TT" \
	'.type == "file" and (.op == "create" or .op == "write") and .path == ($t + "/shell/out.txt")'
check "the trace has allowed.test:443 (tls)" in_trace "$TT" \
	'.type == "net" and .host == "allowed.test" and .port == 443 and .proto == "tls"'
check "the trace has other.test:80 (http)" in_trace "$TT" \
	'.type == "net" and .host == "other.test" and .port == 80 and .proto == "http"'
check "the trace has the env names given" in_trace "$TT" '.type == "env" and .name == "DATA"'
check "the trace has no read of c.txt (never read)" lab_negate in_trace "$TT" \
	'.type == "file" and .path == ($t + "/data/c.txt")'
check "warden init --from writes the policy" wi "$TT" "$P"
check "the policy passes warden policy check" pc "$P"
check "it grants a.txt" granted "$P" "$T/data/a.txt"
check "it does not grant c.txt nor the data folder (two files stay two)" bash -c \
	'! grep -v "^[[:space:]]*#" "$0" | grep -qF -e "$1/data/c.txt" -e "\"$1/data\""' "$P" "$T"
check "it allows allowed.test:443 and other.test:80" bash -c \
	'grep -q "allowed.test:443" "$0" && grep -q "other.test:80" "$0"' "$P"
# one short trace measures a lower bound (the sampler of a rootless trace never saw curl's
# 11 MiB beside the shell's 2), so the limits are floors above it: a limit cut close to the
# trace was hit on a loaded machine (the run SIGKILLed, 137; issue 24)
check "its limits are at least init's floors (memory_mb 256, pids 64, timeout_s 60)" bash -c \
	'grep -Eq "^  memory_mb: [0-9]{3,}" "$0" && grep -Eq "^  pids: ([6-9][0-9]|[0-9]{3,})" "$0" &&
	grep -Eq "^  timeout_s: ([6-9][0-9]|[0-9]{3,})" "$0" && grep -q "peak [0-9]* MiB seen" "$0"' "$P"
rm -f "$T/shell/out.txt"
: >"$A"
check_eq "warden run runs tour.sh under its policy" "alpha
beta
hello from allowed.test
hello from other.test" wr "$T/shell" "$P" "$T/bin/tour.sh"
PA=$(audited "$P")
check "the audited copy passes policy check" pc "$PA"
check_fails --denied 4 "a variant that reads one more file (c.txt, beside a.txt) is denied" \
	wr "$T/shell" "$PA" "$T/bin/tour.sh" "$T/data/c.txt"
check "... the audit log has the file denial of c.txt" denied_file "$T/data/c.txt"
check "... while the same probe on a.txt passes" wr "$T/shell" "$PA" "$T/bin/tour.sh" "$T/data/a.txt"
check_fails --denied 5 "a variant that reaches one more name (wild.test) is denied" \
	wr "$T/shell" "$P" "$T/bin/tour.sh" "" https://wild.test/
check "... the audit log says wild.test was denied" denied_net wild.test
check "... while the same probe on allowed.test passes" \
	wr "$T/shell" "$P" "$T/bin/tour.sh" "" https://allowed.test/
check "... and the audit log says allowed.test was allowed" allowed_net allowed.test
check_fails --denied 5 "other.test on a port the trace did not see (443) is denied" \
	wr "$T/shell" "$P" "$T/bin/tour.sh" "" https://other.test/
check "... while http://other.test passes" wr "$T/shell" "$P" "$T/bin/tour.sh" "" http://other.test/

echo "# git clone over https from the lab into the cwd"
TG=$T/traces/git.jsonl P=$T/pol/git.yaml
GURL=https://allowed.test/git/lab.git
check "warden trace runs git clone" wt "$T/gitwork" "$TG" git clone -q "$GURL" repo
check "the trace has allowed.test:443" in_trace "$TG" \
	'.type == "net" and .host == "allowed.test" and .port == 443'
check "the trace has the clone's files under ./repo" in_trace "$TG" \
	'.type == "file" and (.path | startswith($t + "/gitwork/repo/"))'
check "warden init --from writes the policy" wi "$TG" "$P"
check "the policy passes warden policy check" pc "$P"
# (the cwd itself is a read grant: `warden run` starts the program in its cwd only when a grant
# shows it; the writes are the point here)
writes_of() { awk '/^  write:/ {w = 1; next} /^  [a-z]|^[a-z]/ {w = 0} w && !/^[[:space:]]*#/' "$1"; }
check "it grants writes in ./repo, not the whole cwd" bash -c \
	'grep -q "gitwork/repo\|\./repo" <<<"$1" && ! grep -qE "\"($0/gitwork|\.)\"" <<<"$1"' \
	"$T" "$(writes_of "$P")"
# The second clone starts where the first did: no repo (a clone into a folder that is not
# empty fails whatever the policy says). The policy's write grant ./repo is then missing, its
# parent there: the launcher makes it, empty, and git clones into it.
rm -rf "$T/gitwork/repo"
: >"$A"
check "warden run clones again under the policy" wr "$T/gitwork" "$P" git clone -q "$GURL" repo
check_eq "... the clone is complete" "warden lab repository" cat "$T/gitwork/repo/README"
rm -rf "$T/gitwork/repo"
check_fails --denied 128 "a clone into another folder of the cwd (repo2) is denied" \
	wr "$T/gitwork" "$P" git clone -q "$GURL" repo2
check "... nothing of it is on the host" test ! -e "$T/gitwork/repo2/.git"
check "... while the same clone into ./repo passes" wr "$T/gitwork" "$P" git clone -q "$GURL" repo
rm -rf "$T/gitwork/repo" "$T/gitwork/repo2"
check_fails --denied 128 "a clone from another lab name (other.test) is denied" \
	wr "$T/gitwork" "$P" git clone -q https://other.test/git/lab.git repo
check "... the audit log says other.test was denied" denied_net other.test
rm -rf "$T/gitwork/repo"
check "... while the same clone from allowed.test passes" \
	wr "$T/gitwork" "$P" git clone -q "$GURL" repo
rm -rf "$T/gitwork/repo"

echo "# node: a JSON file read, a URL fetched"
TN=$T/traces/node.jsonl P=$T/pol/node.yaml
check_eq "warden trace runs node" "node here
hello from allowed.test" wt "$T/nodeproj" "$TN" node app.js
check "the trace has the read of config.json by node" in_trace "$TN" \
	'.type == "file" and .op == "read" and .path == ($t + "/nodeproj/config.json")'
check "the trace has allowed.test:443" in_trace "$TN" \
	'.type == "net" and .host == "allowed.test" and .port == 443'
check "warden init --from writes the policy" wi "$TN" "$P"
check "the policy passes warden policy check" pc "$P"
check "it allows NODE_EXTRA_CA_CERTS" grep -q '^    - NODE_EXTRA_CA_CERTS' "$P"
: >"$A"
check_eq "warden run runs node under its policy" "node here
hello from allowed.test" wr "$T/nodeproj" "$P" node app.js
PA=$(audited "$P")
check_fails --denied 4 "a variant that reads one more file (data/a.txt) is denied" \
	wr "$T/nodeproj" "$PA" node app.js "$T/data/a.txt"
check "... the audit log has the file denial" denied_file "$T/data/a.txt"
check "... while the same probe on config.json passes" \
	wr "$T/nodeproj" "$PA" node app.js "$T/nodeproj/config.json"
check_fails --denied 5 "a variant that fetches one more name (multi.test) is denied" \
	wr "$T/nodeproj" "$P" node app.js "" https://multi.test/
check "... the audit log says multi.test was denied" denied_net multi.test
check "... while the same probe on allowed.test passes" \
	wr "$T/nodeproj" "$P" node app.js "" https://allowed.test/

echo "# peek.sh: reads ~/.ssh/id_ed25519"
TS=$T/traces/peek.jsonl P=$T/pol/peek.yaml
check "control: the key is readable on the host by whom the program runs as" \
	setpriv --reuid="${IDS%%:*}" --regid="${IDS##*:}" --clear-groups cat "$H/.ssh/id_ed25519"
# the program is given HOME (every run's is /tmp otherwise), so that ~ is the test's home
ENVS+=(-e HOME)
check "warden trace runs peek.sh" wt "$T/sshprog" "$TS" "$T/sshprog/peek.sh"
check "the trace has the attempt at the key" in_trace "$TS" \
	'.type == "file" and .path == ($t + "/home/.ssh/id_ed25519")'
check "warden init --from writes the policy" wi "$TS" "$P"
check "the policy passes warden policy check" pc "$P"
check "the key is not granted" not_granted "$P" ".ssh"
check "... it is there commented out" grep -qE '^[[:space:]]*# .*(~/\.ssh/id_ed25519|\.ssh)' "$P"
check "... and init warned on stderr" grep -qi 'ssh' "$P.err"
check "the notes are granted (the file or its folder)" granted "$P" "$T/sshprog"
: >"$A"
check_eq "warden run: the key is not readable, the rest works" "no key
notes of the project" wr "$T/sshprog" "$P" "$T/sshprog/peek.sh"
PA=$(audited "$P")
check_fails --denied 4 "the key read directly is denied" \
	wr "$T/sshprog" "$PA" "$T/sshprog/peek.sh" "$H/.ssh/id_ed25519"
check "... the audit log has the file denial of the key" denied_file "$H/.ssh/id_ed25519"
check "... while the same probe on notes.txt passes" \
	wr "$T/sshprog" "$PA" "$T/sshprog/peek.sh" "$T/sshprog/notes.txt"

echo "# warden init -- COMMAND: trace and init in one step"
P=$T/pol/onestep.yaml
rm -f "$T/shell/out.txt"
check "warden init -o FILE -- onestep.sh writes a policy" bash -c \
	'cd "$0/shell" && HOME=$0/home XDG_STATE_HOME=$0/state WARDEN_AUDIT_LOG=$1 ip netns exec "$2" \
	 "$3" init -o "$4" -- "$0/bin/onestep.sh" >/dev/null' "$T" "$A" "$LAB_HOST_NS" "$W" "$P"
check "... it passes warden policy check" pc "$P"
check "... it grants a.txt" granted "$P" "$T/data/a.txt"
check "... it allows other.test:80" grep -q "other.test:80" "$P"
check_fails --denied 2 "... and is kept without --force" bash -c \
	'cd "$0/shell" && HOME=$0/home XDG_STATE_HOME=$0/state WARDEN_AUDIT_LOG=$1 ip netns exec "$2" \
	 "$3" init -o "$4" -- "$0/bin/onestep.sh" >/dev/null 2>&1' "$T" "$A" "$LAB_HOST_NS" "$W" "$P"
check_eq "... then warden run runs the program under it" "alpha
hello from other.test" wr "$T/shell" "$P" "$T/bin/onestep.sh"

lab_finish
