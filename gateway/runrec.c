/* runrec.c - the privileged parent's crash record of a daemon-mode run: its one format
 * (runrec.h says it), written whole or not at all, read back whole or refused. */
#include "gateway/runrec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* records bigger than this are not ours */
#define RUNREC_MAX 4096

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

/* 1..15 bytes of [A-Za-z0-9_.-], not "." nor ".." (it names the record's file) */
static bool ifname_ok(const char *s, size_t n)
{
	if (n == 0 || n >= sizeof(((struct gw_runrec *)0)->ifname))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return false;
	return !(n == 1 && s[0] == '.') && !(n == 2 && s[0] == '.' && s[1] == '.');
}

/* an absolute folder shorter than GW_CGROUP_PATH, no NUL, no "." or ".." component */
static bool cgroup_ok(const char *s, size_t n)
{
	size_t i = 1;

	if (n == 0 || n >= GW_CGROUP_PATH || s[0] != '/' || memchr(s, '\0', n))
		return false;
	while (i < n) {
		size_t e = i;

		while (e < n && s[e] != '/')
			e++;
		if ((e - i == 1 && s[i] == '.') || (e - i == 2 && s[i] == '.' && s[i + 1] == '.'))
			return false;
		i = e + 1;
	}
	return true;
}

int gw_runrec_format(const struct gw_runrec *r, struct wd_buf *out)
{
	char a[4][INET6_ADDRSTRLEN];
	int ret;

	if (!ifname_ok(r->ifname, strnlen(r->ifname, sizeof(r->ifname))) || r->pid <= 0)
		return -EINVAL;
	for (int i = 0; i < GW_CGROUP_MAX; i++)
		if (r->cg[i][0] && !cgroup_ok(r->cg[i], strnlen(r->cg[i], GW_CGROUP_PATH)))
			return -EINVAL;
	inet_ntop(AF_INET, &r->sbx4, a[0], sizeof(a[0]));
	inet_ntop(AF_INET, &r->gw4, a[1], sizeof(a[1]));
	inet_ntop(AF_INET6, &r->sbx6, a[2], sizeof(a[2]));
	inet_ntop(AF_INET6, &r->gw6, a[3], sizeof(a[3]));
	ret = wd_buf_printf(out, "%d %llu %s %s %s %s %s\n", (int)r->pid, r->start, r->ifname, a[0],
			    a[1], a[2], a[3]);
	for (int i = 0; !ret && i < GW_CGROUP_MAX; i++)
		ret = wd_buf_printf(out, "%s\n", r->cg[i][0] ? r->cg[i] : "-");
	return ret;
}

/* the next field of @line (@*pos onward) up to one space or the end; Return: its length, 0 at
 * the end or on an empty field */
static size_t field(const char *line, size_t len, size_t *pos, const char **f)
{
	size_t s = *pos, e = s;

	while (e < len && line[e] != ' ')
		e++;
	*f = line + s;
	*pos = e < len ? e + 1 : e;
	return e - s;
}

/* a decimal field of at most @max; Return: 0, or -EINVAL */
static int number(const char *f, size_t n, unsigned long long max, unsigned long long *v)
{
	char num[24];

	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, f, n);
	num[n] = '\0';
	return wd_parse_uint(num, max, v) ? -EINVAL : 0;
}

static int address(const char *f, size_t n, int family, void *out)
{
	char s[INET6_ADDRSTRLEN];

	if (n == 0 || n >= sizeof(s))
		return -EINVAL;
	memcpy(s, f, n);
	s[n] = '\0';
	return inet_pton(family, s, out) == 1 ? 0 : -EINVAL;
}

/* the first line (@len bytes, no '\n') into @r */
static int first_line(const char *line, size_t len, struct gw_runrec *r)
{
	static const int fam[4] = {AF_INET, AF_INET, AF_INET6, AF_INET6};
	void *addr[4] = {&r->sbx4, &r->gw4, &r->sbx6, &r->gw6};
	unsigned long long v;
	size_t pos = 0, n;
	const char *f;

	n = field(line, len, &pos, &f);
	if (number(f, n, INT_MAX, &v) || v == 0)
		return -EINVAL;
	r->pid = (pid_t)v;
	n = field(line, len, &pos, &f);
	if (number(f, n, ULLONG_MAX, &r->start))
		return -EINVAL;
	n = field(line, len, &pos, &f);
	if (!ifname_ok(f, n))
		return -EINVAL;
	memcpy(r->ifname, f, n);
	r->ifname[n] = '\0';
	for (int i = 0; i < 4; i++) {
		n = field(line, len, &pos, &f);
		if (address(f, n, fam[i], addr[i]))
			return -EINVAL;
	}
	/* nothing after the last address, not even a space */
	return pos == len && line[len - 1] != ' ' ? 0 : -EINVAL;
}

int gw_runrec_parse(const char *text, size_t len, struct gw_runrec *out)
{
	struct gw_runrec r;
	const char *p = text, *end = text + len, *nl;

	memset(&r, 0, sizeof(r));
	if (len == 0 || len > RUNREC_MAX || memchr(text, '\0', len))
		return -EINVAL;
	nl = memchr(p, '\n', (size_t)(end - p));
	if (!nl || first_line(p, (size_t)(nl - p), &r))
		return -EINVAL;
	for (int i = 0; i < GW_CGROUP_MAX; i++) {
		size_t n;

		p = nl + 1;
		nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		if (!nl)
			return -EINVAL;
		n = (size_t)(nl - p);
		if (n == 1 && p[0] == '-')
			continue;
		if (!cgroup_ok(p, n))
			return -EINVAL;
		memcpy(r.cg[i], p, n);
		r.cg[i][n] = '\0';
	}
	if (nl + 1 != end)
		return -EINVAL;
	*out = r;
	return 0;
}

int gw_runrec_save(const char *dir, const struct gw_runrec *r)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	struct wd_buf b = WD_BUF_INIT;
	int fd, ret;

	ret = gw_runrec_format(r, &b);
	if (ret)
		goto out;
	if (snprintf(path, sizeof(path), "%s/%s", dir, r->ifname) >= (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, r->ifname) >= (int)sizeof(tmp)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	ret = wd_write_all(fd, b.data, b.len);
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
out:
	wd_buf_free(&b);
	return ret;
}

int gw_runrec_load(const char *dir, const char *name, struct gw_runrec *out)
{
	char path[PATH_MAX], *text = NULL;
	struct gw_runrec r;
	size_t len = 0;
	int ret;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	ret = wd_read_file(path, RUNREC_MAX + 1, &text, &len);
	if (ret)
		return ret;
	ret = gw_runrec_parse(text, len, &r);
	free(text);
	if (ret || strcmp(r.ifname, name))
		return -EINVAL;
	*out = r;
	return 0;
}
