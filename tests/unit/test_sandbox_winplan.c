/* test_sandbox_winplan.c - sandbox/winplan.c: the AppContainer plan for a matrix of policies,
 * judged three ways: the plan's own invariant check; a model of Windows' access check over its
 * DACL entries and of WFP's weighing of its filters, against bubblewrap's meaning of the same
 * grants (the deepest grant decides, masks hide); and golden text. Plans broken on purpose
 * must fail the check; a plan made from a policy validated on this machine passes it. */
#include "sandbox/winplan.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* test_from_policy needs policy/ and this machine's folders: not in the Windows build
 * (tests/cross/windows), where policy/ is not ported */
#ifndef _WIN32
#include "policy/policy.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <cmocka.h>

/* winnt.h: the file rights a generic right maps to (FILE_GENERIC_*, FILE_ALL_ACCESS); on
 * Windows common.h brings winnt.h's own (the same values) */
#ifndef _WIN32
#define FILE_READ_DATA 0x0001u
#define FILE_WRITE_DATA 0x0002u
#define SYNCHRONIZE 0x00100000u
#define FILE_GENERIC_READ 0x00120089u
#define FILE_GENERIC_WRITE 0x00120116u
#define FILE_GENERIC_EXECUTE 0x001200a0u
#define FILE_ALL_ACCESS 0x001f01ffu
#endif

#define PORT 41080

/* @m with its generic bits mapped to file rights, as Windows does when an ACE is applied */
static uint32_t map(uint32_t m)
{
	uint32_t r = m & 0x0fffffffu;

	if (m & SANDBOX_WIN_GENERIC_READ)
		r |= FILE_GENERIC_READ;
	if (m & SANDBOX_WIN_GENERIC_WRITE)
		r |= FILE_GENERIC_WRITE;
	if (m & SANDBOX_WIN_GENERIC_EXECUTE)
		r |= FILE_GENERIC_EXECUTE;
	if (m & SANDBOX_WIN_GENERIC_ALL)
		r |= FILE_ALL_ACCESS;
	return r;
}

/*
 * Windows' access check for the container's SID on @path, over the plan's entries: the path's
 * own (explicit) entries first, then its parent's inherited ones, then the grandparent's...;
 * in each generation the deny entries before the allow ones (the canonical order). A deny
 * that meets a right still wanted refuses; the rights are granted once allows cover them.
 */
static bool allowed(const struct sandbox_win_plan *plan, const char *path, uint32_t want)
{
	uint32_t rest = want;
	size_t done_len = SIZE_MAX;

	for (;;) {
		size_t best = 0;
		bool found = false;

		/* the deepest generation not yet seen: the longest entry path holding @path */
		for (size_t i = 0; i < plan->naces; i++) {
			size_t l = strlen(plan->aces[i].path);

			if (l < done_len && l >= best &&
			    sandbox_win_path_within(path, plan->aces[i].path) &&
			    (l == strlen(path) || (plan->aces[i].inherit & SANDBOX_WIN_INHERIT))) {
				best = l;
				found = true;
			}
		}
		if (!found)
			return false;
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < plan->naces; i++) {
				const struct sandbox_win_ace *a = &plan->aces[i];

				if (strlen(a->path) != best ||
				    !sandbox_win_path_within(path, a->path))
					continue;
				if (pass == 0 && a->mode == SANDBOX_WIN_DENY &&
				    (map(a->access) & rest))
					return false;
				if (pass == 1 && a->mode == SANDBOX_WIN_GRANT)
					rest &= ~map(a->access);
			}
		if (!rest)
			return true;
		done_len = best;
	}
}

/* WFP in the run's sublayer: the heaviest matching filter decides; none: not ours to say */
static uint32_t verdict(const struct sandbox_win_plan *plan, enum sandbox_win_layer layer,
			unsigned proto, bool loopback, uint16_t port)
{
	int best = -1;
	uint32_t action = 0;

	for (size_t i = 0; i < plan->nfilters; i++) {
		const struct sandbox_win_filter *f = &plan->filters[i];

		if (f->layer != layer)
			continue;
		if (f->loopback &&
		    (proto != SANDBOX_WIN_IPPROTO_TCP || !loopback || port != f->port))
			continue;
		if ((int)f->weight > best) {
			best = f->weight;
			action = f->action;
		}
	}
	return action;
}

/* what bubblewrap's mounts mean for @path: 'w', 'r' or '-' (the deepest grant decides, a
 * write over a read of the same path, a mask over both) */
static char meaning(const struct sandbox_win_grants *g, const char *path)
{
	size_t best = 0;
	char m = '-';
	const struct {
		const char *const *list;
		size_t n;
		char m;
	} kinds[] = {
	    {g->read, g->nread, 'r'}, {g->write, g->nwrite, 'w'}, {g->mask, g->nmask, '-'}};

	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < kinds[k].n; i++) {
			size_t l = strlen(kinds[k].list[i]);

			if (sandbox_win_path_within(path, kinds[k].list[i]) && l >= best) {
				best = l;
				m = kinds[k].m;
			}
		}
	return m;
}

/* @path's access in the plan agrees with its meaning */
static void assert_path(const struct sandbox_win_plan *plan, const struct sandbox_win_grants *g,
			const char *path)
{
	char m = meaning(g, path);
	bool r = allowed(plan, path, FILE_READ_DATA | SYNCHRONIZE);
	bool w = allowed(plan, path, FILE_WRITE_DATA | SYNCHRONIZE);

	if (r != (m != '-') || w != (m == 'w'))
		fail_msg("%s: want %c, the plan gives read %d write %d", path, m, r, w);
}

/* make the plan, check it, and probe every grant, mask, a child of each and two outsiders */
static void assert_plan(const struct sandbox_win_grants *g)
{
	struct sandbox_win_plan plan;
	struct wd_err err;
	const char *const *lists[] = {g->read, g->write, g->mask};
	const size_t ns[] = {g->nread, g->nwrite, g->nmask};
	char child[512];

	wd_err_clear(&err);
	assert_int_equal(sandbox_win_plan_make(g, &plan, &err), 0);
	if (sandbox_win_plan_check(&plan, g, &err))
		fail_msg("check: %s", err.msg);
	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < ns[k]; i++) {
			assert_path(&plan, g, lists[k][i]);
			snprintf(child, sizeof(child), "%s\\zz_probe.txt", lists[k][i]);
			assert_path(&plan, g, child);
		}
	assert_path(&plan, g, "C:\\Windows\\System32\\config\\SAM");
	assert_path(&plan, g, "E:\\elsewhere");
	/* the network: only TCP to the loopback proxy port, both families; nothing inbound */
	assert_int_equal(verdict(&plan, SANDBOX_WIN_CONNECT_V4, 6, true, PORT),
			 SANDBOX_WIN_FWP_ACTION_PERMIT);
	assert_int_equal(verdict(&plan, SANDBOX_WIN_CONNECT_V6, 6, true, PORT),
			 SANDBOX_WIN_FWP_ACTION_PERMIT);
	for (enum sandbox_win_layer l = 0; l < SANDBOX_WIN_NLAYERS; l++) {
		assert_int_equal(verdict(&plan, l, 6, true, PORT + 1),
				 SANDBOX_WIN_FWP_ACTION_BLOCK);
		assert_int_equal(verdict(&plan, l, 6, false, PORT), SANDBOX_WIN_FWP_ACTION_BLOCK);
		assert_int_equal(verdict(&plan, l, 17, true, PORT), SANDBOX_WIN_FWP_ACTION_BLOCK);
		assert_int_equal(verdict(&plan, l, 17, false, 53), SANDBOX_WIN_FWP_ACTION_BLOCK);
	}
	assert_int_equal(verdict(&plan, SANDBOX_WIN_ACCEPT_V4, 6, true, PORT),
			 SANDBOX_WIN_FWP_ACTION_BLOCK);
	assert_int_equal(verdict(&plan, SANDBOX_WIN_ACCEPT_V6, 6, true, PORT),
			 SANDBOX_WIN_FWP_ACTION_BLOCK);
	sandbox_win_plan_free(&plan);
}

#define LIST(...)                                                                                  \
	((const char *const[]){__VA_ARGS__}),                                                      \
	    (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))
#define NONE NULL, 0

static void test_matrix(void **state)
{
	const struct sandbox_win_grants matrix[] = {
	    /* nothing granted: only the network plan */
	    {NONE, NONE, NONE, PORT},
	    {LIST("C:\\proj"), NONE, NONE, PORT},
	    {NONE, LIST("C:\\proj\\out"), NONE, PORT},
	    {LIST("C:\\proj"), LIST("C:\\proj\\out"), NONE, PORT},
	    /* a read grant inside a write grant, a write grant inside that */
	    {LIST("C:\\proj\\vendor"), LIST("C:\\proj", "C:\\proj\\vendor\\cache"), NONE, PORT},
	    /* the same path read and written (case and separators differ): written */
	    {LIST("C:\\proj", "C:\\data"), LIST("c:/PROJ"), NONE, PORT},
	    /* the home folder read, credential stores masked, a project written */
	    {LIST("C:\\Users\\me"), LIST("C:\\Users\\me\\work"),
	     LIST("C:\\Users\\me\\.ssh", "C:\\Users\\me\\AppData\\Roaming\\gh"), PORT},
	    /* a mask inside a write grant's read grant */
	    {LIST("C:\\w\\r"), LIST("C:\\w"), LIST("C:\\w\\r\\.aws"), PORT},
	    /* duplicates */
	    {LIST("C:\\a", "C:\\a", "C:\\A"), LIST("C:\\b", "C:\\b"), LIST("C:\\a\\m", "C:\\a\\m"),
	     PORT},
	    /* a drive's root, a UNC share, this machine's paths */
	    {LIST("C:\\", "\\\\srv\\share\\x"), LIST("C:\\tmp"), NONE, PORT},
	    {LIST("/usr/lib", "/home/me"), LIST("/home/me/proj"), LIST("/home/me/.ssh"), PORT},
	    /* a prefix that is not a parent */
	    {LIST("C:\\proj"), LIST("C:\\project"), NONE, PORT},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(matrix) / sizeof(matrix[0]); i++)
		assert_plan(&matrix[i]);
}

static void test_path_within(void **state)
{
	(void)state;
	assert_true(sandbox_win_path_within("C:\\a\\b", "C:\\a"));
	assert_true(sandbox_win_path_within("c:/A/b", "C:\\a"));
	assert_true(sandbox_win_path_within("C:\\a", "C:\\a"));
	assert_true(sandbox_win_path_within("C:\\a", "C:\\"));
	assert_true(sandbox_win_path_within("C:\\a\\b", "C:\\a\\"));
	assert_false(sandbox_win_path_within("C:\\ab", "C:\\a"));
	assert_false(sandbox_win_path_within("C:\\a", "C:\\a\\b"));
	assert_false(sandbox_win_path_within("D:\\a", "C:\\a"));
}

static void test_refused(void **state)
{
	struct sandbox_win_plan plan;
	struct wd_err err;

	(void)state;
	wd_err_clear(&err);
	assert_int_equal(
	    sandbox_win_plan_make(&(struct sandbox_win_grants){LIST("proj"), NONE, NONE, PORT},
				  &plan, &err),
	    -EINVAL);
	assert_non_null(strstr(err.msg, "proj is not an absolute path"));
	assert_int_equal(
	    sandbox_win_plan_make(&(struct sandbox_win_grants){NONE, LIST("C:x"), NONE, PORT},
				  &plan, &err),
	    -EINVAL);
	assert_int_equal(sandbox_win_plan_make(
			     &(struct sandbox_win_grants){NONE, NONE, LIST(""), PORT}, &plan, &err),
			 -EINVAL);
	assert_int_equal(
	    sandbox_win_plan_make(&(struct sandbox_win_grants){LIST("C:\\p"), NONE, NONE, 0}, &plan,
				  &err),
	    -EINVAL);
	/* the same with a port is fine */
	assert_int_equal(
	    sandbox_win_plan_make(&(struct sandbox_win_grants){LIST("C:\\p"), NONE, NONE, 1}, &plan,
				  &err),
	    0);
	sandbox_win_plan_free(&plan);
}

/* a plan broken one way must fail the check, with @why in the message */
static void assert_broken(const struct sandbox_win_grants *g,
			  void (*breakit)(struct sandbox_win_plan *), const char *why)
{
	struct sandbox_win_plan plan;
	struct wd_err err;

	wd_err_clear(&err);
	assert_int_equal(sandbox_win_plan_make(g, &plan, &err), 0);
	assert_int_equal(sandbox_win_plan_check(&plan, g, &err), 0);
	breakit(&plan);
	assert_int_equal(sandbox_win_plan_check(&plan, g, &err), -EINVAL);
	if (!strstr(err.msg, why))
		fail_msg("want \"%s\", the check said \"%s\"", why, err.msg);
	sandbox_win_plan_free(&plan);
}

static void permit_any_port(struct sandbox_win_plan *p)
{
	p->filters[0].loopback = false;
}
static void permit_other_port(struct sandbox_win_plan *p)
{
	p->filters[1].port = 443;
}
static void permit_inbound(struct sandbox_win_plan *p)
{
	p->filters[0].layer = SANDBOX_WIN_ACCEPT_V4;
}
static void soft_block(struct sandbox_win_plan *p)
{
	p->filters[3].flags = 0;
}
static void heavy_block(struct sandbox_win_plan *p)
{
	p->filters[2].weight = SANDBOX_WIN_WEIGHT_PERMIT;
}
static void no_v6_block(struct sandbox_win_plan *p)
{
	p->filters[3] = p->filters[2];
}
static void not_dynamic(struct sandbox_win_plan *p)
{
	p->session_flags = 0;
}
/* the ACE of @p on @path with @mode */
static struct sandbox_win_ace *ace(struct sandbox_win_plan *p, const char *path,
				   enum sandbox_win_access_mode mode)
{
	for (size_t i = 0; i < p->naces; i++)
		if (!strcmp(p->aces[i].path, path) && p->aces[i].mode == mode)
			return &p->aces[i];
	fail_msg("no ACE on %s", path);
	return NULL;
}
static void read_writable(struct sandbox_win_plan *p)
{
	ace(p, "C:\\proj\\vendor", SANDBOX_WIN_GRANT)->access |= SANDBOX_WIN_GENERIC_WRITE;
}
static void write_readonly(struct sandbox_win_plan *p)
{
	ace(p, "C:\\proj", SANDBOX_WIN_GRANT)->access = SANDBOX_WIN_READ_MASK;
}
static void no_write_deny(struct sandbox_win_plan *p)
{
	ace(p, "C:\\proj\\vendor", SANDBOX_WIN_DENY)->access = SANDBOX_WIN_DELETE;
}
static void mask_allowed(struct sandbox_win_plan *p)
{
	ace(p, "C:\\proj\\.ssh", SANDBOX_WIN_DENY)->mode = SANDBOX_WIN_GRANT;
}
/* the plan has room for one entry more */
static void stray_grant(struct sandbox_win_plan *p)
{
	p->aces[p->naces++] =
	    (struct sandbox_win_ace){strdup("C:\\Users"), SANDBOX_WIN_GRANT, SANDBOX_WIN_READ_MASK,
				     SANDBOX_WIN_INHERIT, SANDBOX_WIN_FOR_READ};
}

static void test_check_fails(void **state)
{
	const struct sandbox_win_grants g = {LIST("C:\\proj\\vendor"),
					     LIST("C:\\proj", "C:\\proj\\vendor\\cache"),
					     LIST("C:\\proj\\.ssh"), PORT};

	(void)state;
	assert_broken(&g, permit_any_port, "permits more than TCP to 127.0.0.1 or ::1 port 41080");
	assert_broken(&g, permit_other_port, "permits more than");
	assert_broken(&g, permit_inbound, "permits more than");
	assert_broken(&g, soft_block, "a block that can be overridden");
	assert_broken(&g, heavy_block, "a block weighs as much as a permit");
	assert_broken(&g, no_v6_block, "a layer has no block-all filter");
	assert_broken(&g, not_dynamic, "not dynamic");
	assert_broken(&g, read_writable, "read grant C:\\proj\\vendor is not read-only");
	assert_broken(&g, write_readonly, "write grant C:\\proj is not writable");
	assert_broken(&g, no_write_deny, "inherits its write grant's rights");
	assert_broken(&g, mask_allowed, "mask C:\\proj\\.ssh is not denied");
	assert_broken(&g, stray_grant, "C:\\Users is granted but no grant names it");
}

static void test_render(void **state)
{
	const struct sandbox_win_grants g = {LIST("C:\\proj\\vendor"), LIST("C:\\proj"),
					     LIST("C:\\proj\\.ssh"), PORT};
	struct sandbox_win_plan plan;
	struct wd_buf b = WD_BUF_INIT;
	struct wd_err err;

	(void)state;
	wd_err_clear(&err);
	assert_int_equal(sandbox_win_plan_make(&g, &plan, &err), 0);
	assert_int_equal(sandbox_win_plan_render(&plan, &b), 0);
	assert_string_equal(
	    wd_buf_cstr(&b),
	    "appcontainer: no capabilities; loopback exemption for its SID\n"
	    "acl grant 0xe0010000 GENERIC_READ|GENERIC_WRITE|GENERIC_EXECUTE|DELETE inherit=0x3 "
	    "C:\\proj (write grant)\n"
	    "acl deny  0x10000000 GENERIC_ALL inherit=0x3 C:\\proj\\.ssh (mask)\n"
	    "acl grant 0xa0000000 GENERIC_READ|GENERIC_EXECUTE inherit=0x3 C:\\proj\\vendor (read "
	    "grant)\n"
	    "acl deny  0x000d0156 WRITE_OWNER|WRITE_DAC|DELETE|FILE_WRITE_ATTRIBUTES|"
	    "FILE_DELETE_CHILD|FILE_WRITE_EA|FILE_APPEND_DATA|FILE_WRITE_DATA inherit=0x3 "
	    "C:\\proj\\vendor (read grant inside a write grant)\n"
	    "wfp session flags=0x1 sublayer weight=0xffff\n"
	    "wfp filter weight=15 permit flags=0x0 layer=ALE_AUTH_CONNECT_V4 "
	    "{c38d57d1-05a7-4c33-904f-7fbceee60e82} if package=SID protocol=tcp remote=127.0.0.1 "
	    "port=41080 \"warden: permit TCP to the loopback proxy (IPv4)\"\n"
	    "wfp filter weight=15 permit flags=0x0 layer=ALE_AUTH_CONNECT_V6 "
	    "{4a72393b-319f-44bc-84c3-ba54dcb3b6b4} if package=SID protocol=tcp remote=::1 "
	    "port=41080 \"warden: permit TCP to the loopback proxy (IPv6)\"\n"
	    "wfp filter weight=0 block flags=0x8 layer=ALE_AUTH_CONNECT_V4 "
	    "{c38d57d1-05a7-4c33-904f-7fbceee60e82} if package=SID \"warden: block every other "
	    "connection (IPv4)\"\n"
	    "wfp filter weight=0 block flags=0x8 layer=ALE_AUTH_CONNECT_V6 "
	    "{4a72393b-319f-44bc-84c3-ba54dcb3b6b4} if package=SID \"warden: block every other "
	    "connection (IPv6)\"\n"
	    "wfp filter weight=0 block flags=0x8 layer=ALE_AUTH_RECV_ACCEPT_V4 "
	    "{e1cd9fe7-f4b5-4273-96c0-592e487b8650} if package=SID \"warden: block every inbound "
	    "connection (IPv4)\"\n"
	    "wfp filter weight=0 block flags=0x8 layer=ALE_AUTH_RECV_ACCEPT_V6 "
	    "{a3b42c97-9f04-4672-b87e-cee9c483257f} if package=SID \"warden: block every inbound "
	    "connection (IPv6)\"\n");
	wd_buf_free(&b);
	sandbox_win_plan_free(&plan);
}

#ifndef _WIN32
static char root[PATH_MAX];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* a policy validated on this machine: its grants' real paths and its masks make a plan */
static void test_from_policy(void **state)
{
	static const char yaml[] =
	    "version: 1\nfilesystem:\n  read: [\"~\"]\n  write: [\"~/work\"]\n";
	char tmpl[] = "/tmp/wd-winplan-XXXXXX";
	char home[PATH_MAX + 16], sub[PATH_MAX + 32];
	struct wd_policy *p = NULL;
	struct policy_diags d;
	const char *rd[4], *wr[4];
	struct sandbox_win_grants g = {.proxy_port = PORT};

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, root));
	snprintf(home, sizeof(home), "%s/home", root);
	assert_int_equal(mkdir(home, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/.ssh", home);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/work", home);
	assert_int_equal(mkdir(sub, 0700), 0);
	policy_diags_init(&d);
	assert_int_equal(policy_load_buf(yaml, strlen(yaml), "p.yaml",
					 &(struct policy_ctx){.home = home}, &p, &d),
			 0);
	assert_true(p->nread == 1 && p->nwrite == 1);
	assert_true(p->nmask >= 1); /* ~/.ssh */
	rd[0] = p->read[0].real;
	wr[0] = p->write[0].real;
	g.read = rd;
	g.nread = 1;
	g.write = wr;
	g.nwrite = 1;
	g.mask = (const char *const *)p->mask;
	g.nmask = p->nmask;
	assert_plan(&g);
	snprintf(sub, sizeof(sub), "%s/.ssh/id_ed25519", home);
	assert_int_equal(meaning(&g, sub), '-');
	policy_free(p);
	policy_diags_free(&d);
	assert_int_equal(nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path_within), cmocka_unit_test(test_matrix),
	    cmocka_unit_test(test_refused),	cmocka_unit_test(test_check_fails),
	    cmocka_unit_test(test_render),
#ifndef _WIN32
	    cmocka_unit_test(test_from_policy),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
