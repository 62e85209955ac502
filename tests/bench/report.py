#!/usr/bin/env python3
"""report.py - turns the harness's raw measurements into the JSON result file and the Markdown tables of docs/benchmarks.md."""
import argparse
import json
import statistics
import sys

# metric -> (title, higher_is_better, reference contenders for pair-by-pair ratios)
METRICS = {
    ('bulk', 'gbps'): ('bulk TCP (iperf3), Gbit/s', True, ['direct', 'haproxy', 'run-root']),
    ('bulk', 'cpu_s_per_gb'): ('relay CPU seconds per GB (user+sys)', False, ['haproxy']),
    ('conn', 'new_conn_per_s'): ('new HTTP connections/s (wrk -c32, Connection: close)', True,
                                 ['direct', 'haproxy', 'sniproxy', 'run-root']),
    ('latency', 'mean_us'): ('one-connection request latency, mean µs (wrk -c1)', False,
                             ['direct', 'haproxy', 'run-root']),
    ('latency', 'p50_us'): ('one-connection request latency, p50 µs (wrk -c1)', False,
                            ['direct', 'haproxy', 'run-root']),
    ('latency', 'p99_us'): ('one-connection request latency, p99 µs (wrk -c1)', False,
                            ['direct', 'haproxy', 'run-root']),
    ('tls', 'new_tls_per_s'): ('new TLS connections/s, full handshakes (wrk -c32 https)', True,
                               ['direct', 'haproxy']),
    ('dns', 'qps'): ('DNS queries/s, allowed names (dnsperf -c4 -q200)', True, ['dnsmasq']),
    ('dns', 'mean_latency_us'): ('DNS mean latency µs', False, ['dnsmasq']),
    ('launch', 'median_ms'): ('launch `... true`, ms (hyperfine median per round)', False,
                              ['bwrap', 'bwrap-rootless', 'firejail']),
    ('seccomp', 'launch_ms'): ('seccomp filter: `warden run -- /bin/true`, ms (hyperfine median, '
                               'running gateway)', False, ['warden-noseccomp']),
    ('seccomp', 'git_ms'): ('seccomp filter: `warden run -- git status` in a generated tree '
                            '(`--seccomp-files`, read grant), ms (hyperfine median)', False,
                            ['warden-noseccomp']),
    ('mcp', 'start_ms'): ('MCP server start until `initialize` answers (server-everything, SDK '
                          'client), ms (median of `--launch-runs` starts)', False, ['mcp-bare']),
    ('idle', 'bytes_per_conn'): ('relay memory per idle relayed connection, bytes '
                                 '(worker RSS growth / connections)', False, ['haproxy']),
}
ORDER = ['direct', 'warden', 'haproxy', 'sniproxy', 'nginx', 'run-root', 'run-rootless',
         'dnsmasq', 'warden-daemon', 'warden-embedded', 'warden-rootless', 'bwrap-root', 'bwrap-rootless',
         'bwrap', 'unshare', 'firejail', 'warden-seccomp', 'warden-noseccomp',
         'warden-userns', 'mcp-bare', 'mcp-embedded', 'mcp-daemon']
NAMES = {
    'direct': 'direct (kernel forwarding)', 'warden': '**warden-gateway**',
    'haproxy': 'HAProxy 2.6 tcp+splice', 'sniproxy': 'sniproxy 0.6', 'nginx': 'nginx stream',
    'dnsmasq': 'dnsmasq (cache)', 'warden-daemon': '**warden run** (running gateway)',
    'warden-embedded': '**warden run** (embedded gateway)', 'bwrap': 'bwrap --unshare-all',
    'run-root': '**warden run** root mode (client in the sandbox)',
    'run-rootless': '**warden run** rootless (client in the sandbox)',
    'warden-rootless': '**warden run** rootless (as a user)',
    'bwrap-rootless': 'its bwrap line (`--print-bwrap`, as the user)',
    'bwrap-root': 'the root mode\'s bwrap line (`--print-bwrap`, as root)',
    'unshare': 'unshare -n', 'firejail': 'firejail --net=none',
    'warden-seccomp': '**warden run**, seccomp filter (default)',
    'warden-noseccomp': 'warden run, no filter (WARDEN_UNSAFE_NO_SECCOMP=1)',
    'warden-userns': '**warden run**, sandbox.allow: [userns]',
    'mcp-bare': 'bare `node server-everything stdio`',
    'mcp-embedded': '**warden run** (root, embedded gateway) -- node ...',
    'mcp-daemon': '**warden run** (running gateway) -- node ...',
}


def fmt(v):
    if v is None:
        return '–'
    a = abs(v)
    if a >= 1000:
        return f'{v:,.0f}'
    if a >= 100:
        return f'{v:.0f}'
    if a >= 10:
        return f'{v:.1f}'
    return f'{v:.2f}'


def load(path):
    rows, errors = [], []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            o = json.loads(line)
            (errors if 'error' in o else rows).append(o)
    return rows, errors


def series(rows, wl, metric):
    """contender -> {round: value}"""
    out = {}
    for o in rows:
        if o['workload'] == wl and o['metric'] == metric:
            out.setdefault(o['contender'], {})[o['round']] = o['value']
    return out


def summarize(rows):
    res = {}
    for (wl, metric), (title, higher, refs) in METRICS.items():
        s = series(rows, wl, metric)
        if not s:
            continue
        ent = {'title': title, 'higher_is_better': higher, 'contenders': {}}
        for c, byr in s.items():
            vals = [byr[r] for r in sorted(byr)]
            d = {'values': vals, 'median': statistics.median(vals), 'min': min(vals),
                 'max': max(vals), 'ratios': {}}
            for ref in refs:
                if ref == c or ref not in s:
                    continue
                pairs = [byr[r] / s[ref][r] for r in byr if r in s[ref] and s[ref][r]]
                if pairs:
                    d['ratios'][ref] = round(statistics.median(pairs), 3)
            ent['contenders'][c] = d
        res[f'{wl}.{metric}'] = ent
    return res


def med(res, key, c):
    try:
        return res[key]['contenders'][c]['median']
    except KeyError:
        return None


def ratio(res, key, c, ref):
    try:
        return res[key]['contenders'][c]['ratios'][ref]
    except KeyError:
        return None


def instr(rows, metric, c):
    """one instruction count of the instr workload, or None"""
    for o in rows:
        if o['workload'] == 'instr' and o['metric'] == metric and o['contender'] == c:
            return o['value']
    return None


def targets(res, rows):
    """The goals of issues 33 and 6, evaluated from this run: (issue, target, wanted, measured
    figures, value, holds)."""
    out = []

    def add(issue, name, target, value, ok, figures=''):
        out.append({'issue': issue, 'target': name, 'wanted': target, 'figures': figures,
                    'measured': None if value is None else round(value, 3),
                    'holds': None if value is None else bool(ok(value))})

    def pair(key, c, ref, unit):
        a, b = med(res, key, c), med(res, key, ref)
        return '' if a is None or b is None else f'{fmt(a)} vs {fmt(b)} {unit}'

    add(33, '`warden run -- true`, embedded gateway (root) vs bare `bwrap --unshare-all`', '≤ 2×',
        ratio(res, 'launch.median_ms', 'warden-embedded', 'bwrap'), lambda v: v <= 2,
        pair('launch.median_ms', 'warden-embedded', 'bwrap', 'ms'))
    add(33, 'same, running gateway (daemon) vs bare bwrap', '≤ 1.5×',
        ratio(res, 'launch.median_ms', 'warden-daemon', 'bwrap'), lambda v: v <= 1.5,
        pair('launch.median_ms', 'warden-daemon', 'bwrap', 'ms'))
    add(33, 'same, rootless vs the bwrap line it builds', '≤ 1.25×',
        ratio(res, 'launch.median_ms', 'warden-rootless', 'bwrap-rootless'), lambda v: v <= 1.25,
        pair('launch.median_ms', 'warden-rootless', 'bwrap-rootless', 'ms'))
    for c, what in (('mcp-embedded', 'embedded gateway'), ('mcp-daemon', 'running gateway')):
        a, b = med(res, 'mcp.start_ms', c), med(res, 'mcp.start_ms', 'mcp-bare')
        add(33, f'MCP server start until `initialize` answers, added by warden run ({what})',
            '≤ +15 ms', None if None in (a, b) else a - b, lambda v: v <= 15,
            pair('mcp.start_ms', c, 'mcp-bare', 'ms'))
    add(33, 'new HTTP connections/s vs HAProxy', '≥ 1.1×',
        ratio(res, 'conn.new_conn_per_s', 'warden', 'haproxy'), lambda v: v >= 1.10,
        pair('conn.new_conn_per_s', 'warden', 'haproxy', 'conn/s'))
    add(33, 'new TLS connections/s (SNI checked) vs direct', '≥ 0.9×',
        ratio(res, 'tls.new_tls_per_s', 'warden', 'direct'), lambda v: v >= 0.90,
        pair('tls.new_tls_per_s', 'warden', 'direct', 'conn/s'))
    d, w, h = (med(res, 'latency.mean_us', c) for c in ('direct', 'warden', 'haproxy'))
    added = (w - d) / (h - d) if None not in (d, w, h) and h != d else None
    add(33, 'one-connection latency added over direct, vs HAProxy\'s added latency', '≤ 0.8×',
        added, lambda v: v <= 0.8, '' if added is None else
        f'+{fmt(w - d)} µs vs HAProxy +{fmt(h - d)} µs (direct {fmt(d)} µs)')
    add(33, 'DNS queries/s (allowed names) vs dnsmasq', '≥ 2×',
        ratio(res, 'dns.qps', 'warden', 'dnsmasq'), lambda v: v >= 2,
        pair('dns.qps', 'warden', 'dnsmasq', 'queries/s'))
    add(33, 'bulk Gbit/s vs direct', '≥ 0.8×', ratio(res, 'bulk.gbps', 'warden', 'direct'),
        lambda v: v >= 0.8, pair('bulk.gbps', 'warden', 'direct', 'Gbit/s'))
    add(6, 'bulk Gbit/s vs HAProxy splice', '≥ 1.10×', ratio(res, 'bulk.gbps', 'warden', 'haproxy'),
        lambda v: v >= 1.10, pair('bulk.gbps', 'warden', 'haproxy', 'Gbit/s'))
    add(6, 'relay CPU per GB vs HAProxy splice', '≤ 0.90×',
        ratio(res, 'bulk.cpu_s_per_gb', 'warden', 'haproxy'), lambda v: v <= 0.90,
        pair('bulk.cpu_s_per_gb', 'warden', 'haproxy', 'CPU-s/GB'))
    add(6, 'new HTTP connections/s vs sniproxy', '≥ 5×',
        ratio(res, 'conn.new_conn_per_s', 'warden', 'sniproxy'), lambda v: v >= 5,
        pair('conn.new_conn_per_s', 'warden', 'sniproxy', 'conn/s'))
    add(6, 'rootless `warden run -- true` vs firejail --net=none', '< 1×',
        ratio(res, 'launch.median_ms', 'warden-rootless', 'firejail'), lambda v: v < 1,
        pair('launch.median_ms', 'warden-rootless', 'firejail', 'ms'))
    sc = {o['metric']: o['value'] for o in rows if o['workload'] == 'scale'}
    last = max((int(k[3:].split('_')[0]) for k in sc if k.startswith('run') and
                k.endswith('_total_ms')), default=None)
    v = None
    if last and 'run1_total_ms' in sc and sc['run1_total_ms']:
        v = sc[f'run{last}_total_ms'] / sc['run1_total_ms']
    add(6, f'registering run {last or 1000} vs run 1', '≤ 1.2×', v, lambda x: x <= 1.2,
        '' if v is None else f"{fmt(sc[f'run{last}_total_ms'])} vs {fmt(sc['run1_total_ms'])} ms")
    add(6, 'gateway memory per idle connection (bytes)', '≤ 2048 (2 KiB) user space',
        med(res, 'idle.bytes_per_conn', 'warden'), lambda v: v <= 2048)
    return out


def markdown(meta, res, rows, errors, tg):
    L = []
    m = meta['machine']
    L.append(f"Run {meta['date']} (commit {meta.get('commit') or '?'}), "
             f"`tests/bench/run {meta['argv']}`: {meta['rounds']} rounds of "
             f"{meta['duration_s']} s per contender and workload, contenders alternating "
             f"within each round.")
    L.append('')
    L.append(f"Machine: {m['nproc']} CPUs ({m['cpu']}), kernel {m['kernel']}, "
             f"{m['memory']} RAM; no CPU pinning (client, relay and server share the "
             f"{m['nproc']} CPUs). Tools: {meta['versions']}.")
    L.append('')
    L.append('Ratios are medians of the per-round ratios (round *r* of a contender over round '
             '*r* of the reference), so slow drift of the shared machine cancels out.')
    L.append('')
    measured = sorted({o['contender'] for o in rows}, key=lambda c: ORDER.index(c)
                      if c in ORDER else 99)
    failed = sorted({e['contender'] for e in errors} - set(measured))
    L.append('Measured: ' + ', '.join(NAMES.get(c, c) for c in measured) + '.')
    if errors:
        L.append('')
        L.append('Failures in this run (the harness went on with the others):')
        L.append('')
        seen = set()
        for e in errors:
            k = (e['workload'], e['contender'], e['error'][:160])
            if k in seen:
                continue
            seen.add(k)
            L.append(f"- {e['workload']} / {e['contender']} (round {e['round']}): "
                     f"{e['error'][:300]}")
        if failed:
            L.append('')
            L.append('Not measured at all: ' + ', '.join(failed) + '.')
    L.append('')
    for key, ent in res.items():
        refs = METRICS[tuple(key.split('.'))][2]
        refs = [r for r in refs if r in ent['contenders']]
        unit = next((o['unit'] for o in rows if f"{o['workload']}.{o['metric']}" == key), '')
        L.append(f"### {ent['title']}")
        L.append('')
        hdr = ['contender', f'median ({unit})', 'min', 'max'] + [f'× {r}' for r in refs]
        L.append('| ' + ' | '.join(hdr) + ' |')
        L.append('|' + '---|' * len(hdr))
        cs = sorted(ent['contenders'], key=lambda c: ORDER.index(c) if c in ORDER else 99)
        for c in cs:
            d = ent['contenders'][c]
            cells = [NAMES.get(c, c), fmt(d['median']), fmt(d['min']), fmt(d['max'])]
            cells += [fmt(d['ratios'].get(r)) if r != c else '1' for r in refs]
            L.append('| ' + ' | '.join(cells) + ' |')
        L.append('')
    stg = [o for o in rows if o['workload'] == 'launch' and o['metric'].startswith('stage_')]
    if stg:
        L.append('### launch stages (`WARDEN_TIMING=1`), ms: median over rounds of the '
                 'per-round medians')
        L.append('')
        L.append('`ns.*` are the parts of a rootless run\'s `network` stage (its maker: '
                 '`ns.unshare` fork + user and network namespaces, `ns.up` lo, addresses and '
                 'routes, `ns.nft` the run\'s nft table installed, `ns.audit` it audited, '
                 '`ns.sockets` the sockets made inside); a pool of ready namespaces could save '
                 'at most that stage.')
        L.append('')
        cs = sorted({o['contender'] for o in stg}, key=lambda c: ORDER.index(c)
                    if c in ORDER else 99)
        names = []
        for o in stg:
            n = o['metric'][6:-3]
            if n not in names:
                names.append(n)
        L.append('| stage | ' + ' | '.join(NAMES.get(c, c) for c in cs) + ' |')
        L.append('|---|' + '---|' * len(cs))
        for n in names:
            cells = []
            for c in cs:
                v = [o['value'] for o in stg if o['contender'] == c and o['metric'][6:-3] == n]
                cells.append(fmt(statistics.median(v)) if v else '–')
            L.append(f'| {n} | ' + ' | '.join(cells) + ' |')
        L.append('')
    sc = [o for o in rows if o['workload'] == 'scale']
    if sc:
        L.append(f"### scale: registering the i-th concurrent run ({meta['scale_runs']} runs)")
        L.append('')
        L.append('Each figure: median of the five registrations around the i-th '
                 '(i−2 … i+2, clamped), in ms; one pass.')
        L.append('')
        marks = sorted({int(o['metric'][3:].split('_')[0]) for o in sc
                        if o['metric'].startswith('run')})
        L.append('| run | plumbing (`ip`) | `warden nft run-add` | gateway `register` | total |')
        L.append('|---|---|---|---|---|')
        v = {o['metric']: o['value'] for o in sc}
        for i in marks:
            L.append(f"| {i} | " + ' | '.join(fmt(v.get(f'run{i}_{k}_ms')) for k in
                                               ('plumbing', 'nft', 'gateway', 'total')) + ' |')
        if 'gateway_rss_kib_with_runs' in v:
            L.append('')
            L.append(f"Gateway worker RSS with {meta['scale_runs']} runs registered: "
                     f"{v['gateway_rss_kib_with_runs']:,} KiB.")
        L.append('')
    au = [o['value'] for o in rows if o['metric'] == 'audit_events']
    if au:
        L.append(f'Audit log on: the gateway wrote {min(au):,}–{max(au):,} audit events per '
                 f'measurement ({len(au)} measurements).')
        L.append('')
    L.extend(instr_markdown(meta, rows))
    L.extend(soak_markdown(rows))
    L.append('### Targets (issues 33 and 6), from this run')
    L.append('')
    L.append('Held or not by this run\'s medians; ratios as in the tables above (MCP: the '
             'difference of the medians, ms).')
    L.append('')
    L.append('| issue | target | wanted | measured | ratio | holds |')
    L.append('|---|---|---|---|---|---|')
    for t in tg:
        h = {True: 'held', False: '**not held**', None: 'not measured'}[t['holds']]
        L.append(f"| {t['issue']} | {t['target']} | {t['wanted']} | {t['figures'] or '–'} | "
                 f"{fmt(t['measured'])} | {h} |")
    L.append('')
    L.append('### Exact commands (client side; `allowed.test` is the lab\'s 203.0.113.10, '
             'or the gateway\'s synthetic address for warden-gateway)')
    L.append('')
    for k in sorted(meta.get('commands', {})):
        L.append(f"- {k}: `{meta['commands'][k]}`")
    L.append('')
    for k, v in sorted(meta.get('configs', {}).items()):
        L.append(f'<details><summary>{k} (generated)</summary>')
        L.append('')
        L.append('```')
        L.append(v.rstrip('\n'))
        L.append('```')
        L.append('')
        L.append('</details>')
    L.append('')
    return '\n'.join(L)


def kfmt(v):
    """an instruction count, in thousands or millions"""
    if v is None:
        return '–'
    if abs(v) >= 1e6:
        return f'{v / 1e6:,.2f} M'
    return f'{v / 1e3:,.1f} k'


def instr_markdown(meta, rows):
    """the instr workload's two tables: per launch, per connection / query"""
    ins = [o for o in rows if o['workload'] == 'instr']
    if not ins:
        return []
    L = []
    tool = meta.get('instr_tool') or '?'
    if tool == 'perf':
        how = ('`perf stat -e instructions:u -e instructions:k` (hardware counters: user and '
               'kernel instructions)')
    else:
        how = ('valgrind (this machine has no hardware counters: `perf stat` says '
               '`<not supported>`), user-space instructions only, no kernel figure: the '
               '`warden run` rows with `--tool=callgrind --trace-children=yes`, its counters '
               'dumped and zeroed before every fork and clone and every 200,000 basic blocks (a '
               'forked child would otherwise count its parent\'s instructions again, and a '
               'process killed at the end would lose its count), the bwrap rows with '
               '`--tool=lackey` (bwrap\'s init in the sandbox has its parent\'s count taken '
               'off). Not counted: what a process runs between fork and exec')
    L.append('### instructions per launch (`... -- true`; the median of '
             f"{meta.get('instr_launches', '?')} counted launches)")
    L.append('')
    L.append(f'Counted with {how}. The whole process tree of the launch; the sandboxed '
             '`/bin/true` itself is not counted (the same for every contender). The running '
             'gateway\'s share of a daemon launch is counted in the gateway: (a run of the '
             'gateway with the launches − the same run without) / launches.')
    L.append('')
    progs = ['warden', 'warden-gateway', 'warden-gateway-worker']
    L.append('Under lackey, `warden run`\'s own bwrap is not traced (a process in the sandbox has '
             'nowhere to write its count, and valgrind 3.19 has no seccomp(2)): the bwrap line '
             'each mode builds (`warden run --print-bwrap`) is counted apart, with a folder it '
             'may write, and its figure is the "bwrap (its line)" column of the warden rows.')
    L.append('')
    L.append('| contender | user instructions | kernel | ' + ' | '.join(f'in {p}' for p in progs) +
             ' | bwrap (its line) | elsewhere | × bare bwrap |')
    L.append('|---|---|---|' + '---|' * len(progs) + '---|---|---|')
    line = {'warden-embedded': 'bwrap-root', 'warden-daemon': 'bwrap-root',
            'warden-rootless': 'bwrap-rootless'}
    bare = instr(rows, 'launch_user', 'bwrap')
    for c in ('warden-embedded', 'warden-daemon', 'warden-rootless', 'bwrap-root',
              'bwrap-rootless', 'bwrap'):
        tot = instr(rows, 'launch_user', c)
        if tot is None:
            continue
        by = [instr(rows, f'launch_by_{p}', c) for p in progs]
        bw = instr(rows, 'launch_by_bwrap', c)
        rest = tot - sum(v or 0 for v in by) - (bw or 0)
        if c in line and instr(rows, 'launch_user', line[c]) is not None:
            bw = instr(rows, 'launch_user', line[c])
            tot += bw
        L.append(f"| {NAMES.get(c, c)} | {kfmt(tot)} | {kfmt(instr(rows, 'launch_kernel', c))} | " +
                 ' | '.join(kfmt(v) for v in by) + f' | {kfmt(bw)} | {kfmt(rest)} | ' +
                 (f'{tot / bare:.1f}' if bare else '–') + ' |')
    g = instr(rows, 'launch_user', 'warden')
    if g is not None:
        L.append(f'| the running gateway\'s share of one daemon launch | {kfmt(g)} | '
                 f"{kfmt(instr(rows, 'launch_kernel', 'warden'))} | – | " +
                 f"{kfmt(instr(rows, 'launch_by_warden-gateway', 'warden'))} | "
                 f"{kfmt(instr(rows, 'launch_by_warden-gateway-worker', 'warden'))} | – | – | – |")
    L.append('')
    L.append(f"### instructions per connection and per DNS query "
             f"({meta.get('instr_conns', '?')} connections; DNS: passes over the 100 names)")
    L.append('')
    L.append('The relay\'s processes only (all of them: the gateway\'s privileged side and its '
             'worker; HAProxy; dnsmasq), not the client or the server; the same clients and '
             'counts for every relay.')
    L.append('')
    L.append('| unit | warden-gateway (user) | of which the worker | kernel | reference (user) | '
             'kernel | × reference |')
    L.append('|---|---|---|---|---|---|---|')
    for kind, what, ref in (('http', 'new HTTP connection (GET, Connection: close)', 'haproxy'),
                            ('tls', 'new TLS connection (SNI checked)', 'haproxy'),
                            ('dns', 'DNS query (allowed name, cached)', 'dnsmasq')):
        w, r = instr(rows, f'{kind}_user', 'warden'), instr(rows, f'{kind}_user', ref)
        if w is None and r is None:
            continue
        L.append(f'| {what} | {kfmt(w)} | '
                 f"{kfmt(instr(rows, f'{kind}_by_warden-gateway-worker', 'warden'))} | "
                 f"{kfmt(instr(rows, f'{kind}_kernel', 'warden'))} | {NAMES.get(ref, ref)}: "
                 f"{kfmt(r)} | {kfmt(instr(rows, f'{kind}_kernel', ref))} | "
                 + (f'{w / r:.2f}' if w is not None and r else '–') + ' |')
    L.append('')
    return L


def soak_markdown(rows):
    """the soak workload's figures (tests/bench/soak.sh)"""
    v = {o['metric']: o['value'] for o in rows if o['workload'] == 'soak'}
    if not v:
        return []
    L = ['### soak (tests/bench/soak.sh)', '']
    L.append('| figure | value |')
    L.append('|---|---|')
    for k in sorted(v):
        L.append(f'| {k} | {v[k]} |')
    L.append('')
    return L


BEGIN = '<!-- bench:results:begin (generated by tests/bench/run; do not edit by hand) -->'
END = '<!-- bench:results:end -->'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--raw', required=True)
    ap.add_argument('--meta', required=True)
    ap.add_argument('--json', required=True)
    ap.add_argument('--doc')
    a = ap.parse_args()
    meta = json.load(open(a.meta))
    rows, errors = load(a.raw)
    res = summarize(rows)
    tg = targets(res, rows)
    with open(a.json, 'w') as f:
        json.dump({'meta': meta, 'results': res, 'targets': tg,
                   'scale': [o for o in rows if o['workload'] == 'scale'],
                   'raw': rows, 'errors': errors}, f, indent=1, ensure_ascii=False)
        f.write('\n')
    md = markdown(meta, res, rows, errors, tg)
    print(md)
    if a.doc:
        try:
            doc = open(a.doc).read()
        except FileNotFoundError:
            doc = ''
        if BEGIN in doc and END in doc:
            pre, rest = doc.split(BEGIN, 1)
            post = rest.split(END, 1)[1]
        else:
            pre, post = doc.rstrip('\n') + '\n\n## Results\n\n', '\n'
        with open(a.doc, 'w') as f:
            f.write(pre + BEGIN + '\n\n' + md + '\n' + END + post)
    return 0


if __name__ == '__main__':
    sys.exit(main())
