/* sbpl.h - the Seatbelt profile of a run (macOS `sandbox-exec -f`): rendered from the paths
 * a policy grants (sbpl.c) and checked against its invariants by a small reader of the
 * profile language (sbpl_check.c). Pure and portable: no Linux header, no syscall, so it
 * builds and is tested on Linux and builds for macOS alike; that is why it is not part of
 * sandbox.h (which includes <linux/seccomp.h>).
 *
 * sandbox/ uses only common/ (tests/unit/layers.py), so the input is not a struct wd_policy:
 * the backend (run/) fills struct sandbox_sbpl_in from the validated policy (grants' real
 * paths, its masks) and the credential stores with `~` expanded. docs/run.md,
 * "Backends: Seatbelt (macOS)", explains every rule of the profile. It has never run on a real Mac.
 */
#ifndef WARDEN_SANDBOX_SBPL_H
#define WARDEN_SANDBOX_SBPL_H

#include "common/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * struct sandbox_sbpl_grant - one filesystem grant
 * @path:	absolute canonical path (no `//`, `.` or `..` component, no trailing `/`)
 * @sensitive:	the grant said `sensitive: true`: it may expose a credential store, so it is
 *		allowed again after the masks
 */
struct sandbox_sbpl_grant {
	const char *path;
	bool sensitive;
};

/**
 * struct sandbox_sbpl_in - what the profile is rendered from
 * @read:	filesystem.read grants
 * @nread:	their number
 * @write:	filesystem.write grants (read and written)
 * @nwrite:	their number
 * @mask:	paths policy_validate() hides (credential stores and protected files that
 *		exist inside a grant), absolute
 * @nmask:	their number
 * @stores:	every credential store, absolute (policy_credential_stores() and
 *		sandbox_sbpl_macos_stores[] with `~` made the home folder): one that a
 *		non-sensitive grant holds is masked whether it exists or not
 * @nstores:	their number
 * @tmpdir:	the run's own temporary folder (TMPDIR), written like a write grant; NULL: none
 * @proxy_port:	the port of the gateway's proxy on loopback, the one network destination;
 *		0: no network at all
 */
struct sandbox_sbpl_in {
	const struct sandbox_sbpl_grant *read;
	size_t nread;
	const struct sandbox_sbpl_grant *write;
	size_t nwrite;
	const char *const *mask;
	size_t nmask;
	const char *const *stores;
	size_t nstores;
	const char *tmpdir;
	uint16_t proxy_port;
};

/* Credential stores of macOS that policy_credential_stores() (a Linux list) lacks, "~/..."
 * (sbpl.c): the keychains, cookies, browsers' and password managers' profiles. */
extern const char *const sandbox_sbpl_macos_stores[];
extern const size_t sandbox_sbpl_macos_nstores;

/**
 * sandbox_sbpl_quote() - append @s as an SBPL string literal: `"`, the bytes with `"` and `\`
 * escaped by a `\`, `"`
 * @out:	buffer to append to
 * @s:		the string
 *
 * A control byte (below 0x20, or 0x7f) is refused rather than escaped: the profile reader's
 * escapes beyond `\"` and `\\` are not documented, and no canonical path Warden grants needs
 * one.
 *
 * Return: 0, -EINVAL for a control byte (nothing appended), -ENOMEM.
 */
int sandbox_sbpl_quote(struct wd_buf *out, const char *s);

/**
 * sandbox_sbpl_render() - the Seatbelt profile for @in
 * @in:		grants, masks, stores, the proxy port
 * @out:	buffer the profile is appended to (text, one rule a line or a few, `;` comments)
 * @err:	what was refused (the path and why)
 *
 * In order: `(version 1)`, `(deny default)`, the runtime base (read-only system paths,
 * devices, process, sysctl and mach services a program needs at start-up), read grants
 * (file-read*), write grants and @tmpdir (file-read* file-write*), masks (deny file-read*
 * file-write*, and renaming their ancestors), sensitive grants again, `(deny network*)` then
 * only the loopback proxy port, and last the DNS service denied by name. Seatbelt applies
 * the last rule that matches, so what comes later wins.
 *
 * Return: 0, -EINVAL for a path that is not absolute and canonical or holds a control byte
 * (@out may then hold part of the profile), -ENOMEM.
 */
int sandbox_sbpl_render(const struct sandbox_sbpl_in *in, struct wd_buf *out, struct wd_err *err);

/**
 * sandbox_sbpl_check() - read @text as an SBPL profile and check the invariants Warden's
 * profiles keep, for the grants of @in
 * @text:	the profile, NUL-terminated
 * @in:		the grants, stores and proxy port it was made for
 * @err:	the first invariant broken, with the line of the rule that breaks it
 *
 * The invariants: the first form is `(version 1)`; `(deny default)` comes before any allow;
 * nothing allows `default`; every allow of a file-write operation names only `literal` or
 * `subpath` paths inside a write grant or @in->tmpdir (or one of the devices every process
 * writes: /dev/null, /dev/zero, /dev/tty, /dev/dtracehelper, /dev/fd); the only allowed
 * network operation is `(allow network-outbound (remote ip "localhost:PORT"))` with PORT
 * @in->proxy_port; no allow of mach-lookup without a name, nor of the DNS service
 * (com.apple.dnssd.service, mDNSResponder); no allow that holds a denied (masked) path comes
 * after the deny; and every credential store of @in and mask that a non-sensitive grant holds
 * is unreadable when the profile's rules are applied in order, last match winning (a store a
 * sensitive grant holds is the user's choice and is skipped).
 *
 * Pure. The reader knows lists, symbols, numbers, `"strings"` with `\` escapes and `;`
 * comments; anything else (`#"regex"`, an unclosed list) is refused.
 *
 * Return: 0 when every invariant holds, -EINVAL when one does not or @text cannot be read,
 * -ENOMEM.
 */
int sandbox_sbpl_check(const char *text, const struct sandbox_sbpl_in *in, struct wd_err *err);

#endif /* WARDEN_SANDBOX_SBPL_H */
