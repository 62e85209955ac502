#!/usr/bin/env bash
# run_mcp_examples.sh - deploy/examples/mcp/README.md followed as a user would (issue 27, item
# 6): the servers installed globally under each of npm's two usual prefixes (/usr/local: node
# from nodejs.org; /usr: Debian's and NodeSource's), the policy copied into a fresh home folder
# (`mkdir -p ~/.config/warden/mcp && cp .../filesystem.yaml ~/.config/warden/mcp/`), the client
# config's arguments taken as they are written (claude_desktop_config.json with /home/YOU
# replaced, .mcp.json with ${HOME} expanded), and the official MCP SDK client
# (tests/mcp/examples_client.mjs) driving server-filesystem and server-memory through
# `warden run -q -p COPY`: list the tools, call them. Then `warden policy new --mcp` on
# server-everything's bin shim in tests/mcp/node_modules/.bin (a prefix outside the runtime
# base), and the SDK client (tests/mcp/client.mjs) uses the policy it wrote.
#
# The global installs are made in this script's private mount namespace (lib.sh,
# _lab_private_run), without the registry: npm's global layout (PREFIX/lib/node_modules
# holding the packages, PREFIX/bin/NAME a relative link to the package's bin file) over the
# packages tests/mcp installed with `npm ci`, by a read-only overlay (/usr) or a bind mount
# (/usr/local). Nothing of the host's changes.
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"
MCP=$SRC/tests/mcp
EX=$SRC/deploy/examples/mcp
PKGS=(server-filesystem server-memory)

lab_require_root
lab_need_run_tools
NODE=$(command -v node) || { echo "SKIP: node is not installed"; exit 77; }
need_install=
for p in sdk server-everything "${PKGS[@]}"; do
	[[ -d $MCP/node_modules/@modelcontextprotocol/$p ]] || need_install=1
done
if [[ -n $need_install ]]; then
	command -v npm >/dev/null || { echo "SKIP: npm is not installed"; exit 77; }
	(cd "$MCP" && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
		{ echo "SKIP: npm ci in tests/mcp failed (no registry access?)"; exit 77; }
fi
# the mounts below must stay in this script's own mount namespace
[[ ${LAB_PRIVATE_RUN:-} == 1 ]] ||
	{ echo "ERROR: needs the private mount namespace (LAB_SHARED_RUN is set)"; exit 2; }
lab_up
# as the user (run_as_user.sh): LAB_USER_UID and LAB_USER_GID own the homes made below
if [[ ${LAB_AS_USER:-} == 1 ]]; then
	lab_user || { echo "ERROR: no unprivileged test user"; exit 2; }
fi

T=$(lab_tmpdir wd-mcp-examples)
lab_on_exit rm -rf "$T"
# the users' home folders are in it: as root, the program is nobody, who must reach them
chmod 0755 "$T"
export WARDEN_GATEWAY_BIN=$GW
NM=$MCP/node_modules

# global_install PREFIX: the packages at PREFIX/lib/node_modules, their bin links in PREFIX/bin
global_install()
{
	local prefix=$1 shims=$T/shims${1//\//-} p bin
	mkdir -p "$shims" || return 1
	for p in "${PKGS[@]}"; do
		bin=$(jq -r '.bin | to_entries[0] | "\(.key) \(.value)"' \
			"$NM/@modelcontextprotocol/$p/package.json") || return 1
		ln -s "../lib/node_modules/@modelcontextprotocol/$p/${bin#* }" "$shims/${bin%% *}" ||
			return 1
	done
	if [[ -d $prefix/lib/node_modules ]]; then
		# /usr: npm's own packages stay, ours join them (read-only overlays)
		mount -t overlay wd-npm-global -o "lowerdir=$NM:$prefix/lib/node_modules" \
			"$prefix/lib/node_modules" &&
			mount -t overlay wd-npm-global -o "lowerdir=$shims:$prefix/bin" "$prefix/bin"
	else
		# /usr/local (no node_modules folder yet): one made on a tmpfs, the packages bound there
		mkdir -p "$T/locallib/node_modules" &&
			mount -t overlay wd-npm-global -o "lowerdir=$T/locallib:$prefix/lib" \
				"$prefix/lib" &&
			mount --bind "$NM" "$prefix/lib/node_modules" &&
			mount -t overlay wd-npm-global -o "lowerdir=$shims:$prefix/bin" "$prefix/bin"
	fi
}
global_uninstall()
{
	local m
	for m in "$1/bin" "$1/lib/node_modules" "$1/lib"; do
		if mountpoint -q "$m" && findmnt -n -o SOURCE "$m" | grep -q -e wd-npm-global -e "$NM"; then
			# lazily: a run's detached teardown may still hold a file there
			umount -l "$m" || return 1
		fi
	done
}

# the README's steps 2 and 3 for policy NAME in a fresh home folder; sets HOMEDIR, CFG (the
# claude_desktop_config.json entry's args, /home/YOU made the home folder) and CFG2 (.mcp.json's)
readme_copy()
{
	local name=$1 server=$2
	HOMEDIR=$T/home-$name-${3//\//-}
	mkdir -p "$HOMEDIR" && chmod 0755 "$HOMEDIR" || return 1
	[[ ${LAB_AS_USER:-} == 1 ]] && chown "$LAB_USER_UID:$LAB_USER_GID" "$HOMEDIR"
	HOME=$HOMEDIR bash -c 'mkdir -p ~/.config/warden/mcp && cp "$1/$2.yaml" ~/.config/warden/mcp/' \
		_ "$EX" "$name" || return 1
	mapfile -t CFG < <(jq -r --arg s "$server" '.mcpServers[$s].args[]' \
		"$EX/claude_desktop_config.json" | sed "s|^/home/YOU/|$HOMEDIR/|")
	mapfile -t CFG2 < <(jq -r --arg s "$server" '.mcpServers[$s].args[]' "$EX/.mcp.json" |
		sed "s|^\${HOME}/|$HOMEDIR/|")
}

# vcheck DESC FILTER: FILTER holds for the client's JSON line $V (no line, or not JSON: an ERROR,
# never a pass: jq -e passes on empty input)
vcheck()
{
	check "$1" jq -n -e --argjson v "${V:-}" "\$v | $2"
}

# the folder a server reaches, made by the user before the client starts it: as root, the
# program is nobody (lab_program_ids), so the user's folder is given to it
user_folder()
{
	mkdir -p "$1" && chown -R "$(lab_program_ids)" "$1"
}

for prefix in /usr/local /usr; do
	echo "# npm install -g with the prefix $prefix"
	check "the servers are installed globally under $prefix" global_install "$prefix"
	check "control: mcp-server-filesystem is found through PATH, in $prefix/bin" \
		bash -c '[[ $(command -v mcp-server-filesystem) == "$1/bin/mcp-server-filesystem" ]]' \
		_ "$prefix"

	echo "# filesystem.yaml copied as the README says, started as claude_desktop_config.json says"
	readme_copy filesystem filesystem "$prefix"
	check_eq "the config's arguments: run -q -p and the copy in the home folder" \
		"run -q -p $HOMEDIR/.config/warden/mcp/filesystem.yaml" echo "${CFG[*]}"
	check_eq ".mcp.json's arguments, \${HOME} expanded, are the same" "${CFG[*]}" echo "${CFG2[*]}"
	check "warden policy check passes the copy" env HOME="$HOMEDIR" "$W" policy check \
		"$HOMEDIR/.config/warden/mcp/filesystem.yaml"
	user_folder "$HOMEDIR/projects"
	echo "a note in a project" >"$HOMEDIR/projects/note.txt"
	chown "$(lab_program_ids)" "$HOMEDIR/projects/note.txt"
	V=$(HOME=$HOMEDIR "$NODE" "$MCP/examples_client.mjs" filesystem "$HOMEDIR/projects/note.txt" \
		ip netns exec "$LAB_HOST_NS" "$W" "${CFG[@]}" 2>"$T/client.err")
	echo "# filesystem: $V"
	[[ -n $V ]] || sed 's/^/#   /' "$T/client.err"
	check_eq "initialize: the server is server-filesystem" "secure-filesystem-server" \
		jq -r .server <<<"$V"
	vcheck "tools/list lists read_text_file and write_file" \
		'(.tools | index("read_text_file")) and (.tools | index("write_file"))'
	check_eq "read_text_file reads the project's file" "a note in a project" \
		jq -r '.read | rtrimstr("\n")' <<<"$V"
	vcheck "write_file writes in the project folder" '.writeError == false'
	check_eq "... and the file is there, on the host" "written through warden" \
		head -n1 "$HOMEDIR/projects/note.txt.new"
	vcheck "a file outside the project folder is refused" '.outsideError == true'
	check "the run is in the user's audit log" jq -e -s \
		'[.[] | select(.action == "run.start" and (.command | tostring | test("mcp-server-filesystem")))] | length == 1' \
		"$HOMEDIR/.local/state/warden/audit.jsonl"

	echo "# memory.yaml, the same way"
	readme_copy memory memory "$prefix"
	check "warden policy check passes the copy" env HOME="$HOMEDIR" "$W" policy check \
		"$HOMEDIR/.config/warden/mcp/memory.yaml"
	user_folder "$HOMEDIR/.mcp-memory"
	V=$(HOME=$HOMEDIR "$NODE" "$MCP/examples_client.mjs" memory \
		ip netns exec "$LAB_HOST_NS" "$W" "${CFG[@]}" 2>"$T/client.err")
	echo "# memory: $V"
	[[ -n $V ]] || sed 's/^/#   /' "$T/client.err"
	vcheck "tools/list lists create_entities and read_graph" \
		'(.tools | index("create_entities")) and (.tools | index("read_graph"))'
	vcheck "create_entities succeeds" '.createError == false'
	vcheck "read_graph returns the entity" '.graph | test("runs MCP servers in a sandbox")'
	check "the graph is kept in ~/.mcp-memory/memory.jsonl, on the host" \
		grep -q '"name":"warden"' "$HOMEDIR/.mcp-memory/memory.jsonl"

	check "the global install under $prefix is undone" global_uninstall "$prefix"
done
check "control: no mcp-server-filesystem is found through PATH any more" \
	bash -c '! command -v mcp-server-filesystem'

echo "# warden policy new --mcp on server-everything's bin shim (outside the runtime base)"
EV=$T/everything.yaml
[[ ${LAB_AS_USER:-} == 1 ]] && chown "$LAB_USER_UID:$LAB_USER_GID" "$T"
if [[ ${LAB_AS_USER:-} == 1 ]]; then
	# run_as_user.sh's wrapper sets the user's own PATH: the shim is named by its path
	check "policy new --mcp writes a policy" "$W" policy new --mcp -o "$EV" -- \
		"$NM/.bin/mcp-server-everything" stdio
else
	check "policy new --mcp writes a policy" env PATH="$NM/.bin:$PATH" "$W" policy new --mcp \
		-o "$EV" -- mcp-server-everything stdio
fi
check "it passes warden policy check" "$W" policy check "$EV"
"$W" policy check --json "$EV" >"$T/ev.json" 2>/dev/null
check_eq "command: the shim (found through PATH) and its argument" \
	"[\"$NM/.bin/mcp-server-everything\",\"stdio\"]" jq -c .command "$T/ev.json"
# one JSON document in ev.json, and FILTER holds for it (an empty file is no pass)
evcheck()
{
	check "$1" jq -e -s --arg d "$NM" "length == 1 and (.[0] | $2)" "$T/ev.json"
}
evcheck "the node_modules folder that holds the package is granted read" \
	'[.filesystem.read[].path] | index($d) != null'
evcheck "no network is allowed" '(.network.allow // []) | length == 0'
evcheck "no timeout: a server lives as long as its client" '(.limits.timeout_s // 0) == 0'
check_fails --denied 2 "a second policy new does not replace the file" "$W" policy new --mcp -o "$EV" \
	-- "$NM/.bin/mcp-server-everything"
check_fails --denied 2 "a command that is not found is an error" "$W" policy new --mcp -- \
	no-such-mcp-server-here
out=$("$NODE" "$MCP/client.mjs" ip netns exec "$LAB_HOST_NS" \
	"$W" run -q --audit-log "$T/ev-audit.jsonl" -p "$EV" 2>"$T/client.err")
echo "# client: $out"
[[ -n $out ]] || sed 's/^/#   /' "$T/client.err"
check_eq "the SDK client initializes server-everything under that policy" \
	"mcp-servers/everything" jq -r .server <<<"$out"
check_eq "tools/call echo answers through the sandbox" "Echo: hello through warden" \
	jq -r .echo <<<"$out"

teardowns_quiet()
{
	local a
	for a in "$T"/home-*/.local/state/warden/audit.jsonl "$T/ev-audit.jsonl"; do
		lab_teardowns_quiet "$a" || return 1
	done
}
check "the background teardowns finish" lab_wait 20 teardowns_quiet
check "warden gc --pool drains the pool of ready networks" \
	ip netns exec "$LAB_HOST_NS" "$W" gc -q --pool
lab_finish
