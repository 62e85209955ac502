#!/usr/bin/env bash
# libc_only.sh - wd_proto (gateway/proto/) links nothing but libc: every symbol its objects
# leave undefined is defined by the archive itself or by libc. The same check run on
# wd_gateway must fail (it needs c-ares, jansson, ...): proof that the check can fail.
# Compiler runtime hooks (stack protector, sanitizers, fuzzer coverage) are allowed: they
# come from the build's flags, not from what the code calls.
# Usage: libc_only.sh NM LIBC.so.6 LIBWD_PROTO.a LIBWD_GATEWAY.a
set -u
NM=$1 LIBC=$2 PROTO=$3 OTHER=$4
for f in "$NM" "$LIBC" "$PROTO" "$OTHER"; do
	[[ -e $f ]] || { echo "ERROR - missing $f"; exit 2; }
done
LIBC=$(readlink -f "$LIBC")
# the GNU ld script libc.so is not what nm wants; libc.so.6 is the shared object itself
libc_syms=$(mktemp) || exit 2
trap 'rm -f "$libc_syms"' EXIT
"$NM" -D --defined-only "$LIBC" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$libc_syms"
[[ -s $libc_syms ]] || { echo "ERROR - no symbols read from $LIBC"; exit 2; }
grep -qx memcpy "$libc_syms" || { echo "ERROR - $LIBC does not define memcpy?"; exit 2; }

# foreign ARCHIVE: the undefined symbols of ARCHIVE that neither it nor libc define
foreign() {
	local defined undef
	defined=$("$NM" --defined-only --format=posix "$1" 2>/dev/null | awk 'NF >= 2 {print $1}' | sort -u)
	undef=$("$NM" -u --format=posix "$1" 2>/dev/null | awk 'NF >= 2 {print $1}' | sort -u)
	[[ -n $undef ]] || { echo "ERROR - no undefined symbols in $1 (nm failed?)" >&2; return 2; }
	comm -23 <(echo "$undef") <(printf '%s\n' "$defined" | sort -u) |
		comm -23 - "$libc_syms" |
		grep -Ev '^(__stack_chk_fail|__stack_chk_guard|_GLOBAL_OFFSET_TABLE_|__(asan|ubsan|lsan|sanitizer|msan|tsan)_.*|__sancov_.*)$' || true
}

fail=0
out=$(foreign "$OTHER") || exit 2
if [[ -n $out ]]; then
	echo "ok - the check sees non-libc symbols in $(basename "$OTHER") (e.g. $(echo "$out" | head -n1))"
else
	echo "ERROR - the check found nothing foreign in $(basename "$OTHER"): it cannot fail"
	exit 2
fi
out=$(foreign "$PROTO") || exit 2
if [[ -z $out ]]; then
	echo "ok - $(basename "$PROTO") needs nothing but libc"
else
	echo "FAIL - $(basename "$PROTO") needs symbols libc does not define:"
	echo "$out" | sed 's/^/    | /'
	fail=1
fi
((fail)) && { echo "0 passed, 1 failed"; exit 1; }
echo "2 passed, 0 failed"
