#!/usr/bin/env bash
# daemon_starve.sh - a member of group `warden` cannot starve the shared daemon through its
# control socket (issue 25, item 6). The daemon runs with 512 descriptors (prlimit), so that
# the attack that took ~20,000 connections at the usual limit is quick here. User B keeps
# opening control connections that send one byte and never finish their request (more than
# the per-user bound, more than the daemon has descriptors), reopening each one the daemon
# closes. Meanwhile: A's run that was live before keeps relaying (curl to a lab name from
# inside it); A's new run still gets the daemon (its run.start says mode daemon) and is
# served; B's connections past the bound are refused at once with a line that says why; the
# daemon never holds more control connections than its bound; a slow-loris connection of
# A's that sends one byte a second is closed at the request deadline, not kept alive by each
# byte (control: the same client sending its request at once is answered).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/daemon/prelude.sh"

cat >"$T/a.yaml" <<EOF
version: 1
filesystem:
  read: ["$LAB_CA"]
network:
  allow:
    - {host: allowed.test, ports: [443]}
EOF
# ctlflood.py SOCKET N SECONDS STATUS: keeps N control connections open for SECONDS, each
# having sent one byte of a request it never finishes; a connection the daemon closes is
# reopened (at most 50 a round of 100 ms), until STATUS.stop exists. STATUS gets "open O opened
# P closed C" and, once the daemon said why it closed one, that line too ("first: ...")
cat >"$T/ctlflood.py" <<'EOF'
import os, resource, select, socket, sys, time
path, n, secs, status = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 64), hard))
p = select.poll()
socks, opened, closed, first = {}, 0, 0, ""
end = time.time() + secs
while time.time() < end and not os.path.exists(status + ".stop"):
    for _ in range(50):
        if len(socks) >= n:
            break
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
            s.send(b"{")
        except OSError:  # the backlog is full (nobody accepts), or refused
            s.close()
            break
        socks[s.fileno()] = s
        p.register(s, select.POLLIN)
        opened += 1
    for fd, ev in p.poll(100):
        s = socks.pop(fd)
        p.unregister(fd)
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if data and not first:
            first = data.decode(errors="replace").splitlines()[0]
        closed += 1
        s.close()
    with open(status + ".new", "w") as f:
        f.write("open %d opened %d closed %d\n" % (len(socks), opened, closed))
        if first:
            f.write("first: %s\n" % first)
    os.replace(status + ".new", status)
EOF
# loris.py SOCKET DELAY: sends {"op":"stats"}\n one byte every DELAY seconds; prints
# "closed after K of N bytes" when the daemon closes the connection first, else its answer
cat >"$T/loris.py" <<'EOF'
import socket, sys, time
path, delay = sys.argv[1], float(sys.argv[2])
req = b'{"op":"stats"}\n'
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(30)
s.connect(path)
t0 = time.time()
for i in range(len(req)):
    try:
        s.send(req[i:i + 1], socket.MSG_NOSIGNAL)
    except OSError:
        print("closed after %d of %d bytes, %.1f s" % (i, len(req), time.time() - t0))
        sys.exit(0)
    if delay and i + 1 < len(req):
        time.sleep(delay)
data = s.recv(65536)
if not data:
    print("closed after %d of %d bytes, %.1f s" % (len(req), len(req), time.time() - t0))
else:
    print(data.decode(errors="replace").splitlines()[0])
EOF
chmod 0644 "$T/a.yaml" "$T/ctlflood.py" "$T/loris.py"

# the daemon with 512 descriptors (soft and hard: it cannot raise them)
setsid nsenter --net="/run/netns/$LAB_HOST_NS" prlimit --nofile=512:512 "$GW" \
	--config "$T/gateway.yaml" --manage-nft --control-group warden </dev/null \
	>>"$T/daemon.log" 2>&1 &
GWPID=$! # shellcheck disable=SC2034 # (daemon_stop)
check "the host's nft table is installed" in_host "$W" nft install
check "the daemon starts with 512 descriptors" daemon_ready
stats() { hostns "$GW" ctl --socket "$SOCK" stats; }
stat_of() { stats | jq -e ".$1"; }

# A's live run: its program reads a line a time from a FIFO and fetches a lab name for each
mkfifo "$T/live.in"
: >"$T/live.out"
ra -p "$T/a.yaml" -- sh -c 'while read -r x; do echo "begin $x"
	curl -sS --fail --max-time 10 --noproxy "*" --cacert "$0" https://allowed.test/ || echo "curl failed ($?)"
	echo "done $x"; done' "$LAB_CA" <"$T/live.in" >>"$T/live.out" 2>&1 &
LIVE=$!
exec 8>"$T/live.in"
# live_fetch N: the live run fetches once more; its answer
live_fetch() {
	echo "$1" >&8
	lab_wait 30 grep -q "^done $1\$" "$T/live.out" || return 1
	sed -n "/^begin $1\$/,/^done $1\$/p" "$T/live.out" | grep -Ev '^(begin|done) '
}
check_eq "control: A's live run (daemon mode) relays before the flood" \
	"hello from allowed.test" live_fetch 1
check "... it is in daemon mode" jq -e -s \
	'[.[] | select(.action == "run.start")] | length == 1 and .[0].mode == "daemon"' "$AA"

echo "# B holds as many control connections as it can, one byte each"
(as_b python3 "$T/ctlflood.py" "$SOCK" 700 60 "$T/b/status" >"$T/b/err" 2>&1) &
FLOOD=$!
b_open() { awk '/^open/ {print $2}' "$T/b/status" 2>/dev/null; }
b_under_way() { [[ $(b_open) -ge 20 ]]; }
check "B's flood is under way (it holds connections: the daemon accepted some)" \
	lab_wait 20 b_under_way
# b_held: how many control connections the daemon holds for B (root's stats list them per uid)
b_held() { stats | jq -e --argjson u "$B_UID" '[.control_users[] | select(.uid == $u) |
	.connections] | add // 0'; }
b_at_bound() { [[ $(b_held) == $(stat_of control_per_user) ]]; }
check "B reaches its per-user bound of control connections, and no more" lab_wait 20 b_at_bound
echo "# B: $(head -1 "$T/b/status"); the daemon holds $(b_held) for B"

check_eq "A's live run keeps relaying during B's flood" "hello from allowed.test" live_fetch 2
a_new() { ra -p "$T/a.yaml" -- curl -sS --fail --max-time 10 --noproxy '*' --cacert "$LAB_CA" \
	https://allowed.test/; }
check_eq "A's new run during B's flood is served" "hello from allowed.test" a_new
check "... through the daemon: its run.start says mode daemon (no silent fallback to rootless)" \
	jq -e -s '[.[] | select(.action == "run.start")] | length == 2 and .[1].mode == "daemon"' \
	"$AA"
check "B's connections past the bound are refused at once, with a line saying why" \
	lab_wait 10 grep -q '^first: .*control connections' "$T/b/status"
grep '^first: ' "$T/b/status"
check "the daemon counts the refusals" lab_match '^[1-9]' stat_of control_refused
bounded() { # the daemon's control connections right now are within its bounds
	local j
	j=$(stats) || return 2
	jq -c '{control_connections, control_max, control_per_user}' <<<"$j"
	jq -e '.control_connections <= .control_max and .control_per_user < .control_max' <<<"$j"
}
check "the daemon holds no more control connections than its bound" bounded
b_within() {
	local h p
	h=$(b_held) && p=$(stat_of control_per_user) || return 2
	((h <= p))
}
check "B still holds no more than its per-user bound" b_within
touch "$T/b/status.stop"
wait "$FLOOD"
b_gone() { [[ $(b_held) == 0 ]]; }
check "B's flood ended: the daemon holds none of B's connections" lab_wait 10 b_gone

echo "# a slow loris: one byte a second"
loris() { as_a python3 "$T/loris.py" "$SOCK" "$1"; }
check_eq "control: the same request sent at once is answered" true \
	bash -c 'as_a python3 "$0" "$1" 0 | jq .ok' "$T/loris.py" "$SOCK"
LORIS=$(loris 1)
echo "# loris: $LORIS"
check "a request sent one byte a second is closed at the request deadline, never answered" \
	grep -Eq '^closed after ([0-9]|1[0-4]) of 15 bytes' <<<"$LORIS"
check "the daemon counts it as expired" lab_match '^[1-9]' stat_of control_expired

exec 8>&-
wait "$LIVE"
LIVE_RC=$?
check "A's live run ended well" test "$LIVE_RC" -eq 0

echo "# a daemon that is there but refuses A: A's run fails loudly, never silently rootless"
daemon_stop
sed -i 's|^control: {path: \("[^"]*"\)}$|control: {path: \1, connections_per_user: 3, request_timeout_ms: 60000}|' \
	"$T/gateway.yaml"
daemon_start
check "the daemon restarts with a bound of 3 a user (and 60 s a request)" daemon_ready
bounds_now() { stats | jq -r '"\(.control_per_user) \(.control_request_ms)"'; }
check_eq "... its stats say so" "3 60000" bounds_now
(as_a python3 "$T/ctlflood.py" "$SOCK" 3 60 "$T/a/hold" >"$T/a/hold.err" 2>&1) &
HOLD=$!
a_held() { stats | jq -e --argjson u "$A_UID" '[.control_users[] | select(.uid == $u) |
	.connections] | add // 0'; }
a_at_bound() { [[ $(a_held) == 3 ]]; }
check "A holds its 3 control connections" lab_wait 20 a_at_bound
refused_run() { # A's run: 125, the daemon's reason, and no new run.start (not rootless)
	local out rc n0
	n0=$(jq -s '[.[] | select(.action == "run.start")] | length' "$AA")
	out=$(ra -p "$T/a.yaml" -- true 2>&1) && rc=0 || rc=$?
	printf '%s\n' "$out"
	[[ $rc == 125 && $out == *"refused: too many control connections"* &&
		$out == *"not falling back to rootless"* ]] &&
		jq -e -s --argjson n "$n0" '[.[] | select(.action == "run.start")] | length == $n' \
			"$AA" >/dev/null
}
check "A's run without --mode fails (125) with the daemon's reason, not rootless" refused_run
last_mode_is() { # last_mode_is MODE CMD...: CMD succeeds and A's last run.start has MODE
	local mode=$1
	shift
	"$@" && jq -e -s --arg m "$mode" 'last(.[] | select(.action == "run.start")).mode == $m' \
		"$AA"
}
check "control: with --mode rootless it runs, rootless" \
	last_mode_is rootless ra --mode rootless -p "$T/a.yaml" -- true
touch "$T/a/hold.stop"
wait "$HOLD"
a_free() { [[ $(a_held) == 0 ]]; }
check "A's held connections are gone" lab_wait 10 a_free
check "control: then A's run gets the daemon again" last_mode_is daemon ra -p "$T/a.yaml" -- true

for p in $(ours_left); do kill "$p" 2>/dev/null; done
check "the daemon is still up and answers" lab_wait 10 stats
lab_finish
