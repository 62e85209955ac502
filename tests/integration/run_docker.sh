#!/usr/bin/env bash
# run_docker.sh - `warden run --backend docker` (run/sandbox_docker.c, run/mode_docker.c,
# run/docker_init.c; docs/run.md "Backends: Docker") against a dockerd this test starts
# (tests/lab/docker.sh), the launcher in the lab's host namespace: the network by name through
# the run's gateway (HTTPS by SNI, HTTP, the proxy, raw TCP by name, DNS never asked upstream
# for a denied name, the SSRF classes), UDP by name through the relay (run_udp.sh's probe: an
# allowed name and port echo, another port, a TCP-only name and a raw address get nothing), file
# grants, env, limits (memory, pids, timeout, /tmp),
# exit codes and signals, stdio byte for byte, a terminal, the seccomp refusals, the masks, an
# image's preload kept from the init, an npm MCP server driven by the SDK client and `warden mcp
# --backend docker`, and nothing left behind (containers, the run's files) after a normal exit,
# a failure, and a kill -9 of the launcher (`warden gc`). Each refusal beside the same probe
# allowed. As root, and as a user who may use the engine (its socket's group, as the docker
# group gives); run_as_user.sh does not rerun it.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
. "$SRC/tests/lab/docker.sh"

MCP=$SRC/tests/mcp
SERVER=$MCP/node_modules/@modelcontextprotocol/server-everything/dist/index.js

lab_require_root
lab_need_run_tools
lab_docker_require
NODE=$(command -v node) || { echo "FAIL - node is not installed (deploy/debian-packages)"; echo "0 passed, 1 failed"; exit 1; }
if [[ ! -e $SERVER || ! -d $MCP/node_modules/@modelcontextprotocol/sdk || ! -d $MCP/node_modules/ajv ]]; then
	# CI: install the pinned packages (package-lock.json) once, as run_mcp.sh does
	command -v npm >/dev/null || { echo "SKIP: npm is not installed"; exit 77; }
	(cd "$MCP" && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
		{ echo "SKIP: npm ci in tests/mcp failed (no registry access?)"; exit 77; }
fi
lab_up
lab_docker_up
IMG=wdlab/warden-run:lab
PROBE_BIN=${WD_SECCOMP_PROBE:-${WARDEN_BUILD_DIR:-$SRC/build}/tests/integration/seccomp_probe}
[[ -x $PROBE_BIN ]] || { echo "FAIL - no $PROBE_BIN"; echo "0 passed, 1 failed"; exit 1; }
# busybox, curl, node and the seccomp probe, each with its libraries, at the host's paths
lab_docker_image "$IMG" /usr/bin/curl "$PROBE_BIN" "$(readlink -f "$NODE")" ||
	{ echo "FAIL - the image"; echo "0 passed, 1 failed"; exit 1; }

T=$(lab_tmpdir wd-run-docker)
lab_on_exit rm -rf "$T"
chmod 0755 "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW WARDEN_DOCKER=$LAB_DOCKER WARDEN_DOCKER_IMAGE=$IMG
export WARDEN_DOCKER_INIT=${WARDEN_BUILD_DIR:-$SRC/build}/run/warden-docker-init
mkdir -m 0755 "$T/ro" "$T/rw" "$T/hidden"
echo "read me" >"$T/ro/file"
echo "secret" >"$T/hidden/file"
chmod 0777 "$T/rw"
chmod 0644 "$T/ro/file" "$T/hidden/file"
cat >"$T/net.yaml" <<YAML
version: 1
network:
  allow:
    - {host: allowed.test, ports: [80, 443, 7]}
    - {host: metadata.test, ports: [80]}
    - {host: private10.test, ports: [80]}
filesystem:
  read: ["$LAB_CA", "$T/ro"]
  write: ["$T/rw"]
env:
  allow: [WD_PASSED]
  set: {WD_SET: "set by the policy"}
YAML
# limits: one policy a limit, its control beside it
lim() { printf 'version: 1\nlimits:\n  %s\n' "$1" >"$T/$2.yaml"; }
lim "memory_mb: 48" mem
lim "memory_mb: 512" memok
lim "pids: 12" pids
lim "pids: 200" pidsok
lim "timeout_s: 2" timeout
lim "disk_mb: 4" disk
chmod 0644 "$T"/*.yaml

# wd ARGS...: warden run --backend docker in lab-host
wd() { in_host "$W" run --backend docker --audit-log "$A" "$@"; }
curl_in() { wd -p "$T/net.yaml" -- /usr/bin/curl -fsS --max-time 8 --cacert "$LAB_CA" "$@"; }
# rc_of ARGS...: the exit status of wd ARGS (its output discarded)
rc_of() { wd "$@" >/dev/null 2>&1; echo $?; }
# containers: the engine's containers of warden runs (none once each run returned)
containers() { "$LAB_DOCKER" ps -aq --filter label=warden.run; }
nothing_left() { [[ -z $(containers) ]]; }
audit_has() { jq -se "$1" "$A" >/dev/null; }

# --- warden doctor names the backend, from the same probe as a run -------------------------
doctor_docker() { in_host "$W" doctor 2>&1 | grep -qE '^(ok|yes) +backend +docker: works'; }
check "warden doctor: docker works here (its engine answers)" doctor_docker
# --- the network, by name, through the run's gateway ----------------------------------------
check_eq "HTTPS to an allowed name (transparent)" "hello from allowed.test" \
	curl_in --noproxy '*' https://allowed.test/
check_fails "HTTPS to a denied name fails (transparent)" curl_in --noproxy '*' https://other.test/
check "... refused by name in the audit log" \
	audit_has '[.[] | select(.allowed == false and .resource == "other.test")] | length > 0'
check_eq "HTTPS to an allowed name (proxy variables)" "hello from allowed.test" \
	curl_in https://allowed.test/
check_fails "HTTPS to a denied name fails (proxy)" curl_in https://other.test/
check_eq "HTTP to an allowed name (proxy variables)" "hello from allowed.test" \
	curl_in http://allowed.test/
check_eq "HTTP to an allowed name (transparent)" "hello from allowed.test" \
	curl_in --noproxy '*' http://allowed.test/
check_eq "raw TCP by name to an allowed port (echo through nc)" "ping-through-warden" \
	wd -p "$T/net.yaml" -- sh -c 'echo ping-through-warden | nc -w 3 allowed.test 7'
check_fails "raw TCP by name to a denied name" \
	wd -p "$T/net.yaml" -- sh -c 'echo x | nc -w 3 other.test 7 | grep -q x'
check_fails "raw TCP to an allowed name's port the policy does not grant" \
	curl_in --noproxy '*' http://allowed.test:8080/
check "DNS: the program's query for an allowed name is answered" \
	wd -p "$T/net.yaml" -- nslookup allowed.test
check_fails "DNS: a denied name gets no address" \
	wd -p "$T/net.yaml" -- sh -c 'nslookup denied-never-asked.test | grep -q "^Address.*203"'
check "... and was never asked upstream" lab_dns_never_asked denied-never-asked.test
check_fails "SSRF: an allowed name that resolves to link-local (metadata) is refused" \
	curl_in http://metadata.test/
check_fails "SSRF: an allowed name that resolves to 10/8 is refused" curl_in http://private10.test/
check "... both in the audit log" audit_has \
	'[.[] | select(.allowed == false and (.resource == "metadata.test" or .resource == "private10.test"))] | length >= 2'
check "run.start names the docker backend and the container mode" audit_has \
	'[.[] | select(.action == "run.start" and .mode == "container" and (.isolation | test("backend=docker")))] | length > 0'

# --- UDP by name (docs/gateway.md "UDP by name"): the container's table redirects UDP to a
# synthetic address to the relay, whose listeners and conntrack socket the init made there.
# The same probe as run_udp.sh (in node: the image has no python) against an echo peer in
# lab-wan at allowed.test's and other.test's addresses, ports 3478 and 3479: every denied probe
# would get its echo if it were relayed
lab_spawn wan udpecho /usr/bin/python3 "$SRC/tests/integration/udp_echo.py" \
	"$LAB_ALLOWED_V4" "$LAB_ALLOWED_V6" "$LAB_OTHER_V4" "$LAB_OTHER_V6"
lab_on_exit lab_stop wan udpecho
cp "$SRC/tests/integration/udp_probe.js" "$T/udp_probe.js"
chmod 0644 "$T/udp_probe.js"
cat >"$T/udp.yaml" <<YAML
version: 1
filesystem:
  read: ["$T/udp_probe.js"]
network:
  allow:
    - { host: allowed.test, proto: udp, ports: [3478] }
    - other.test
YAML
chmod 0644 "$T/udp.yaml"
last_run() { jq -r -s '[.[] | select(.action == "run.start")] | last | .run' "$A"; }
# events RUN JQ-FILTER: how many events of RUN match
events() { jq -s --arg r "$1" "[.[] | select(.run == \$r and ($2))] | length" "$A"; }
# udp WHAT HOST PORT FAMILY: one run of the probe; its output in $out, its status in $rc, its run
# in $r (2: the probe could not run, which no check below takes for a refusal)
udp() {
	out=$(wd -q -p "$T/udp.yaml" -- "$NODE" "$T/udp_probe.js" "${@:2}" 2>&1)
	rc=$?
	r=$(last_run)
	echo "# $1: rc=$rc $out"
}
udp "UDP: allowed name and port (v4)" allowed.test 3478 4
check "UDP: the echo comes back through the relay (v4)" test "$rc" -eq 0
check "... a net.udp allow event names allowed.test:3478 and its rule" \
	test "$(events "$r" '.action == "net.udp" and .allowed == true and .resource == "allowed.test" and .port == 3478 and .rule == "allowed.test:3478/udp" and .bytes_up == null')" -ge 1
check "... the flow's closing event carries its bytes both ways" \
	test "$(events "$r" '.action == "net.udp" and .allowed == true and .bytes_up == 9 and .bytes_down == 14')" -ge 1
udp "UDP: allowed name and port (v6)" allowed.test 3478 6
check "UDP: the echo comes back through the relay (v6)" test "$rc" -eq 0
check "... a net.udp allow event (v6) with its upstream address" \
	test "$(events "$r" '.action == "net.udp" and .allowed == true and .dst == "2001:db8:0:1::10"')" -ge 1
udp "UDP: allowed name, another port" allowed.test 3479 4
check "UDP: the same name on a port no udp rule lists gets nothing back" test "$rc" -eq 1
check "... a net.udp deny event with the reason and a denial id" \
	test "$(events "$r" '.action == "net.udp" and .allowed == false and .resource == "allowed.test" and .port == 3479 and (.reason | test("no `proto: udp` rule")) and (.denial_id | length > 0)')" -ge 1
check "UDP control: the echo at other.test's address answers lab-host itself" \
	in_host "$NODE" "$T/udp_probe.js" "$LAB_OTHER_V4" 3478 4
udp "UDP: a name allowed for TCP only" other.test 3478 4
check "UDP: a name only a TCP rule allows gets nothing back" test "$rc" -eq 1
check "... a net.udp deny event for other.test" \
	test "$(events "$r" '.action == "net.udp" and .allowed == false and .resource == "other.test"')" -ge 1
udp "UDP: the peer's raw address" "$LAB_ALLOWED_V4" 3478 4
check "UDP: a raw address gets nothing back" test "$rc" -eq 1
check "... dropped and audited by the container's nft table" \
	test "$(events "$r" ".action == \"net.udp\" and .allowed == false and .dst == \"$LAB_ALLOWED_V4\" and (.reason | test(\"dropped by the nft table\"))")" -ge 1

# --- files: grants are binds, nothing else of the host is there ----------------------------
check_eq "a read grant is readable" "read me" wd -p "$T/net.yaml" -- cat "$T/ro/file"
check_fails "... and not writable" wd -p "$T/net.yaml" -- sh -c "echo x > $T/ro/file"
check "a write grant is writable" wd -p "$T/net.yaml" -- sh -c "echo written > $T/rw/new"
check_eq "... the host sees what was written, owned by the program's uid" "written $(id -u nobody)" \
	bash -c 'echo "$(cat "$1/rw/new") $(stat -c %u "$1/rw/new")"' _ "$T"
check_fails "a folder beside the grants is not in the container" \
	wd -p "$T/net.yaml" -- cat "$T/hidden/file"
check "control: the same folder is readable on the host" cat "$T/hidden/file"
check_fails "the root is read-only" wd -p "$T/net.yaml" -- touch /etc/x
check "/tmp is writable" wd -p "$T/net.yaml" -- sh -c 'echo x > /tmp/x'
check_eq "the program runs as the caller's uid, never 0" "$(id -u nobody)" \
	wd -p "$T/net.yaml" -- id -u

# the masks: with `read: ["~"]` the credential stores under ~ are empty or absent, an ordinary
# file beside them reads (HOME is the test's folder; docs/files.md "Credential stores")
H=$T/home
mkdir -p "$H/.ssh" "$H/.aws" "$H/proj"
echo "PRIVATE KEY" >"$H/.ssh/id_ed25519"
echo "aws_secret_access_key=hunter2" >"$H/.aws/credentials"
echo "netrc secret" >"$H/.netrc"
echo "ordinary" >"$H/proj/readme"
chmod -R a+rX "$H"
printf 'version: 1\nfilesystem:\n  read: ["~"]\n' >"$T/home.yaml"
chmod 0644 "$T/home.yaml"
hwd() { HOME=$H wd -p "$T/home.yaml" -- "$@"; }
check_eq "a ~ grant: an ordinary file reads (control)" "ordinary" hwd cat "$H/proj/readme"
check_eq "... ~/.ssh is an empty folder" "" hwd ls -A "$H/.ssh"
check_eq "... ~/.aws is an empty folder" "" hwd ls -A "$H/.aws"
check_eq "... ~/.netrc is empty" "" hwd cat "$H/.netrc"
check "control: the host's ~/.ssh holds the key" grep -q "PRIVATE KEY" "$H/.ssh/id_ed25519"
printf 'version: 1\nfilesystem:\n  read: ["%s"]\n  write: ["%s"]\n' "$T/rw" "$T/rw" >"$T/rorw.yaml"
chmod 0644 "$T/rorw.yaml"
check "a path both read and written is writable (the write grant wins; one mount)" \
	wd -p "$T/rorw.yaml" -- sh -c "echo w > $T/rw/w2"

# --- env: only env.allow and env.set -------------------------------------------------------
# envprobe NAME [VAR=VALUE...]: what the program sees of NAME ("unset" when it is not set),
# warden started with the VAR=VALUEs in its environment
envprobe()
{
	local name=$1
	shift
	in_host env "$@" "$W" run --backend docker --audit-log "$A" -p "$T/net.yaml" -- \
		sh -c 'eval "echo \"\${$0-unset}\""' "$name"
}
check_eq "env.allow passes a variable" "yes" envprobe WD_PASSED WD_PASSED=yes WD_NOT_PASSED=no
check_eq "env.set sets one" "set by the policy" envprobe WD_SET
check_eq "any other variable of the caller is not there" "unset" \
	envprobe WD_NOT_PASSED WD_PASSED=yes WD_NOT_PASSED=no
check_eq "a value with spaces and quotes passes whole" "a 'b' \"c\"" \
	envprobe WD_PASSED "WD_PASSED=a 'b' \"c\""

# --- limits: the engine's, each beside its control -----------------------------------------
hog='x=$(head -c 100000000 /dev/zero | tr "\0" a); echo ${#x}'
check_eq "memory: 100 MB in a shell variable fits in 512 MiB" 100000000 \
	wd -p "$T/memok.yaml" -- sh -c "$hog"
check_eq "memory: ... not in 48 MiB (killed: 137)" 137 rc_of -p "$T/mem.yaml" -- sh -c "$hog"
# forks: 30 background sleeps, then "all started" (busybox sh stops at a fork it cannot make,
# saying "can't fork")
forks='for i in $(seq 30); do sleep 2 & done; wait; echo all started'
check_eq "pids: 30 processes start under pids 200" "all started" \
	wd -p "$T/pidsok.yaml" -- sh -c "$forks"
refused_forks() { wd -p "$T/pids.yaml" -- sh -c "$forks" 2>&1 | grep -q "can't fork"; }
check "pids: ... not under pids 12 (can't fork)" refused_forks
check_eq "timeout: a sleeper is ended (124)" 124 rc_of -p "$T/timeout.yaml" -- sleep 30
check "... and its container is gone" nothing_left
check "disk: 2 MiB fit in /tmp of disk_mb 4" wd -p "$T/disk.yaml" -- dd if=/dev/zero of=/tmp/f bs=1M count=2
check_fails "disk: 8 MiB do not" wd -p "$T/disk.yaml" -- dd if=/dev/zero of=/tmp/f bs=1M count=8

# --- exit status, signals, stdio --------------------------------------------------------------
check_eq "the exit status is the program's" 7 rc_of -p "$T/net.yaml" -- sh -c 'exit 7'
check_eq "a program killed by a signal: 128+N" 143 rc_of -p "$T/net.yaml" -- sh -c 'kill -TERM $$'
check_eq "a command the image does not have: 127" 127 rc_of -p "$T/net.yaml" -- no-such-command
head -c 10485760 /dev/urandom >"$T/stdin.bin"
wd -p "$T/net.yaml" -- cat <"$T/stdin.bin" >"$T/stdout.bin" 2>"$T/stdio.err"
check "stdio: 10 MiB of random bytes come back identical" cmp "$T/stdin.bin" "$T/stdout.bin"
wc_in() { wd -p "$T/net.yaml" -- wc -c <"$T/stdin.bin" | tr -d ' '; }
check_eq "stdin at EOF ends a reader (wc)" 10485760 wc_in
# SIGTERM to the launcher reaches the program (its trap's status comes back)
ip netns exec "$LAB_HOST_NS" "$W" run --backend docker --audit-log "$A" -p "$T/net.yaml" -- \
	sh -c 'trap "exit 42" TERM; echo up; while :; do sleep 0.2; done' >"$T/sig.out" 2>&1 &
sigpid=$!
for _ in $(seq 100); do grep -q up "$T/sig.out" 2>/dev/null && break; sleep 0.1; done
kill -TERM "$sigpid"
wait "$sigpid"
check_eq "SIGTERM to warden is forwarded to the program (its trap exits 42)" 42 echo $?

# --- the seccomp profile: Warden's refusals, each beside the kernel allowing it outside --------
probe() { wd -p "$T/net.yaml" -- "$PROBE_BIN" "$@"; }
host_probe() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$PROBE_BIN" "$@"; }
check_eq "control: the kernel lets an unprivileged user unshare a user namespace" ok \
	host_probe unshare 0x10000000
check_eq "... the container refuses it (EPERM)" EPERM probe unshare 0x10000000
check_eq "control: keyctl(JOIN) on the host" ok host_probe sys 250 1 0
check_eq "... refused in the container" EPERM probe sys 250 1 0
check_eq "control: TIOCSTI on its own terminal on the host" ok host_probe pty-ioctl 0x5412
check_eq "... refused in the container" EPERM probe pty-ioctl 0x5412
status_in() { probe status | grep -E '^(Seccomp|NoNewPrivs):' | sort | tr -s '\t\n' '  ' | sed 's/ $//'; }
check_eq "the program runs with a seccomp filter and no_new_privs" "NoNewPrivs: 1 Seccomp: 2" status_in

# --- MCP: a server from npm in the container, driven by the SDK client; warden mcp's runs ------
cat >"$T/mcp.yaml" <<YAML
version: 1
command: ["$NODE", "$SERVER", "stdio"]
filesystem:
  read: ["$MCP"]
YAML
chmod 0644 "$T/mcp.yaml"
mcp_out=$(AWS_SECRET_ACCESS_KEY=hunter2 "$NODE" "$MCP/client.mjs" ip netns exec "$LAB_HOST_NS" \
	"$W" run -q --backend docker --audit-log "$A" -p "$T/mcp.yaml" 2>"$T/mcp.err")
mcp_rc=$?
echo "# client: $mcp_out"
check_eq "MCP: the SDK client ran to the end against the server in the container" 0 echo "$mcp_rc"
check_eq "MCP: initialize names the npm server" "mcp-servers/everything" jq -r .server <<<"$mcp_out"
check_eq "MCP: tools/call echo answers through the container's stdio" \
	"Echo: hello through warden" jq -r .echo <<<"$mcp_out"
check "MCP: the tool calls were attributed (run.exit counts them)" audit_has \
	'[.[] | select(.action == "run.exit" and ((.mcp.tools.echo.calls // 0) > 0))] | length > 0'
printf '%s\n' "version: 1" "filesystem:" "  read: [\"$LAB_CA\"]" "network:" "  allow:" \
	"    - {host: allowed.test, ports: [443]}" "limits:" "  timeout_s: 600" >"$T/wmcp.yaml"
chmod 0644 "$T/wmcp.yaml"
B=$(XDG_STATE_HOME=$T/state CA=$LAB_CA WARDEN=$W URL_OK=https://allowed.test/ \
	URL_DENIED=https://other.test/ "$NODE" "$MCP/warden_mcp.mjs" basic ip netns exec \
	"$LAB_HOST_NS" "$W" mcp --backend docker --audit-log "$A" -p "$T/wmcp.yaml" 2>"$T/wmcp.err")
echo "# warden mcp --backend docker: $(jq -c '{allowed, denied, stdin, shell}' <<<"$B" 2>/dev/null)"
check_eq "warden mcp --backend docker: run_sandboxed reaches an allowed name" \
	"0 hello from allowed.test" jq -r '"\(.allowed.exit) \(.allowed.stdout)"' <<<"$B"
check "... not a denied one" jq -e '.denied.exit != 0' <<<"$B"
check_eq "... stdin reaches the command" "fed on stdin" jq -r '.stdin.stdout | rtrimstr("\n")' <<<"$B"
check "... its runs were docker runs" audit_has \
	'[.[] | select(.action == "run.start" and (.isolation | test("backend=docker")) and ((.command // []) | index("cat")))] | length >= 1'

# --- what the backend runs; a terminal ------------------------------------------------------
print_line() {
	in_host "$W" run --backend docker -p "$T/net.yaml" --print-bwrap -- true |
		grep -E -- "create .*--network=none .*--cap-drop=ALL .*--read-only"
}
check "--print-bwrap prints the docker create line: no network, no capability, read-only" print_line
# (docker start -a -i on a terminal echoes a NUL first, "^@": bare docker does the same)
tty_in() {
	script -qec "ip netns exec $LAB_HOST_NS $W run -q --backend docker -p $T/net.yaml -- tty" \
		/dev/null | tr -d '\r' | grep -E "^(\^@)?/dev/pts/[0-9]+$"
}
check "a terminal: the program gets one of its own (docker --tty)" tty_in
check_eq "control: without a terminal it has none" "not a tty" wd -p "$T/net.yaml" -- tty

# --- a user who may use the engine (the docker group's way), not root -------------------------
lab_user || { echo "FAIL - no test user"; echo "0 passed, 1 failed"; exit 1; }
sock=${DOCKER_HOST#unix://}
chmod o+x "$(dirname "$sock")"
chgrp "$LAB_USER_GID" "$sock" && chmod 0660 "$sock"
U=$(mktemp -d /tmp/wd-run-docker-user-XXXXXX)
lab_on_exit rm -rf "$U"
chown "$LAB_USER_UID:$LAB_USER_GID" "$U"
# uwd ARGS...: warden run --backend docker as LAB_USER in lab-host
uwd() {
	in_host_user env DOCKER_HOST="$DOCKER_HOST" DOCKER_CONFIG="$U/cli" WARDEN_DOCKER="$LAB_DOCKER" \
		WARDEN_DOCKER_IMAGE="$IMG" WARDEN_DOCKER_INIT="$WARDEN_DOCKER_INIT" \
		"$W" run --backend docker --audit-log "$U/audit.jsonl" "$@"
}
check_eq "as a user: HTTPS to an allowed name" "hello from allowed.test" \
	uwd -p "$T/net.yaml" -- /usr/bin/curl -fsS --max-time 8 --cacert "$LAB_CA" https://allowed.test/
check_fails "as a user: HTTPS to a denied name fails" \
	uwd -p "$T/net.yaml" -- /usr/bin/curl -fsS --max-time 8 --cacert "$LAB_CA" https://other.test/
check_eq "as a user: the program runs as the user's uid" "$LAB_USER_UID" uwd -p "$T/net.yaml" -- id -u
# UDP by name as a user of a root engine: the container's namespace belongs to the machine's
# user namespace, where the user's one-process gateway lacks CAP_NET_ADMIN, so conntrack refuses
# its lookup and the flow is denied with that reason (the same probe as root's echo above, the
# control)
out=$(uwd -q -p "$T/udp.yaml" -- "$NODE" "$T/udp_probe.js" allowed.test 3478 4 2>&1)
rc=$?
echo "# as a user: UDP to the allowed name and port: rc=$rc $out"
check "as a user: UDP by name gets nothing back (conntrack is root's here)" test "$rc" -eq 1
check "... a net.udp deny event says the original destination is unknown (conntrack)" \
	jq -se '[.[] | select(.action == "net.udp" and .allowed == false and (.reason | test("original destination is unknown \\(conntrack: Operation not permitted")))] | length >= 1' "$U/audit.jsonl"
check "as a user: the run was audited in the user's log" \
	jq -se '[.[] | select(.action == "run.start" and .mode == "container")] | length >= 4' "$U/audit.jsonl"
check "as a user: no container is left" nothing_left

# --- an image that preloads a library must not reach Warden's init (root, NET_ADMIN) ----------
# evil.so writes "uid pid" into the write grant from its constructor, in every dynamic process
# that loads it; the image names it in /etc/ld.so.preload (evil-file) or in its ENV LD_PRELOAD
# (evil-env). The program (node, dynamic: it loads it too) is the control that it works.
cat >"$T/evil.c" <<'C'
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void)
{
	char p[64];
	FILE *f;

	snprintf(p, sizeof(p), "MARKDIR/mark.%d", (int)getpid());
	f = fopen(p, "w");
	if (f) {
		fprintf(f, "%d\n", (int)getuid());
		fclose(f);
	}
}
C
sed -i "s|MARKDIR|$T/rw|" "$T/evil.c"
cc -shared -fPIC -o "$T/evil.so" "$T/evil.c" || { echo "FAIL - cc evil.so"; }
echo /evil.so >"$T/ld.so.preload"
evil_image() # evil_image NAME [--change ...]: the lab image plus /evil.so (and the preload file)
{
	local name=$1 cid
	shift
	cid=$("$LAB_DOCKER" create "$IMG" true) || return 1
	"$LAB_DOCKER" cp "$T/evil.so" "$cid:/evil.so" >/dev/null &&
		{ [[ $name != *file* ]] || "$LAB_DOCKER" cp "$T/ld.so.preload" "$cid:/etc/ld.so.preload" >/dev/null; } &&
		"$LAB_DOCKER" commit "$@" "$cid" "$name" >/dev/null
	local rc=$?
	"$LAB_DOCKER" rm -f "$cid" >/dev/null
	return $rc
}
evil_image wdlab/evil-file:lab || echo "FAIL - the evil-file image"
evil_image wdlab/evil-env:lab --change 'ENV LD_PRELOAD=/evil.so' || echo "FAIL - the evil-env image"
# marks IMAGE [bare]: "RAN|UIDS": whether node (a dynamic program) ran in IMAGE, and the uids
# that loaded evil.so: under warden, or (bare) in a plain `docker run` of the image with the
# same folder
marks() {
	local ran
	rm -f "$T"/rw/mark.*
	if [[ ${2:-} == bare ]]; then
		ran=$("$LAB_DOCKER" run --rm --network none -v "$T/rw:$T/rw" "$1" \
			"$(readlink -f "$NODE")" -e 'console.log("ran")' 2>/dev/null)
	else
		ran=$(WARDEN_DOCKER_IMAGE=$1 wd -p "$T/net.yaml" -- "$(readlink -f "$NODE")" \
			-e 'console.log("ran")' 2>/dev/null)
	fi
	echo "$ran|$(cat "$T"/rw/mark.* 2>/dev/null | sort -u | tr '\n' ' ' | sed 's/ $//')"
}
for kind in file env; do
	check_eq "an image's preload ($kind): a plain docker run loads it (control: the attack works)" \
		"ran|0" marks "wdlab/evil-$kind:lab" bare
	check_eq "... under warden node runs and nothing loads it: not the init (root), not node" \
		"ran|" marks "wdlab/evil-$kind:lab"
done
printf 'version: 1\nenv:\n  set: {LD_PRELOAD: /evil.so}\n' >"$T/ldpre.yaml"
chmod 0644 "$T/ldpre.yaml"
ldpre() {
	local out rc
	out=$(wd -p "$T/ldpre.yaml" -- true 2>&1) && rc=0 || rc=$?
	((rc == 125)) && grep -q "LD_PRELOAD would be read by the dynamic loader" <<<"$out"
}
check "a policy naming LD_PRELOAD is refused (125, the reason)" ldpre

# --- kill -9 of the launcher: the init ends the container, warden gc removes it ---------------
ip netns exec "$LAB_HOST_NS" "$W" run --backend docker --audit-log "$A" -p "$T/net.yaml" -- \
	sh -c 'echo up; exec sleep 120' >"$T/k9.out" 2>&1 &
k9=$!
for _ in $(seq 150); do grep -q up "$T/k9.out" 2>/dev/null && break; sleep 0.1; done
check "kill -9: the run's container runs (control)" \
	bash -c '[[ -n $("$1" ps -q --filter label=warden.run) ]]' _ "$LAB_DOCKER"
kill -KILL "$k9"
wait "$k9" 2>/dev/null
# running() polls (no timing verdict): the container stops once its init saw the launcher go
stopped() {
	for _ in $(seq 300); do
		[[ -z $("$LAB_DOCKER" ps -q --filter label=warden.run) ]] && return 0
		sleep 0.1
	done
	return 1
}
check "kill -9 of warden: its container stops (the init saw the launcher's connection end)" stopped
check "... and stays for gc" bash -c '[[ -n $("$1" ps -aq --filter label=warden.run) ]]' _ "$LAB_DOCKER"
gc_says() { in_host "$W" gc | grep -c "1 container of runs whose launcher is gone removed"; }
check_eq "warden gc removes it" 1 gc_says
check "... nothing is left" nothing_left

# --- the engine restarted during a run: the run ends, warden gc removes what is left ----------
ip netns exec "$LAB_HOST_NS" "$W" run --backend docker --audit-log "$A" -p "$T/net.yaml" -- \
	sh -c 'echo up; exec sleep 120' >"$T/rs.out" 2>&1 &
rs=$!
for _ in $(seq 150); do grep -q up "$T/rs.out" 2>/dev/null && break; sleep 0.1; done
check "engine restart: the run's container runs (control)" \
	bash -c '[[ -n $("$1" ps -q --filter label=warden.run) ]]' _ "$LAB_DOCKER"
lab_docker_restart || echo "FAIL - the engine did not come back"
rs_rc=0
wait "$rs" || rs_rc=$?
check "... the run ended with a failure status, not 0" test "$rs_rc" -ne 0
check "... run.exit was written for it" audit_has \
	'[.[] | select(.action == "run.exit")] | length > 0'
gc_any() { in_host "$W" gc >/dev/null && nothing_left; }
check "... warden gc leaves nothing of it on the engine" gc_any

# --- nothing left behind ---------------------------------------------------------------------
check "no container is left after the runs" nothing_left
check "no run state is left" bash -c 'ls -AR "$1"; [[ -z $(ls -A "$1" 2>/dev/null) ]]' _ "$LAB_RUNS_DIR"
# a failed start (an image the engine does not have) leaves nothing either
noimage() { WARDEN_DOCKER_IMAGE=wdlab/none:x rc_of -p "$T/net.yaml" -- true; }
check_eq "an image that does not exist: 125" 125 noimage
check "... and leaves no container" nothing_left
lab_finish
