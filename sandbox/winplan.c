/* winplan.c - the AppContainer backend's plan from a policy's grants, masks and proxy port:
 * DACL entries and WFP filters as data, their invariants checked, the text; see winplan.h. */
#include "sandbox/winplan.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* fwpmu.h, in enum sandbox_win_layer's order */
const struct sandbox_win_guid sandbox_win_layer_key[SANDBOX_WIN_NLAYERS] = {
    /* FWPM_LAYER_ALE_AUTH_CONNECT_V4 */
    {0xc38d57d1, 0x05a7, 0x4c33, {0x90, 0x4f, 0x7f, 0xbc, 0xee, 0xe6, 0x0e, 0x82}},
    /* FWPM_LAYER_ALE_AUTH_CONNECT_V6 */
    {0x4a72393b, 0x319f, 0x44bc, {0x84, 0xc3, 0xba, 0x54, 0xdc, 0xb3, 0xb6, 0xb4}},
    /* FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V4 */
    {0xe1cd9fe7, 0xf4b5, 0x4273, {0x96, 0xc0, 0x59, 0x2e, 0x48, 0x7b, 0x86, 0x50}},
    /* FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V6 */
    {0xa3b42c97, 0x9f04, 0x4672, {0xb8, 0x7e, 0xce, 0xe9, 0xc4, 0x83, 0x25, 0x7f}},
};
const struct sandbox_win_guid sandbox_win_cond_package_id = {
    0x71bc78fa, 0xf17c, 0x4997, {0xa6, 0x02, 0x6a, 0xbb, 0x26, 0x1f, 0x35, 0x1c}};
const struct sandbox_win_guid sandbox_win_cond_protocol = {
    0x3971ef2b, 0x623e, 0x4f9a, {0x8c, 0xb1, 0x6e, 0x79, 0xb8, 0x06, 0xb9, 0xa7}};
const struct sandbox_win_guid sandbox_win_cond_remote_addr = {
    0xb235ae9a, 0x1d64, 0x49b8, {0xa4, 0x4c, 0x5f, 0xf3, 0xd9, 0x09, 0x50, 0x45}};
const struct sandbox_win_guid sandbox_win_cond_remote_port = {
    0xc35a604d, 0xd22b, 0x4e1a, {0x91, 0xb4, 0x68, 0xf6, 0x74, 0xee, 0x67, 0x4b}};

static const char *const layer_names[SANDBOX_WIN_NLAYERS] = {
    "ALE_AUTH_CONNECT_V4", "ALE_AUTH_CONNECT_V6", "ALE_AUTH_RECV_ACCEPT_V4",
    "ALE_AUTH_RECV_ACCEPT_V6"};

/* The filters of every plan, the proxy port filled in: the permits first. */
static const struct sandbox_win_filter filters[] = {
    {"warden: permit TCP to the loopback proxy (IPv4)", SANDBOX_WIN_CONNECT_V4,
     SANDBOX_WIN_FWP_ACTION_PERMIT, 0, SANDBOX_WIN_WEIGHT_PERMIT, true, 0},
    {"warden: permit TCP to the loopback proxy (IPv6)", SANDBOX_WIN_CONNECT_V6,
     SANDBOX_WIN_FWP_ACTION_PERMIT, 0, SANDBOX_WIN_WEIGHT_PERMIT, true, 0},
    {"warden: block every other connection (IPv4)", SANDBOX_WIN_CONNECT_V4,
     SANDBOX_WIN_FWP_ACTION_BLOCK, SANDBOX_WIN_FWPM_FILTER_FLAG_CLEAR_ACTION_RIGHT,
     SANDBOX_WIN_WEIGHT_BLOCK, false, 0},
    {"warden: block every other connection (IPv6)", SANDBOX_WIN_CONNECT_V6,
     SANDBOX_WIN_FWP_ACTION_BLOCK, SANDBOX_WIN_FWPM_FILTER_FLAG_CLEAR_ACTION_RIGHT,
     SANDBOX_WIN_WEIGHT_BLOCK, false, 0},
    {"warden: block every inbound connection (IPv4)", SANDBOX_WIN_ACCEPT_V4,
     SANDBOX_WIN_FWP_ACTION_BLOCK, SANDBOX_WIN_FWPM_FILTER_FLAG_CLEAR_ACTION_RIGHT,
     SANDBOX_WIN_WEIGHT_BLOCK, false, 0},
    {"warden: block every inbound connection (IPv6)", SANDBOX_WIN_ACCEPT_V6,
     SANDBOX_WIN_FWP_ACTION_BLOCK, SANDBOX_WIN_FWPM_FILTER_FLAG_CLEAR_ACTION_RIGHT,
     SANDBOX_WIN_WEIGHT_BLOCK, false, 0},
};
_Static_assert(sizeof(filters) / sizeof(filters[0]) == SANDBOX_WIN_MAX_FILTERS, "filters");

/* @c folded: ASCII lower case, / as \ */
static char fold(char c)
{
	if (c >= 'A' && c <= 'Z')
		return (char)(c - 'A' + 'a');
	if (c == '/')
		return '\\';
	return c;
}

/* @a and @b are the same path (no case, \ and / alike) */
static bool same_path(const char *a, const char *b)
{
	while (*a && fold(*a) == fold(*b)) {
		a++;
		b++;
	}
	return !*a && !*b;
}

bool sandbox_win_path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	for (size_t i = 0; i < n; i++)
		if (fold(path[i]) != fold(dir[i]))
			return false; /* also ends at path's NUL: dir[i] is not NUL */
	return !path[n] || fold(path[n]) == '\\' || (n && fold(dir[n - 1]) == '\\');
}

/* @path is absolute for Windows ("X:\", "X:/", "\\") or for this machine ("/") */
static bool absolute(const char *path)
{
	char d = fold(path[0]);

	if (d == '\\')
		return true;
	return d >= 'a' && d <= 'z' && path[1] == ':' && fold(path[2]) == '\\';
}

/* @path is one of @list's @n */
static bool listed(const char *path, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (same_path(path, list[i]))
			return true;
	return false;
}

/* @path lies strictly inside one of @list's @n */
static bool inside_any(const char *path, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!same_path(path, list[i]) && sandbox_win_path_within(path, list[i]))
			return true;
	return false;
}

/* parents before children (shorter first), then by bytes, then grant before deny */
static int ace_cmp(const void *a, const void *b)
{
	const struct sandbox_win_ace *x = a, *y = b;
	size_t lx = strlen(x->path), ly = strlen(y->path);
	int c;

	if (lx != ly)
		return lx < ly ? -1 : 1;
	c = strcmp(x->path, y->path);
	if (c)
		return c;
	return (int)x->why - (int)y->why;
}

/* add one ACE to @plan (room was made); Return: 0 or -ENOMEM */
static int add_ace(struct sandbox_win_plan *plan, const char *path,
		   enum sandbox_win_access_mode mode, uint32_t access, enum sandbox_win_why why)
{
	char *copy = strdup(path);

	if (!copy)
		return -ENOMEM;
	plan->aces[plan->naces++] = (struct sandbox_win_ace){.path = copy,
							     .mode = mode,
							     .access = access,
							     .inherit = SANDBOX_WIN_INHERIT,
							     .why = why};
	return 0;
}

/* every path of @list absolute; Return: 0 or -EINVAL */
static int check_paths(const char *what, const char *const *list, size_t n, struct wd_err *err)
{
	for (size_t i = 0; i < n; i++)
		if (!list[i] || !absolute(list[i]))
			return wd_err_set(err, -EINVAL, "%s %s is not an absolute path", what,
					  list[i] ? list[i] : "(null)");
	return 0;
}

int sandbox_win_plan_make(const struct sandbox_win_grants *g, struct sandbox_win_plan *ret,
			  struct wd_err *err)
{
	struct sandbox_win_plan plan = {.sublayer_weight = SANDBOX_WIN_SUBLAYER_WEIGHT,
					.session_flags = SANDBOX_WIN_FWPM_SESSION_FLAG_DYNAMIC,
					.proxy_port = g->proxy_port};
	int r;

	if (!g->proxy_port)
		return wd_err_set(err, -EINVAL, "no proxy port");
	r = check_paths("read grant", g->read, g->nread, err);
	if (!r)
		r = check_paths("write grant", g->write, g->nwrite, err);
	if (!r)
		r = check_paths("mask", g->mask, g->nmask, err);
	if (r)
		return r;
	/* at most: one per write, two per read, one per mask */
	plan.aces = calloc(g->nwrite + 2 * g->nread + g->nmask + 1, sizeof(*plan.aces));
	if (!plan.aces)
		return -ENOMEM;
	for (size_t i = 0; i < g->nwrite && !r; i++)
		if (!listed(g->write[i], g->write, i))
			r = add_ace(&plan, g->write[i], SANDBOX_WIN_GRANT,
				    SANDBOX_WIN_READ_MASK | SANDBOX_WIN_WRITE_MASK,
				    SANDBOX_WIN_FOR_WRITE);
	for (size_t i = 0; i < g->nread && !r; i++) {
		const char *p = g->read[i];

		if (listed(p, g->write, g->nwrite) || listed(p, g->read, i))
			continue;
		r = add_ace(&plan, p, SANDBOX_WIN_GRANT, SANDBOX_WIN_READ_MASK,
			    SANDBOX_WIN_FOR_READ);
		if (!r && inside_any(p, g->write, g->nwrite))
			r = add_ace(&plan, p, SANDBOX_WIN_DENY, SANDBOX_WIN_DENY_WRITE,
				    SANDBOX_WIN_FOR_READ_IN_WRITE);
	}
	for (size_t i = 0; i < g->nmask && !r; i++)
		if (!listed(g->mask[i], g->mask, i))
			r = add_ace(&plan, g->mask[i], SANDBOX_WIN_DENY, SANDBOX_WIN_GENERIC_ALL,
				    SANDBOX_WIN_FOR_MASK);
	if (r) {
		sandbox_win_plan_free(&plan);
		return r;
	}
	qsort(plan.aces, plan.naces, sizeof(*plan.aces), ace_cmp);
	memcpy(plan.filters, filters, sizeof(filters));
	plan.nfilters = SANDBOX_WIN_MAX_FILTERS;
	for (size_t i = 0; i < plan.nfilters; i++)
		if (plan.filters[i].loopback)
			plan.filters[i].port = g->proxy_port;
	*ret = plan;
	return 0;
}

void sandbox_win_plan_free(struct sandbox_win_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->naces; i++)
		free(plan->aces[i].path);
	free(plan->aces);
	plan->aces = NULL;
	plan->naces = 0;
}

/* the ACE of @plan on @path with @mode, or NULL */
static const struct sandbox_win_ace *find_ace(const struct sandbox_win_plan *plan, const char *path,
					      enum sandbox_win_access_mode mode)
{
	for (size_t i = 0; i < plan->naces; i++)
		if (plan->aces[i].mode == mode && same_path(plan->aces[i].path, path))
			return &plan->aces[i];
	return NULL;
}

/* the filters' invariants */
static int check_filters(const struct sandbox_win_plan *plan, uint16_t port, struct wd_err *err)
{
	unsigned blocked = 0, min_permit = 256, max_block = 0;

	if (!(plan->session_flags & SANDBOX_WIN_FWPM_SESSION_FLAG_DYNAMIC))
		return wd_err_set(err, -EINVAL, "the WFP session is not dynamic");
	for (size_t i = 0; i < plan->nfilters; i++) {
		const struct sandbox_win_filter *f = &plan->filters[i];

		if (f->layer >= SANDBOX_WIN_NLAYERS)
			return wd_err_set(err, -EINVAL, "filter %zu: unknown layer", i);
		if (f->action == SANDBOX_WIN_FWP_ACTION_PERMIT) {
			if (!f->loopback || f->port != port ||
			    (f->layer != SANDBOX_WIN_CONNECT_V4 &&
			     f->layer != SANDBOX_WIN_CONNECT_V6))
				return wd_err_set(err, -EINVAL,
						  "filter %zu permits more than TCP to 127.0.0.1 "
						  "or ::1 port %u",
						  i, (unsigned)port);
			if (f->weight < min_permit)
				min_permit = f->weight;
		} else if (f->action == SANDBOX_WIN_FWP_ACTION_BLOCK) {
			if (f->loopback)
				return wd_err_set(err, -EINVAL, "filter %zu blocks only loopback",
						  i);
			if (!(f->flags & SANDBOX_WIN_FWPM_FILTER_FLAG_CLEAR_ACTION_RIGHT))
				return wd_err_set(err, -EINVAL,
						  "filter %zu: a block that can be "
						  "overridden",
						  i);
			if (f->weight > max_block)
				max_block = f->weight;
			blocked |= 1u << f->layer;
		} else {
			return wd_err_set(err, -EINVAL, "filter %zu: action 0x%" PRIx32, i,
					  f->action);
		}
	}
	if (blocked != (1u << SANDBOX_WIN_NLAYERS) - 1)
		return wd_err_set(err, -EINVAL, "a layer has no block-all filter");
	if (min_permit != 256 && min_permit <= max_block)
		return wd_err_set(err, -EINVAL, "a block weighs as much as a permit");
	return 0;
}

/* the ACEs' invariants */
static int check_aces(const struct sandbox_win_plan *plan, const struct sandbox_win_grants *g,
		      struct wd_err *err)
{
	const uint32_t rw = SANDBOX_WIN_READ_MASK | SANDBOX_WIN_WRITE_MASK;

	for (size_t i = 0; i < g->nwrite; i++) {
		const struct sandbox_win_ace *a = find_ace(plan, g->write[i], SANDBOX_WIN_GRANT);

		if (!a || (a->access & rw) != rw || find_ace(plan, g->write[i], SANDBOX_WIN_DENY))
			return wd_err_set(err, -EINVAL, "write grant %s is not writable",
					  g->write[i]);
	}
	for (size_t i = 0; i < g->nread; i++) {
		const char *p = g->read[i];
		const struct sandbox_win_ace *a = find_ace(plan, p, SANDBOX_WIN_GRANT);
		const struct sandbox_win_ace *d = find_ace(plan, p, SANDBOX_WIN_DENY);

		if (listed(p, g->write, g->nwrite))
			continue;
		if (!a || a->access != SANDBOX_WIN_READ_MASK)
			return wd_err_set(err, -EINVAL, "read grant %s is not read-only", p);
		if (inside_any(p, g->write, g->nwrite) &&
		    (!d || (d->access & SANDBOX_WIN_DENY_WRITE) != SANDBOX_WIN_DENY_WRITE))
			return wd_err_set(err, -EINVAL,
					  "read grant %s inherits its write grant's rights", p);
	}
	for (size_t i = 0; i < g->nmask; i++) {
		const struct sandbox_win_ace *d = find_ace(plan, g->mask[i], SANDBOX_WIN_DENY);

		if (!d || !(d->access & SANDBOX_WIN_GENERIC_ALL))
			return wd_err_set(err, -EINVAL, "mask %s is not denied", g->mask[i]);
	}
	for (size_t i = 0; i < plan->naces; i++) {
		const struct sandbox_win_ace *a = &plan->aces[i];
		bool w = listed(a->path, g->write, g->nwrite);

		if (a->mode == SANDBOX_WIN_GRANT && !w && !listed(a->path, g->read, g->nread))
			return wd_err_set(err, -EINVAL, "%s is granted but no grant names it",
					  a->path);
		if (a->mode == SANDBOX_WIN_GRANT && !w &&
		    (a->access & ~(uint32_t)SANDBOX_WIN_READ_MASK))
			return wd_err_set(err, -EINVAL, "%s is granted more than reading", a->path);
		if (a->mode != SANDBOX_WIN_GRANT && a->mode != SANDBOX_WIN_DENY)
			return wd_err_set(err, -EINVAL, "%s: access mode %d", a->path, a->mode);
	}
	return 0;
}

int sandbox_win_plan_check(const struct sandbox_win_plan *plan, const struct sandbox_win_grants *g,
			   struct wd_err *err)
{
	int r = check_filters(plan, g->proxy_port, err);

	return r ? r : check_aces(plan, g, err);
}

/* the names of @access's bits */
static int render_access(struct wd_buf *out, uint32_t access)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
	    {SANDBOX_WIN_GENERIC_READ, "GENERIC_READ"},
	    {SANDBOX_WIN_GENERIC_WRITE, "GENERIC_WRITE"},
	    {SANDBOX_WIN_GENERIC_EXECUTE, "GENERIC_EXECUTE"},
	    {SANDBOX_WIN_GENERIC_ALL, "GENERIC_ALL"},
	    {SANDBOX_WIN_WRITE_OWNER, "WRITE_OWNER"},
	    {SANDBOX_WIN_WRITE_DAC, "WRITE_DAC"},
	    {SANDBOX_WIN_DELETE, "DELETE"},
	    {SANDBOX_WIN_FILE_WRITE_ATTRIBUTES, "FILE_WRITE_ATTRIBUTES"},
	    {SANDBOX_WIN_FILE_DELETE_CHILD, "FILE_DELETE_CHILD"},
	    {SANDBOX_WIN_FILE_WRITE_EA, "FILE_WRITE_EA"},
	    {SANDBOX_WIN_FILE_APPEND_DATA, "FILE_APPEND_DATA"},
	    {SANDBOX_WIN_FILE_WRITE_DATA, "FILE_WRITE_DATA"},
	};
	uint32_t rest = access;
	int r = wd_buf_printf(out, "0x%08" PRIx32 " ", access);

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !r; i++)
		if (access & names[i].bit) {
			r = wd_buf_printf(out, "%s%s", rest == access ? "" : "|", names[i].name);
			rest &= ~names[i].bit;
		}
	return r;
}

static const char *const why_names[] = {"read grant", "write grant",
					"read grant inside a write grant", "mask"};

int sandbox_win_plan_render(const struct sandbox_win_plan *plan, struct wd_buf *out)
{
	int r =
	    wd_buf_printf(out, "appcontainer: no capabilities; loopback exemption for its SID\n");

	for (size_t i = 0; i < plan->naces && !r; i++) {
		const struct sandbox_win_ace *a = &plan->aces[i];

		r = wd_buf_printf(out, "acl %s ", a->mode == SANDBOX_WIN_DENY ? "deny " : "grant");
		if (!r)
			r = render_access(out, a->access);
		if (!r)
			r = wd_buf_printf(out, " inherit=0x%" PRIx32 " %s (%s)\n", a->inherit,
					  a->path, why_names[a->why]);
	}
	if (!r)
		r = wd_buf_printf(out, "wfp session flags=0x%" PRIx32 " sublayer weight=0x%04x\n",
				  plan->session_flags, (unsigned)plan->sublayer_weight);
	for (size_t i = 0; i < plan->nfilters && !r; i++) {
		const struct sandbox_win_filter *f = &plan->filters[i];
		const struct sandbox_win_guid *k = &sandbox_win_layer_key[f->layer];
		bool v6 = f->layer == SANDBOX_WIN_CONNECT_V6 || f->layer == SANDBOX_WIN_ACCEPT_V6;

		r = wd_buf_printf(out,
				  "wfp filter weight=%u %s flags=0x%" PRIx32 " layer=%s {%08" PRIx32
				  "-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}"
				  " if package=SID",
				  (unsigned)f->weight,
				  f->action == SANDBOX_WIN_FWP_ACTION_PERMIT ? "permit" : "block",
				  f->flags, layer_names[f->layer], k->d1, (unsigned)k->d2,
				  (unsigned)k->d3, k->d4[0], k->d4[1], k->d4[2], k->d4[3], k->d4[4],
				  k->d4[5], k->d4[6], k->d4[7]);
		if (!r && f->loopback)
			r = wd_buf_printf(out, " protocol=tcp remote=%s port=%u",
					  v6 ? "::1" : "127.0.0.1", (unsigned)f->port);
		if (!r)
			r = wd_buf_printf(out, " \"%s\"\n", f->name);
	}
	return r;
}
