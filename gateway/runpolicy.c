/* runpolicy.c - a run's policy under the host's ceiling: the policy compiled, the ceiling that
 * applies to its user (by uid, user name and group names, from the passwd and group databases)
 * applied to it, the effective policy made the run's. A lookup that fails refuses the policy:
 * the ceiling is never skipped. */
#include "gateway/run.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* getgrouplist on macOS */

/* the most groups of a user the ceiling looks at */
#define WHO_GROUPS 64

/* @uid's user name into @out ("" when it has none, or the lookup fails) */
void gw_run_user_name(uid_t uid, char *out, size_t size)
{
	struct passwd pw, *pwr = NULL;
	char buf[1024];

	out[0] = '\0';
	if (!getpwuid_r(uid, &pw, buf, sizeof(buf), &pwr) && pwr)
		snprintf(out, size, "%s", pw.pw_name);
}

/* @uid as the ceiling sees it: its name and its groups' names (passwd and group
 * databases), in @names (room for WHO_GROUPS + 1 names of 64 bytes). Return: 0, or a
 * negative errno with @why set (a lookup that failed: the caller refuses) */
static int who_of(uid_t uid, struct policy_who *who, char (*names)[64], const char **groups,
		  char *why, size_t why_size)
{
	struct passwd pw, *pwr = NULL;
	gid_t gids[WHO_GROUPS];
	char buf[4096];
	int n = WHO_GROUPS, e;

	memset(who, 0, sizeof(*who));
	who->uid = (uint32_t)uid;
	who->groups = groups;
	e = getpwuid_r(uid, &pw, buf, sizeof(buf), &pwr);
	if (e) {
		snprintf(why, why_size, "the host's ceiling: cannot look up uid %u: %s",
			 (unsigned)uid, strerror(e));
		return -e;
	}
	if (!pwr)
		return 0; /* no name, no groups: users.UID and the top level */
	snprintf(names[0], 64, "%s", pw.pw_name);
	who->name = names[0];
#ifdef __APPLE__
	/* macOS declares the groups as int (unistd.h); gid_t is as wide */
	if (getgrouplist(pw.pw_name, (int)pw.pw_gid, (int *)gids, &n) < 0) {
#else
	if (getgrouplist(pw.pw_name, pw.pw_gid, gids, &n) < 0) {
#endif
		snprintf(why, why_size,
			 "the host's ceiling: user %s is in more than %d groups; refused",
			 pw.pw_name, WHO_GROUPS);
		return -E2BIG;
	}
	for (int i = 0; i < n; i++) {
		struct group gr, *grr = NULL;

		e = getgrgid_r(gids[i], &gr, buf, sizeof(buf), &grr);
		if (e) {
			snprintf(why, why_size, "the host's ceiling: cannot look up group %u: %s",
				 (unsigned)gids[i], strerror(e));
			return -e;
		}
		if (!grr)
			continue;
		snprintf(names[1 + who->ngroups], 64, "%s", gr.gr_name);
		groups[who->ngroups] = names[1 + who->ngroups];
		who->ngroups++;
	}
	return 0;
}

/* @p bounded by @r's ceiling: *@p becomes the effective policy. Return: 0 or -errno (@why) */
static int bound_for(const struct policy_ceiling *ceiling, uid_t uid, struct wd_policy **p,
		     char *why, size_t why_size)
{
	char names[WHO_GROUPS + 1][64];
	const char *groups[WHO_GROUPS];
	struct policy_who who;
	struct wd_policy *e = NULL;
	int ret;

	if (!ceiling)
		return 0;
	ret = who_of(uid, &who, names, groups, why, why_size);
	if (!ret) {
		ret = policy_ceiling_apply(ceiling, &who, *p, &e);
		if (ret == -E2BIG)
			snprintf(why, why_size,
				 "the host's ceiling: the policy's rules and the ceiling's overlap "
				 "in more than %d pairs; refused (narrow the policy)",
				 POLICY_CEILING_MAX_PAIRS);
		else if (ret)
			snprintf(why, why_size, "the host's ceiling: %s", strerror(-ret));
	}
	if (ret)
		return ret;
	policy_free(*p);
	*p = e;
	return 0;
}

static int bound(struct gw_run *r, struct wd_policy **p, char *why, size_t why_size)
{
	return bound_for(r->ceiling, r->uid, p, why, why_size);
}

int gw_run_policy_bound(const struct gw_runs *t, uid_t uid, struct wd_policy **p, char *why,
			size_t why_size)
{
	return bound_for(t->conf->ceiling, uid, p, why, why_size);
}

int gw_run_set_policy(struct gw_run *r, const struct gw_ctl_req *req, char *why, size_t why_size)
{
	struct policy_diags d;
	struct wd_policy *p = NULL;
	const char *name = req->policy_name[0] ? req->policy_name : "policy";
	int ret;

	policy_diags_init(&d);
	ret = policy_parse(req->policy, req->policy_len, name, &p, &d);
	if (ret) {
		struct wd_buf b = WD_BUF_INIT;

		policy_diags_sort(&d);
		if (d.n && !policy_diag_format(&d, 0, &b))
			snprintf(why, why_size, "invalid policy: %s", wd_buf_cstr(&b));
		else
			snprintf(why, why_size, "invalid policy: %s", strerror(-ret));
		wd_buf_free(&b);
		policy_diags_free(&d);
		return ret;
	}
	policy_diags_free(&d);
	ret = bound(r, &p, why, why_size);
	if (ret) {
		policy_free(p);
		return ret;
	}
	policy_free(r->policy);
	r->policy = p;
	gw_uploads_set(&r->up, p->limits.upload_kib, p->limits.upload_total_kib);
	snprintf(r->policy_name, sizeof(r->policy_name), "%s", name);
	return 0;
}
