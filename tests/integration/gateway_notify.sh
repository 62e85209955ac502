#!/usr/bin/env bash
# gateway_notify.sh - warden-gateway's readiness for a service manager (Type=notify in
# deploy/warden-gateway.service): with $NOTIFY_SOCKET set, the privileged parent sends one
# READY=1 datagram, from its own pid (NotifyAccess=main), once the control socket and the
# listeners answer; the worker does not inherit the variable; a path and an abstract name both
# work; without privilege separation the worker, exec'd in the gateway's place, sends it; without
# the variable, or with one that is not an AF_UNIX address, the gateway starts as before. A
# python3 datagram listener plays systemd.
set -u
. "$(dirname "$0")/gateway/fixture.sh"
lab_require_root
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
LISTENER=$SRC/tests/integration/gateway/notify_listener.py
GW_ARGS=--manage-nft

# listen NAME: starts the listener in lab-host for socket NAME, recording to $NOTES
listen() {
	NOTES=$LAB_DIR/notify-$2.jsonl
	: >"$NOTES"
	lab_spawn host "notify-$2" python3 "$LISTENER" "$1" "$NOTES" "$GWSOCK" 15001
	NOTIFY_PID=$LAB_SPAWNED_PID
	lab_wait 10 grep -q listening "$NOTES" || { echo "FAIL - the listener did not start"; exit 1; }
}
# note JQ: the recorded datagrams satisfy JQ (jq -e over all of them)
note() { jq -e -s "$1" "$NOTES" >/dev/null; }
ready_count() { jq -s '[.[] | select(.text? and (.text | split("\n") | index("READY=1")))] | length' "$NOTES"; }
environ_has() { tr '\0' '\n' <"/proc/$1/environ" | grep -q "^NOTIFY_SOCKET="; }

# --- a socket path ----------------------------------------------------------------------
# the fixture starts the gateway itself: start the lab and the listener first, then the gateway
lab_up
RUN=wdgw-run$$ IF=wd-g$$ GWSOCK=$LAB_DIR/gw.sock AUDIT=$LAB_DIR/audit.jsonl GWCONF=$LAB_DIR/gateway.yaml
in_host "$W" nft install >/dev/null || { echo "FAIL - nft install"; exit 1; }
listen "$LAB_DIR/notify.sock" path
NOTIFY_SOCKET=$LAB_DIR/notify.sock gw_start
check "the listener got READY=1" lab_wait 10 note 'any(.[]; .text? == "READY=1\nSTATUS=serving")'
check_eq "... exactly once" 1 ready_count
check "... from the gateway's main process (its pid, uid 0)" \
	note "any(.[]; .text? == \"READY=1\nSTATUS=serving\" and .pid == $GW_PID and .uid == 0)"
check "... when the control socket already answered" note 'any(.[]; .ctl_answers == true)'
check "... and the transparent listener answered (accepted or reset: not refused)" note "any(.[]; .tcp_answers == true)" || cat "$NOTES"
check "the gateway then serves the control socket" gw_ctl stats
WORKER=$(gw_worker_pid)
check "the parent was started with NOTIFY_SOCKET (control for the next check)" environ_has "$GW_PID"
check_fails "the worker does not inherit NOTIFY_SOCKET" environ_has "$WORKER"
check "the gateway stops on SIGTERM" gw_stop
lab_stop host notify-path

# --- an abstract name -------------------------------------------------------------------
listen "@wd-notify-$$" abstract
NOTIFY_SOCKET=@wd-notify-$$ gw_start
check "an abstract NOTIFY_SOCKET gets READY=1 too" lab_wait 10 note 'any(.[]; .text? == "READY=1\nSTATUS=serving" and .ctl_answers == true)'
check "the gateway stops on SIGTERM" gw_stop
lab_stop host notify-abstract

# --- without privilege separation: the worker, exec'd in the gateway's place, says it ---
# (the launcher's embedded gateway of a rootless run waits for this datagram: docs/run.md)
listen "$LAB_DIR/notify-np.sock" noprivsep
GW_ARGS=--no-privsep NOTIFY_SOCKET=$LAB_DIR/notify-np.sock gw_start
check "without privilege separation the listener got READY=1" lab_wait 10 note 'any(.[]; .text? == "READY=1\nSTATUS=serving")'
check_eq "... exactly once" 1 ready_count
check "... from the gateway's pid (the worker runs in it)" \
	note "any(.[]; .text? == \"READY=1\nSTATUS=serving\" and .pid == $GW_PID)"
check "... when the control socket already answered" note 'any(.[]; .ctl_answers == true)'
check "the gateway stops on SIGTERM" gw_stop
lab_stop host notify-noprivsep

# --- no variable, a bad one: the gateway starts as before -------------------------------
gw_start
check "without NOTIFY_SOCKET the gateway serves" gw_ctl stats
check "the gateway stops on SIGTERM" gw_stop
NOTIFY_SOCKET=relative/notify gw_start
check "with a NOTIFY_SOCKET that is no AF_UNIX address it serves" gw_ctl stats
check "... and says so in its log" grep -q "NOTIFY_SOCKET is not an AF_UNIX path" "$LAB_DIR/log/host-gw.log"
check "the gateway stops on SIGTERM" gw_stop
check "no sanitizer report in the gateway's log" gw_log_clean
lab_finish
