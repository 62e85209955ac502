#!/usr/bin/env bash
# run_backend.sh - the sandbox backend as a choice (issue 28, docs/run.md "Backends"):
# `--backend linux` (and its alias bwrap) and `sandbox.backend: linux` run, and run.start's
# isolation names the backend; an unknown name is refused by `warden policy check` with
# file:line:col and by `--backend` with a usage error (2); a known backend that cannot run here
# (docker: no engine answers; seatbelt, windows: another OS's) fails closed with 125 before
# anything is made (no run.start, no run state, no namespace), the flag overriding the policy;
# WARDEN_BWRAP naming no file makes auto-selection fail closed with the reason and the hint of
# sandbox.fallback, and with `sandbox.fallback: [docker]` it still fails (no engine answers);
# `warden trace` takes only the linux backend; `warden doctor` has a line per backend.
# Root mode; run_as_user.sh reruns it as a user (rootless).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
lab_up
if [[ ${LAB_AS_USER:-} == 1 ]]; then
	lab_user || { echo "FAIL - no test user"; echo "0 passed, 1 failed"; exit 1; }
fi

T=$(lab_tmpdir wd-run-backend)
lab_on_exit rm -rf "$T"
chmod 0755 "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW
# the docker backend's CLI reaches no engine here: a socket nobody listens on (never the
# machine's default one), the Debian CLI
export DOCKER_HOST=unix://$T/no-engine.sock WARDEN_DOCKER=/usr/bin/docker
printf 'version: 1\n' >"$T/plain.yaml"
printf 'version: 1\nsandbox:\n  backend: linux\n' >"$T/linux.yaml"
printf 'version: 1\nsandbox:\n  backend: bwrap\n' >"$T/bwrap.yaml"
printf 'version: 1\nsandbox:\n  backend: docker\n' >"$T/docker.yaml"
printf 'version: 1\nsandbox:\n  backend: dockr\n' >"$T/unknown.yaml"
printf 'version: 1\nsandbox:\n  fallback: [docker, nope]\n' >"$T/badfallback.yaml"
printf 'version: 1\nsandbox:\n  fallback: [docker]\n' >"$T/fallback.yaml"
chmod 0644 "$T"/*.yaml

# wr ARGS...: warden run in lab-host; WB set: WARDEN_BWRAP=$WB
wr() { in_host env ${WB:+WARDEN_BWRAP=$WB} "$W" run --audit-log "$A" "$@"; }
# starts: how many run.start events the audit log has (0 when there is none yet)
starts() { [[ -e $A ]] || { echo 0; return; }; jq -s '[.[] | select(.action == "run.start")] | length' "$A"; }
# leftovers: run state folders and wd-* namespaces (none once a refused run returned)
leftovers() { ls -1 "$LAB_RUNS_DIR" 2>/dev/null; in_host ip netns list 2>/dev/null | awk '/^wd-/ { print $1 }'; ip netns list 2>/dev/null | awk '/^wd-/ { print $1 }'; }
# refused WANT_RC ERE ARGS...: `warden run ARGS` exits WANT_RC, says ERE on stderr, and leaves
# nothing behind: no new run.start, no run state, no namespace
refused()
{
	local want=$1 ere=$2 before rc=0 wb=
	shift 2
	if [[ $1 == WB=* ]]; then
		wb=${1#WB=}
		shift
	fi
	before=$(starts) || return 2
	WB=$wb wr "$@" >"$T/out" 2>"$T/err" || rc=$?
	sed 's/^/      /' "$T/err"
	[[ $rc == "$want" ]] || { echo "    exit $rc, wanted $want"; return 1; }
	# (the message and its fix line, as one line)
	tr '\n' ' ' <"$T/err" | grep -Eq -- "$ere" || { echo "    stderr does not match: $ere"; return 1; }
	[[ ! -s $T/out ]] || { echo "    stdout is not empty"; return 1; }
	[[ $(starts) == "$before" ]] || { echo "    a run.start was written"; return 1; }
	[[ -z $(leftovers) ]] || { echo "    left behind: $(leftovers)"; return 1; }
}
# isolation: the isolation of the last run.start
isolation() { jq -rs '[.[] | select(.action == "run.start")] | last | .isolation' "$A"; }

echo "# the linux backend, chosen by flag, alias and policy"
check_eq "--backend linux runs the program" "linux ok" wr -q --backend linux -p "$T/plain.yaml" -- /bin/echo linux ok
check "... run.start's isolation names it" lab_match '(^|,)backend=linux,bwrap\(' isolation
check_eq "--backend bwrap (the alias) runs" "alias ok" wr -q --backend bwrap -p "$T/plain.yaml" -- /bin/echo alias ok
check_eq "sandbox.backend: linux runs" "policy ok" wr -q -p "$T/linux.yaml" -- /bin/echo policy ok
check_eq "sandbox.backend: bwrap runs" "policy alias ok" wr -q -p "$T/bwrap.yaml" -- /bin/echo policy alias ok
check_eq "no flag, no key: auto-selection picks linux" "auto ok" wr -q -p "$T/plain.yaml" -- /bin/echo auto ok
check "... and says so in run.start" lab_match '(^|,)backend=linux,' isolation
check_eq "--backend linux overrides sandbox.backend: docker" "override ok" \
	wr -q --backend linux -p "$T/docker.yaml" -- /bin/echo override ok

echo "# unknown names"
check "control: policy check takes sandbox.backend: linux" "$W" policy check "$T/linux.yaml"
check "control: policy check takes sandbox.fallback: [docker]" "$W" policy check "$T/fallback.yaml"
check_fails --denied 2 "policy check refuses sandbox.backend: dockr" "$W" policy check "$T/unknown.yaml"
check "... with file:line:col and the allowed names" bash -c '"$0" policy check "$1" 2>&1 |
	grep -F "unknown.yaml:3:12: error: sandbox.backend: \`dockr\` is not a sandbox backend; expected one of: linux (alias bwrap), docker, seatbelt, windows"' \
	"$W" "$T/unknown.yaml"
check "policy check refuses sandbox.fallback: [docker, nope] at nope" bash -c '! "$0" policy check "$1" 2>"$2" &&
	grep -F "badfallback.yaml:3:22: error: sandbox.fallback: \`nope\` is not a sandbox backend" "$2"' \
	"$W" "$T/badfallback.yaml" "$T/pc.err"
check "warden run refuses the policy with sandbox.backend: dockr (125)" \
	refused 125 'sandbox\.backend: `dockr` is not a sandbox backend' -q -p "$T/unknown.yaml" -- /bin/true
check "--backend dockr: a usage error (2)" \
	refused 2 '--backend: linux \(or bwrap\), docker, seatbelt or windows, not `dockr`' --backend dockr -- /bin/true

echo "# a backend that cannot run here fails closed, before anything is made"
check "--backend docker: 125, no engine, nothing made" \
	refused 125 'prerequisites.*--backend docker cannot run here: the docker CLI reaches no engine: ' \
	-q --backend docker -p "$T/plain.yaml" -- /bin/echo never
check "sandbox.backend: docker: the same, naming the policy" \
	refused 125 'sandbox\.backend: docker \(the policy\) cannot run here: the docker CLI reaches no engine' \
	-q -p "$T/docker.yaml" -- /bin/echo never
check "--backend seatbelt: macOS only" \
	refused 125 'the seatbelt backend is macOS only \(this is Linux\)' -q --backend seatbelt -- /bin/echo never
check "--backend windows: Windows only" \
	refused 125 'the windows backend is Windows only \(this is Linux\)' -q --backend windows -- /bin/echo never
check "--print-bwrap --backend docker prints nothing" \
	refused 125 'the docker CLI reaches no engine' -q --backend docker --print-bwrap -- /bin/true

echo "# the native backend cannot run: no fallback unless the policy names one"
check "control: with WARDEN_BWRAP unset the same run runs" \
	lab_match '^fallback control$' wr -q -p "$T/fallback.yaml" -- /bin/echo fallback control
check "WARDEN_BWRAP missing: auto-selection fails closed with the reason and the hint" \
	refused 125 'the native backend linux cannot run here: bubblewrap not found at /nonexistent/bwrap; not falling back to another backend: the policy allows none \(sandbox.fallback\).*fix: .*sandbox: \{fallback: \[docker\]\}' \
	WB=/nonexistent/bwrap -q -p "$T/plain.yaml" -- /bin/echo never
check "... with sandbox.fallback: [docker]: still closed, docker is not built" \
	refused 125 'the native backend linux cannot run here: bubblewrap not found at /nonexistent/bwrap; the fallback docker \(sandbox.fallback\) cannot run either: the docker CLI reaches no engine' \
	WB=/nonexistent/bwrap -q -p "$T/fallback.yaml" -- /bin/echo never
check "... --backend linux: its probe's reason, never replaced" \
	refused 125 '--backend linux cannot run here: bubblewrap not found at /nonexistent/bwrap; a chosen backend is never replaced' \
	WB=/nonexistent/bwrap -q --backend linux -p "$T/fallback.yaml" -- /bin/echo never

echo "# warden trace takes only the linux backend"
mkdir -p "$T/tr" && chmod 0777 "$T/tr"
# tr_run POLICY [ARGS...]: warden trace of /bin/true in lab-host under POLICY, the trace into
# $T/tr, its stderr into $T/tr/err
tr_run()
{
	local pol=$1
	shift
	(cd "$T/tr" && in_host "$W" trace -p "$pol" "$@" -o "$T/tr/t.jsonl" -- /bin/true 2>"$T/tr/err")
}
check "control: warden trace with sandbox.backend: linux runs" tr_run "$T/linux.yaml"
check_fails --denied 125 "warden trace with sandbox.backend: docker is refused" tr_run "$T/docker.yaml"
check "... saying the recorder is bubblewrap's" \
	grep -F "warden trace needs the linux backend (bubblewrap), not docker" "$T/tr/err"
check_fails --denied 2 "warden trace --backend is not an option (a usage error)" \
	tr_run "$T/linux.yaml" --backend linux

echo "# warden doctor: a line per backend"
# doc: warden doctor's output in lab-host (it exits 1 when a check fails: the lines are the test)
doc() { local rc=0; in_host "$W" doctor >"$T/doctor" 2>&1 || rc=$?; [[ $rc == 0 || $rc == 1 ]]; }
check "warden doctor runs" doc
check "... linux works" grep -Eq '^ok +backend +linux: works \(bubblewrap \+ seccomp; this OS.s own, chosen first\)' "$T/doctor"
check "... docker does not: no engine answers" grep -Eq '^no +backend +docker: does not work here: the docker CLI reaches no engine' "$T/doctor"
check "... seatbelt: macOS only" grep -Eq '^no +backend +seatbelt: does not work here: the seatbelt backend is macOS only' "$T/doctor"
check "... windows: Windows only" grep -Eq '^no +backend +windows: does not work here: the windows backend is Windows only' "$T/doctor"
check "with WARDEN_BWRAP missing doctor says linux does not work, and why" bash -c \
	'ip netns exec "$0" env WARDEN_BWRAP=/nonexistent/bwrap "$1" doctor 2>&1 | grep -E "^no +backend +linux: does not work here: bubblewrap not found at /nonexistent/bwrap"' \
	"$LAB_HOST_NS" "$W"

lab_finish
