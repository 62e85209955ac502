/* sbpl.c - the Seatbelt profile of a run, rendered from its grants (sbpl.h): deny by default,
 * the macOS runtime read-only, the policy's grants, the credential stores masked after them,
 * the network closed but for the gateway's proxy port on loopback, no DNS service.
 *
 * Seatbelt applies the LAST rule that matches an operation, so the order is the design:
 * base and grants first, masks after the grants that hold them, sensitive grants after the
 * masks (the user asked for them by name), network and DNS denials last. The base is a table
 * of rules with the reason for each (emitted as a comment above it), after the profiles of
 * Chromium, Codex and sandbox-runtime, narrowed where they read more than a program needs.
 * docs/run.md, "Backends: Seatbelt (macOS)", has the long form. Never run on a real Mac.
 */
#include "sandbox/sbpl.h"

#include <errno.h>
#include <string.h>

const char *const sandbox_sbpl_macos_stores[] = {
    "~/Library/Keychains",
    "~/Library/Cookies",
    "~/Library/Application Support/Google/Chrome",
    "~/Library/Application Support/Firefox",
    "~/Library/Application Support/BraveSoftware",
    "~/Library/Application Support/Microsoft Edge",
    "~/Library/Application Support/1Password",
    "~/Library/Application Support/Bitwarden",
    "~/Library/Group Containers/2BUA8C4S2C.com.1password",
    "~/Library/Mail",
    "~/Library/Messages",
    "~/Library/Safari",
};
const size_t sandbox_sbpl_macos_nstores =
    sizeof(sandbox_sbpl_macos_stores) / sizeof(sandbox_sbpl_macos_stores[0]);

/* The runtime base: what any program needs to start and run on macOS, nothing of the user's.
 * Constant text: no path in it comes from a policy. */
static const struct {
	const char *why;
	const char *rule;
} base[] = {
    {"a program starts others; each inherits this profile",
     "(allow process-fork)\n(allow process-exec)"},
    {"signals and process information inside the sandbox only",
     "(allow signal (target same-sandbox))\n(allow process-info* (target same-sandbox))"},
    {"the dynamic loader, libc, frameworks, the dyld shared cache (also in the Cryptexes of "
     "macOS 13+); /System/Volumes/Data is left out: it holds /Users by firmlink",
     "(allow file-read* file-map-executable\n"
     "  (subpath \"/usr/lib\")\n"
     "  (subpath \"/System/Library\")\n"
     "  (subpath \"/System/Cryptexes\")\n"
     "  (subpath \"/System/Volumes/Preboot/Cryptexes\")\n"
     "  (subpath \"/System/iOSSupport\")\n"
     "  (subpath \"/Library/Apple\")\n"
     "  (subpath \"/private/var/db/dyld\"))"},
    {"the system's programs and their data (shells, env, the zoneinfo)",
     "(allow file-read*\n"
     "  (subpath \"/bin\")\n"
     "  (subpath \"/sbin\")\n"
     "  (subpath \"/usr/bin\")\n"
     "  (subpath \"/usr/sbin\")\n"
     "  (subpath \"/usr/libexec\")\n"
     "  (subpath \"/usr/share\")\n"
     "  (subpath \"/private/var/db/timezone\"))"},
    {"configuration: passwd, hosts, resolv, the CA bundle, localtime (Unix permissions still "
     "apply)",
     "(allow file-read* (subpath \"/private/etc\"))"},
    {"interpreters from Homebrew and /usr/local (node, python), not their var/ or etc/",
     "(allow file-read* file-map-executable\n"
     "  (subpath \"/opt/homebrew/bin\")\n"
     "  (subpath \"/opt/homebrew/lib\")\n"
     "  (subpath \"/opt/homebrew/opt\")\n"
     "  (subpath \"/opt/homebrew/Cellar\")\n"
     "  (subpath \"/opt/homebrew/share\")\n"
     "  (subpath \"/opt/homebrew/Frameworks\")\n"
     "  (subpath \"/usr/local/bin\")\n"
     "  (subpath \"/usr/local/lib\")\n"
     "  (subpath \"/usr/local/opt\")\n"
     "  (subpath \"/usr/local/Cellar\")\n"
     "  (subpath \"/usr/local/share\")\n"
     "  (subpath \"/usr/local/Frameworks\"))"},
    {"stat of the roots and their symlinks (/etc, /tmp, /var point into /private)",
     "(allow file-read-metadata\n"
     "  (literal \"/\")\n"
     "  (literal \"/etc\")\n"
     "  (literal \"/tmp\")\n"
     "  (literal \"/var\")\n"
     "  (literal \"/private\")\n"
     "  (literal \"/private/var\"))"},
    {"the devices every process reads and writes, and randomness",
     "(allow file-read* file-write*\n"
     "  (literal \"/dev/null\")\n"
     "  (literal \"/dev/zero\")\n"
     "  (literal \"/dev/tty\")\n"
     "  (literal \"/dev/dtracehelper\")\n"
     "  (subpath \"/dev/fd\"))\n"
     "(allow file-read* (literal \"/dev/random\") (literal \"/dev/urandom\"))\n"
     "(allow file-ioctl (literal \"/dev/null\") (literal \"/dev/tty\") "
     "(literal \"/dev/dtracehelper\"))"},
    {"hardware and kernel facts runtimes size themselves by (CPUs, page size, OS version)",
     "(allow sysctl-read\n"
     "  (sysctl-name \"hw.activecpu\")\n"
     "  (sysctl-name \"hw.byteorder\")\n"
     "  (sysctl-name \"hw.cachelinesize_compat\")\n"
     "  (sysctl-name \"hw.cputype\")\n"
     "  (sysctl-name \"hw.logicalcpu\")\n"
     "  (sysctl-name \"hw.logicalcpu_max\")\n"
     "  (sysctl-name \"hw.machine\")\n"
     "  (sysctl-name \"hw.memsize\")\n"
     "  (sysctl-name \"hw.ncpu\")\n"
     "  (sysctl-name \"hw.pagesize\")\n"
     "  (sysctl-name \"hw.pagesize_compat\")\n"
     "  (sysctl-name \"hw.physicalcpu\")\n"
     "  (sysctl-name \"hw.physicalcpu_max\")\n"
     "  (sysctl-name \"kern.argmax\")\n"
     "  (sysctl-name \"kern.maxfilesperproc\")\n"
     "  (sysctl-name \"kern.osproductversion\")\n"
     "  (sysctl-name \"kern.osrelease\")\n"
     "  (sysctl-name \"kern.ostype\")\n"
     "  (sysctl-name \"kern.osversion\")\n"
     "  (sysctl-name \"kern.version\")\n"
     "  (sysctl-name \"sysctl.proc_cputype\")\n"
     "  (sysctl-name \"vm.loadavg\")\n"
     "  (sysctl-name-prefix \"hw.optional.\")\n"
     "  (sysctl-name-prefix \"hw.perflevel\")\n"
     "  (sysctl-name-prefix \"kern.proc.pid.\")\n"
     "  (sysctl-name-prefix \"machdep.cpu.\"))"},
    {"preferences, POSIX semaphores and shared memory (Python multiprocessing)",
     "(allow user-preference-read)\n(allow ipc-posix-sem)\n(allow ipc-posix-shm)"},
    {"user lookups (getpwuid), logging, certificate trust; by name, never every service",
     "(allow mach-lookup\n"
     "  (global-name \"com.apple.system.opendirectoryd.libinfo\")\n"
     "  (global-name \"com.apple.system.logger\")\n"
     "  (global-name \"com.apple.logd\")\n"
     "  (global-name \"com.apple.trustd.agent\"))"},
};

/* SBPL's `subpath` and `literal` match whole paths, so a grant's path must be the canonical
 * one the kernel reports: absolute, no empty, `.` or `..` component, no trailing slash. */
static bool canonical(const char *p)
{
	const char *c = p;

	if (p[0] != '/')
		return false;
	if (!p[1])
		return true;
	while (*c) {
		size_t n;

		c++; /* past the '/' */
		n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += n;
	}
	return true;
}

/* @in lies at or below @root (whole components). */
static bool within(const char *in, const char *root)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return true;
	return !strncmp(in, root, n) && (in[n] == '\0' || in[n] == '/');
}

int sandbox_sbpl_quote(struct wd_buf *out, const char *s)
{
	int ret;

	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return -EINVAL;
	ret = wd_buf_puts(out, "\"");
	for (const char *c = s; !ret && *c; c++) {
		if (*c == '"' || *c == '\\')
			ret = wd_buf_append(out, "\\", 1);
		if (!ret)
			ret = wd_buf_append(out, c, 1);
	}
	return ret ? ret : wd_buf_puts(out, "\"");
}

/* one `(OPS (FILTER "path"))` line; the path checked first */
static int rule(struct wd_buf *out, const char *ops, const char *filter, const char *path,
		struct wd_err *err)
{
	int ret;

	if (!canonical(path))
		return wd_err_set(err, -EINVAL,
				  "seatbelt profile: `%s` is not an absolute canonical path", path);
	ret = wd_buf_printf(out, "(%s (%s ", ops, filter);
	if (!ret)
		ret = sandbox_sbpl_quote(out, path);
	if (ret == -EINVAL)
		return wd_err_set(err, -EINVAL, "seatbelt profile: `%s` holds a control character",
				  path);
	return ret ? ret : wd_buf_puts(out, "))\n");
}

static bool held_by(const struct sandbox_sbpl_in *in, const char *path, bool sensitive)
{
	for (size_t i = 0; i < in->nread; i++)
		if (in->read[i].sensitive == sensitive && within(path, in->read[i].path))
			return true;
	for (size_t i = 0; i < in->nwrite; i++)
		if (in->write[i].sensitive == sensitive && within(path, in->write[i].path))
			return true;
	return !sensitive && in->tmpdir && within(path, in->tmpdir);
}

static bool in_write(const struct sandbox_sbpl_in *in, const char *path)
{
	for (size_t i = 0; i < in->nwrite; i++)
		if (within(path, in->write[i].path))
			return true;
	return in->tmpdir && within(path, in->tmpdir);
}

/* Hide @m: no read, write or map of it or below; and its ancestors that a write grant holds
 * cannot be renamed (moving the folder would carry @m out from under the rule). */
static int mask(struct wd_buf *out, const struct sandbox_sbpl_in *in, const char *m,
		struct wd_err *err)
{
	char anc[4096];
	int ret = rule(out, "deny file-read* file-write* file-map-executable", "subpath", m, err);

	if (ret || strlen(m) >= sizeof(anc))
		return ret ? ret : wd_err_set(err, -EINVAL, "seatbelt profile: path too long");
	memcpy(anc, m, strlen(m) + 1);
	for (char *slash = strrchr(anc, '/'); slash && slash != anc; slash = strrchr(anc, '/')) {
		*slash = '\0';
		if (!in_write(in, anc))
			continue;
		ret = rule(out, "deny file-write-unlink", "literal", anc, err);
		if (ret)
			return ret;
	}
	return 0;
}

static bool listed(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

/* @after: the sensitive grants that lie inside a mask of @masks, which come again after the
 * masks; else every other grant */
static int grants(struct wd_buf *out, const struct sandbox_sbpl_grant *g, size_t n, const char *ops,
		  const char *const *masks, size_t nmasks, bool after, struct wd_err *err)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < n; i++) {
		bool inside = false;

		for (size_t j = 0; j < nmasks; j++)
			inside |= within(g[i].path, masks[j]);
		if ((g[i].sensitive && inside) == after)
			ret = rule(out, ops, "subpath", g[i].path, err);
	}
	return ret;
}

static const char *nth_path(const struct sandbox_sbpl_in *in, size_t i)
{
	if (i < in->nread)
		return in->read[i].path;
	if (i < in->nread + in->nwrite)
		return in->write[i - in->nread].path;
	return in->tmpdir;
}

/* stat of each folder above a grant or the TMPDIR, so that realpath() and getcwd() can walk
 * up to it; each folder once */
static int ancestors(struct wd_buf *out, const struct sandbox_sbpl_in *in, struct wd_err *err)
{
	size_t n = in->nread + in->nwrite + (in->tmpdir ? 1 : 0);
	char anc[4096];
	int ret = 0;

	for (size_t i = 0; !ret && i < n; i++) {
		const char *p = nth_path(in, i);

		if (strlen(p) >= sizeof(anc))
			return wd_err_set(err, -EINVAL, "seatbelt profile: path too long");
		memcpy(anc, p, strlen(p) + 1);
		for (char *s = strrchr(anc, '/'); !ret && s && s != anc; s = strrchr(anc, '/')) {
			bool seen = false;

			*s = '\0';
			for (size_t j = 0; j < i; j++)
				seen |= within(nth_path(in, j), anc);
			if (!seen)
				ret = rule(out, "allow file-read-metadata", "literal", anc, err);
		}
	}
	return ret;
}

#define RW "allow file-read* file-write* file-map-executable"
#define RO "allow file-read* file-map-executable"

/* The stores to mask: validate's masks that are stores, and every store a non-sensitive grant
 * holds and no sensitive one does (whether it exists or not: a rule needs no file). */
static int store_masks(const struct sandbox_sbpl_in *in, const char **v, size_t max, size_t *ret_n,
		       struct wd_err *err)
{
	size_t n = 0;

	for (size_t i = 0; i < in->nstores; i++) {
		const char *s = in->stores[i];

		if (!listed(in->mask, in->nmask, s) &&
		    (!held_by(in, s, false) || held_by(in, s, true)))
			continue;
		if (listed(v, n, s))
			continue;
		if (n == max)
			return wd_err_set(err, -EINVAL, "seatbelt profile: more than %zu masks",
					  max);
		v[n++] = s;
	}
	*ret_n = n;
	return 0;
}

int sandbox_sbpl_render(const struct sandbox_sbpl_in *in, struct wd_buf *out, struct wd_err *err)
{
	const char *stores[256];
	size_t nstores = 0;
	int ret;

	ret = store_masks(in, stores, sizeof(stores) / sizeof(stores[0]), &nstores, err);
	if (!ret)
		ret = wd_buf_puts(out, "(version 1)\n; generated by warden from the policy: "
				       "Seatbelt applies the last rule that matches\n"
				       "(deny default)\n");
	for (size_t i = 0; !ret && i < sizeof(base) / sizeof(base[0]); i++)
		ret = wd_buf_printf(out, "\n; %s\n%s\n", base[i].why, base[i].rule);
	if (!ret)
		ret = wd_buf_puts(out, "\n; the folders above the grants, to stat\n");
	if (!ret)
		ret = ancestors(out, in, err);
	if (!ret)
		ret = wd_buf_puts(out, "\n; filesystem.read\n");
	if (!ret)
		ret = grants(out, in->read, in->nread, RO, stores, nstores, false, err);
	if (!ret)
		ret = wd_buf_puts(out, "\n; filesystem.write, and the run's TMPDIR\n");
	if (!ret)
		ret = grants(out, in->write, in->nwrite, RW, stores, nstores, false, err);
	if (!ret && in->tmpdir)
		ret = rule(out, RW, "subpath", in->tmpdir, err);
	if (!ret)
		ret = wd_buf_puts(out, "\n; credential stores inside a grant, after the grants\n");
	for (size_t i = 0; !ret && i < nstores; i++)
		ret = mask(out, in, stores[i], err);
	if (!ret)
		ret = wd_buf_puts(out, "\n; sensitive grants inside a store: asked for by name\n");
	if (!ret)
		ret = grants(out, in->read, in->nread, RO, stores, nstores, true, err);
	if (!ret)
		ret = grants(out, in->write, in->nwrite, RW, stores, nstores, true, err);
	if (!ret)
		ret = wd_buf_puts(out, "\n; protected files inside a grant (the audit log...), "
				       "last of the paths\n");
	for (size_t i = 0; !ret && i < in->nmask; i++)
		if (!listed(stores, nstores, in->mask[i]))
			ret = mask(out, in, in->mask[i], err);
	if (!ret)
		ret = wd_buf_puts(out, "\n; network: only the gateway's proxy on loopback\n"
				       "(deny network*)\n");
	if (!ret && in->proxy_port)
		ret = wd_buf_printf(out, "(allow network-outbound (remote ip \"localhost:%u\"))\n",
				    (unsigned)in->proxy_port);
	if (!ret)
		ret = wd_buf_puts(out,
				  "\n; names are the proxy's to resolve: no DNS service\n"
				  "(deny mach-lookup (global-name \"com.apple.dnssd.service\"))\n");
	return ret;
}
