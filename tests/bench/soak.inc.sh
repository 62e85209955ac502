# tests/bench/soak.inc.sh - the soak workload of tests/bench/run (sourced by it; tests/bench/soak.sh
# runs it alone): SOAK_S seconds of mixed traffic through one gateway in the lab (DNS for allowed
# names, HTTP keep-alive, new HTTP and TLS connections, raw TCP to an echo server by name, and
# denials asked for: a name outside the policy, a port outside it), paced so that the 2-core
# machine is not saturated; the gateway worker's descriptor count, RSS and the audit log's size
# sampled every SOAK_EVERY seconds. Then as many concurrent relayed connections as the
# descriptor limit lets the gateway hold (IDLE_N, capped like the idle workload), active (gw_load
# client: every connection echoes 64 KiB at once) and idle (gw_load hold). Checked at the end: every
# client attempt went as its mode expects, every allowed net.connect has its net.close, and the
# only denials in the audit log are the ones asked for. A lost DNS query is taken apart: the
# kernel's UDP counters of the run's and the gateway's namespaces (before/after), dnsperf's
# timed-out ids and, when tcpdump is installed, a capture of port 53 on the run's interface that
# says whether the query left and whether an answer came back. Not in CI (docs/benchmarks.md).

SOAK_EVERY=${SOAK_EVERY:-5}

# soak_udp NS: the namespace's UDP counters (absolute; nstat's history is not touched)
soak_udp()
{
	ip netns exec "$1" nstat -asz 2>/dev/null | awk '$1 ~ /^Udp(InDatagrams|OutDatagrams|NoPorts|InErrors|RcvbufErrors|SndbufErrors|InCsumErrors|IgnoredMulti)$/ {print $1, $2}'
}

# soak_worker SID: the gateway worker's pid in session SID (its argv[0] names it), else the
# session's last process
soak_worker()
{
	local p last=
	for p in $(pgrep -s "$1"); do
		last=$p
		[[ $(tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | head -n1) == *warden-gateway-worker ]] &&
			{ echo "$p"; return; }
	done
	echo "$last"
}

# soak_sample T0 PID FILE [PHASE]: one line of FILE (seconds since T0, descriptors, RSS KiB, audit
# log bytes and lines, phase)
soak_sample()
{
	local fds rss
	fds=$(find "/proc/$2/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	rss=$(awk '/^VmRSS/ {print $2}' "/proc/$2/status" 2>/dev/null)
	printf '%.1f\t%s\t%s\t%s\t%s\t%s\n' "$(awk -v a="$EPOCHREALTIME" -v b="$1" 'BEGIN { print a - b }')" "$fds" "${rss:-0}" \
		"$(stat -c %s "$GWAUDIT" 2>/dev/null || echo 0)" "$(wc -l <"$GWAUDIT" 2>/dev/null || echo 0)" \
		"${4:-mixed}" >>"$3"
}

m_soak()
{
	local c=$1 r=$2 d=$WORK/soak syn sid wpid t0 pids=() p i alive n=$IDLE_N in_run
	((r == 1)) || return 0
	mkdir -p "$d"
	in_run=(ip netns exec "$RUN" "${NOFILE[@]}")
	RELAY=warden GW_USE_CONF=$GWCONF_IDLE
	gw_start >"$WORK/msg" || { rec_err soak warden 1 "$(cat "$WORK/msg")"; relay_stop; return; }
	syn=$(ip netns exec "$RUN" dig +short +time=2 +tries=1 @"$H4" allowed.test A | head -n1)
	[[ $syn =~ ^[0-9.]+$ ]] || { rec_err soak warden 1 "no synthetic address: '$syn'"; relay_stop; return; }
	set_target "$syn"
	if [[ ! -e $LAB_DIR/run/wan-echo7007.pid ]]; then
		lab_spawn wan echo7007 "${NOFILE[@]}" "$GWLOAD" serve 7007
		lab_wait_listen wan 7007 || { rec_err soak warden 1 "echo server did not start"; relay_stop; return; }
	fi
	sid=$(ps -o sid= -p "$RELAY_PID" | tr -d ' ')
	wpid=$(soak_worker "$sid")
	echo "denied.test A" >"$d/denied-q.txt"
	note_cmd soak "in the run namespace, for $SOAK_S s at once: conns.py http-ka allowed.test 80 --rate 40; conns.py http allowed.test 80 --rate 15 --parallel 2; conns.py https allowed.test 443 --rate 8 --parallel 2; conns.py tcp allowed.test 7007 --rate 10 --parallel 2; conns.py deny allowed.test 81 --rate 2; dnsperf -d queries.txt -Q 40; dnsperf -d denied.txt (denied.test) -Q 2; then gw_load client SYN 7007 $n 65536 and gw_load hold SYN 7007 $n 20"
	say "soak: $SOAK_S s of mixed traffic through the gateway (worker pid $wpid)"
	printf 't_s\tfds\trss_kib\taudit_bytes\taudit_lines\tphase\n' >"$d/samples.tsv"
	soak_udp "$RUN" >"$d/udp-run-0.txt"
	soak_udp "$LAB_HOST_NS" >"$d/udp-host-0.txt"
	local cap=
	if command -v tcpdump >/dev/null; then
		ip netns exec "$RUN" tcpdump -i eth0 -nn -s 200 -U -w "$d/dns.pcap" udp port 53 \
			2>"$d/tcpdump.err" &
		cap=$!
		sleep 1
	fi
	t0=$EPOCHREALTIME
	soak_sample "$t0" "$wpid" "$d/samples.tsv" start
	"${in_run[@]}" python3 "$BENCH/conns.py" http-ka allowed.test 80 --duration "$SOAK_S" --rate 40 \
		>"$d/c-http-ka.json" 2>&1 &
	pids+=($!)
	"${in_run[@]}" python3 "$BENCH/conns.py" http allowed.test 80 --duration "$SOAK_S" --rate 15 \
		--parallel 2 >"$d/c-http.json" 2>&1 &
	pids+=($!)
	"${in_run[@]}" python3 "$BENCH/conns.py" https allowed.test 443 --duration "$SOAK_S" --rate 8 \
		--parallel 2 >"$d/c-https.json" 2>&1 &
	pids+=($!)
	"${in_run[@]}" python3 "$BENCH/conns.py" tcp allowed.test 7007 --duration "$SOAK_S" --rate 10 \
		--parallel 2 >"$d/c-tcp.json" 2>&1 &
	pids+=($!)
	"${in_run[@]}" python3 "$BENCH/conns.py" deny allowed.test 81 --duration "$SOAK_S" --rate 2 \
		>"$d/c-deny.json" 2>&1 &
	pids+=($!)
	"${in_run[@]}" dnsperf -s "$H4" -p 53 -d "$QFILE" -l "$SOAK_S" -Q 40 -c 1 -t 5 >"$d/dns.txt" 2>&1 &
	pids+=($!)
	"${in_run[@]}" dnsperf -s "$H4" -p 53 -d "$d/denied-q.txt" -l "$SOAK_S" -Q 2 -c 1 -t 5 \
		>"$d/dns-denied.txt" 2>&1 &
	pids+=($!)
	# sampled until every client is done (each stops by itself after SOAK_S s; the cap is a guard)
	for ((i = 0; i < (SOAK_S + 180) / SOAK_EVERY; i++)); do
		sleep "$SOAK_EVERY"
		soak_sample "$t0" "$wpid" "$d/samples.tsv"
		alive=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		((alive)) || break
	done
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	sleep 2
	soak_sample "$t0" "$wpid" "$d/samples.tsv" end-mixed
	soak_udp "$RUN" >"$d/udp-run-1.txt"
	soak_udp "$LAB_HOST_NS" >"$d/udp-host-1.txt"
	if [[ $cap ]]; then
		kill -INT "$cap" 2>/dev/null
		wait "$cap" 2>/dev/null
		tcpdump -nn -tt -v -r "$d/dns.pcap" >"$d/dns-pcap.txt" 2>/dev/null
	fi
	# the concurrent connections: active, then idle, sampled while they are held
	say "soak: $n concurrent active connections, then $n idle"
	"${in_run[@]}" "$GWLOAD" client "$syn" 7007 "$n" 65536 120 >"$d/active.txt" 2>&1 &
	p=$!
	for ((i = 0; i < 240; i++)); do
		kill -0 "$p" 2>/dev/null || break
		soak_sample "$t0" "$wpid" "$d/samples.tsv" active
		sleep 0.5
	done
	wait "$p"
	"${in_run[@]}" "$GWLOAD" hold "$syn" 7007 "$n" 20 >"$d/idle.txt" 2>&1 &
	p=$!
	sleep 5
	soak_sample "$t0" "$wpid" "$d/samples.tsv" idle
	wait "$p"
	sleep 3
	soak_sample "$t0" "$wpid" "$d/samples.tsv" end
	cp "$GWAUDIT" "$d/audit.jsonl"
	relay_stop
	mkdir -p "$BENCH/results"
	cp "$d/samples.tsv" "$BENCH/results/soak-$DATE.tsv"
	python3 - "$d" "$RAW" "$SOAK_S" "$n" <<'EOF'
import csv, glob, json, os, re, sys
d, raw, dur, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
out = {}
problems = []
# the clients: every attempt as its mode expects
for f in sorted(glob.glob(os.path.join(d, 'c-*.json'))):
    mode = os.path.basename(f)[2:-5]
    try:
        j = json.loads(open(f).read().strip().splitlines()[-1])
    except (ValueError, IndexError):
        problems.append(f'{mode}: no result ({open(f).read()[-200:]!r})')
        continue
    out[f'client_{mode}_ok'] = j['ok']
    out[f'client_{mode}_errors'] = j['errors']
    if j['errors'] or not j['ok']:
        problems.append(f"{mode}: {j['ok']} ok, {j['errors']} errors ({j['first_error']})")
for name, key in (('dns.txt', 'dns'), ('dns-denied.txt', 'dns_denied')):
    t = open(os.path.join(d, name)).read()
    m = re.search(r'Queries completed:\s+(\d+)', t)
    lost = re.search(r'Queries lost:\s+(\d+)', t)
    out[f'client_{key}_completed'] = int(m.group(1)) if m else 0
    out[f'client_{key}_lost'] = int(lost.group(1)) if lost else -1
    if not m or not lost or int(lost.group(1)):
        problems.append(f'{key}: completed {m and m.group(1)}, lost {lost and lost.group(1)}')
    ids = re.findall(r'timed out: msg id (\d+)', t)
    if ids:
        out[f'client_{key}_timed_out_ids'] = ' '.join(ids[:20])
    codes = dict(re.findall(r'(NOERROR|NXDOMAIN|REFUSED|SERVFAIL)\s+(\d+)', t))
    if key == 'dns' and set(codes) - {'NOERROR'}:
        problems.append(f'dns (allowed names): answers {codes}')
    if key == 'dns_denied' and 'NOERROR' in codes:
        problems.append(f'dns (denied.test): answered NOERROR {codes["NOERROR"]} times')
# the kernel's UDP counters over the mixed phase, in the run's and the gateway's namespaces
for ns in ('run', 'host'):
    try:
        a = dict(l.split() for l in open(os.path.join(d, f'udp-{ns}-0.txt')) if l.strip())
        b = dict(l.split() for l in open(os.path.join(d, f'udp-{ns}-1.txt')) if l.strip())
    except (OSError, ValueError):
        continue
    for k in sorted(b):
        out[f'{ns}_{k}'] = int(b[k]) - int(a.get(k, 0))
# the capture (tcpdump -nn -tt): per client port, each query paired with the next answer of its
# id. The gateway sends answers of one wake-up to one client as one UDP GSO packet (dnsudp.c),
# which the capture holds as one packet and tcpdump decodes as its first answer only: a query
# whose answer was in such a batch looks unanswered here. So the figures are packets: the
# queries with no answer packet of their own (pcap_unmatched) each with the next answer packet
# to the same port (its UDP length says how many answers it carried), beside the run's
# namespace's UdpInDatagrams (counted after segmentation) and dnsperf's own lost count, which is
# the verdict.
cap = os.path.join(d, 'dns-pcap.txt')
if os.path.exists(cap):
    pend, unmatched, nq, na, lines = {}, [], 0, 0, []
    # -v: a packet is a line with the time and the IP header ("length N": the IP packet's),
    # then an indented line with the addresses and the DNS message
    head = re.compile(r'^([\d.]+) IP6? .*length (\d+)\)')
    pat = re.compile(r'^\s+([\w.:]+)\.(\d+) > ([\w.:]+)\.(\d+): (\d+)')
    iplen = ''
    for l in open(cap):
        h = head.match(l)
        if h:
            iplen = h.group(2)
            continue
        m = pat.match(l)
        if not m:
            continue
        sport, dport, qid = m.group(2), m.group(4), m.group(5)
        lines.append((sport, dport, f'{l.strip()[:100]} [IP length {iplen}]'))
        if dport == '53':
            nq += 1
            key = (sport, qid)
            if key in pend:
                unmatched.append(pend[key])
            pend[key] = len(lines) - 1
        elif sport == '53':
            na += 1
            pend.pop((dport, qid), None)
    unmatched += list(pend.values())
    ctx = []
    for i in sorted(unmatched)[:5]:
        port = lines[i][0]
        nxt = next((t for sp, dp, t in lines[i + 1:] if sp == '53' and dp == port), 'none')
        ctx.append(f'{lines[i][2]} -> next answer packet: {nxt}')
    out.update(pcap_queries=nq, pcap_answer_packets=na, pcap_unmatched=len(unmatched))
    if ctx:
        out['pcap_unmatched_first'] = ' | '.join(ctx)
act = open(os.path.join(d, 'active.txt')).read()
m = re.search(r'(\d+) ok, (\d+) failed', act)
out['concurrent_active_ok'] = int(m.group(1)) if m else 0
if not m or int(m.group(2)):
    problems.append(f'concurrent active: {act.strip()[-200:]}')
idl = open(os.path.join(d, 'idle.txt')).read()
m = re.search(r'(\d+) alive, (\d+) reset', idl)
out['concurrent_idle_alive'] = int(m.group(1)) if m else 0
if not m or int(m.group(2)):
    problems.append(f'concurrent idle: {idl.strip()[-200:]}')
# the audit log: closes, denials
ev = [json.loads(l) for l in open(os.path.join(d, 'audit.jsonl')) if l.strip()]
cnt = lambda es: sum(e.get('count', 1) for e in es)
conn = [e for e in ev if e.get('action') == 'net.connect' and e.get('allowed')]
close = [e for e in ev if e.get('action') == 'net.close']
den = [e for e in ev if e.get('allowed') is False]


def is_asked(e):
    """a denial the soak asked for: DNS for denied.test, TCP to allowed.test:81; or a summary
    of such denials (`count`, `names`: written instead of single events once the run's audit
    budget is used up, docs/audit.md), whose names are only those"""
    names = set(e.get('names') or {})
    if e.get('action') == 'dns.query':
        return e.get('resource') == 'denied.test' or (names and names <= {'denied.test'})
    if e.get('action') == 'net.connect':
        return e.get('port') == 81 or (names and names <= {'allowed.test'} and
                                       e.get('port', 81) == 81)
    return False


asked = [e for e in den if is_asked(e)]
other = [e for e in den if e not in asked]
summ = [e for e in ev if 'count' in e]
out.update(audit_events=len(ev), connections=cnt(conn), closes=cnt(close),
           denials_asked=cnt(asked), denials_other=cnt(other), summary_events=len(summ))
if summ:
    out['first_summary_s'] = summ[0].get('ts', '')
if cnt(conn) != cnt(close):
    problems.append(f'{cnt(conn)} allowed net.connect but {cnt(close)} net.close')
if other:
    problems.append(f'{cnt(other)} denials not asked for, e.g. {json.dumps(other[0])[:300]}')
if not asked:
    problems.append('no denial in the audit log although denials were asked for')
actions = {}
for e in ev:
    actions[e.get('action')] = actions.get(e.get('action'), 0) + 1
# the samples: flat once warm (after the first fifth of the mixed phase, at least 30 s)
rows = list(csv.DictReader(open(os.path.join(d, 'samples.tsv')), delimiter='\t'))
warm = max(30.0, dur / 5)
mixed = [r for r in rows if r['phase'] == 'mixed' and float(r['t_s']) >= warm]
if mixed:
    fd = [int(r['fds']) for r in mixed]
    rss = [int(r['rss_kib']) for r in mixed]
    out.update(fds_warm_min=min(fd), fds_warm_max=max(fd), rss_warm_kib=rss[0],
               rss_end_kib=rss[-1], rss_max_kib=max(rss))
    a0, a1 = mixed[0], mixed[-1]
    dt = float(a1['t_s']) - float(a0['t_s'])
    if dt > 0:
        out['audit_bytes_per_min'] = round((int(a1['audit_bytes']) - int(a0['audit_bytes'])) / dt * 60)
hold = [r for r in rows if r['phase'] in ('active', 'idle')]
if hold:
    out['fds_concurrent_max'] = max(int(r['fds']) for r in hold)
    out['rss_concurrent_max_kib'] = max(int(r['rss_kib']) for r in hold)
end = [r for r in rows if r['phase'] == 'end']
if end:
    out['fds_end'] = int(end[-1]['fds'])
    out['rss_end_all_kib'] = int(end[-1]['rss_kib'])
    out['audit_bytes'] = int(end[-1]['audit_bytes'])
out['problems'] = len(problems)
with open(raw, 'a') as f:
    for k, v in out.items():
        f.write(json.dumps({'workload': 'soak', 'metric': k, 'contender': 'warden', 'round': 1,
                            'value': v, 'unit': ''}) + '\n')
    for p in problems:
        f.write(json.dumps({'workload': 'soak', 'contender': 'warden', 'round': 1,
                            'error': p}) + '\n')
print('soak: ' + json.dumps(out), file=sys.stderr)
print('soak: audit actions ' + json.dumps(actions), file=sys.stderr)
for p in problems:
    print('soak: PROBLEM: ' + p, file=sys.stderr)
EOF
}
