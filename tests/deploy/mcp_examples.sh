#!/usr/bin/env bash
# mcp_examples.sh DIR WARDEN - deploy/examples/mcp/ holds what its README says: every policy
# passes `warden policy check`, and every MCP client config (.mcp.json,
# claude_desktop_config.json) is JSON whose servers each run `warden run -p POLICY` (or
# `warden mcp -p POLICY`, Warden as the server) with a
# policy of that folder. Prints a closing line for CTest; exit 1 on a failure, 2 on a test error.
set -u
dir=${1:?usage: mcp_examples.sh DIR WARDEN}
w=${2:?usage: mcp_examples.sh DIR WARDEN}
passed=0 failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
[[ -x $w ]] || { echo "ERROR - $w is not executable"; echo "0 passed, 1 failed (test error)"; exit 2; }
command -v python3 >/dev/null || { echo "ERROR - python3 is missing"; echo "0 passed, 1 failed (test error)"; exit 2; }
# a home with nothing in it: the policies' ~ folders are checked the way a new user's would be
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
n=0
for p in "$dir"/*.yaml; do
	[[ -e $p ]] || continue
	n=$((n + 1))
	if out=$(HOME=$home "$w" policy check "$p" 2>&1 >/dev/null); then
		ok "$(basename "$p") passes warden policy check"
	else
		bad "$(basename "$p") fails warden policy check: $out"
	fi
done
((n >= 7)) || bad "expected at least 7 policies in $dir, found $n"
for f in .mcp.json claude_desktop_config.json; do
	if out=$(python3 - "$dir" "$dir/$f" <<'EOF'
import json, os, sys
d, path = sys.argv[1:]
servers = json.load(open(path))["mcpServers"]
assert servers, "no servers"
for name, s in servers.items():
    assert os.path.basename(s["command"]) == "warden", f"{name}: the command is not warden"
    a = s["args"]
    assert a[0] in ("run", "mcp") and "-p" in a, f"{name}: not `warden run|mcp -p POLICY`"
    pol = os.path.basename(a[a.index("-p") + 1])
    assert os.path.exists(os.path.join(d, pol)), f"{name}: {pol} is not in {d}"
print(len(servers))
EOF
	); then
		ok "$f: $out servers, each warden run -p or warden mcp -p with a policy of this folder"
	else
		bad "$f: $out"
	fi
done
echo "$passed passed, $failed failed"
((failed == 0))
