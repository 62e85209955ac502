#!/usr/bin/env bash
# worker_needed.sh - warden-gateway-worker, the process that reads sandbox bytes, does not
# link libnftnl, libmnl or libnl (ARCHITECTURE.md §1): none is in its ELF NEEDED entries.
# Positive controls: the worker's NEEDED lists libc, and warden-gateway's (the privileged
# parent, which applies nft updates) lists libnftnl.
# Usage: worker_needed.sh READELF WORKER PARENT
set -u
READELF=$1 WORKER=$2 PARENT=$3
for f in "$READELF" "$WORKER" "$PARENT"; do
	[[ -e $f ]] || { echo "ERROR - missing $f"; exit 2; }
done
needed() { "$READELF" -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p'; }
W=$(needed "$WORKER") P=$(needed "$PARENT")
NFT='^lib(nftnl|mnl|nl-[0-9]|nl-route-[0-9]|nl-genl-[0-9])[.-]'
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; fail=$((fail + 1)); }
grep -q '^libc\.so' <<<"$W" && ok "the worker's NEEDED lists libc (the probe reads it)" ||
	{ echo "ERROR - no libc in the worker's NEEDED: $W"; exit 2; }
grep -Eq "$NFT" <<<"$P" && ok "warden-gateway's NEEDED lists libnftnl (the probe sees it)" ||
	{ echo "ERROR - no libnftnl in warden-gateway's NEEDED: $P"; exit 2; }
if grep -Eq "$NFT" <<<"$W"; then
	bad "the worker needs $(grep -E "$NFT" <<<"$W" | tr '\n' ' ')"
else
	ok "the worker needs none of libnftnl, libmnl, libnl ($(echo $W))"
fi
echo "$pass passed, $fail failed"
((fail == 0))
