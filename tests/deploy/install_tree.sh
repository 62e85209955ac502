#!/usr/bin/env bash
# install_tree.sh BUILD_DIR - what `cmake --install` puts down (issue 27, item 10), into a
# folder of the test's (DESTDIR, prefix /usr as the .deb's): the shell completions where
# bash-completion, zsh and fish look for a package's, the licence as share/doc/warden/copyright
# (Debian's format), and one gateway.yaml: the host's config, /etc/warden/gateway.yaml, not a
# second copy among the examples. The .deb is checked the same way by package.sh.
set -u
BUILD=${1:?usage: install_tree.sh BUILD_DIR}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/tests/lab/lib.sh"
T=$(mktemp -d /tmp/wd-install-XXXXXX)
trap 'rm -rf "$T"' EXIT
D=$T/root

check "cmake --install (DESTDIR, prefix /usr)" bash -c \
	'DESTDIR="$1" cmake --install "$0" --prefix /usr >"$2/install.log" 2>&1 || { cat "$2/install.log"; exit 1; }' \
	"$BUILD" "$D" "$T"
check "bash completion in share/bash-completion/completions/warden" test -s "$D/usr/share/bash-completion/completions/warden"
check "zsh completion in share/zsh/vendor-completions/_warden" test -s "$D/usr/share/zsh/vendor-completions/_warden"
check "fish completion in share/fish/vendor_completions.d/warden.fish" test -s "$D/usr/share/fish/vendor_completions.d/warden.fish"
check_eq "the installed bash completion loads" "complete -o bashdefault -o default -F _warden warden" \
	bash -c 'source "$0" && complete -p warden' "$D/usr/share/bash-completion/completions/warden"
check "share/doc/warden/copyright is in Debian's format" lab_match \
	'^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/$' \
	cat "$D/usr/share/doc/warden/copyright"
check "... under the MIT licence, its full text (LICENSE)" bash -c \
	'grep -qx "License: MIT" "$0" && grep -q "^ Permission is hereby granted" "$0" && grep -q "^ SOFTWARE.$" "$0"' \
	"$D/usr/share/doc/warden/copyright"
check_eq "one gateway.yaml in the install: /etc/warden/gateway.yaml" "/etc/warden/gateway.yaml" \
	bash -c 'cd "$0" && find . -name gateway.yaml | sed "s|^\.||"' "$D"
check "control: the examples are installed (without a gateway.yaml)" test -s "$D/usr/share/doc/warden/examples/minimal.yaml"
check "the man pages are installed" test -s "$D/usr/share/man/man1/warden.1"
lab_finish
