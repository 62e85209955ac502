#!/usr/bin/env bash
# run_daemon.sh - unprivileged runs through the host's gateway daemon (daemon mode, issue 14) in
# the lab: warden-gateway --manage-nft started as root in lab-host; two unprivileged users. As
# user A: real clients allowed and denied as in root mode, the run in the central log with A's
# uid, its cgroup made and delegated by the daemon. As user B: A's runs are invisible and
# untouchable. Crafted registers (another user's namespace, the host's, a descriptor that is no
# network namespace, none, two, a truncated request, an oversize policy) are refused with a
# clear error while the daemon keeps serving (a good run right after each). kill -9 of the
# daemon mid-transfer stops the transfer and ends A's run with 125; a restart reclaims what the
# dead daemon left (veth, nft elements, cgroup); kill -9 of the launcher is reclaimed at once.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

if [[ ${LAB_AS_USER:-} == 1 ]]; then
	echo "SKIP: run_daemon.sh runs its users itself"
	exit 77
fi
lab_require_root
. "$SRC/tests/integration/daemon/fixture.sh"

cat >"$T/gateway.yaml" <<EOF
version: 1
resolvers: ["$LAB_DNS_V4"]
control: {path: "$SOCK"}
audit: {path: "$CENTRAL"}
EOF
cat >"$T/net.yaml" <<EOF
version: 1
filesystem:
  read: ["$LAB_CA"]
network:
  allow:
    - {host: allowed.test, ports: [80, 443, 7]}
limits: {memory_mb: 256, pids: 200}
EOF
chmod 0644 "$T/net.yaml"

none_of_ours_left() { [[ -z $(ours_left) ]]; }
curl_a() { ra -p "$T/net.yaml" -- curl -sS --fail --max-time 10 --cacert "$LAB_CA" "$@"; }
# refused TEXT CMD...: CMD's answer is "ok": false and names TEXT
refused() {
	local text=$1 out
	shift
	out=$("$@") || return 2
	printf '%s\n' "$out"
	jq -e '.ok == false' <<<"$out" >/dev/null && grep -qF -- "$text" <<<"$out"
}
good_run() { [[ $(curl_a --noproxy '*' https://allowed.test/) == "hello from allowed.test" ]]; }
# the run sets of the host's table, and the meters run_conns and run_rate (filled by the
# packet path; unregistering a run deletes its elements there too)
host_table() {
	local set
	for set in runs_if runs_v4 runs_v6 gw_v4 gw_v6 run_conns run_rate; do
		ip netns exec "$LAB_HOST_NS" nft list set inet warden "$set" || return 1
	done
}
# the cgroups of the runs the daemon registered (v1: "warden-<id>" below its own cgroup; only
# these ids: other suites' root-mode runs name theirs the same way)
cg_dirs() {
	local id
	for id in $(jq -r -s '.[] | select(.action == "run.gateway-register") | .run' "$CENTRAL" |
		sort -u); do
		find /sys/fs/cgroup/memory /sys/fs/cgroup/pids /sys/fs/cgroup/cpu -maxdepth 4 \
			-type d -name "warden-$id" 2>/dev/null
	done
	return 0
}
no_cg() { [[ -z $(cg_dirs) ]]; }

check "the host's nft table is installed" in_host "$W" nft install
daemon_start
check "the daemon starts as root in lab-host (--manage-nft)" daemon_ready
check "its control socket is root:warden 0660" bash -c \
	'[[ $(stat -c %U:%G:%a "$0") == root:warden:660 ]]' "$SOCK"
check "stats says it plumbs runs" bash -c '"$@" | jq -e ".manage_nft == true"' _ \
	hostns "$GW" ctl --socket "$SOCK" stats
check "warden doctor as A says A's runs go through the daemon" lab_match \
	"^ok +gateway +the warden-gateway daemon on $SOCK plumbs your runs" as_a "$W" doctor
# A without the group `warden` (the socket is root:warden 0660)
nogroup_doctor() {
	hostns setpriv --reuid="$A_UID" --regid="$A_GID" --clear-groups env -i HOME="$A_HOME" \
		PATH=/usr/bin:/bin WARDEN_GATEWAY_BIN="$GW" "$W" doctor
}
check "... and as A outside the group, that it may not use the socket, and the fix" lab_match \
	"^warn +gateway +a gateway daemon's socket $SOCK is there, but you may not use it" \
	nogroup_doctor
# the limit method a run will get (issue 30): the daemon's cgroup, v2 or v1 as gateway/cgroup.c
# chooses it (the memory hog below checks the kind the kill reports)
if [[ -e /sys/fs/cgroup/cgroup.controllers ]]; then cg_kind="a cgroup2 cgroup"; else cg_kind="cgroup1 cgroups"; fi
check "warden doctor as A names the limit method: the daemon's $cg_kind" lab_match \
	"^ok +limits +daemon-mode limits .*: the daemon makes each run $cg_kind" as_a "$W" doctor
check "... and as A outside the group, rootless limits (control)" lab_match \
	"^ok +limits +rootless limits" nogroup_doctor

echo "# user A through the daemon: the same decisions as root mode"
check_eq "HTTPS (transparent)" "hello from allowed.test" curl_a --noproxy '*' https://allowed.test/
check_eq "HTTPS through the proxy variables" "hello from allowed.test" curl_a https://allowed.test/
check_eq "HTTP" "hello from allowed.test" curl_a --noproxy '*' http://allowed.test/
check_eq "HTTPS over IPv6" "hello from allowed.test" curl_a -6 --noproxy '*' https://allowed.test/
s_client() {
	echo | ra -p "$T/net.yaml" -- openssl s_client -connect allowed.test:443 \
		-servername allowed.test -CAfile "$LAB_CA" 2>&1 | grep -q "Verify return code: 0"
}
check "openssl s_client to an allowed name" s_client
echo_by_name() { echo daemon-echo | ra -p "$T/net.yaml" -- socat -T5 - TCP:allowed.test:7; }
check_eq "raw TCP by name (echo)" "daemon-echo" echo_by_name
check_fails "a name the policy does not allow is refused" curl_a --noproxy '*' https://other.test/
check_fails "... through the proxy too" curl_a https://other.test/
check_fails "a literal address is refused" curl_a --noproxy '*' "https://$LAB_ALLOWED_V4/"
check "the denied name was never asked upstream" lab_dns_never_asked other.test
check "control: the allowed one was" lab_dns_asked allowed.test
check "A's runs are daemon mode with A's uid in A's log" jq -e -s --argjson u "$A_UID" \
	'[.[] | select(.action == "run.start")] | length > 0 and
	 all(.mode == "daemon" and .uid == $u)' "$AA"
check "the central log has A's runs, registered with A's uid" jq -e -s --argjson u "$A_UID" \
	'any(.[]; .action == "run.gateway-register" and .uid == $u)' "$CENTRAL"
check "... and the denial, under one of A's runs" jq -e -s \
	'[.[] | select(.action == "run.gateway-register") | .run] as $ids |
	 any(.[]; .allowed == false and ((.resource // "") | test("other.test")) and
	     (.run as $r | $ids | index($r)))' "$CENTRAL"

echo "# A's own log has the gateway's events of A's runs, as root mode's has (the held connection's stream)"
check "A's log has the allowed connection to allowed.test, from the daemon (mode daemon, A's uid)" \
	jq -e -s --argjson u "$A_UID" 'any(.[]; .action == "net.connect" and .allowed == true and
	 .resource == "allowed.test" and .mode == "daemon" and .uid == $u)' "$AA"
check "... its net.close with the bytes" jq -e -s 'any(.[]; .action == "net.close" and
	 .resource == "allowed.test" and (.bytes_down // 0) > 0)' "$AA"
check "... the denied connection to the literal address, with its reason" \
	jq -e -s --arg a "$LAB_ALLOWED_V4" 'any(.[]; .action == "net.connect" and .allowed == false and
	 .resource == $a and ((.reason // "") | length) > 0)' "$AA"
check "... the DNS events: allowed.test answered" jq -e -s 'any(.[]; .action == "dns.query" and
	 .allowed == true and .resource == "allowed.test")' "$AA"
check "... and other.test denied, with its reason" jq -e -s 'any(.[]; .action == "dns.query" and
	 .allowed == false and .resource == "other.test" and ((.reason // "") | test("not allowed")))' "$AA"
check "... and the daemon's register and unregister of the run" jq -e -s '
	 any(.[]; .action == "run.gateway-register") and any(.[]; .action == "run.gateway-unregister")' "$AA"
# a log's lines without the chain's member (each file has its own chain: docs/audit.md)
unchained() { sed -E 's/,"prev":"[0-9a-f]{64}"\}$/}/' "$1"; }
# every gateway line in A's log is a line of the central log, byte for byte but for "prev"
gw_lines_central() {
	local ids
	ids=$(jq -r -s '[.[] | select(.action == "run.start") | .run] | unique | .[]' "$AA")
	for id in $ids; do
		# the launcher's own events carry its pid; the gateway's do not
		jq -c --arg id "$id" 'select(.run == $id and (has("pid") | not))' "$AA"
	done | unchained /dev/stdin >"$T/a-gw.jsonl"
	[[ -s $T/a-gw.jsonl ]] || return 1
	unchained "$CENTRAL" >"$T/central-unchained.jsonl"
	grep -vxFf "$T/central-unchained.jsonl" "$T/a-gw.jsonl" && return 1
	grep -q ',"prev":"' "$AA" && grep -q ',"prev":"' "$CENTRAL"
}
check "every gateway event in A's log is the central log's line, byte for byte but for the chain's prev" gw_lines_central
check "warden logs as A shows the allowed connection and the denial" bash -c \
	'out=$(as_a "$W" logs --audit-log "$AA" --tail 1000) && grep -q "net.connect.*allow.*allowed.test" <<<"$out" &&
	 grep -q "DENY.*other.test" <<<"$out"'
check "a launcher cannot write an event into the daemon's log: the line is refused" \
	refused "unknown key" client_a inject
check "... and the central log has no such event (control: it has A's own)" jq -e -s \
	'(any(.[]; .resource == "injected.test") | not) and any(.[]; .resource == "allowed.test")' "$CENTRAL"

echo "# limits: the daemon's cgroup, delegated to A"
# the run lasts until the test ends its sleep (below): no check here depends on how fast the
# machine gets through them
ra -p "$T/net.yaml" -- sleep 300 &
RUN_A=$!
check "A's long run is listed by the daemon" lab_wait 10 bash -c \
	'[[ $("$@" | jq ".runs | length") == 1 ]]' _ client_a list
check "control: the process check finds A's running launcher" bash -c '[[ -n $(ours_left) ]]'
IDA=$(client_a list | jq -r '.runs[0].id')
IFA=$(client_a list | jq -r '.runs[0].if')
check "its veth is in lab-host" lab_match "^$IFA\$" wd_links
check "its nft elements are in the host's table" lab_match "$IFA" host_table
CG_MEM=$(cg_dirs | grep "/memory/.*warden-$IDA\$" | head -1)
check "its memory cgroup exists" test -d "${CG_MEM:-/nonexistent}"
check_eq "... delegated to A (the folder and tasks)" "$A_UID $A_UID" \
	bash -c 'echo $(stat -c %u "$0" "$0/tasks")' "${CG_MEM:-/nonexistent}"
check_eq "... with the policy's limit, root's file" "268435456 0" \
	bash -c 'echo $(cat "$0/memory.limit_in_bytes") $(stat -c %u "$0/memory.limit_in_bytes")' \
	"${CG_MEM:-/nonexistent}"
check "... holding the run's sleep" bash -c \
	'for p in $(cat "$0/cgroup.procs"); do grep -q sleep "/proc/$p/comm" && exit 0; done; exit 1' \
	"${CG_MEM:-/nonexistent}"

echo "# user B cannot see or touch A's run"
check "B's list shows no run" bash -c '"$@" | jq -e ".ok and (.runs | length) == 0"' _ \
	client_b list
check "control: A's list shows it" bash -c '"$@" | jq -e --arg i "$0" "any(.runs[]; .id == \$i)"' \
	"$IDA" client_a list
check "B cannot unregister it: no such run" refused "no such run" client_b unregister "$IDA"
check "B cannot replace its policy: no such run" refused "no such run" client_b replace "$IDA"
check "A's run still holds its veth after B's attempts" lab_match "^$IFA\$" wd_links
check "B's own run works meanwhile" bash -c '[[ $("$@") == "hello from allowed.test" ]]' _ \
	rb -p "$T/net.yaml" -- curl -sS --fail --max-time 10 --cacert "$LAB_CA" \
	--noproxy '*' https://allowed.test/
check "B's run is in the central log with B's uid" jq -e -s --argjson u "$B_UID" \
	'any(.[]; .action == "run.gateway-register" and .uid == $u)' "$CENTRAL"
# end A's program: SIGTERM to the sleep in its cgroup (the launcher passes the status on)
for p in $(cat "${CG_MEM:-/nonexistent}/cgroup.procs" 2>/dev/null); do
	grep -qx sleep "/proc/$p/comm" 2>/dev/null && kill -TERM "$p"
done
wait "$RUN_A"
check_eq "A's run ends with its program's status (143: its sleep got SIGTERM)" 143 echo $?
check "A's run gone: its veth goes" lab_wait 10 no_wd_links
check "... its nft elements" lab_wait 10 lab_no_match "$IFA" host_table
check "... its cgroup" lab_wait 10 no_cg

# the daemon's cgroup kills a memory hog at memory_mb (the kernel: 137) and the launcher, as A,
# reads the kill back from it: one limit.memory event in A's log (cgroup v1 here; the v2 case,
# memory.events watched through folders the daemon makes 0755, is tests/vm's)
echo "# limits: a memory hog in the daemon's cgroup"
check "before it A's log has no limit.memory event" lab_negate jq -e -s \
	'any(.[]; .action == "limit.memory")' "$AA"
ra -p "$T/net.yaml" -- sh -c 'x=a; while :; do x=$x$x; done'
check_eq "a memory hog ends 137 (killed at memory_mb: 256)" 137 echo $?
check "... with a limit.memory event in A's log, the cgroup's" jq -e -s \
	'any(.[]; .action == "limit.memory" and .limit == 268435456 and
	 (.reason | contains("cgroup1")))' "$AA"
check "... its cgroup gone" lab_wait 10 no_cg

# the fork test (issue 30) in daemon mode: a parent touches 64 MiB and forks 120 children that
# share it and live 5 s, under memory_mb: 256: none killed (the daemon's cgroup and the
# launcher's sampling count a shared page once); the control, the same children each writing
# 4 MiB of their own (480 MiB in all), is killed with one more limit.memory event
echo "# limits: 120 forked children sharing 64 MiB (daemon mode)"
mkdir -m 0755 "$T/fork"
printf 'version: 1\nlimits:\n  memory_mb: 256\n  timeout_s: 60\n' >"$T/fork/fork.yaml"
printf '%s\n' 'import os, sys, time' 'own = int(sys.argv[1])' 'shared = bytearray(64 << 20)' \
	'for i in range(0, len(shared), 4096):' '    shared[i] = 1' 'kids = []' \
	'for _ in range(120):' '    pid = os.fork()' '    if pid == 0:' \
	'        mine = bytearray(own << 20)' '        for i in range(0, len(mine), 4096):' \
	'            mine[i] = 1' '        time.sleep(5)' '        os._exit(0)' \
	'    kids.append(pid)' 'bad = 0' 'for k in kids:' '    bad += os.waitpid(k, 0)[1] != 0' \
	'print("done" if not bad else "%d children killed" % bad)' 'sys.exit(1 if bad else 0)' \
	>"$T/fork/forks.py"
chmod 0644 "$T/fork/fork.yaml" "$T/fork/forks.py"
fork_run() {
	ra -p "$T/fork/fork.yaml" --read "$T/fork/forks.py" -- /usr/bin/python3 "$T/fork/forks.py" "$1"
}
mem_events() { jq -s '[.[] | select(.action == "limit.memory")] | length' "$AA"; }
mem_before=$(mem_events)
check_eq "120 forked children sharing 64 MiB stay under memory_mb: 256 (daemon mode)" "done" \
	fork_run 0
check_eq "... and add no limit.memory event" "$mem_before" mem_events
# the kernel's OOM killer picks a process of the cgroup: the parent (137) or children (the
# parent then says how many died and exits 1)
fork_out=$(fork_run 4 2>/dev/null)
fork_rc=$?
echo "# info: the control ended $fork_rc: ${fork_out:-no output}"
check "... while the same children writing 4 MiB each (480 MiB) are killed (137, or 1: children)" \
	bash -c '(($0 == 137 || $0 == 1))' "$fork_rc"
check_eq "... with one limit.memory event, for it" $((mem_before + 1)) mem_events
jq -c -s '[.[] | select(.action == "limit.memory")] | last | {reason, limit}' "$AA"
check "... its cgroup gone" lab_wait 10 no_cg

echo "# crafted registers: refused with a reason, and the daemon keeps serving"
# B's own user and network namespace, held by a process of B's
as_b unshare -Urn sleep 60 &
BNS_PID=$!
lab_on_exit bash -c 'kill "$0" 2>/dev/null; true' "$BNS_PID"
UNS_PID=$(ns_of "$BNS_PID")
check "B holds a network namespace of B's own" test -n "$UNS_PID"
check "another user's namespace (B's, sent as A): refused as not A's" \
	refused "not owned by uid $A_UID" client_a netns-of "$UNS_PID"
check "... nothing was plumbed" no_wd_links
check "control: a good register right after (a run of A's)" good_run
check "control: B may send B's own namespace" bash -c \
	'"$@" | jq -e ".ok == true"' _ client_b netns-of "$UNS_PID"
check "... and it is plumbed until that connection closes" lab_wait 10 no_wd_links
check "the host's network namespace (lab-host's, as A): refused" \
	refused "not owned by uid $A_UID" client_a netns-of "$GWPID"
check "control: a good register right after" good_run
check "a descriptor that is no namespace (/dev/null): refused" \
	refused "not a namespace" client_a fd /dev/null
check "control: a good register right after" good_run
check "a user namespace, not a network one (B's own, as B): refused" \
	refused "not a network namespace" client_b userns-of "$UNS_PID"
check "control: a good register right after" good_run
check "no descriptor at all: refused" refused "no namespace descriptor" client_a nofd
check "two descriptors: refused" refused "one namespace descriptor" client_b twofds "$UNS_PID"
check "control: a good register right after" good_run
check "a truncated request: the connection just ends" client_a truncated
check "control: a good register right after" good_run
check "an oversize policy: refused" refused "policy larger than" client_a oversize
check "control: a good register right after" good_run
check "none of them left a veth" no_wd_links
check "the daemon is the same process all along" kill -0 "$GWPID"
kill "$UNS_PID" "$BNS_PID" 2>/dev/null

echo "# a launcher that reads nothing: the daemon goes on, what does not fit is counted, both logs say so"
# A's own namespace, registered by a crafted client that asks for the stream, then reads nothing
# until $T/stuck/go exists; meanwhile 6,000 DNS queries from inside it make 6,000 events
as_a unshare -Urn sleep 120 &
ANS_PID=$!
lab_on_exit bash -c 'kill "$0" 2>/dev/null; true' "$ANS_PID"
UNA=$(ns_of "$ANS_PID")
check "A holds a network namespace of A's own" test -n "$UNA"
install -d -o "$A_UID" -g "$A_GID" "$T/stuck"
client_a stream-hold "$UNA" "$T/stuck" >"$T/stuck/out" 2>&1 &
STUCK=$!
check "the stalled launcher's run is registered with the stream" lab_wait 10 \
	jq -e '.ok == true' "$T/stuck/answer"
STUCK_GW=$(jq -r '.host_v4 // empty' "$T/stuck/answer" 2>/dev/null)
stuck_flood() {
	local out
	[[ -n $STUCK_GW ]] || { echo "no gateway address: the register failed"; return 2; }
	out=$(nsenter --net="/proc/$UNA/ns/net" python3 "$SRC/tests/integration/dnsflood.py" \
		"$STUCK_GW" 6000 A allowed.test) || return 2
	echo "$out"
	[[ $(awk '{print $4}' <<<"$out") -ge 5900 ]]
}
check "6,000 queries from that run's namespace are answered while its launcher reads nothing" \
	stuck_flood
check "the daemon answers meanwhile, and counts what it could not send" bash -c \
	'"$@" | jq -e ".stream_lost > 0"' _ hostns "$GW" ctl --socket "$SOCK" stats
check "control: a run of A's is served meanwhile" good_run
touch "$T/stuck/go"
check "the launcher, reading again, gets everything up to the unregister's answer" lab_wait 30 \
	jq -e '.ok == true' "$T/stuck/unregistered"
wait "$STUCK"
STUCK_ID=$(head -1 "$T/stuck/events.jsonl" | jq -r .run)
check "what it got says how many events were not sent to it (audit.stream, count > 0)" \
	jq -e -s 'any(.[]; .action == "audit.stream" and .count > 0 and
	 (.reason | test("were not sent to its launcher")))' "$T/stuck/events.jsonl"
unchained "$CENTRAL" >"$T/central-unchained.jsonl"
check "... and the central log has that event, the same line (but for its chain's prev)" bash -c \
	'grep "\"audit.stream\"" "$0" | grep -qxFf - "$1"' "$T/stuck/events.jsonl" "$T/central-unchained.jsonl"
stuck_accounts() { # the central log's events of the run (not the daemon's own run.record) = those sent + those counted as not sent
	local central sent lost
	central=$(jq -s --arg id "$STUCK_ID" '[.[] | select(.run == $id and .action != "run.record")] | length' "$CENTRAL")
	sent=$(wc -l <"$T/stuck/events.jsonl")
	lost=$(jq -s '[.[] | select(.action == "audit.stream") | .count] | add // 0' \
		"$T/stuck/events.jsonl")
	echo "central $central sent $sent not sent $lost"
	((central > 6000 && lost > 0 && central == sent + lost))
}
check "every event of the run is either sent or counted in that notice" stuck_accounts
echo "# info: the stalled run's events: $(stuck_accounts)"
check "every line it got is the central log's line, byte for byte but for its chain's prev" bash -c \
	'! grep -vxFf "$1" "$0"' "$T/stuck/events.jsonl" "$T/central-unchained.jsonl"
kill "$UNA" "$ANS_PID" 2>/dev/null

echo "# the launcher killed (-9): the daemon reclaims its run at once"
ra -p "$T/net.yaml" -- sleep 60 &
check "a run is up" lab_wait 10 have_wd_links
LAUNCHER=$(pgrep -u "$A_UID" -f "warden run -q --audit-log $AA -p $T/net.yaml -- sleep 60" | head -1)
check "its launcher is found" test -n "$LAUNCHER"
kill -9 "$LAUNCHER" 2>/dev/null
check "its veth goes" lab_wait 10 no_wd_links
check "the daemon unregistered it (the connection closed)" lab_wait 5 jq -e -s \
	'any(.[]; .action == "run.gateway-unregister" and ((.reason // "") | test("connection closed")))' \
	"$CENTRAL"
check "no cgroup of a run is left" lab_wait 10 no_cg

echo "# kill -9 of the daemon mid-transfer: the transfer stops, the run ends with 125"
check_eq "control: the whole file comes through the daemon" "$LAB_BIGFILE_SIZE" \
	curl_a --noproxy '*' -o /dev/null -w '%{size_download}' "https://allowed.test$LAB_BIGFILE_PATH"
as_a bash -c 'exec "$@" >"$0" 2>&1' "$T/a/transfer.log" "$W" run -q --audit-log "$AA" \
	-p "$T/net.yaml" -- curl -sS --limit-rate 2M --max-time 60 --cacert "$LAB_CA" \
	--noproxy '*' -o /dev/null -w 'downloaded %{size_download}\n' \
	"https://allowed.test$LAB_BIGFILE_PATH" &
RUN_T=$!
check "the transfer runs" lab_wait 15 have_wd_links
sleep 2
IFT=$(wd_links | head -1)
WORKER=$(pgrep -P "$GWPID" | head -1)
kill -9 "$GWPID"
wait "$RUN_T"
RC=$?
check_eq "A's warden run exits 125" 125 echo "$RC"
check "... saying the daemon went away" grep -q "gateway daemon .* went away" "$T/a/transfer.log"
check_fails --denied 1 "the transfer did not complete" grep -q "downloaded $LAB_BIGFILE_SIZE" "$T/a/transfer.log"
check "its run.exit is 125 with the reason" jq -e -s \
	'any(.[]; .action == "run.exit" and .exit == 125 and ((.reason // "") | test("went away")))' "$AA"
check "the worker died with the daemon" lab_wait 5 bash -c '! kill -0 "$0" 2>/dev/null' "${WORKER:-0}"
check "the dead daemon left the run's nft elements (fail closed: they lead nowhere)" \
	lab_match "${IFT:-none}" host_table
check "a run with no daemon fails closed" bash -c \
	'[[ $("$@" >/dev/null 2>&1; echo $?) == 125 ]]' _ ra --mode daemon -p "$T/net.yaml" -- true
check "control: without --mode it runs rootless" bash -c \
	'"$@" && jq -e -s "last(.[] | select(.action == \"run.start\")).mode == \"rootless\"" "$0"' \
	"$AA" ra -p "$T/net.yaml" -- true
daemon_start
check "the daemon restarts" daemon_ready
check "the restart reclaimed the veth" lab_wait 10 no_wd_links
check "... the nft elements" lab_no_match "${IFT:-none}" host_table
check "... the cgroups" no_cg
check "... its records" bash -c '[[ -z $(ls -A /run/warden/gateway-runs) ]]'
check "control: a run through the restarted daemon works" good_run

echo "# a daemon stopped (SIGTERM) with a live run: the run ends cleanly with 125"
ra -p "$T/net.yaml" -- sleep 60 &
RUN_S=$!
check "a run is up" lab_wait 10 have_wd_links
IFS_=$(wd_links | head -1)
daemon_stop
wait "$RUN_S"
check_eq "... it exits 125" 125 echo $?
check "the stopped daemon removed the veth" lab_wait 10 no_wd_links
check "... and the nft elements" lab_no_match "${IFS_:-none}" host_table
check "the daemon's log has no sanitizer report (both runs of it)" bash -c \
	'! grep -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$0"' "$T/daemon.log"
check "control: the daemon's log is there and says it served" \
	grep -q "managing nft run elements" "$T/daemon.log"
check "no process of A or B this test started is left" lab_wait 10 none_of_ours_left
lab_finish
