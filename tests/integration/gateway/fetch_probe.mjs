// fetch_probe.mjs - Node's own fetch() against one URL, for the proxy-mode test
// (tests/integration/gateway_proxy_clients.sh). With `env`, undici's EnvHttpProxyAgent is made the
// global dispatcher first (it reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY when it is made): what
// Node 24's NODE_USE_ENV_PROXY=1 switches on, and what Node 20 needs by hand. With `plain`,
// fetch() is left as Node has it (Node 20's ignores the proxy variables).
//
//   node fetch_probe.mjs UNDICI-DIR env|plain URL
//
// The CA to trust comes from NODE_EXTRA_CA_CERTS. Prints the body of a 200 (trailing newlines
// stripped), "status=N denial=ID body=FIRST-LINE" of any other status (ID: the X-Warden-Denial
// header, "-" without one), or "error: MESSAGE (CAUSE)" when fetch() failed. Exit 0 with a
// response, 1 when fetch() failed (refused, no route, a tunnel the proxy would not open), 2
// when the probe itself could not run (usage, no undici at UNDICI-DIR).
import { createRequire } from 'node:module';

const [dir, mode, url] = process.argv.slice(2);
if (!dir || !['env', 'plain'].includes(mode) || !url) {
	console.error('usage: fetch_probe.mjs UNDICI-DIR env|plain URL');
	process.exit(2);
}
if (mode === 'env') {
	let undici;
	try {
		undici = createRequire(`${dir}/`)(dir);
	} catch (e) {
		console.error(`fetch_probe: cannot load undici from ${dir}: ${e.message}`);
		process.exit(2);
	}
	undici.setGlobalDispatcher(new undici.EnvHttpProxyAgent());
}
try {
	const r = await fetch(url, { signal: AbortSignal.timeout(8000) });
	const body = (await r.text()).replace(/\n+$/, '');
	if (r.status === 200) {
		console.log(body);
	} else {
		const id = r.headers.get('x-warden-denial') ?? '-';
		console.log(`status=${r.status} denial=${id} body=${body.split('\n')[0]}`);
	}
} catch (e) {
	const c = e.cause ?? {};
	console.log(`error: ${e.message} (${[c.code, c.message].filter(Boolean).join(': ')})`);
	process.exit(1);
}
