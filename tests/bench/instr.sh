# tests/bench/instr.sh - the `instr` workload of tests/bench/run (sourced by it, uses its lab,
# namespaces and relay helpers): instructions per launch and per connection, which a noisy
# machine does not blur as it blurs wall time.
#
# Counter: `perf stat -e instructions:u -e instructions:k` where the machine has hardware
# counters (user and kernel instructions; a launch's whole process tree, a relay attached with
# -p for the measured phase only). Where it has none (a VM without a PMU: perf says
# "<not supported>"), valgrind's lackey tool: user-space guest instructions only, every process
# of the tree in its own log (--trace-children), no kernel figure. lackey counts a process
# when it exits, so a relay's figure per connection is (a run with N connections - the same
# run with none) / N, both runs started, warmed and stopped alike. lackey loses the
# instructions a process ran between fork and exec (no exit), and the sandboxed program itself
# (/bin/true, the same for every contender) is not counted.

INSTR_TOOL=
INSTR_DIR=$UWORK/instr
VG=(valgrind -v --tool=lackey --trace-children=yes
	"--trace-children-skip=*/true,*/newuidmap,*/newgidmap" --vgdb=no)
# valgrind copies a process's counters into a child it forks: the child's count includes its
# parent's until the fork. callgrind dumps (and zeroes) them before every fork and clone, so the
# parts add up exactly: the launches of warden run are counted so (their processes are all
# outside the sandbox). lackey's forked children (bwrap's, inside the sandbox, where callgrind
# cannot write its file) have their parent's final count taken off instead (Parent PID 0 in a
# new pid namespace: the group's exec'd process): exact where the parent only waits after its
# fork, as bwrap's does.
CG=(valgrind --tool=callgrind --trace-children=yes
	"--trace-children-skip=*/true,*/bwrap,*/newuidmap,*/newgidmap" --vgdb=no
	--dump-before=fork --dump-before=_Fork --dump-before=__libc_fork "--dump-before=*clone*"
	--dump-before=vfork "--dump-before=*spawn*" --dump-every-bb=200000)

# instr_tool: sets INSTR_TOOL to perf or lackey; 1 when neither can count
instr_tool()
{
	[[ -n $INSTR_TOOL ]] && return 0
	local o
	o=$(perf stat -x, -e instructions:u -e instructions:k -- true 2>&1 >/dev/null)
	if (($(awk -F, '$3 ~ /^instructions/ && $1 ~ /^[0-9]+$/' <<<"$o" | wc -l) == 2)); then
		INSTR_TOOL=perf
	elif valgrind --version >/dev/null 2>&1; then
		INSTR_TOOL=lackey
	else
		return 1
	fi
	mkdir -p "$INSTR_DIR" && chmod 0755 "$INSTR_DIR"
}

# instr_sum DIR: one JSON object from DIR's counts: lackey logs (vg.*: total, by program,
# processes without a count) or perf's -x, output (perf.txt: user, kernel)
instr_sum()
{
	python3 - "$1" <<'EOF'
import glob, json, os, re, sys
d = sys.argv[1]
out = {'user': 0, 'kernel': None, 'by': {}, 'uncounted': 0}
pf = os.path.join(d, 'perf.txt')
if os.path.exists(pf):
    for line in open(pf):
        f = line.strip().split(',')
        if len(f) > 2 and f[0].isdigit():
            if f[2].startswith('instructions:u'):
                out['user'] = int(f[0])
            elif f[2].startswith('instructions:k'):
                out['kernel'] = int(f[0])
procs = {}
for p in glob.glob(os.path.join(d, 'vg.*')):
    cmd, n, pid, ppid = None, None, None, None
    for line in open(p, errors='replace'):
        m = re.match(r'==(\d+)== Command: (\S+)', line)
        if m and cmd is None:
            pid, cmd = int(m.group(1)), os.path.basename(m.group(2))
        m = re.match(r'==\d+== Parent PID: (\d+)', line)
        if m and ppid is None:
            ppid = int(m.group(1))
        m = re.match(r'==\d+==\s+guest instrs:\s+([0-9,]+)$', line.rstrip())
        if m:
            n = int(m.group(1).replace(',', ''))
    if n is None:
        out['uncounted'] += 1
        continue
    procs[p] = {'cmd': cmd or 'forked', 'n': n, 'pid': pid, 'ppid': ppid}
# a forked child (the same command as its parent): its parent's count taken off
for q in procs.values():
    # (only a new pid namespace's init, ppid 0: bwrap's; pids of other namespaces collide)
    par = [r for r in procs.values() if r is not q and r['cmd'] == q['cmd'] and
           q['ppid'] == 0 and r['ppid'] != 0]
    q['own'] = max(0, q['n'] - par[0]['n']) if len(par) == 1 else q['n']
for q in procs.values():
    out['user'] += q['own']
    out['by'][q['cmd']] = out['by'].get(q['cmd'], 0) + q['own']
# callgrind: every dump's totals (parts split at each fork and clone)
for p in glob.glob(os.path.join(d, 'cg.*')):
    cmd, n = None, None
    for line in open(p, errors='replace'):
        if line.startswith('cmd:') and cmd is None:
            w = line[4:].split()
            cmd = os.path.basename(w[0]) if w else '?'
        elif line.startswith('totals:'):
            n = int(line.split()[1])
    if n is None:
        out['uncounted'] += 1
        continue
    cmd = cmd or 'forked'
    out['user'] += n
    out['by'][cmd] = out['by'].get(cmd, 0) + n
print(json.dumps(out))
EOF
}

# instr_rec WORKLOAD METRIC_PREFIX CONTENDER JSON DIVISOR: records user (and kernel) instructions
# per unit, and (lackey) the share of each program
instr_rec()
{
	local wl=$1 m=$2 c=$3 j=$4 n=$5 k v
	rec "$wl" "${m}_user" "$c" 1 "$(jq -r --argjson n "$n" '.user / $n | floor' <<<"$j")" instructions
	v=$(jq -r --argjson n "$n" 'if .kernel == null then "" else .kernel / $n | floor end' <<<"$j")
	[[ -n $v ]] && rec "$wl" "${m}_kernel" "$c" 1 "$v" instructions
	for k in $(jq -r '.by | keys[]' <<<"$j"); do
		[[ $k =~ ^[A-Za-z0-9._-]+$ ]] || continue
		rec "$wl" "${m}_by_$k" "$c" 1 \
			"$(jq -r --arg k "$k" --argjson n "$n" '.by[$k] / $n | floor' <<<"$j")" instructions
	done
}

# --- per launch --------------------------------------------------------------------
INSTR_LAUNCHES=${INSTR_LAUNCHES:-3}

# instr_launch CONTENDER: INSTR_LAUNCHES counted launches; the median launch recorded (instr
# launch_*). lackey writes a log per process, also from the processes bwrap forks inside the
# sandbox: the launches here get a folder they may write (the policy's filesystem.write, bare
# bwrap's --bind), which is the only difference from launch_cmd's launches.
instr_launch()
{
	local c=$1 i d=$INSTR_DIR/launch-$1 lcmd js=() pre pol minimal=$SRC/deploy/examples/minimal.yaml
	mkdir -p "$d" && chmod 0777 "$d"
	pol=$minimal
	if [[ $c == bwrap-* ]]; then
		# the printed lines are counted with a folder they may write (the in-sandbox processes
		# bwrap forks write their counts there): minimal.yaml + filesystem.write DIR
		pol=$d/policy.yaml
		{
			grep -v '^#' "$minimal"
			printf 'filesystem:\n  write: ["%s"]\n' "$d"
		} >"$pol"
		chmod 0644 "$pol"
	fi
	case $c in
	warden-daemon) lcmd="$W run -q --gateway $GWSOCK -p $pol -- /bin/true" ;;
	warden-embedded | warden-rootless) lcmd="$W run -q -p $pol -- /bin/true" ;;
	bwrap) lcmd="bwrap --unshare-all --ro-bind / / --bind $d $d true" ;;
	bwrap-rootless)
		in_host_user env TMPDIR="$UWORK" "$W" run -q -p "$pol" --print-bwrap -- /bin/true \
			</dev/null >"$d/bwrap-line" 2>"$d/err" ||
			{ rec_err instr "$c" 1 "--print-bwrap: $(tail -n 2 "$d/err" | tr '\n' ' ')"; return; }
		lcmd=$(cat "$d/bwrap-line")
		;;
	bwrap-root)
		in_host env TMPDIR="$UWORK" "$W" run -q -p "$pol" --print-bwrap -- /bin/true \
			</dev/null >"$d/bwrap-line" 2>"$d/err" ||
			{ rec_err instr "$c" 1 "--print-bwrap: $(tail -n 2 "$d/err" | tr '\n' ' ')"; return; }
		lcmd=$(cat "$d/bwrap-line")
		;;
	esac
	# lackey: warden's own bwrap is not traced (inside the sandbox a process's log has nowhere
	# to go, and valgrind 3.19 has no seccomp(2)): the bwrap lines it builds are counted apart
	# (bwrap-root, bwrap-rootless: `warden run --print-bwrap`)
	local vg=("${VG[@]}") log="--log-file=$d/vg.\$i.%p.%n"
	[[ $c == warden-* ]] && vg=("${CG[@]}") log="--callgrind-out-file=$d/cg.\$i.%p"
	if [[ $c == bwrap-root* ]]; then
		note_cmd "instr/launch/$c" "$INSTR_TOOL: the line \`warden run -q -p minimal.yaml+write DIR --print-bwrap -- /bin/true\` prints ($(wc -w <"$d/bwrap-line") words; as ${c#bwrap-})"
	else
		note_cmd "instr/launch/$c" "$INSTR_TOOL: ${lcmd//$d/DIR}"
	fi
	for ((i = 1; i <= INSTR_LAUNCHES; i++)); do
		if [[ $INSTR_TOOL == perf ]]; then
			pre="perf stat -x, -o $d/perf.txt -e instructions:u -e instructions:k --"
		else
			pre="${vg[*]@Q} ${log//\$i/$i}"
		fi
		rm -f "$d/perf.txt"
		case $c in
		bwrap-root)
			# (the counter wraps the line's bwrap, after its setpriv to the sandbox user)
			in_host env WARDEN_AUDIT_LOG="$LAUNCH_AUDIT" WARDEN_GATEWAY_BIN="$GW" \
				bash -c "${lcmd/\/usr\/bin\/bwrap /$pre /usr/bin/bwrap }" >/dev/null 2>"$d/err" </dev/null
			;;
		warden-rootless | bwrap-rootless)
			# as the user; the printed line through bash (its descriptors are redirections)
			in_host_user env WARDEN_AUDIT_LOG="$UWORK/launch-audit.jsonl" WARDEN_GATEWAY_BIN="$GW" \
				bash -c "$pre $lcmd" >/dev/null 2>"$d/err" </dev/null
			;;
		*)
			in_host env WARDEN_AUDIT_LOG="$LAUNCH_AUDIT" WARDEN_GATEWAY_BIN="$GW" \
				bash -c "$pre $lcmd" >/dev/null 2>"$d/err" </dev/null
			;;
		esac || {
			rec_err instr "$c" 1 "counted launch $i failed: $(tail -n 3 "$d/err" | tr '\n' ' ') $(cat "$d"/vg."$i".* 2>/dev/null | grep -v '^==' | head -n 3 | tr '\n' ' ')"
			return
		}
		mkdir -p "$d/$i"
		mv "$d"/vg."$i".* "$d"/cg."$i".* "$d/perf.txt" "$d/$i/" 2>/dev/null
		js+=("$(instr_sum "$d/$i")")
	done
	# the launch with the median user count
	local j
	j=$(printf '%s\n' "${js[@]}" | jq -s 'sort_by(.user) | .[length / 2 | floor]')
	instr_rec instr launch "$c" "$j" 1
}

# --- per connection / query / daemon launch -----------------------------------------
INSTR_CONNS=${INSTR_CONNS:-200}
INSTR_DNS_PASSES=${INSTR_DNS_PASSES:-4}

# instr_server_start CONTENDER KIND: the relay for KIND (http, tls, dns, launch) on lab-host,
# under valgrind in lackey mode; LAB_SPAWNED_PID its pid
instr_server_start()
{
	local c=$1 kind=$2 d=$3 pre=() wl=conn
	[[ $kind == tls ]] && wl=tls
	# (the pid first: a start that fails half-way is stopped all the same)
	INSTR_PID=
	[[ $INSTR_TOOL == lackey ]] && pre=("${VG[@]}" --log-file="$d/vg.%p.%n")
	# BENCH_INSTR_CALLGRIND=1: callgrind in lackey's place, for a profile of where a unit goes
	# (callgrind_annotate --inclusive=yes on the N run's cg.* against the warm-up-only run's)
	[[ $INSTR_TOOL == lackey && -n ${BENCH_INSTR_CALLGRIND:-} ]] &&
		pre=(valgrind --tool=callgrind --trace-children=yes --vgdb=no --dump-before=fork
			--dump-before=_Fork --dump-before=__libc_fork "--dump-before=*clone*"
			--callgrind-out-file="$d/cg.%p")
	set_target "$TARGET"
	case $c in
	warden)
		rm -f "$GWSOCK"
		lab_spawn host instr-relay "${NOFILE[@]}" "${pre[@]}" "$GW" --config "$GWCONF"
		INSTR_PID=$LAB_SPAWNED_PID
		lab_wait 300 test -S "$GWSOCK" && lab_wait 300 ip netns exec "$LAB_HOST_NS" \
			bash -c 'ss -Hlnt "( sport = :15001 )" | grep -q .' || { echo "gateway did not start"; return 1; }
		[[ $kind == launch ]] && return 0
		"$GW" ctl --socket "$GWSOCK" register --id bench --if "$IF" --host-v4 "$H4" \
			--sandbox-v4 "$S4" --policy "$POLICY" >/dev/null 2>"$d/ctl.err" ||
			{ echo "register failed: $(cat "$d/ctl.err")"; return 1; }
		local syn
		syn=$(ip netns exec "$RUN" dig +short +time=30 +tries=1 @"$H4" allowed.test A | head -n1)
		[[ $syn =~ ^[0-9.]+$ ]] || { echo "no synthetic address for allowed.test: '$syn'"; return 1; }
		set_target "$syn"
		;;
	haproxy)
		conf_haproxy "$(backend_port "$wl")" "$wl" >"$d/haproxy.cfg"
		lab_spawn host instr-relay "${NOFILE[@]}" "${pre[@]}" haproxy -db -f "$d/haproxy.cfg"
		INSTR_PID=$LAB_SPAWNED_PID
		lab_wait 300 ip netns exec "$LAB_HOST_NS" bash -c 'ss -Hlnt "( sport = :15001 )" | grep -q .' ||
			{ echo "haproxy did not start"; return 1; }
		;;
	dnsmasq)
		lab_spawn host instr-relay "${pre[@]}" dnsmasq -k --conf-file=/dev/null --port=15053 \
			--no-resolv --no-hosts --server="$LAB_DNS_V4" --cache-size=10000 --min-cache-ttl=3600 \
			--pid-file="$d/dnsmasq.pid"
		INSTR_PID=$LAB_SPAWNED_PID
		lab_wait 300 ip netns exec "$LAB_HOST_NS" bash -c 'ss -Hlnu "( sport = :15053 )" | grep -q .' ||
			{ echo "dnsmasq did not start"; return 1; }
		;;
	esac
	return 0
}

# instr_server_stop: SIGTERM to the relay's process group, then waits (up to 300 s: lackey
# writes its counts as each process exits)
instr_server_stop()
{
	local pid=$INSTR_PID i
	[[ -n $pid ]] || return 0
	kill -TERM -- "-$pid" 2>/dev/null
	for ((i = 0; i < 3000; i++)); do
		pgrep -g "$pid" >/dev/null || break
		sleep 0.1
	done
	lab_stop host instr-relay
	INSTR_PID=
	set_target "$TARGET"
}

# instr_phase KIND N: what the client does N times (N=0: the warm-up only), in the run
# namespace; 1 when an attempt failed
instr_phase()
{
	local kind=$1 n=$2 out
	case $kind in
	http | tls)
		local mode=http port=80
		[[ $kind == tls ]] && mode=https port=443
		out=$(ip netns exec "$RUN" python3 "$BENCH/conns.py" "$mode" allowed.test "$port" \
			--count 1) || { echo "warm-up: $out"; return 1; }
		((n)) || return 0
		out=$(ip netns exec "$RUN" python3 "$BENCH/conns.py" "$mode" allowed.test "$port" \
			--count "$n" --parallel 4) || { echo "$out"; return 1; }
		;;
	dns)
		out=$(ip netns exec "$RUN" dnsperf -s "$H4" -p 53 -d "$QFILE" -n 1 -c 1 -q 4 -t 30 2>&1)
		((n)) || return 0
		out=$(ip netns exec "$RUN" dnsperf -s "$H4" -p 53 -d "$QFILE" -n "$n" -c 1 -q 4 -t 30 2>&1)
		grep -Eq '^ *Queries lost: *0 ' <<<"$out" || { echo "dnsperf: $(grep -E 'lost|completed' <<<"$out")"; return 1; }
		;;
	launch)
		local i minimal=$SRC/deploy/examples/minimal.yaml
		for ((i = 0; i < n; i++)); do
			in_host env WARDEN_AUDIT_LOG="$LAUNCH_AUDIT" "$W" run -q --gateway "$GWSOCK" \
				-p "$minimal" -- /bin/true || { echo "launch $i failed"; return 1; }
		done
		;;
	esac
	return 0
}

# instr_served CONTENDER KIND N: the relay's instructions per unit of KIND (a connection, a DNS
# query, a daemon-served launch), recorded as instr KIND_*
instr_served()
{
	local c=$1 kind=$2 n=$3 d0=$INSTR_DIR/$1-$2-0 d1=$INSTR_DIR/$1-$2-$3 units=$3 msg j0 j1
	[[ $kind == dns ]] && units=$((n * $(wc -l <"$QFILE")))
	mkdir -p "$d0" "$d1"
	# (callgrind writes when a process exits: the worker then runs as its own user)
	[[ -n ${BENCH_INSTR_CALLGRIND:-} ]] && chmod 0777 "$d0" "$d1"
	case $kind in
	http) note_cmd "instr/http" "$INSTR_TOOL: python3 tests/bench/conns.py http allowed.test 80 --count $n --parallel 4 (after 1 warm-up connection)" ;;
	tls) note_cmd "instr/tls" "$INSTR_TOOL: python3 tests/bench/conns.py https allowed.test 443 --count $n --parallel 4 (after 1 warm-up connection)" ;;
	dns) note_cmd "instr/dns" "$INSTR_TOOL: dnsperf -s $H4 -p 53 -d queries.txt -n $n -c 1 -q 4 -t 30 (after one pass to warm the cache)" ;;
	launch) note_cmd "instr/daemon-launch" "$INSTR_TOOL on the running gateway: $n × warden run -q --gateway gw.sock -p deploy/examples/minimal.yaml -- /bin/true" ;;
	esac
	if [[ $INSTR_TOOL == perf ]]; then
		INSTR_PID=
		if ! instr_server_start "$c" "$kind" "$d1" >"$WORK/msg" || ! instr_phase "$kind" 0 >>"$WORK/msg"; then
			instr_server_stop
			rec_err instr "$c" 1 "$kind: $(cat "$WORK/msg")"
			return
		fi
		local pids
		pids=$(pgrep -g "$INSTR_PID" | paste -sd,)
		perf stat -x, -o "$d1/perf.txt" -e instructions:u -e instructions:k -p "$pids" &
		local ppid=$!
		sleep 0.5
		msg=$(instr_phase "$kind" "$n")
		local prc=$?
		kill -INT "$ppid"
		wait "$ppid"
		instr_server_stop
		((prc == 0)) || { rec_err instr "$c" 1 "$kind: $msg"; return; }
		instr_rec instr "$kind" "$c" "$(instr_sum "$d1")" "$units"
		return
	fi
	# lackey: a run with the warm-up only, then one with N more
	local d k
	for k in 0 "$n"; do
		d=$INSTR_DIR/$c-$kind-$k
		INSTR_PID=
		# (callgrind makes its file as root when the worker starts, and cannot open it again
		# once the worker is its own user: the empty file goes, the worker makes its own)
		if ! instr_server_start "$c" "$kind" "$d" >"$WORK/msg" ||
			! { [[ -z ${BENCH_INSTR_CALLGRIND:-} ]] || find "$d" -name 'cg.*' -size 0 -delete; } ||
			! instr_phase "$kind" "$k" >>"$WORK/msg"; then
			instr_server_stop
			rec_err instr "$c" 1 "$kind ($k): $(cat "$WORK/msg")"
			return
		fi
		instr_server_stop
	done
	j0=$(instr_sum "$d0")
	j1=$(instr_sum "$d1")
	if (($(jq .uncounted <<<"$j1") != $(jq .uncounted <<<"$j0"))); then
		rec_err instr "$c" 1 "$kind: a relay process ended without its count (killed?)"
		return
	fi
	instr_rec instr "$kind" "$c" "$(jq -n --argjson a "$j0" --argjson b "$j1" '{user: ($b.user - $a.user),
		kernel: null, by: ($b.by | with_entries(.value -= ($a.by[.key] // 0)))}')" "$units"
}

# m_instr CONTENDER ROUND: (one pass; rounds add nothing to a count)
m_instr()
{
	local c=$1 r=$2
	((r == 1)) || return 0
	instr_tool || { rec_err instr "$c" 1 "neither perf with hardware counters nor valgrind"; return; }
	case $c in
	warden-embedded | warden-rootless | bwrap-root | bwrap-rootless | bwrap) instr_launch "$c" ;;
	warden-daemon)
		RELAY=warden
		gw_start noreg >"$WORK/msg" || { relay_stop; rec_err instr "$c" 1 "$(cat "$WORK/msg")"; return; }
		instr_launch "$c"
		relay_stop
		instr_served warden launch "$INSTR_LAUNCHES"
		;;
	warden)
		# BENCH_INSTR_KINDS="dns": only those of http, tls, dns
		[[ " ${BENCH_INSTR_KINDS:-http tls dns} " == *" http "* ]] &&
			instr_served warden http "$INSTR_CONNS"
		[[ " ${BENCH_INSTR_KINDS:-http tls dns} " == *" tls "* ]] &&
			instr_served warden tls "$INSTR_CONNS"
		[[ " ${BENCH_INSTR_KINDS:-http tls dns} " == *" dns "* ]] &&
			instr_served warden dns "$INSTR_DNS_PASSES"
		;;
	haproxy)
		instr_served haproxy http "$INSTR_CONNS"
		instr_served haproxy tls "$INSTR_CONNS"
		;;
	dnsmasq) instr_served dnsmasq dns "$INSTR_DNS_PASSES" ;;
	esac
	# BENCH_KEEP_INSTR=DIR keeps the counters' files (logs, callgrind parts) for a look
	[[ -n ${BENCH_KEEP_INSTR:-} ]] && mkdir -p "$BENCH_KEEP_INSTR" && cp -a "$INSTR_DIR/." "$BENCH_KEEP_INSTR/"
	return 0
}
