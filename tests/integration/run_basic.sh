#!/usr/bin/env bash
# run_basic.sh - `warden run` end to end in the lab with an embedded gateway and with a daemon:
# network decisions through real clients (curl, openssl, socat, dig), files, environment,
# exit codes, stdio, signals, refusals (exit 125) and the audit trail.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
lab_up

T=$(lab_tmpdir wd-run-basic)
lab_on_exit rm -rf "$T"
# started by root, the program runs as nobody: it reaches the test's folders as any user would
chmod 0755 "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW

# the detached teardowns of finished runs are done: no run's state is owned by a live process
# and no teardown child (live: not a zombie) is still at work refilling the pool
teardowns_quiet() { lab_teardowns_quiet "$A"; }
# ... and the pool of ready networks drained
settle() {
	lab_wait 20 teardowns_quiet && in_host "$W" gc -q --pool
}
# wr ARGS...: warden run inside lab-host with the test's audit log
wr() { in_host "$W" run -q --audit-log "$A" "$@"; }

mkdir -p "$T/ro" "$T/rw" "$T/secret" "$T/home/.ssh" "$T/home/proj"
echo "readable" >"$T/ro/file"
echo "top secret" >"$T/secret/file"
printf '#!/bin/sh\necho hi\n' >"$T/secret/prog"
chmod +x "$T/secret/prog"
chown "$(lab_program_ids)" "$T/rw"
ln -s "$T/secret/file" "$T/ro/escape"
echo "PRIVATE KEY" >"$T/home/.ssh/id_ed25519"
echo "project" >"$T/home/proj/readme"

cat >"$T/net.yaml" <<EOF
version: 1
filesystem:
  read: ["$LAB_CA"]
network:
  allow:
    - {host: allowed.test, ports: [80, 443, 7, 2222]}
EOF
cat >"$T/files.yaml" <<EOF
version: 1
filesystem:
  read: ["$T/ro", "~"]
  write: ["$T/rw", "$T/rw/new"]
EOF
cat >"$T/env.yaml" <<EOF
version: 1
env:
  allow: [LANG]
  set:
    FROM_POLICY: "yes"
EOF

echo "# network"
curl_in() { wr -p "$T/net.yaml" -- curl -fsS --max-time 8 --cacert "$LAB_CA" "$@"; }
check_eq "HTTPS to an allowed name (proxy variables)" "hello from allowed.test" \
	curl_in https://allowed.test/
check_eq "HTTPS to an allowed name (transparent, no proxy)" "hello from allowed.test" \
	curl_in --noproxy '*' https://allowed.test/
check_eq "HTTP to an allowed name (proxy variables)" "hello from allowed.test" \
	curl_in http://allowed.test/
check_eq "HTTP to an allowed name (transparent)" "hello from allowed.test" \
	curl_in --noproxy '*' http://allowed.test/
check_fails "HTTPS to a denied name fails (proxy)" curl_in https://other.test/
check_fails "HTTPS to a denied name fails (transparent)" curl_in --noproxy '*' https://other.test/
check "the denied name is audited" jq -e -s \
	'[.[] | select(.allowed == false and .resource == "other.test")] | length > 0' "$A"
check "openssl s_client to an allowed name verifies" bash -c \
	'echo | ip netns exec "$4" "$0" run -q --audit-log "$1" -p "$2" -- openssl s_client \
	-connect allowed.test:443 -servername allowed.test -CAfile "$3" 2>&1 |
	grep -q "Verify return code: 0"' "$W" "$A" "$T/net.yaml" "$LAB_CA" "$LAB_HOST_NS"
check_eq "raw TCP by name to an allowed port (echo)" "ping-through-warden" bash -c \
	'echo ping-through-warden | ip netns exec "$0" "$1" run -q --audit-log "$2" -p "$3" -- \
	socat -T3 - TCP:allowed.test:7' "$LAB_HOST_NS" "$W" "$A" "$T/net.yaml"
check "server-first raw TCP (banner) by name" bash -c \
	'ip netns exec "$0" "$1" run -q --audit-log "$2" -p "$3" -- \
	socat -T2 -u TCP:allowed.test:2222 - </dev/null | grep -q "$4"' \
	"$LAB_HOST_NS" "$W" "$A" "$T/net.yaml" "$LAB_BANNER"
check_fails "a literal lab-wan address is refused (HTTP)" \
	curl_in --noproxy '*' "http://$LAB_ALLOWED_V4/"
check_fails "a literal lab-wan address is refused (raw TCP)" bash -c \
	'echo x | ip netns exec "$0" "$1" run -q --audit-log "$2" -p "$3" -- \
	socat -T2 - TCP:"$4":7 | grep -q x' "$LAB_HOST_NS" "$W" "$A" "$T/net.yaml" "$LAB_ALLOWED_V4"
check "DNS for a denied name is NXDOMAIN" bash -c \
	'ip netns exec "$0" "$1" run -q --audit-log "$2" -p "$3" -- dig +time=3 +tries=1 other.test \
	| grep -q "status: NXDOMAIN"' "$LAB_HOST_NS" "$W" "$A" "$T/net.yaml"
check_fails "the lab DNS was never asked about other.test" lab_dns_asked other.test
check "DNS for an allowed name answers" bash -c \
	'ip netns exec "$0" "$1" run -q --audit-log "$2" -p "$3" -- dig +short +time=3 +tries=1 \
	allowed.test | grep -q .' "$LAB_HOST_NS" "$W" "$A" "$T/net.yaml"

echo "# files"
fr() { HOME=$T/home wr -p "$T/files.yaml" -- "$@"; }
check_eq "a read grant is readable" "readable" fr cat "$T/ro/file"
check_fails "a read grant is not writable" fr sh -c "echo x > '$T/ro/file'"
check "a write grant is writable" fr sh -c "echo written > '$T/rw/out'"
check_eq "... and the write reached the host" "written" cat "$T/rw/out"
check "a missing write grant is created" test -d "$T/rw/new"
check "a path outside every grant does not exist (ENOENT)" bash -c \
	'HOME="$0/home" ip netns exec "$1" "$2" run -q --audit-log "$3" -p "$4" -- \
	cat "$0/secret/file" 2>&1 | grep -q "No such file"' "$T" "$LAB_HOST_NS" "$W" "$A" "$T/files.yaml"
check_fails "the host's /root is not there" fr ls /root/.bashrc
check_eq "the home grant is visible" "project" fr cat "$T/home/proj/readme"
check_fails "~/.ssh of the invoking user is invisible" fr cat "$T/home/.ssh/id_ed25519"
check_fails "a symlink inside a grant pointing outside leads nowhere" fr cat "$T/ro/escape"
check_eq "/etc/resolv.conf points at the gateway" "1" bash -c \
	'ip netns exec "$0" "$1" run -q --audit-log "$2" -- cat /etc/resolv.conf | \
	grep -c "^nameserver 10\."' "$LAB_HOST_NS" "$W" "$A"
check_fails "the host's /etc/shadow is not there" wr cat /etc/shadow

echo "# environment"
check_fails "AWS_SECRET_ACCESS_KEY from the parent is absent" bash -c \
	'AWS_SECRET_ACCESS_KEY=hunter2 ip netns exec "$0" "$1" run -q --audit-log "$2" -p "$3" -- env \
	| grep -q hunter2' "$LAB_HOST_NS" "$W" "$A" "$T/env.yaml"
check_eq "env.allow passes LANG" "C.UTF-8" bash -c \
	'LANG=C.UTF-8 ip netns exec "$0" "$1" run -q --audit-log "$2" -p "$3" -- printenv LANG' \
	"$LAB_HOST_NS" "$W" "$A" "$T/env.yaml"
check_eq "env.set is set" "yes" wr -p "$T/env.yaml" -- printenv FROM_POLICY
check "HTTPS_PROXY points at the gateway's proxy port" bash -c \
	'ip netns exec "$0" "$1" run -q --audit-log "$2" -- printenv HTTPS_PROXY | grep -q ":15080$"' \
	"$LAB_HOST_NS" "$W" "$A"

echo "# exit codes, signals, stdio"
status_of() { "$@" >/dev/null 2>&1; echo $?; }
check_eq "exit 3 -> 3" 3 status_of wr -- sh -c 'exit 3'
check_eq "killed by SIGKILL -> 137" 137 status_of wr -- sh -c 'kill -9 $$'
check_eq "not found -> 127" 127 status_of wr -- no-such-command-here
check_eq "not executable -> 126" 126 status_of wr -- "$T/ro/file"
check_eq "not visible in the sandbox -> 127" 127 status_of wr -- "$T/secret/prog"
head -c $((10 << 20)) /dev/urandom >"$T/blob"
check "10 MiB through stdin -> stdout is byte-identical" bash -c \
	'ip netns exec "$0" "$1" run -q --audit-log "$2" -- cat <"$3" | cmp - "$3"' \
	"$LAB_HOST_NS" "$W" "$A" "$T/blob"
check_eq "EOF on stdin reaches the program" "3" bash -c \
	'printf "a\nb\nc\n" | ip netns exec "$0" "$1" run -q --audit-log "$2" -- wc -l' \
	"$LAB_HOST_NS" "$W" "$A"
sig_test() {
	local pid out=$T/sig.out
	ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" -- \
		sh -c 'trap "echo got-$0; exit 7" '"$1"'; sleep 30 & wait' "$1" >"$out" 2>&1 &
	pid=$!
	lab_wait 10 grep -q . /proc/$pid/status || return 1
	# the launcher is the child of `ip netns exec` (which execs it: same pid)
	lab_wait 10 bash -c 'pgrep -P "$0" -x bwrap >/dev/null' "$pid" || return 1
	lab_wait 10 bash -c 'pgrep -f "^sleep 30" >/dev/null' || return 1
	kill -"$1" "$pid"
	wait "$pid"
	local rc=$?
	[[ $rc == 7 ]] && grep -q "got-$1" "$out"
}
check "SIGTERM is forwarded to the program" sig_test TERM
check "SIGINT is forwarded to the program" sig_test INT
check "SIGHUP is forwarded to the program" sig_test HUP

echo "# refusals (exit 125, nothing runs, nothing left)"
mark=$T/rw/ran
check_eq "an unwritable audit log: 125" 125 status_of in_host "$W" run -q \
	--audit-log /proc/version/audit.jsonl -p "$T/files.yaml" -- touch "$mark"
check_fails "... and the program did not run" test -e "$mark"
check_eq "no gateway on --gateway SOCKET: 125" 125 status_of wr --gateway "$T/none.sock" \
	-p "$T/files.yaml" -- touch "$mark"
check_fails "... and the program did not run" test -e "$mark"
check_eq "bubblewrap missing: 125" 125 status_of env WARDEN_BWRAP=/nonexistent/bwrap \
	ip netns exec "$LAB_HOST_NS" "$W" run -q --audit-log "$A" -- true
check_eq "an invalid policy: 125" 125 status_of wr -p "$SRC/deploy/examples/broken.yaml" -- true
if command -v setpriv >/dev/null; then
	# (a user's runs are rootless by default: run_rootless.sh; root mode is forced here)
	check_eq "root mode without root (no CAP_NET_ADMIN): 125" 125 status_of setpriv \
		--reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent "$W" run -q \
		--mode root --audit-log /nonexistent/audit.jsonl -- true
	check "... naming the step and a fix" bash -c 'setpriv --reuid=65534 --regid=65534 \
		--clear-groups "$0" run --mode root -- true 2>&1 |
		grep -q "prerequisites:.*needs root"' "$W"
	check_eq "--mode daemon (issue 14): 125" 125 status_of setpriv --reuid=65534 \
		--regid=65534 --clear-groups "$W" run -q --mode daemon -- true
	check_eq "--mode rootless as root: 125" 125 status_of "$W" run -q --mode rootless -- true
fi
check "warden doctor finds no problem in lab-host" in_host "$W" doctor
check "the background teardowns finish; warden gc --pool drains the pool" settle
check "the refused runs left no interface" lab_wait 5 bash -c \
	'! ip -n "$0" -br link | grep -q "^wd-"' "$LAB_HOST_NS"
check "refused runs that started are audited with exit 125" jq -e -s \
	'[.[] | select(.action == "run.exit" and .exit == 125)] | length >= 1' "$A"

echo "# a gateway daemon (--gateway SOCKET)"
cat >"$T/gw.yaml" <<EOF
version: 1
control: {path: "$T/gw.sock"}
audit: {path: "$A"}
EOF
lab_spawn host gwd "$GW" --config "$T/gw.yaml"
lab_wait 10 test -S "$T/gw.sock"
check_eq "HTTPS to an allowed name through the daemon" "hello from allowed.test" \
	wr --gateway "$T/gw.sock" -p "$T/net.yaml" -- curl -sS --max-time 8 --cacert "$LAB_CA" \
	https://allowed.test/
check_fails "a denied name through the daemon" \
	wr --gateway "$T/gw.sock" -p "$T/net.yaml" -- curl -sS --max-time 8 --cacert "$LAB_CA" \
	https://other.test/
check "the daemon holds no run once the teardowns are done" lab_wait 20 bash -c \
	'(( $(ip netns exec "$0" "$1" ctl --socket "$2" list | jq ".runs | length") == 0 ))' \
	"$LAB_HOST_NS" "$GW" "$T/gw.sock"
lab_stop host gwd

echo "# audit"
check "every run's first event is run.start" jq -e -s '
	[.[] | select(.run != "")] | group_by(.run) |
	all(.[0].action == "run.start")' "$A"
check "every run.start has a run.exit" jq -e -s '
	([.[] | select(.action == "run.start") | .run] | sort) ==
	([.[] | select(.action == "run.exit") | .run] | sort)' "$A"
check "run.start records the command, policy hash and isolation" jq -e -s '
	[.[] | select(.action == "run.start")] | all(.command and (.policy_hash | startswith("sha256:"))
	and (.isolation | contains("bwrap")))' "$A"
check "denials are counted in run.exit" jq -e -s \
	'[.[] | select(.action == "run.exit" and (.denials // 0) > 0)] | length > 0' "$A"
run_id=$(jq -r -s '[.[] | select(.action == "run.start")][0].run' "$A")
check "warden logs --run ID shows the run" bash -c \
	'"$0" logs --audit-log "$1" --run "$2" | grep -q run.exit' "$W" "$A" "$run_id"
check "the background teardowns finish; warden gc --pool drains the pool" settle
check "no run state is left" bash -c \
	'for id in $(jq -r -s ".[] | select(.action == \"run.start\") | .run" "$0"); do
		[[ ! -e $LAB_RUNS_DIR/$id ]] || exit 1; done' "$A"
check "no sandbox interface is left in lab-host" lab_wait 5 bash -c \
	'! ip -n "$0" -br link | grep -q "^wd-"' "$LAB_HOST_NS"

lab_finish
