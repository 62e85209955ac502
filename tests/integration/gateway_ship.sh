#!/usr/bin/env bash
# gateway_ship.sh - audit shipping (audit.ship in gateway.yaml, docs/audit.md "Shipping") from
# a gateway in the lab to real listeners on the lab host's loopback: a strict RFC 5424
# receiver (python3) over UDP and octet-counted TCP, and rsyslogd. Every event of the local log
# arrives whole (its MSG is the local line byte for byte) with the header the event implies
# (PRI = facility * 8 + severity, the event's time, APP-NAME, PROCID, MSGID = the action).
# A sink that is not there costs no local line: the gateway serves, writes every event and
# records the outage in its own log; TCP events written while the listener was away arrive
# once it is up, and the end of the outage is recorded (and shipped).
set -u
. "$(dirname "$0")/gateway/fixture.sh"
lab_require_root
for tool in python3 rsyslogd; do
	command -v "$tool" >/dev/null || { echo "FAIL - missing $tool (deploy/debian-packages; test error)"; echo "0 passed, 1 failed"; exit 2; }
done
LISTENER=$SRC/tests/integration/gateway/syslog_listener.py
gw_setup
check "the fixture's gateway stops" gw_stop
POL=$LAB_DIR/policy.yaml
cat >"$POL" <<'EOF2'
version: 1
network:
  allow:
    - { host: allowed.test, ports: [443] }
EOF2

# start_gw SHIP [FACILITY]: the gateway with audit.ship (a fresh local log each time)
start_gw() {
	: >"$AUDIT"
	chmod 600 "$AUDIT"
	cat >"$GWCONF" <<EOF
version: 1
resolvers: ["$LAB_DNS_V4"]
control: {path: "$GWSOCK"}
audit: {path: "$AUDIT", ship: "$1", facility: ${2:-local4}}
limits: {peek_timeout_ms: 1500, connect_timeout_ms: 2000, dns_ttl_floor_s: 1}
EOF
	lab_spawn host gw "$GW" --config "$GWCONF"
	GW_PID=$LAB_SPAWNED_PID
	lab_wait 10 test -S "$GWSOCK" && lab_wait_listen host 15001
	WPID=$(gw_worker_pid)
}
serving() { kill -0 "$GW_PID" && [[ -S $GWSOCK && $WPID != "$GW_PID" ]]; }
# traffic: a register, an allowed HTTPS fetch, a denied one, a denied DNS name
traffic() {
	gw_register "$POL" || return 1
	run_curl https://allowed.test/ >/dev/null || return 1
	run_curl https://other.test/ >/dev/null 2>&1
	run_dig +short other.test >/dev/null
	gw_ctl unregister --id "$RUN" >/dev/null
}
# listen MODE ADDR TAG: the python3 receiver; its records in $LAB_DIR/ship-TAG.jsonl
listen() {
	OUT=$LAB_DIR/ship-$3.jsonl
	: >"$OUT"
	lab_spawn host "ship-$3" python3 "$LISTENER" "$1" "$2" "$OUT"
	lab_wait 10 grep -q listening "$OUT"
}
# shipped_match OUT FACILITY [SKIP-JQ]: every local event (but those SKIP-JQ selects) arrived,
# in order, whole, with its header; nothing invalid arrived
shipped_match() {
	python3 - "$AUDIT" "$1" "$2" "$WPID" "$(hostname)" "${3:-}" <<'PY'
import json, sys
audit, out, fac, wpid, host, skip = sys.argv[1:]
fac = int(fac)
local = [l.rstrip("\n") for l in open(audit) if l.strip()]
if skip == "down":
    local = [l for l in local if not (json.loads(l)["action"] == "audit.ship" and "failed" in json.loads(l)["reason"])]
recs = [json.loads(l) for l in open(out)]
bad = [r for r in recs if "invalid" in r]
if bad:
    sys.exit(f"invalid messages arrived: {bad[:3]}")
msgs = [r for r in recs if "msg" in r]
if [m["msg"] for m in msgs] != local:
    sys.exit(f"{len(msgs)} messages, {len(local)} local lines; first difference: "
             + next((f"{m['msg'][:120]!r} != {l[:120]!r}" for m, l in zip(msgs, local) if m["msg"] != l), "(lengths)"))
for m in msgs:
    ev = json.loads(m["msg"])
    sev = 4 if ev["type"] == "audit" else (6 if ev["allowed"] else 5)
    want = {"pri": fac * 8 + sev, "version": 1, "timestamp": ev["ts"], "hostname": host,
            "app": "warden-gateway", "procid": wpid, "msgid": ev["action"], "sd": "-", "bom": True}
    got = {k: m[k] for k in want}
    if got != want:
        sys.exit(f"header {got} != {want}")
print(f"{len(msgs)} events arrived whole")
PY
}
has_local() { jq -e -s "[.[] | select($1)] | length > 0" "$AUDIT" >/dev/null; }
has_shipped() { jq -e -s "[.[] | select(.msg) | .msg | fromjson | select($2)] | length > 0" "$1" >/dev/null; }

# --- UDP, RFC 5426 --------------------------------------------------------------------
listen udp 127.0.0.1:5514 udp
check "a UDP receiver listens on 127.0.0.1:5514" grep -q listening "$LAB_DIR/ship-udp.jsonl"
start_gw udp:127.0.0.1:5514 local4
check "the gateway starts with audit.ship udp:127.0.0.1:5514" serving
check "traffic through the gateway (register, allowed fetch, denials)" traffic
check "the gateway stops" gw_stop
check "the local log has the allowed connection" has_local '.action == "net.connect" and .allowed'
check "... and a denied name" has_local '.action == "dns.query" and (.allowed | not)'
check "UDP: every local event arrived whole, with its RFC 5424 header" shipped_match "$LAB_DIR/ship-udp.jsonl" 20
check "... a denial among them (PRI local4.notice = 165)" has_shipped "$LAB_DIR/ship-udp.jsonl" '.allowed == false'
lab_stop host ship-udp

# --- TCP, octet counting; the listener comes late ----------------------------------------
start_gw tcp:127.0.0.1:5515 authpriv
check "the gateway starts with audit.ship tcp:127.0.0.1:5515 and nobody listening" serving
check "traffic while the TCP receiver is away" traffic
check "the local log records the outage" has_local '.action == "audit.ship" and (.reason | test("failed \\(Connection refused\\)"))'
check "... and every event all the same" has_local '.action == "net.connect" and .allowed'
listen tcp 127.0.0.1:5515 tcp
check "the TCP receiver starts" grep -q listening "$LAB_DIR/ship-tcp.jsonl"
sleep 1.2 # a broken sink is tried again once a second, at the next event
check "traffic once it listens" traffic
check "the gateway stops (its last frames go first)" gw_stop
check "the local log records that shipping works again" has_local '.action == "audit.ship" and (.reason | test("works again: 0 events"))'
check "TCP: every local event arrived whole (all but the outage's start), none torn" \
	shipped_match "$LAB_DIR/ship-tcp.jsonl" 10 down
lab_stop host ship-tcp

# --- a sink that is not there -------------------------------------------------------------
start_gw "unix:$LAB_DIR/nobody.sock"
check "the gateway starts with audit.ship to a unix socket nobody has" serving
check "it serves all the same (an allowed fetch)" traffic
check "the local log has every event" has_local '.action == "net.connect" and .allowed'
check "... and says shipping failed and why" \
	has_local '.action == "audit.ship" and (.reason | test("No such file or directory"))'
check "the gateway stops" gw_stop

# --- rsyslogd, a real syslog daemon -------------------------------------------------------
mkdir -p "$LAB_DIR/rsyslog"
cat >"$LAB_DIR/rsyslog.conf" <<EOF
global(workDirectory="$LAB_DIR/rsyslog")
module(load="imudp")
input(type="imudp" address="127.0.0.1" port="5516" ruleset="warden")
template(name="fields" type="list") {
  property(name="pri") constant(value="|")
  property(name="timereported" dateFormat="rfc3339") constant(value="|")
  property(name="app-name") constant(value="|")
  property(name="procid") constant(value="|")
  property(name="msgid") constant(value="|")
  property(name="msg") constant(value="\n")
}
ruleset(name="warden") { action(type="omfile" file="$LAB_DIR/rsyslog.out" template="fields") }
EOF
lab_spawn host rsyslogd rsyslogd -n -f "$LAB_DIR/rsyslog.conf" -i "$LAB_DIR/rsyslog.pid"
check "rsyslogd listens on 127.0.0.1:5516/udp" lab_wait 10 bash -c \
	'ip netns exec "$0" ss -Hlun | grep -q "127.0.0.1:5516"' "$LAB_HOST_NS"
start_gw udp:127.0.0.1:5516 local0
check "the gateway starts with audit.ship udp:127.0.0.1:5516" serving
check "traffic" traffic
check "the gateway stops" gw_stop
rsyslog_match() {
	python3 - "$AUDIT" "$LAB_DIR/rsyslog.out" "$WPID" <<'PY'
import json, sys
audit, out, wpid = sys.argv[1:]
local = [l.rstrip("\n") for l in open(audit) if l.strip()]
got = []
for line in open(out, encoding="utf-8"):
    pri, ts, app, procid, msgid, msg = line.rstrip("\n").split("|", 5)
    got.append((int(pri), ts, app, procid, msgid, msg.lstrip("\ufeff")))
if [g[5] for g in got] != local:
    sys.exit(f"rsyslog has {len(got)} messages, the local log {len(local)} lines")
for pri, ts, app, procid, msgid, msg in got:
    ev = json.loads(msg)
    want = (16 * 8 + (6 if ev["allowed"] else 5), ev["ts"], "warden-gateway", wpid, ev["action"])
    if (pri, ts, app, procid, msgid) != want:
        sys.exit(f"{(pri, ts, app, procid, msgid)} != {want}")
print(f"rsyslogd parsed {len(got)} events")
PY
}
check "rsyslogd parsed every event as RFC 5424: facility, severity, time, app, procid, msgid, the line" \
	lab_wait 5 rsyslog_match
lab_stop host rsyslogd
check "no sanitizer report in the gateway's log" gw_log_clean
lab_finish
