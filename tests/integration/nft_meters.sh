#!/usr/bin/env bash
# nft_meters.sh - the per-run meter sets of the host's table (run_conns, run_rate: filled by
# the packet path, one element per run interface) with real packets in the lab:
#   - a run's meter elements go with its other elements at run-del (the interface names are
#     random per run and the table outlives the gateway: they must not pile up);
#   - when a meter set is full (size 65535), a run whose interface is not in it cannot get an
#     element: its new flows are dropped and logged ("warden-conns"), never let through
#     without the limit (fail closed); with room for it again, its limit works.
# Two run namespaces (plain `ip` fixtures) in lab-host, registered with `warden nft run-add`;
# a stand-in listener (socat) on the transparent port holds every accepted connection open.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
lab_require_root
W=${WARDEN_BIN:-$SRC/build/launcher/warden}
TMP=$(mktemp -d)
lab_on_exit rm -rf "$TMP"
lab_up

LIMIT=16 # nft.conntrack_per_run below (its least allowed value)
SIZE=65535
RUN1=wdmtr-a$$ IF1=wd-ma$$
RUN2=wdmtr-b$$ IF2=wd-mb$$
A4=10.213.0.1 A6=fd77:7764:6e00::1 SA4=10.213.0.2 SA6=fd77:7764:6e00::2
B4=10.213.0.5 B6=fd77:7764:6e01::1 SB4=10.213.0.6 SB6=fd77:7764:6e01::2
CONF=$TMP/gateway.yaml
printf 'version: 1\nnft:\n  conntrack_per_run: %s\n  conntrack_new_per_s: 200\n' "$LIMIT" >"$CONF"

wnft() { in_host "$W" nft "$@" --config "$CONF"; }
# set_has SET IFNAME: the live set holds IFNAME (0), does not (1); 2 when it cannot be listed
set_has() {
	lab_match "\"$2\"" in_host nft list set inet warden "$1"
}
set_lacks() {
	local rc=0
	set_has "$@" || rc=$?
	((rc == 1))
}
# established NS-IP: connections the stand-in listener holds open from that address
established() {
	in_host ss -Htn state established "( sport = :15001 and dst $1 )" | wc -l
}
# hold NS IP COUNT: COUNT connections from the run to IP:80 (redirected to the transparent
# port), each held open by the listener for 60 s (the clients are killed at exit)
hold() {
	local i
	for ((i = 0; i < $3; i++)); do
		ip netns exec "$1" socat -u "TCP:$2:80,connect-timeout=3" - </dev/null >/dev/null 2>&1 &
		lab_on_exit quiet_kill "$!"
	done
}
# quiet_kill PID: a client or helper that has ended by itself is fine
quiet_kill() { kill "$1" 2>/dev/null || true; }
# count_is WANT NS-IP: exactly WANT connections held from that address
count_is() { [[ $(established "$2") == "$1" ]]; }
count_atmost() { local got; got=$(established "$2") && [[ -n $got ]] && ((got <= $1)); }

# --- fixture -------------------------------------------------------------------------
lab_run_netns "$RUN1" "$IF1" "$A4" "$SA4" "$A6" "$SA6" || { echo "run fixture failed"; exit 1; }
lab_run_netns "$RUN2" "$IF2" "$B4" "$SB4" "$B6" "$SB6" || { echo "run fixture failed"; exit 1; }
check "setup: install the table (conntrack_per_run $LIMIT)" wnft install
check "setup: register run 1" wnft run-add "$IF1" --v4 "$SA4" --gw4 "$A4" --v6 "$SA6" --gw6 "$A6"
ip netns exec "$LAB_HOST_NS" socat TCP6-LISTEN:15001,ipv6only=0,reuseaddr,fork \
	'SYSTEM:sleep 60' 2>/dev/null &
lab_on_exit kill "$!"
check "setup: the stand-in transparent port listens" lab_wait_listen host 15001

# --- 1. a finished run leaves nothing in the meter sets ----------------------------------
hold "$RUN1" "$LAB_ALLOWED_V4" 2
check "run 1's flows reach the transparent port" lab_wait 10 count_is 2 "$SA4"
check "run 1 has an element in run_conns while it runs" set_has run_conns "$IF1"
check "run 1 has an element in run_rate while it runs" set_has run_rate "$IF1"
check "run-del unregisters run 1" \
	wnft run-del "$IF1" --v4 "$SA4" --gw4 "$A4" --v6 "$SA6" --gw6 "$A6"
check "control: run 1 is gone from runs_if" set_lacks runs_if "$IF1"
check "after run-del, run 1 is gone from run_conns" set_lacks run_conns "$IF1"
check "after run-del, run 1 is gone from run_rate" set_lacks run_rate "$IF1"
check "a second run-del is fine (nothing left to delete)" \
	wnft run-del "$IF1" --v4 "$SA4" --gw4 "$A4" --v6 "$SA6" --gw6 "$A6"

# --- 2. a full meter set: the new run is refused, not unlimited ------------------------
# fill run_conns with other (made-up) interfaces, as stale elements would (up to its size:
# what is in it already counts)
held=$(in_host nft list set inet warden run_conns | grep -o '"wd-[^"]*"' | wc -l)
for ((i = 0; i < SIZE - held; i++)); do printf '"wd-f%d",\n' "$i"; done >"$TMP/fill.list"
{
	echo 'add element inet warden run_conns {'
	cat "$TMP/fill.list"
	echo '}'
} >"$TMP/fill.nft"
check "setup: fill run_conns with $((SIZE - held)) other interfaces" in_host nft -f "$TMP/fill.nft"
check_fails "setup: run_conns is full (one more element is refused)" \
	in_host nft add element inet warden run_conns '{ "wd-fmore" }'
check "setup: register run 2" wnft run-add "$IF2" --v4 "$SB4" --gw4 "$B4" --v6 "$SB6" --gw6 "$B6"

NFLOG=${WD_NFT_NFLOG:-${WARDEN_BUILD_DIR:-$SRC/build}/tests/integration/nft_nflog}
: >"$TMP/nflog"
if check "setup: the nft_nflog helper is built ($NFLOG)" test -x "$NFLOG"; then
	ip netns exec "$LAB_HOST_NS" "$NFLOG" 7000 20 1 >"$TMP/nflog" 2>&1 &
	lab_on_exit quiet_kill "$!"
	check "setup: the nft_nflog helper listens on NFLOG group 7000" \
		lab_wait 5 grep -q ready "$TMP/nflog"
fi
hold "$RUN2" "$LAB_ALLOWED_V4" $((LIMIT + 4))
check "with run_conns full, run 2's flows are refused (NFLOG warden-conns)" \
	lab_wait 15 grep -q 'prefix=warden-conns' "$TMP/nflog"
check "with run_conns full, run 2 holds at most $LIMIT flows (its limit is not skipped)" \
	count_atmost "$LIMIT" "$SB4"
check "with run_conns full, run 2 holds no flow at all (fail closed)" count_is 0 "$SB4"
check_fails "run 2 is not in the full run_conns" set_has run_conns "$IF2"

# room for one: run 2 gets its element, and its limit holds
check "setup: make room for one element" in_host nft delete element inet warden run_conns \
	'{ "wd-f0" }'
hold "$RUN2" "$LAB_ALLOWED_V4" $((LIMIT + 4))
check "control: with room, run 2 holds $LIMIT flows" lab_wait 15 count_is "$LIMIT" "$SB4"
check "control: run 2 is in run_conns" set_has run_conns "$IF2"
check "control: run 2 still holds no more than $LIMIT flows" count_atmost "$LIMIT" "$SB4"
check "audit is clean" \
	bash -c 'ip netns exec "$0" "$1" nft audit --config "$2" | grep -q "0 violations"' \
	"$LAB_HOST_NS" "$W" "$CONF"
check "run-del unregisters run 2" \
	wnft run-del "$IF2" --v4 "$SB4" --gw4 "$B4" --v6 "$SB6" --gw6 "$B6"
check "after run-del, run 2 is gone from run_conns" set_lacks run_conns "$IF2"
check "after run-del, run 2 is gone from run_rate" set_lacks run_rate "$IF2"
check "uninstall" wnft uninstall

lab_finish
