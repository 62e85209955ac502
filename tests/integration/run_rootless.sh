#!/usr/bin/env bash
# run_rootless.sh - `warden run` as an ordinary user (rootless mode, issue 13) in the lab:
# allowed and denied names through real clients (curl with and without the proxy variables,
# IPv4 and IPv6, openssl, raw TCP by name), the audit trail (mode, uid), UDP and ICMP that
# never arrive, the program unable to change the rules of the namespace it lives in, the
# run's own table auditing clean, exit codes, and nothing left after a run or after kill -9
# of the launcher.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
command -v setpriv >/dev/null || { echo "FAIL: setpriv is missing"; exit 1; }
lab_user || { echo "FAIL: no unprivileged test user (useradd failed)"; exit 1; }
lab_up

T=$(mktemp -d /tmp/wd-run-rootless-XXXXXX)
lab_on_exit rm -rf "$T"
chown "$LAB_USER_UID:$LAB_USER_GID" "$T"
A=$T/audit.jsonl
export WARDEN_GATEWAY_BIN=$GW
NFT=$(command -v nft)
IP=$(command -v ip)

cat >"$T/net.yaml" <<EOF
version: 1
filesystem:
  read: ["$LAB_CA", "$NFT", "$IP"]
network:
  allow:
    - {host: allowed.test, ports: [80, 443, 7, 2222]}
EOF
chown "$LAB_USER_UID" "$T/net.yaml"

# ur ARGS...: warden run as the user inside lab-host, with the test's audit log
ur() { in_host_user "$W" run -q --audit-log "$A" "$@"; }
status_of() { "$@" >/dev/null 2>&1; echo $?; }
curl_in() { ur -p "$T/net.yaml" -- curl -sS --fail --max-time 10 --cacert "$LAB_CA" "$@"; }
# the user's processes (none may outlive a run)
user_procs() { pgrep -u "$LAB_USER_UID" -l || true; }
# Other suites may run rootless tests as the same user at the same time: this script's
# processes are found as descendants of its own, never by a machine-wide pgrep of the user.
# tree PID: PID's descendants, depth first
tree()
{
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$c"
		tree "$c"
	done
}
# of_user PID...: those of PID that are the test user's (and alive)
of_user() { local p; for p in "$@"; do [[ $(stat -c %u "/proc/$p" 2>/dev/null) == "$LAB_USER_UID" ]] && echo "$p"; done; return 0; }
# no_user_procs: no process of the user in lab-host (launchers, embedded gateways, teardowns;
# a run's sandbox dies with its launcher), none of this script's children's trees either
no_user_procs()
{
	local p
	p=$(ip netns pids "$LAB_HOST_NS") || return 1
	[[ -z $(of_user $p) && -z $(of_user $(tree $$)) ]]
}
host_ruleset() { in_host nft list ruleset; }
host_links() { ip -n "$LAB_HOST_NS" -o link show | awk -F': ' '{print $2}' | sort; }

check "the user may run warden" in_host_user "$W" --version
check "warden doctor as the user: the rootless prerequisites are all there" \
	in_host_user "$W" doctor
check "... and says so (its network check is the rootless one)" bash -c \
	'"$@" | grep -q "^ok   network  a user and network namespace of your own"' _ \
	ip netns exec "$LAB_HOST_NS" setpriv --reuid="$LAB_USER_UID" --regid="$LAB_USER_GID" \
	--init-groups env -i HOME="$LAB_USER_HOME" PATH=/usr/bin:/bin \
	WARDEN_GATEWAY_BIN="$GW" "$W" doctor
RULES_BEFORE=$(host_ruleset)
LINKS_BEFORE=$(host_links)

# --- the network: allowed, denied, both families, real clients
check_eq "HTTPS through the proxy variables" "hello from allowed.test" \
	curl_in https://allowed.test/
check_eq "HTTPS without them (transparent)" "hello from allowed.test" \
	curl_in --noproxy '*' https://allowed.test/
check_eq "HTTP without them" "hello from allowed.test" curl_in --noproxy '*' http://allowed.test/
check_eq "HTTPS over IPv6" "hello from allowed.test" curl_in -6 --noproxy '*' https://allowed.test/
check_eq "HTTPS over IPv4" "hello from allowed.test" curl_in -4 --noproxy '*' https://allowed.test/
s_client() {
	echo | ur -p "$T/net.yaml" -- openssl s_client -connect allowed.test:443 \
		-servername allowed.test -CAfile "$LAB_CA" 2>&1 | grep -q "Verify return code: 0"
}
check "openssl s_client to an allowed name" s_client
echo_by_name() { echo rootless-echo | ur -p "$T/net.yaml" -- socat -T5 - TCP:allowed.test:7; }
check_eq "raw TCP by name (echo)" "rootless-echo" echo_by_name
check_fails "a name the policy does not allow is refused" curl_in --noproxy '*' https://other.test/
check_fails "... through the proxy too" curl_in https://other.test/
check_fails "a literal address is refused" curl_in --noproxy '*' "https://$LAB_ALLOWED_V4/"
check "the allowed name was asked upstream (control)" lab_dns_asked allowed.test
check "the denied name was never asked upstream" lab_dns_never_asked other.test
check "the denial is audited" jq -e -s \
	'any(.[]; .allowed == false and ((.host // .resource // "") | test("other.test")))' "$A"

# --- the audit trail says who and how
check "run.start says mode rootless, the user's uid, the isolation" jq -e -s --argjson u \
	"$LAB_USER_UID" 'any(.[]; .action == "run.start" and .mode == "rootless" and .uid == $u
	and (.isolation | startswith("userns+netns+nft(own),")))' "$A"
check "run.exit says mode rootless" jq -e -s \
	'any(.[]; .action == "run.exit" and .mode == "rootless")' "$A"
check "the gateway registered the run with the user's uid" jq -e -s --argjson u \
	"$LAB_USER_UID" 'any(.[]; .action == "run.gateway-register" and .uid == $u)' "$A"

# --- UDP and ICMP never leave (lab-wan's arrival counters), next to a control that counts
lab_wan_reset_counters
ur -p "$T/net.yaml" -- sh -c "echo x | socat -T1 - UDP:$LAB_UDP_ECHO_V4:9999; \
	echo x | socat -T1 - UDP6:[$LAB_UDP_ECHO_V6]:9999; ping -c1 -W1 $LAB_WAN_V4" \
	>/dev/null 2>&1
check_eq "UDP from the run never arrives in lab-wan" 0 lab_wan_count_udp
check_eq "ICMP from the run never arrives in lab-wan" 0 lab_wan_count icmp
check "the dropped UDP datagram is audited (NFLOG of the run's own namespace)" jq -e -s \
	--arg d "$LAB_UDP_ECHO_V4" 'any(.[]; .action == "net.udp" and .dst == $d and .port == 9999
	and .allowed == false)' "$A"
in_host sh -c "echo x | socat -T1 - UDP:$LAB_UDP_ECHO_V4:9999; ping -c1 -W1 $LAB_WAN_V4" \
	>/dev/null 2>&1
counted() { (($(lab_wan_count udp) > 0 && $(lab_wan_count icmp) > 0)); }
check "... while the same UDP and ping from lab-host itself are counted (control)" counted

# --- the program cannot reach its own gateway's control socket: the user's run state folder
# is refused as a grant (its gateway answers the caller's uid, which is the program's too; with
# the folder granted, the program replaced its own policy and reached other.test)
cat >"$T/attack.py" <<'EOF'
import glob, json, socket, sys
for p in glob.glob(sys.argv[1] + "/runs/*/gw.sock"):
    s = socket.socket(socket.AF_UNIX)
    s.connect(p)
    pol = "version: 1\nnetwork:\n  allow:\n    - {host: other.test, ports: [443]}\n"
    s.sendall((json.dumps({"op": "replace", "id": p.split("/")[-2], "policy": pol}) + "\n").encode())
    print(s.recv(4096).decode().strip())
EOF
STATE=/tmp/warden-$LAB_USER_UID
cat >"$T/attack.yaml" <<EOF
version: 1
filesystem:
  read: ["$LAB_CA", "$T/attack.py"]
  write: ["$STATE"]
network:
  allow:
    - {host: allowed.test, ports: [443]}
EOF
chown "$LAB_USER_UID" "$T/attack.yaml" "$T/attack.py"
attack() {
	ur -p "$T/attack.yaml" -- sh -c "python3 '$T/attack.py' '$STATE'; curl -sS --noproxy '*' \
		--max-time 5 --cacert '$LAB_CA' https://other.test/" 2>&1
}
ATTACK=$(attack) && ATTACK_RC=0 || ATTACK_RC=$?
check_eq "a grant of the user's run state folder refuses the run: 125" 125 echo "$ATTACK_RC"
check_fails "... so the program never replaced its own policy to reach other.test" \
	grep -q "hello from other.test" <<<"$ATTACK"
names_state() { as_user "$W" policy check "$T/attack.yaml" 2>&1 | grep -q "run state (rootless)"; }
check "warden policy check as the user names the folder" names_state
sed -i "/write:/d" "$T/attack.yaml"
check_eq "control: without that grant the same program runs, and other.test stays denied" \
	"hello from allowed.test" ur -p "$T/attack.yaml" -- sh -c "python3 '$T/attack.py' '$STATE' \
	>/dev/null 2>&1; curl -sS --noproxy '*' --max-time 5 --cacert '$LAB_CA' \
	https://other.test/ 2>/dev/null; curl -sS --noproxy '*' --max-time 5 --cacert '$LAB_CA' \
	https://allowed.test/"

# --- the program cannot change the rules of its own namespace
SELF='
for c in "nft list ruleset" "nft flush ruleset" "ip link set lo down" "ip route del default" \
	"ip route add 203.0.113.0/24 dev lo" "ip addr add 10.9.9.9/32 dev lo"; do
	set -- $c; prog=$1; shift
	if [ "$prog" = nft ]; then prog='"$NFT"'; else prog='"$IP"'; fi
	if "$prog" "$@" >/dev/null 2>&1; then echo "ALLOWED: $c"; else echo "refused: $c"; fi
done
'"$IP"' link show lo >/dev/null 2>&1 && echo "ip link show: ok"
curl -sS --fail --max-time 10 --noproxy "*" --cacert '"$LAB_CA"' https://allowed.test/
'
OUT=$(ur -p "$T/net.yaml" -- sh -c "$SELF" 2>&1)
for c in "nft list ruleset" "nft flush ruleset" "ip link set lo down" "ip route del default" \
	"ip route add 203.0.113.0/24 dev lo" "ip addr add 10.9.9.9/32 dev lo"; do
	check "inside: $c fails" grep -qx "refused: $c" <<<"$OUT"
done
check "inside: ip link show works (control: the tools run)" grep -qx "ip link show: ok" <<<"$OUT"
check "inside: after all that, the allowed name still works (the rules are intact)" \
	grep -qx "hello from allowed.test" <<<"$OUT"
no_caps() { ur -- grep CapEff /proc/self/status | grep -qx "CapEff:	0000000000000000"; }
check "inside: no capability at all" no_caps

# the run's own table, audited live from the run's own namespaces (the user may enter them;
# the program, in a nested user namespace, may not change them)
ur -p "$T/net.yaml" -- sleep 20 &
RUNPID=$!
# named_in NAME PID: the first process called NAME in PID's tree (itself included)
named_in() { local p; for p in "$2" $(tree "$2"); do [[ $(cat /proc/"$p"/comm 2>/dev/null) == "$1" ]] && { echo "$p"; return 0; }; done; return 1; }
lab_wait 10 named_in sleep "$RUNPID"
L=$(named_in warden "$RUNPID")
# bwrap as the launcher's child is in the run's user namespace (the program is in a nested one)
SB=$(pgrep -u "$LAB_USER_UID" -P "${L:-0}" -x bwrap | head -1)
RUN_TREE=$(of_user ${L:-} $(tree "${L:-0}"))
check "warden nft audit --rootless in a live run's namespaces: clean" \
	in_host_user "$W" nft audit --rootless --pid "${SB:-0}"
check_fails --denied 2 "... and the program's own process cannot enter them (nested user namespace)" \
	in_host_user "$W" nft audit --rootless --pid "$(named_in sleep "$RUNPID")"
check_fails --denied 2 "... and another user cannot either" in_host setpriv --reuid=65534 --regid=65534 \
	--clear-groups "$W" nft audit --rootless --pid "${SB:-0}"

# --- kill -9 of the launcher: nothing of the run remains
check "the launcher of the live run was found" test -n "$L"
kill -9 "${L:-0}" 2>/dev/null
wait "$RUNPID" 2>/dev/null
# every process of that run's tree (launcher, gateway, bwrap, the program), gone
none_alive() { [[ -z $(of_user $RUN_TREE) ]]; }
check "control: the run's tree had its processes (launcher, gateway, bwrap, program)" \
	test "$(wc -w <<<"$RUN_TREE")" -ge 4
check "after kill -9 of the launcher no process of the run is left" lab_wait 10 none_alive
gc_says() { as_user "$W" gc | grep -q "$1"; }
check "a state folder of the killed run is left (control)" bash -c \
	'[[ -n $(ls -A "$0") ]]' "/tmp/warden-$LAB_USER_UID/runs"
check "warden gc as the user reclaims it" gc_says " 1 crashed rootless run "
check "... and a second gc finds nothing" gc_says " 0 crashed rootless runs "

# --- exit codes, refusals
check_eq "the program's exit status" 3 status_of ur -- sh -c 'exit 3'
check_eq "a command that is not found: 127" 127 status_of ur -- /nonexistent/prog
check_eq "--gateway in rootless mode: 125" 125 status_of ur --gateway /nonexistent.sock -- true
check_eq "--mode root as a user: 125" 125 status_of ur --mode root -- true
check_eq "--mode rootless as a user (the default) works" 0 status_of ur --mode rootless -- true

# --- nothing of any run remains: processes, state, host links, host rules
check "no process of the user is left" lab_wait 10 no_user_procs
check "no run state of the user is left" lab_wait 10 bash -c \
	'[[ -z $(ls -A "$0") ]]' "/tmp/warden-$LAB_USER_UID/runs"
check_eq "lab-host's links are as before (no veth)" "$LINKS_BEFORE" host_links
check_eq "lab-host's ruleset is as before (no host table)" "$RULES_BEFORE" host_ruleset
lab_finish
