// udp_probe.js - udp_probe.py's one UDP exchange for images with node and no python
// (tests/integration/run_docker.sh): sends a datagram to NAME (resolved by the system's
// resolver: in a run, the gateway's DNS front) or ADDRESS at PORT and waits for the echo.
// Prints "echo DATA" and exits 0, "timeout" and exits 1, "error WHAT" and exits 2 (a probe that
// could not run). Usage: node udp_probe.js HOST PORT [FAMILY 4|6]
"use strict";
const dgram = require("dgram");
const dns = require("dns");

const host = process.argv[2];
const port = Number(process.argv[3]);
const family = process.argv[4] === "6" ? 6 : 4;
if (!host || !(port > 0)) {
	console.log("error usage: udp_probe.js HOST PORT [4|6]");
	process.exit(2);
}
dns.lookup(host, { family }, (err, addr) => {
	if (err) {
		console.log(`error resolve ${host}: ${err.code || err.message}`);
		process.exit(2);
	}
	const s = dgram.createSocket(family === 6 ? "udp6" : "udp4");
	const msg = Buffer.from(`ping-${port}`);
	const timer = setTimeout(() => {
		console.log("timeout");
		process.exit(1);
	}, 3000);
	s.on("error", (e) => {
		clearTimeout(timer);
		console.log(`timeout (${e.message})`);
		process.exit(1);
	});
	s.on("message", (data) => {
		clearTimeout(timer);
		console.log(`echo ${data.toString()}`);
		process.exit(data.equals(Buffer.concat([Buffer.from("echo:"), msg])) ? 0 : 1);
	});
	s.send(msg, port, addr);
});
