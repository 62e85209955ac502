# Shared fixture for the gateway lab tests (source it; not a test itself):
# a lab, one run namespace + veth inside lab-host registered in the nft table,
# warden-gateway running in lab-host, and client helpers.
# shellcheck shell=bash

SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

W=${WARDEN_BIN:-$SRC/build/launcher/warden}
GW=${WARDEN_BUILD_DIR:-$SRC/build}/gateway/warden-gateway

# gw_setup [CONFIG-EXTRA]: lab + run namespace + gateway. Sets RUN, IF, H4, S4,
# H6, S6, GWCONF, GWSOCK, AUDIT, GW_PID. With GW_NO_RUN_ADD=1 the run's nft set
# elements are not added (a gateway started with --manage-nft adds them);
# GW_ARGS holds extra gateway options (e.g. --manage-nft).
gw_setup()
{
	lab_require_root
	local tool
	for tool in jq setpriv prlimit pgrep; do
		if ! command -v "$tool" >/dev/null; then
			echo "SKIP: missing $tool"
			exit 77
		fi
	done
	if [[ ! -x $GW ]]; then
		echo "SKIP: $GW not built"
		exit 77
	fi
	lab_up
	RUN=wdgw-run$$
	IF=wd-g$$
	# the pool's last slot (16383 of 10.213.0.0/16 in /30s): a `warden run` of the same test
	# takes the first free one from the allocator's cursor, which starts at 0 in the lab's
	# own /run/warden
	H4=10.213.255.253 S4=10.213.255.254
	H6=fd77:7764:6e00:3fff::1 S6=fd77:7764:6e00:3fff::2
	GWSOCK=$LAB_DIR/gw.sock
	AUDIT=$LAB_DIR/audit.jsonl
	GWCONF=$LAB_DIR/gateway.yaml

	lab_run_netns "$RUN" "$IF" "$H4" "$S4" "$H6" "$S6" ||
		{ echo "FAIL - run fixture"; exit 1; }
	mkdir -p "/etc/netns/$RUN"
	echo "nameserver $H4" >"/etc/netns/$RUN/resolv.conf"
	lab_on_exit rm -rf "/etc/netns/$RUN"
	in_host "$W" nft install >/dev/null || { echo "FAIL - nft install"; exit 1; }
	if [[ -z ${GW_NO_RUN_ADD:-} ]]; then
		in_host "$W" nft run-add "$IF" --v4 "$S4" --gw4 "$H4" --v6 "$S6" --gw6 "$H6" >/dev/null ||
			{ echo "FAIL - nft run-add"; exit 1; }
	fi

	gw_start "${1:-}"
}

# gw_start [CONFIG-EXTRA [WRAPPER...]]: writes the config and starts the gateway
# (under WRAPPER, e.g. `prlimit --nofile=128:128`); sets GW_PID
gw_start()
{
	local extra=${1:-} limits="limits: {peek_timeout_ms: 1500, connect_timeout_ms: 2000, dns_ttl_floor_s: 1}"
	shift || true
	[[ $extra == *limits:* ]] && limits=
	cat >"$GWCONF" <<EOF
version: 1
resolvers: ["$LAB_DNS_V4"]
control: {path: "$GWSOCK"}
audit: {path: "$AUDIT"}
$limits
$extra
EOF
	# shellcheck disable=SC2086
	lab_spawn host gw "$@" "$GW" --config "$GWCONF" ${GW_ARGS:-}
	GW_PID=$LAB_SPAWNED_PID
	if ! lab_wait 10 test -S "$GWSOCK" || ! lab_wait_listen host 15001; then
		echo "FAIL - the gateway did not start"
		cat "$LAB_DIR/log/host-gw.log"
		exit 1
	fi
}

# gw_ctl ARGS...: the control client against the test gateway (in lab-host)
gw_ctl()
{
	in_host "$GW" ctl --socket "$GWSOCK" "$@"
}

# gw_register POLICY-FILE: registers the run
gw_register()
{
	gw_ctl register --id "$RUN" --if "$IF" --host-v4 "$H4" --sandbox-v4 "$S4" \
		--host-v6 "$H6" --sandbox-v6 "$S6" --policy "$1" >/dev/null
}

in_run() { ip netns exec "$RUN" "$@"; }

# run_curl ARGS...: curl from the run namespace, lab CA, 10 s cap, no proxy env
run_curl()
{
	in_run env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY \
		curl -sS --max-time 10 --cacert "$LAB_CA" "$@"
}

# run_dig ARGS...: dig from the run namespace at the gateway
run_dig()
{
	in_run dig +time=3 +tries=1 @"$H4" "$@"
}

# synth NAME [A|AAAA]: the synthetic address the gateway gives NAME
synth()
{
	run_dig +short "$1" "${2:-A}" | head -n 1
}

# audit_has JQ-FILTER: an audit event matches (jq -e over the JSONL file)
audit_has()
{
	jq -e -s "[.[] | select($1)] | length > 0" "$AUDIT" >/dev/null
}

# tcp_say ADDR PORT TEXT: sends TEXT, prints what comes back (3 s)
tcp_say()
{
	printf '%s\n' "$3" | timeout 8 ip netns exec "$RUN" socat -T3 - "TCP:$1:$2,connect-timeout=3" 2>&1
}

# tcp_reset ADDR PORT: the connection is reset (no data, an error)
tcp_reset()
{
	local out
	out=$(timeout 8 ip netns exec "$RUN" bash -c \
		'exec 3<>"/dev/tcp/$0/$1" || exit 0; echo hello >&3; cat <&3' "$1" "$2" 2>&1)
	[[ $out == *"Connection reset"* ]]
}

# gw_worker_pid: the gateway's unprivileged worker (a descendant of GW_PID)
gw_worker_pid()
{
	local p kids
	p=$GW_PID
	for _ in 1 2 3; do
		kids=$(pgrep -P "$p" | head -n1)
		[[ -n $kids ]] || break
		p=$kids
	done
	echo "$p"
}

# tcp_silent_reset ADDR PORT: connect, say nothing, the gateway resets
tcp_silent_reset()
{
	local out
	out=$(timeout 8 ip netns exec "$RUN" bash -c \
		'exec 3<>"/dev/tcp/$0/$1" || exit 0; cat <&3' "$1" "$2" 2>&1)
	[[ $out == *"Connection reset"* ]]
}

# gw_log_clean: the gateway's log holds no sanitizer report. Its positive control: the same probe
# finds the line the gateway logs when it starts serving (a log that is missing is an error).
gw_log_clean()
{
	local log=$LAB_DIR/log/host-gw.log
	lab_match "serving: transparent" cat "$log" || { echo "control: no 'serving' line in $log"; return 1; }
	lab_no_match "Sanitizer|runtime error:" cat "$log"
}

# gw_stop: SIGTERM to the gateway, wait until it is gone (10 s); fails when it was not running
gw_stop()
{
	kill -0 "$GW_PID" || { echo "gw_stop: the gateway ($GW_PID) is not running"; return 1; }
	kill -TERM "$GW_PID" 2>/dev/null
	lab_wait 10 bash -c '! kill -0 "$0" 2>/dev/null' "$GW_PID"
}
