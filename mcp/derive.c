/* derive.c - the derived policy new runs of `warden mcp` get: the configured one minus the
 * names removed, plus the names a person approved, validated, and what its grants must keep
 * away from. */
#include "mcp/internal.h"
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ the derived policy */

/* @text as a policy of one network.allow entry: the real parser checks and normalises it */
int mcp_one_rule(const char *text, struct wd_policy **ret, char *why, size_t wsize)
{
	struct wd_buf y = WD_BUF_INIT;
	struct policy_diags d;
	int ret_ = 0;

	policy_diags_init(&d);
	if (wd_buf_puts(&y, "version: 1\nnetwork:\n  allow:\n    - ") ||
	    policy_json_string(&y, text) || wd_buf_puts(&y, "\n")) {
		wd_buf_free(&y);
		return -ENOMEM;
	}
	ret_ = policy_parse(y.data, y.len, "name", ret, &d);
	if (ret_ && d.n) {
		struct wd_buf msg = WD_BUF_INIT;

		policy_diag_format(&d, 0, &msg);
		/* "name:5:7: error: ..." -> what follows "error: " */
		snprintf(why, wsize, "%s",
			 msg.data && strstr(msg.data, "error: ") ? strstr(msg.data, "error: ") + 7
								 : "not a network.allow entry");
		wd_buf_free(&msg);
	} else if (!ret_ && (*ret)->nrules != 1) {
		policy_free(*ret);
		snprintf(why, wsize, "not one network.allow entry");
		ret_ = -EINVAL;
	}
	policy_diags_free(&d);
	wd_buf_free(&y);
	return ret_;
}

/* the same name (host or pattern, or the same address range), ports aside */
bool mcp_same_target(const struct policy_rule *a, const struct policy_rule *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == POLICY_RULE_CIDR)
		return a->family == b->family && a->prefix == b->prefix &&
		       !memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
	return !strcmp(a->host, b->host);
}

bool mcp_is_removed(const struct mcp_server *m, const struct policy_rule *r)
{
	for (size_t i = 0; i < m->nremoved; i++)
		if (mcp_same_target(&m->removed[i]->rules[0], r))
			return true;
	return false;
}

void mcp_protect(const struct mcp_server *m, struct policy_protect *v, size_t *n, size_t max)
{
	static struct run_protect pr;

	run_protect_init(&pr, m->audit_path, NULL);
	*n = 0;
	for (size_t i = 0; i < pr.n && *n < max; i++)
		v[(*n)++] = pr.v[i];
	if (*n < max)
		v[(*n)++] = (struct policy_protect){m->approval_dir, "the approval store", true};
	if (*n < max && m->state_dir[0])
		v[(*n)++] = (struct policy_protect){m->state_dir, "warden mcp's state", true};
}

int mcp_derive(struct mcp_server *m, char *why, size_t wsize)
{
	struct policy_rule *rules = NULL, none;
	struct wd_buf y = WD_BUF_INIT;
	struct policy_protect prot[RUN_PROTECT_MAX + 2];
	struct policy_ctx ctx = {0};
	struct policy_diags d;
	struct wd_policy p, *check = NULL;
	char path[PATH_MAX];
	size_t n = 0;
	int fd, ret;

	p = *m->base;
	rules = calloc(m->base->nrules + m->nadded + 1, sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	for (size_t i = 0; i < m->base->nrules; i++)
		if (!mcp_is_removed(m, &m->base->rules[i]))
			rules[n++] = m->base->rules[i];
	for (size_t i = 0; i < m->nadded; i++)
		if (!mcp_is_removed(m, &m->added[i]->rules[0]))
			rules[n++] = m->added[i]->rules[0];
	memset(&none, 0, sizeof(none));
	p.rules = n ? rules : (m->base->rules || m->nremoved || m->nadded ? &none : NULL);
	p.nrules = n;
	ret = policy_render_yaml(&p, &y);
	free(rules);
	if (ret)
		goto out;
	m->gen++;
	n = (size_t)snprintf(path, sizeof(path), "%s/policy-%u.yaml", m->state_dir, m->gen);
	if (n >= sizeof(path)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, wsize, "cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	ret = wd_write_all(fd, y.data, y.len);
	close(fd);
	if (ret) {
		snprintf(why, wsize, "cannot write %s: %s", path, strerror(-ret));
		goto out;
	}
	/* what runs get is checked as `warden run` will check it */
	mcp_protect(m, prot, &ctx.nprotect, WD_ARRAY_SIZE(prot));
	ctx.protect = prot;
	policy_diags_init(&d);
	ret = policy_load(path, &ctx, &check, &d);
	if (ret) {
		struct wd_buf msg = WD_BUF_INIT;

		if (d.n)
			policy_diag_format(&d, 0, &msg);
		snprintf(why, wsize, "the derived policy %s is not valid: %s", path,
			 msg.data ? msg.data : strerror(-ret));
		wd_buf_free(&msg);
		unlink(path);
	} else {
		if (m->derived[0])
			unlink(m->derived);
		snprintf(m->derived, sizeof(m->derived), "%s", path);
	}
	policy_free(check);
	policy_diags_free(&d);
out:
	wd_buf_free(&y);
	return ret;
}
