#!/usr/bin/env bash
# run_credstores.sh - the credential stores under ~ (issue 27 item 4, docs/files.md "Credential
# stores"): with `read: ["~"]` a real program reads every store of the table (policy/credstores.c)
# as empty or absent, while an ordinary file of the same home, and an ordinary file beside a
# masked file store, read fine (the positive controls); `{ path: ~/.claude, sensitive: true }`
# opts that one store back in and the others stay hidden; a `~` grant says ONE warning that
# lists the stores it hides (item 8). run_as_user.sh runs it as a user (rootless).
set -u
SRC=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lab/lib.sh"

lab_require_root
lab_need_run_tools
PY=/usr/bin/python3
[[ -x $PY ]] || { echo "SKIP: python3 missing"; exit 77; }
lab_up

T=$(lab_tmpdir wd-run-credstores)
chmod 0755 "$T"
[[ -n ${KEEP_T:-} ]] || lab_on_exit rm -rf "$T"
A=$T/audit.jsonl
H=$T/home
export WARDEN_GATEWAY_BIN=$GW WARDEN_POOL=0

# the stores: folders hold a secret file (.claude, .docker and .aws one more), files are the
# secret (the table of docs/files.md)
DIRS=(.ssh .gnupg .aws .config/gcloud .azure .kube .docker .config/gh .claude .codex
	.config/anthropic .gemini .config/google-chrome .config/chromium .mozilla
	.config/BraveSoftware .config/microsoft-edge snap/chromium snap/firefox .thunderbird
	.password-store .local/share/keyrings .config/Bitwarden .config/1Password .gnome2/keyrings)
FILES=(.netrc .git-credentials .npmrc .pypirc .cargo/credentials .cargo/credentials.toml
	.claude.json .bash_history .zsh_history .local/share/fish/fish_history .python_history
	.node_repl_history .psql_history .mysql_history .lesshst .vault-token)
for d in "${DIRS[@]}"; do
	mkdir -p "$H/$d"
	echo "SECRET in $d" >"$H/$d/secret"
done
echo "SECRET token" >"$H/.claude/.credentials.json"
echo '{"auths":{"x":{"auth":"SECRET"}}}' >"$H/.docker/config.json"
echo "SECRET aws config" >"$H/.aws/config"
for f in "${FILES[@]}"; do
	mkdir -p "$(dirname "$H/$f")"
	echo "SECRET in $f" >"$H/$f"
done
# ordinary files: beside the stores, and in the folders that hold a file store
echo "ordinary" >"$H/notes.txt"
mkdir -p "$H/.config/other" "$H/.cargo/bin" "$H/.local/share/other"
echo "ordinary config" >"$H/.config/other/settings"
echo "ordinary cargo" >"$H/.cargo/config.toml"
echo "ordinary share" >"$H/.local/share/other/data"
# a home with one store: a `~` write grant hides it and could create the others
mkdir -p "$T/home2/.ssh"
echo "SECRET key" >"$T/home2/.ssh/id_ed25519"
chmod -R a+rX "$T"

printf 'version: 1\nfilesystem:\n  read: ["~"]\n' >"$T/home.yaml"
printf 'version: 1\nfilesystem:\n  read: ["~", { path: "~/.claude", sensitive: true }]\n' >"$T/optin.yaml"
printf 'version: 1\nfilesystem:\n  write: ["~"]\n' >"$T/homew.yaml"
printf 'version: 1\nfilesystem:\n  read: ["~", { path: "~/.aws/config", sensitive: true }]\n' >"$T/optfile.yaml"

# wr POLICY ARGS...: warden run inside lab-host with the test's audit log and home
wr() { local p=$1; shift; HOME=$H in_host "$W" run -q --audit-log "$A" -p "$T/$p.yaml" "$@"; }

# the probe: every store path (a folder: every file below it) read by python; it prints how
# many paths it looked at, then LEAK lines for every secret it could read
mkdir -p "$H/bin"
cat >"$H/bin/probe.py" <<'EOF'
import os, sys
home, paths = sys.argv[1], sys.argv[2:]
leaks = []
for rel in paths:
    p = os.path.join(home, rel)
    todo = [p]
    if os.path.isdir(p):
        todo = [os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs]
    for q in todo:
        try:
            with open(q, errors="replace") as f:
                if "SECRET" in f.read():
                    leaks.append(q)
        except OSError:
            pass
print(len(paths))
for q in leaks:
    print("LEAK " + q)
EOF
chmod -R a+rX "$H/bin"
ALL=("${DIRS[@]}" "${FILES[@]}")

echo "# the old hole: ~/.claude/.credentials.json through read: [~]"
check_eq "control: an ordinary file of the home reads" "ordinary" wr home cat "$H/notes.txt"
check_fails "~/.claude/.credentials.json is not readable" wr home cat "$H/.claude/.credentials.json"
check_eq "... nor lists: ~/.claude is an empty folder" "" wr home ls -A "$H/.claude"
check_fails "~/.bash_history is not readable" wr home cat "$H/.bash_history"
check_eq "... it reads as nothing: no secret in what cat could give" "" \
	wr home sh -c "cat '$H/.bash_history' 2>/dev/null; exit 0"

echo "# every store of the table"
check_eq "a python program finds no secret in any of the ${#ALL[@]} stores" "${#ALL[@]}" \
	wr home $PY "$H/bin/probe.py" "$H" "${ALL[@]}"
check_eq "control: the same probe outside warden finds every secret file" "$((${#ALL[@]} + 3))" bash -c \
	'"$0" "$1" "$2" "${@:3}" | grep -c "^LEAK "' "$PY" "$H/bin/probe.py" "$H" "${ALL[@]}"
check_eq "control: ordinary files beside the file stores read" \
	"ordinary config
ordinary cargo
ordinary share" wr home cat "$H/.config/other/settings" "$H/.cargo/config.toml" "$H/.local/share/other/data"

echo "# one store opted back in: { path: ~/.claude, sensitive: true }"
check_eq "~/.claude/.credentials.json reads" "SECRET token" wr optin cat "$H/.claude/.credentials.json"
check_fails "... while ~/.ssh stays hidden" wr optin cat "$H/.ssh/secret"
check_fails "... and ~/.claude.json (another store) too" wr optin cat "$H/.claude.json"
check_eq "... and the probe finds only ~/.claude's two files" \
	"LEAK $H/.claude/.credentials.json
LEAK $H/.claude/secret" bash -c \
	'HOME=$0 ip netns exec "$1" "$2" run -q --audit-log "$3" -p "$4" -- "$5" "$6" "$0" "${@:7}" | grep "^LEAK " | sort' \
	"$H" "$LAB_HOST_NS" "$W" "$A" "$T/optin.yaml" "$PY" "$H/bin/probe.py" "${ALL[@]}"

echo "# one file of a store opted back in: { path: ~/.aws/config, sensitive: true }"
check_eq "~/.aws/config reads" "SECRET aws config" wr optfile cat "$H/.aws/config"
check_fails "... while the rest of ~/.aws stays hidden" wr optfile cat "$H/.aws/secret"
check_fails "... and ~/.ssh too" wr optfile cat "$H/.ssh/secret"

echo "# one warning per grant, listing the stores (issue 27 item 8)"
check_eq "policy check of read: [~]: one credential-store warning" 1 bash -c \
	'HOME=$0 "$1" policy check "$2" 2>&1 >/dev/null | grep -c "credential store"' "$H" "$W" "$T/home.yaml"
check "... that names ~/.ssh, ~/.claude.json and ~/.bash_history" bash -c \
	'HOME=$0 "$1" policy check "$2" 2>&1 >/dev/null | grep "credential store" | grep "~/.ssh" | grep "~/.claude.json" | grep -q "~/.bash_history"' \
	"$H" "$W" "$T/home.yaml"
check_eq "policy check of write: [~] (a home with ~/.ssh alone): one warning for the store it hides" 1 bash -c \
	'HOME=$0 "$1" policy check "$2" 2>&1 >/dev/null | grep "credential store" | grep -c "will be hidden"' "$T/home2" "$W" "$T/homew.yaml"
check_eq "... and one for all those it could create" 1 bash -c \
	'HOME=$0 "$1" policy check "$2" 2>&1 >/dev/null | grep "credential store" | grep -c "could create"' "$T/home2" "$W" "$T/homew.yaml"

lab_finish
