#!/usr/bin/env python3
"""requests_probe.py - python3 requests against one URL with the proxies its environment names
(HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY; socks5h:// ones through PySocks), for the
proxy-mode test (tests/integration/gateway_proxy_clients.sh).

  requests_probe.py CA-FILE URL

Prints the body of a 200 (trailing newlines stripped), "status=N denial=ID body=FIRST-LINE" of
any other status (ID: the X-Warden-Denial header, "-" without one), or "error: TYPE: MESSAGE"
when the request failed. Exit 0 with a response, 1 when the request failed (refused, no route,
a tunnel the proxy would not open), 2 when the probe itself could not run (usage, requests not
installed, a socks5h proxy without PySocks).
"""
import sys

try:
    import requests
except ImportError as e:
    print(f"requests_probe: {e}", file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) != 3:
        print("usage: requests_probe.py CA-FILE URL", file=sys.stderr)
        return 2
    ca, url = sys.argv[1], sys.argv[2]
    try:
        r = requests.get(url, verify=ca, timeout=8)
    except requests.exceptions.InvalidSchema as e:
        # "Missing dependencies for SOCKS support": python3-socks is not installed
        print(f"requests_probe: {e}", file=sys.stderr)
        return 2
    except requests.exceptions.RequestException as e:
        print(f"error: {type(e).__name__}: {e}")
        return 1
    body = r.text.rstrip("\n")
    if r.status_code == 200:
        print(body)
    else:
        first = body.split("\n")[0]
        print(f"status={r.status_code} denial={r.headers.get('X-Warden-Denial', '-')} body={first}")
    return 0


sys.exit(main())
