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
    ('idle', 'bytes_per_conn'): ('relay memory per idle relayed connection, bytes '
                                 '(worker RSS growth / connections)', False, ['haproxy']),
}
ORDER = ['direct', 'warden', 'haproxy', 'sniproxy', 'nginx', 'run-root', 'run-rootless',
         'dnsmasq', 'warden-daemon', 'warden-embedded', 'warden-rootless', 'bwrap-rootless',
         'bwrap', 'unshare', 'firejail', 'warden-seccomp', 'warden-noseccomp',
         'warden-userns']
NAMES = {
    'direct': 'direct (kernel forwarding)', 'warden': '**warden-gateway**',
    'haproxy': 'HAProxy 2.6 tcp+splice', 'sniproxy': 'sniproxy 0.6', 'nginx': 'nginx stream',
    'dnsmasq': 'dnsmasq (cache)', 'warden-daemon': '**warden run** (running gateway)',
    'warden-embedded': '**warden run** (embedded gateway)', 'bwrap': 'bwrap --unshare-all',
    'run-root': '**warden run** root mode (client in the sandbox)',
    'run-rootless': '**warden run** rootless (client in the sandbox)',
    'warden-rootless': '**warden run** rootless (as a user)',
    'bwrap-rootless': 'its bwrap line (`--print-bwrap`, as the user)',
    'unshare': 'unshare -n', 'firejail': 'firejail --net=none',
    'warden-seccomp': '**warden run**, seccomp filter (default)',
    'warden-noseccomp': 'warden run, no filter (WARDEN_UNSAFE_NO_SECCOMP=1)',
    'warden-userns': '**warden run**, sandbox.allow: [userns]',
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


def targets(res, rows):
    """The issue's targets, evaluated from this run: (workload, target, measured, holds)."""
    out = []

    def add(name, target, value, ok):
        out.append({'target': name, 'wanted': target,
                    'measured': None if value is None else round(value, 3),
                    'holds': None if value is None else bool(ok(value))})

    add('bulk Gbit/s vs HAProxy splice', '≥ 1.10', ratio(res, 'bulk.gbps', 'warden', 'haproxy'),
        lambda v: v >= 1.10)
    add('relay CPU per GB vs HAProxy splice', '≤ 0.90',
        ratio(res, 'bulk.cpu_s_per_gb', 'warden', 'haproxy'), lambda v: v <= 0.90)
    add('new HTTP connections/s vs HAProxy', '≥ 1.10',
        ratio(res, 'conn.new_conn_per_s', 'warden', 'haproxy'), lambda v: v >= 1.10)
    add('new HTTP connections/s vs sniproxy', '≥ 5',
        ratio(res, 'conn.new_conn_per_s', 'warden', 'sniproxy'), lambda v: v >= 5)
    add('new TLS connections/s (SNI checked) vs direct', '≥ 0.90',
        ratio(res, 'tls.new_tls_per_s', 'warden', 'direct'), lambda v: v >= 0.90)
    d, w, h = (med(res, 'latency.mean_us', c) for c in ('direct', 'warden', 'haproxy'))
    added = (w - d) / (h - d) if None not in (d, w, h) and h != d else None
    add('one-connection latency added over direct, vs HAProxy\'s added latency', '≤ 0.8',
        added, lambda v: v <= 0.8)
    add('DNS queries/s (allowed names) vs dnsmasq', '≥ 1.5',
        ratio(res, 'dns.qps', 'warden', 'dnsmasq'), lambda v: v >= 1.5)
    add('`warden run -- true` with a running gateway vs bare bwrap', '≤ 1.5',
        ratio(res, 'launch.median_ms', 'warden-daemon', 'bwrap'), lambda v: v <= 1.5)
    add('`warden run -- true` embedded vs bare bwrap', '≤ 3.0',
        ratio(res, 'launch.median_ms', 'warden-embedded', 'bwrap'), lambda v: v <= 3.0)
    add('rootless `warden run -- true` vs the bwrap line it builds', '≤ 1.5 (goal 1.25)',
        ratio(res, 'launch.median_ms', 'warden-rootless', 'bwrap-rootless'), lambda v: v <= 1.5)
    add('rootless `warden run -- true` vs firejail --net=none', '< 1',
        ratio(res, 'launch.median_ms', 'warden-rootless', 'firejail'), lambda v: v < 1)
    sc = {o['metric']: o['value'] for o in rows if o['workload'] == 'scale'}
    last = max((int(k[3:].split('_')[0]) for k in sc if k.startswith('run') and
                k.endswith('_total_ms')), default=None)
    v = None
    if last and 'run1_total_ms' in sc and sc['run1_total_ms']:
        v = sc[f'run{last}_total_ms'] / sc['run1_total_ms']
    add(f'registering run {last or 1000} vs run 1', '≤ 1.2', v, lambda x: x <= 1.2)
    add('gateway memory per idle connection (bytes)', '≤ 2048 (2 KiB) user space',
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
    L.append('### Targets (issue 6), from this run')
    L.append('')
    L.append('| target | wanted | measured | holds |')
    L.append('|---|---|---|---|')
    for t in tg:
        h = {True: 'yes', False: '**no**', None: 'not measured'}[t['holds']]
        L.append(f"| {t['target']} | {t['wanted']} | {fmt(t['measured'])} | {h} |")
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
