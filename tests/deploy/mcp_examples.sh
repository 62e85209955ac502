#!/usr/bin/env bash
# mcp_examples.sh DIR WARDEN - deploy/examples/mcp/ holds what its README says: every policy
# passes `warden policy check`, and every MCP client config (.mcp.json,
# claude_desktop_config.json) is JSON whose servers each run `warden run -p POLICY` (or
# `warden mcp -p POLICY`, Warden as the server) with a
# policy of that folder. The policies one folder up (deploy/examples/*.yaml) pass too, but
# broken.yaml, which must fail (the documentation shows its errors), and gateway.yaml, a
# gateway's configuration (tests/unit/test_policy.c loads it). Prints a closing line for
# CTest; exit 1 on a failure, 2 on a test error.
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
m=0
for p in "$dir"/../*.yaml; do
	[[ -e $p ]] || continue
	b=$(basename "$p")
	case $b in
	gateway.yaml) continue ;;
	broken.yaml)
		HOME=$home "$w" policy check "$p" >/dev/null 2>&1
		rc=$?
		if ((rc == 2)); then ok "$b fails warden policy check (exit 2), as its comment says"
		else bad "$b: warden policy check exited $rc, wanted 2"; fi
		continue
		;;
	esac
	m=$((m + 1))
	if out=$(HOME=$home "$w" policy check "$p" 2>&1 >/dev/null); then
		ok "$b passes warden policy check"
	else
		bad "$b fails warden policy check: $out"
	fi
done
((m >= 2)) || bad "expected at least 2 policies in $dir/.., found $m"
# no policy names one npm prefix's node_modules: they start the server's bin shim through PATH
if hits=$(grep -nE '^[^#]*node_modules' "$dir"/*.yaml); then
	bad "a policy names a node_modules folder (one npm prefix only): $hits"
else
	ok "no policy names a node_modules folder (either npm prefix works)"
fi
for f in .mcp.json claude_desktop_config.json; do
	if out=$(python3 - "$dir" "$dir/$f" 2>&1 <<'EOF'
import json, os, sys
d, path = sys.argv[1:]
servers = json.load(open(path))["mcpServers"]
assert servers, "no servers"
for name, s in servers.items():
    assert os.path.basename(s["command"]) == "warden", f"{name}: the command is not warden"
    a = s["args"]
    assert a[0] in ("run", "mcp") and "-p" in a, f"{name}: not `warden run|mcp -p POLICY`"
    full = a[a.index("-p") + 1]
    # a copy the user can edit (README.md, "Use one"), not the installed one under /usr/share/doc
    assert full.startswith(("${HOME}/.config/warden/mcp/", "/home/YOU/.config/warden/mcp/")), \
        f"{name}: -p {full} is not a copy in ~/.config/warden/mcp"
    pol = os.path.basename(full)
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
