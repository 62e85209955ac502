/* backend.c - which sandbox backend confines a run: the registry of backends (name, OS, what
 * it is, its operations when this build has them), each one's probe, and the choice among them
 * (--backend, sandbox.backend, else the OS's own backend, else a fallback the policy names).
 *
 * Theory of operation. A run's backend is chosen once, in the prerequisites stage, before
 * anything exists (no run id, no run.start, no namespace):
 *
 *   forced    --backend NAME, else the policy's sandbox.backend: that backend or nothing; one
 *             that cannot run here fails the run with its probe's reason, never a fallback
 *   native    neither: the OS's own backend (Linux: bubblewrap) when its probe passes
 *   fallback  the native one cannot run: a backend the policy's sandbox.fallback names, in the
 *             registry's order, when its probe passes; none named, or none that runs, fails
 *             the run saying why the native one cannot run and how to allow a fallback
 *
 * run_backend_choose() is the pure part (probe results in, a choice or a reason out);
 * run_backend_probe() asks one backend. A backend this build does not have says so in its
 * probe: it is never chosen. */
#include "run/internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/**
 * struct backend_entry - one backend of the registry
 * @id:		enum policy_backend
 * @os:		the only OS it runs on ("Linux", "macOS", "Windows"), or NULL: any
 * @what:	what confines the program, for doctor
 * @own_root:	its sandbox has a root file system of its own (an image): the command is
 *		found there, not on the host
 * @ops:	its operations, or NULL: not in this build
 */
struct backend_entry {
	unsigned id;
	const char *os;
	const char *what;
	bool own_root;
	const struct sandbox_backend *ops;
};

/* The registry, in the order auto-selection tries fallbacks. */
static const struct backend_entry registry[] = {
    {POLICY_BACKEND_LINUX, "Linux", "bubblewrap + seccomp", false, &sandbox_backend_bwrap},
    {POLICY_BACKEND_DOCKER, "Linux", "a Docker container", true, &sandbox_backend_docker},
    {POLICY_BACKEND_SEATBELT, "macOS", "sandbox-exec (Seatbelt)", false, NULL},
    {POLICY_BACKEND_WINDOWS, "Windows", "AppContainer + a Job Object", false, NULL},
};

#if defined(__APPLE__)
#define THIS_OS "macOS"
#define NATIVE POLICY_BACKEND_SEATBELT
#elif defined(_WIN32)
#define THIS_OS "Windows"
#define NATIVE POLICY_BACKEND_WINDOWS
#else
#define THIS_OS "Linux"
#define NATIVE POLICY_BACKEND_LINUX
#endif

static const struct backend_entry *entry_of(unsigned id)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(registry); i++)
		if (registry[i].id == id)
			return &registry[i];
	return NULL;
}

unsigned run_backend_native(void)
{
	return NATIVE;
}

bool run_backend_own_root(unsigned id)
{
	const struct backend_entry *e = entry_of(id);

	return e && e->own_root;
}

const struct sandbox_backend *run_backend_ops(unsigned id)
{
	const struct backend_entry *e = entry_of(id);

	return e ? e->ops : NULL;
}

void run_backend_probe_keep(unsigned id, struct run_backend_probe *out, struct sandbox *keep)
{
	const struct backend_entry *be = entry_of(id);
	const char *name = policy_backend_name(id);
	struct sandbox_err e = {0};
	struct sandbox sb;

	*out = (struct run_backend_probe){.probed = true};
	if (keep)
		*keep = SANDBOX_INIT(be ? be->ops : NULL);
	if (!be || !name) {
		snprintf(out->why, sizeof(out->why), "no such backend");
		return;
	}
	if (be->os && strcmp(be->os, THIS_OS)) {
		snprintf(out->why, sizeof(out->why), "the %s backend is %s only (this is %s)", name,
			 be->os, THIS_OS);
		out->fix = "choose a backend of this OS (warden doctor lists them)";
		return;
	}
	if (!be->ops) {
		snprintf(out->why, sizeof(out->why),
			 "the %s backend is not in this build of warden", name);
		out->fix = "choose a backend this build has (warden doctor lists them)";
		return;
	}
	sb = SANDBOX_INIT(be->ops);
	if (be->ops->probe(keep ? keep : &sb, &e)) {
		snprintf(out->why, sizeof(out->why), "%s", e.msg);
		out->fix = e.fix;
	} else {
		out->ok = true;
	}
	be->ops->release(&sb);
}

void run_backend_probe(unsigned id, struct run_backend_probe *out)
{
	run_backend_probe_keep(id, out, NULL);
}

unsigned run_backend_needed(const struct run_backend_ask *a)
{
	unsigned forced = a->flag ? a->flag : a->key;

	if (forced)
		return 1u << forced;
	return (1u << a->native) | a->fallback;
}

/* "--backend docker" / "sandbox.backend: docker" / "the native backend linux" */
static const char *origin(const struct run_backend_ask *a, char *buf, size_t size)
{
	if (a->flag)
		snprintf(buf, size, "--backend %s", policy_backend_name(a->flag));
	else if (a->key)
		snprintf(buf, size, "sandbox.backend: %s (the policy)",
			 policy_backend_name(a->key));
	else
		snprintf(buf, size, "the native backend %s", policy_backend_name(a->native));
	return buf;
}

int run_backend_choose(const struct run_backend_ask *a, const struct run_backend_probe *probes,
		       unsigned *ret, char *why, size_t size, const char **ret_fix)
{
	unsigned forced = a->flag ? a->flag : a->key;
	const struct run_backend_probe *np;
	char from[96];
	size_t n;

	*ret_fix = NULL;
	if (forced >= POLICY_BACKEND_N || a->native == POLICY_BACKEND_AUTO ||
	    a->native >= POLICY_BACKEND_N) {
		snprintf(why, size, "no such backend");
		return -EINVAL;
	}
	if (forced) {
		if (probes[forced].probed && probes[forced].ok) {
			*ret = forced;
			return 0;
		}
		snprintf(why, size, "%s cannot run here: %s; a chosen backend is never replaced",
			 origin(a, from, sizeof(from)),
			 probes[forced].probed ? probes[forced].why : "not probed");
		*ret_fix = probes[forced].fix;
		return -ENOENT;
	}
	np = &probes[a->native];
	if (np->probed && np->ok) {
		*ret = a->native;
		return 0;
	}
	n = (size_t)snprintf(why, size, "%s cannot run here: %s", origin(a, from, sizeof(from)),
			     np->probed ? np->why : "not probed");
	if (n >= size)
		n = size ? size - 1 : 0;
	if (!(a->fallback & ~(1u << a->native))) {
		snprintf(why + n, size - n,
			 "; not falling back to another backend: the policy allows none "
			 "(sandbox.fallback)");
		*ret_fix = "make the native backend work (warden doctor says how), or allow a "
			   "fallback by name in the policy: `sandbox: {fallback: [docker]}`";
		return -ENOENT;
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(registry); i++) {
		unsigned id = registry[i].id;

		if (id == a->native || !(a->fallback & (1u << id)))
			continue;
		if (probes[id].probed && probes[id].ok) {
			*ret = id;
			return 0;
		}
		n += (size_t)snprintf(
		    why + n, size - n, "; the fallback %s (sandbox.fallback) cannot run either: %s",
		    policy_backend_name(id), probes[id].probed ? probes[id].why : "not probed");
		if (n >= size)
			n = size ? size - 1 : 0;
	}
	*ret_fix = "make the native backend work (warden doctor says how), or a fallback the "
		   "policy names";
	return -ENOENT;
}

int run_backend_doctor(size_t i, char *out, size_t size, bool *ret_ok)
{
	struct run_backend_probe p;
	const char *name;

	if (i >= WD_ARRAY_SIZE(registry))
		return -ENOENT;
	name = policy_backend_name(registry[i].id);
	run_backend_probe(registry[i].id, &p);
	*ret_ok = p.ok;
	if (p.ok)
		snprintf(out, size, "%s: works (%s%s)", name, registry[i].what,
			 registry[i].id == NATIVE
			     ? "; this OS's own, chosen first"
			     : "; used when chosen by name or as a fallback the policy names");
	else
		snprintf(out, size, "%s: does not work here: %s (%s%s)", name, p.why,
			 registry[i].what, registry[i].id == NATIVE ? "; this OS's own" : "");
	return 0;
}
