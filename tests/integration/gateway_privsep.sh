#!/usr/bin/env bash
# gateway_privsep.sh - warden-gateway's privilege separation in the lab: with
# --manage-nft the privileged parent adds and removes a run's nft set elements
# when the unprivileged worker forwards a validated register/unregister (the
# worker keeps CapEff 0); a register the parent refuses is rolled back; the
# elements go when the gateway stops. NFLOG: dropped sandbox UDP becomes
# "net.udp" audit events, attributed to the run and rate-limited per run. The worker
# is its own image (warden-gateway-worker): its /proc/PID/maps names no libnftnl, libmnl
# or libnl, while the parent's names libnftnl.
set -u
. "$(dirname "$0")/gateway/fixture.sh"
GW_NO_RUN_ADD=1 GW_ARGS=--manage-nft gw_setup
GW_ARGS=--manage-nft
POL=$LAB_DIR/policy.yaml
cat >"$POL" <<'EOF2'
version: 1
network:
  allow:
    - { host: allowed.test, ports: [443] }
EOF2

# in_set SET TEXT: nft lists SET with TEXT in it; 1 when it does not, 2 (a probe error) when the
# set cannot be listed
in_set() {
	local out
	out=$(in_host nft list set inet warden "$1") || { lab_probe_error "cannot list set $1"; return 2; }
	grep -qF -- "$2" <<<"$out"
}
stats() { gw_ctl stats | jq -r ".$1"; }

# --- run updates through the privileged parent ------------------------------------
check_fails "before register: the run's address is not in runs_v4" in_set runs_v4 "$S4"
check_fails "before register: the sandbox's traffic is dropped (anti-spoof)" \
	run_curl --max-time 3 https://allowed.test/
check "register (the worker asks the parent)" gw_register "$POL"
check "the parent added the run to runs_v4 (nft list set inet warden runs_v4)" \
	in_set runs_v4 "\"$IF\" . $S4"
check "... and to runs_v6" in_set runs_v6 "\"$IF\" . $S6"
check "... and to runs_if" in_set runs_if "\"$IF\""
check_eq "the sandbox reaches allowed.test through the gateway" "hello from allowed.test" \
	run_curl https://allowed.test/
stats_is() { gw_ctl stats | jq -e "$1" >/dev/null; }
check "stats say the gateway manages nft" stats_is '.manage_nft == true'
check "the register was audited after the parent confirmed" \
	audit_has '.action == "run.gateway-register" and (.reason | test("nft elements added"))'

WORKER=$(gw_worker_pid)
check "the worker is not the parent" bash -c '[[ $0 != "$1" && -n $0 ]]' "$WORKER" "$GW_PID"
check_fails "the parent keeps its capabilities (it applies the nft updates)" \
	grep -q "^CapEff:[[:space:]]*0000000000000000$" "/proc/$GW_PID/status"
check "the worker holds no capabilities (CapEff 0)" \
	bash -c 'grep -q "^CapEff:[[:space:]]*0000000000000000$" /proc/$0/status' "$WORKER"
check "the worker runs as nobody" bash -c 'grep -Eq "^Uid:\s+65534\s+65534\s+65534\s+65534$" /proc/$0/status' "$WORKER"
check "the worker is not dumpable after its exec (its /proc files stay root's)" \
	bash -c '[[ $(stat -c %u /proc/$0/fd) == 0 ]]' "$WORKER"
check "the worker has no_new_privs set" bash -c 'grep -Eq "^NoNewPrivs:\s+1$" /proc/$0/status' "$WORKER"
check "the worker holds a descriptor of the audit log" \
	bash -c 'ls -l /proc/$0/fd | grep -q "$1"' "$WORKER" "$AUDIT"
check_fails "... that its user could not have opened (it came from the parent)" \
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c ': >>"$0"' "$AUDIT"
check "control: the same open as that user works on a file anyone may write" \
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c ': >>"$0"' /dev/null
check "the worker reads the NFLOG socket the parent bound" stats_is '.nflog == true'

# --- the worker is its own image: no libnftnl, libmnl or libnl mapped (ARCHITECTURE §1) --
# maps_has PID REGEX: /proc/PID/maps names a file matching REGEX; maps_lacks: it names none.
# A maps file that cannot be read is an error for both (grep's status 2 is not "absent").
maps_has() {
	[[ -r /proc/$1/maps ]] || { echo "ERROR - no /proc/$1/maps"; return 2; }
	grep -Eq "$2" "/proc/$1/maps"
}
maps_lacks() {
	local rc
	[[ -r /proc/$1/maps ]] || { echo "ERROR - no /proc/$1/maps"; return 2; }
	grep -E "$2" "/proc/$1/maps" && rc=0 || rc=$?
	((rc == 1))
}
NFTLIBS='/lib(nftnl|mnl|nl-[0-9]|nl-route-[0-9]|nl-genl-[0-9])[.-][^/]*$'
check "the worker's image is warden-gateway-worker" \
	bash -c '[[ $(readlink /proc/$0/exe) == */warden-gateway-worker ]]' "$WORKER"
check "the parent's maps name libnftnl (the probe sees the libraries)" maps_has "$GW_PID" "$NFTLIBS"
check "the worker's maps name libc (the probe reads the worker's maps)" \
	maps_has "$WORKER" '/libc[.-][^/]*$'
check "the worker's maps name no libnftnl, libmnl or libnl" maps_lacks "$WORKER" "$NFTLIBS"

# a register the parent refuses (interface without the nft prefix) is rolled back
check_fails "a register the parent refuses fails" \
	gw_ctl register --id bad-$$ --if bad$$ --host-v4 10.213.0.5 --sandbox-v4 10.213.0.6 --policy "$POL"
check "its error comes from the parent" bash -c \
	'ip netns exec "$0" "$1" ctl --socket "$2" register --id bad-$$ --if bad$$ --host-v4 10.213.0.5 --sandbox-v4 10.213.0.6 --policy "$3" | jq -e "(.error | test(\"nft: interface bad.* lacks the prefix\")) and .errno == \"EINVAL\""' \
	"$LAB_HOST_NS" "$GW" "$GWSOCK" "$POL"
check "the refused run was rolled back" bash -c \
	'ip netns exec "$0" "$1" ctl --socket "$2" list | jq -e "[.runs[].id] == [\"$3\"]"' \
	"$LAB_HOST_NS" "$GW" "$GWSOCK" "$RUN"
check_fails "nothing of it reached the set" in_set runs_v4 10.213.0.6
check "control: the same probe sees the registered run's address" in_set runs_v4 "$S4"

# --- NFLOG: dropped UDP is audited ----------------------------------------------
udp_event() {
	jq -e -s "[.[] | select(.action == \"net.udp\" and .run == \"$RUN\" and .allowed == false and .dst == \"$LAB_WAN_V4\" and .port == 9999 and .proto == \"udp\")] | length > 0" "$AUDIT" >/dev/null
}
check "socat - UDP:$LAB_WAN_V4:9999 from the run's namespace" \
	bash -c 'echo hello | timeout 5 ip netns exec "$0" socat -u - "UDP:$1:9999"' "$RUN" "$LAB_WAN_V4"
check "a net.udp audit event names the run, destination and port" lab_wait 5 udp_event
check "its reason says the datagram was dropped" \
	audit_has '.action == "net.udp" and (.reason | test("dropped by the nft table"))'
check "IPv6 UDP is audited too" bash -c \
	'echo hi | timeout 5 ip netns exec "$0" socat -u - "UDP6:[$1]:5353"' "$RUN" "$LAB_WAN_V6"
udp6_event() { audit_has ".action == \"net.udp\" and .run == \"$RUN\" and .port == 5353"; }
check "... with its own event" lab_wait 5 udp6_event

# a flood is rate-limited per run, with a summary of what was suppressed
check "a flood of 600 datagrams (one socket each)" in_run bash -c \
	'for i in $(seq 600); do echo x >/dev/udp/$0/4445; done' "$LAB_WAN_V4"
summary() { audit_has ".action == \"net.udp\" and .run == \"$RUN\" and .denials > 0 and (.reason | test(\"rate limit\"))"; }
check "a summary event counts the suppressed datagrams" lab_wait 5 summary
dropped() { (($(stats udp_dropped) >= 600)); }
check "the gateway counted every dropped datagram" lab_wait 5 dropped
check "the flood wrote far fewer events than datagrams" bash -c \
	'(( $(jq -s "[.[] | select(.action == \"net.udp\")] | length" "$0") < 100 ))' "$AUDIT"
check "events + suppressed account for every datagram" bash -c \
	'ev=$(jq -s "[.[] | select(.action == \"net.udp\" and (has(\"denials\") | not))] | length" "$0"); sup=$(ip netns exec "$1" "$2" ctl --socket "$3" stats | jq .udp_suppressed); dr=$(ip netns exec "$1" "$2" ctl --socket "$3" stats | jq .udp_dropped); (( ev + sup == dr ))' \
	"$AUDIT" "$LAB_HOST_NS" "$GW" "$GWSOCK"

# --- unregister and stop -----------------------------------------------------------
check "unregister" gw_ctl unregister --id "$RUN"
check_fails "the parent removed the run from runs_v4" in_set runs_v4 "$S4"
check_fails "... and from runs_v6" in_set runs_v6 "$S6"
check_fails "... and from runs_if" in_set runs_if "\"$IF\""
check "register again" gw_register "$POL"
check "the elements are back" in_set runs_v4 "\"$IF\" . $S4"
check "the worker still holds no capabilities" \
	bash -c 'grep -q "^CapEff:[[:space:]]*0000000000000000$" /proc/$0/status' "$WORKER"
check "control: its control socket is there" test -S "$GWSOCK"
check "SIGTERM stops the gateway" gw_stop
check_fails "the gateway's elements went with it" in_set runs_v4 "$S4"
check_fails "the control socket is removed" test -e "$GWSOCK"
check "no sanitizer report in the gateway's log" gw_log_clean

# --- the worker's image: found only where it belongs, never run by hand -----------------
status_of() { "$@" >/dev/null 2>&1; echo $?; }
WBIN=$(dirname "$GW")/warden-gateway-worker
check "the worker image sits next to warden-gateway in the build" test -x "$WBIN"
check_eq "a missing --worker: warden-gateway exits 1" 1 \
	status_of in_host "$GW" --config "$GWCONF" --worker "$LAB_DIR/no-such-worker"
check "... saying what is missing" bash -c \
	'ip netns exec "$0" "$1" --config "$2" --worker "$3" 2>&1 | grep -q "no-such-worker: no such file"' \
	"$LAB_HOST_NS" "$GW" "$GWCONF" "$LAB_DIR/no-such-worker"
check_fails "... and leaves no control socket behind" test -e "$GWSOCK"
cp "$WBIN" "$LAB_DIR/unsafe-worker" && chmod 0777 "$LAB_DIR/unsafe-worker"
check_eq "a worker others may write: warden-gateway exits 1" 1 \
	status_of in_host "$GW" --config "$GWCONF" --worker "$LAB_DIR/unsafe-worker"
check_fails "... and leaves no control socket behind" test -e "$GWSOCK"
check_eq "the worker started by hand (no sealed config on fd 3): exit 2" 2 \
	status_of "$WBIN" --config-fd 3 3</etc/hostname
check_eq "the worker without arguments: exit 2" 2 status_of "$WBIN"
lab_finish
