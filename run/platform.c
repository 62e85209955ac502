/* platform.c - what a run on another OS's backend would enforce, from a validated policy: the
 * Seatbelt profile of the macOS backend (sandbox/sbpl.c) and the AppContainer plan of the
 * Windows backend (sandbox/winplan.c), each checked against its invariants before it is
 * given out (`warden policy check --for macos|windows`, docs/platforms.md). The policy's
 * grants (their real paths), its masks and the credential stores are translated here, where
 * policy/ and sandbox/ meet; neither backend runs on this OS yet. */
#include "run/run.h"
#include "policy/policy.h"
#include "sandbox/sbpl.h"
#include "sandbox/winplan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The grants of @p that exist (real path known) into @ret (@n of them); @write: write grants. */
static int grants_of(const struct wd_policy *p, bool write, struct sandbox_sbpl_grant **ret,
		     size_t *ret_n)
{
	const struct policy_grant *g = write ? p->write : p->read;
	size_t n = write ? p->nwrite : p->nread, k = 0;
	struct sandbox_sbpl_grant *v = calloc(n ? n : 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (g[i].real)
			v[k++] = (struct sandbox_sbpl_grant){g[i].real, g[i].sensitive};
	*ret = v;
	*ret_n = k;
	return 0;
}

/* Every credential store, `~` made @home: the policy's table and macOS's own. */
static int stores_of(const char *home, char ***ret, size_t *ret_n)
{
	size_t n = 0, k = 0;
	const char *const *lin = policy_credential_stores(&n);
	char **v = calloc(n + sandbox_sbpl_macos_nstores + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n + sandbox_sbpl_macos_nstores; i++) {
		const char *s = i < n ? lin[i] : sandbox_sbpl_macos_stores[i - n];

		if (!strncmp(s, "~/", 2) && asprintf(&v[k], "%s%s", home, s + 1) < 0)
			v[k] = NULL;
		else if (strncmp(s, "~/", 2))
			v[k] = strdup(s);
		if (!v[k++]) {
			*ret = v;
			*ret_n = k;
			return -ENOMEM;
		}
	}
	*ret = v;
	*ret_n = k;
	return 0;
}

static int render_macos(const struct wd_policy *p, const char *home, uint16_t port,
			const char *tmpdir, struct wd_buf *out, struct wd_err *err)
{
	struct sandbox_sbpl_in in = {.mask = (const char *const *)p->mask,
				     .nmask = p->nmask,
				     .tmpdir = tmpdir,
				     .proxy_port = port};
	struct sandbox_sbpl_grant *r = NULL, *w = NULL;
	char **stores = NULL;
	size_t nstores = 0;
	int ret = grants_of(p, false, &r, &in.nread);

	if (!ret)
		ret = grants_of(p, true, &w, &in.nwrite);
	if (!ret)
		ret = stores_of(home, &stores, &nstores);
	in.read = r;
	in.write = w;
	in.stores = (const char *const *)stores;
	in.nstores = nstores;
	if (!ret)
		ret = sandbox_sbpl_render(&in, out, err);
	/* given out only when it keeps the invariants */
	if (!ret)
		ret = sandbox_sbpl_check(wd_buf_cstr(out), &in, err);
	for (size_t i = 0; stores && i < nstores; i++)
		free(stores[i]);
	free(stores);
	free(r);
	free(w);
	return ret;
}

static int render_windows(const struct wd_policy *p, uint16_t port, struct wd_buf *out,
			  struct wd_err *err)
{
	const char **r = calloc(p->nread + 1, sizeof(*r)), **w = calloc(p->nwrite + 1, sizeof(*w));
	struct sandbox_win_grants g = {.read = r,
				       .write = w,
				       .mask = (const char *const *)p->mask,
				       .nmask = p->nmask,
				       .proxy_port = port};
	struct sandbox_win_plan plan = {0};
	int ret = r && w ? 0 : -ENOMEM;

	for (size_t i = 0; !ret && i < p->nread; i++)
		if (p->read[i].real)
			r[g.nread++] = p->read[i].real;
	for (size_t i = 0; !ret && i < p->nwrite; i++)
		if (p->write[i].real)
			w[g.nwrite++] = p->write[i].real;
	if (!ret)
		ret = sandbox_win_plan_make(&g, &plan, err);
	if (!ret)
		ret = sandbox_win_plan_check(&plan, &g, err);
	if (!ret)
		ret = sandbox_win_plan_render(&plan, out);
	sandbox_win_plan_free(&plan);
	free(r);
	free(w);
	return ret;
}

int run_platform_render(const struct wd_policy *p, const char *os, const char *home, uint16_t port,
			struct wd_buf *out, struct wd_err *err)
{
	if (!strcmp(os, "macos"))
		return render_macos(p, home ? home : "/nonexistent", port, NULL, out, err);
	if (!strcmp(os, "windows"))
		return render_windows(p, port, out, err);
	return wd_err_set(err, -EINVAL,
			  "`%s` is not an OS warden renders for; expected macos or "
			  "windows",
			  os);
}

int run_platform_sbpl(const struct wd_policy *p, const char *home, uint16_t port,
		      const char *tmpdir, struct wd_buf *out, struct wd_err *err)
{
	return render_macos(p, home ? home : "/nonexistent", port, tmpdir, out, err);
}
