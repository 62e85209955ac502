-- wrk-json.lua - makes wrk print one machine-readable line (prefix BENCHJSON) when it is done.
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format(
		"BENCHJSON {\"requests\":%d,\"duration_us\":%d,\"bytes\":%d," ..
		"\"err_connect\":%d,\"err_read\":%d,\"err_write\":%d,\"err_status\":%d," ..
		"\"err_timeout\":%d,\"lat_mean_us\":%.2f,\"lat_p50_us\":%d,\"lat_p99_us\":%d," ..
		"\"lat_max_us\":%d}\n",
		summary.requests, summary.duration, summary.bytes,
		e.connect, e.read, e.write, e.status, e.timeout,
		latency.mean, latency:percentile(50), latency:percentile(99), latency.max))
end
