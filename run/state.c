/* run_state.c - the run state folder (/run/warden/runs/<id>/state): what each live run holds,
 * so that a later `warden run` or `warden gc` can undo the runs whose launcher died. */
#include "run/run.h"
#include "run/gw.h"
#include "run/state.h"
#include "netns/netns.h"
#include "nft/nft.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

unsigned long long run_proc_start(pid_t pid)
{
	unsigned long long start;
	char state;

	if (pid <= 0 || wd_proc_stat(pid, &start, &state) < 0 || state == 'Z' || state == 'X')
		return 0;
	return start;
}

/* how a field is kept in struct run_record */
enum field_kind {
	F_STR, /* a NUL-terminated string of the member's size */
	F_PID, /* pid_t */
	F_UID, /* uid_t */
	F_ULL, /* unsigned long long */
};

struct field {
	const char *key;
	size_t off;
	size_t size;
	enum field_kind kind;
};

#define STR(k, m)                                                                                  \
	{                                                                                          \
		k, offsetof(struct run_record, m), sizeof(((struct run_record *)0)->m), F_STR      \
	}
#define NUM(k, m, kind)                                                                            \
	{                                                                                          \
		k, offsetof(struct run_record, m), sizeof(((struct run_record *)0)->m), kind       \
	}

/* one row a field, as the file has them (clang-format would pack them in columns) */
/* clang-format off */
static const struct field fields[] = {
	NUM("pid", pid, F_PID),
	NUM("start", start, F_ULL),
	NUM("gw_pid", gw_pid, F_PID),
	NUM("gw_start", gw_start, F_ULL),
	STR("id", id),
	STR("ifname", ifname),
	STR("sbx4", sbx4),
	STR("sbx6", sbx6),
	STR("host4", host4),
	STR("host6", host6),
	STR("table", table),
	STR("if_prefix", if_prefix),
	STR("gw_socket", gw_socket),
	STR("cg_memory", cg[0]),
	STR("cg_pids", cg[1]),
	STR("cg_cpu", cg[2]),
	/* what `warden status`, `kill` and `allowlist` show and need (launcher/live.c) */
	STR("mode", mode),
	NUM("uid", uid, F_UID),
	NUM("created", created, F_ULL),
	NUM("ending", ending, F_ULL),
	NUM("exit_logged", exit_logged, F_ULL),
	STR("policy", policy),
	STR("policy_name", policy_name),
	STR("audit", audit),
	STR("started_by", started_by),
	STR("command", command),
};
/* clang-format on */

int run_record_format(const struct run_record *r, struct wd_buf *out)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < WD_ARRAY_SIZE(fields); i++) {
		const char *m = (const char *)r + fields[i].off;

		switch (fields[i].kind) {
		case F_STR:
			ret = wd_buf_printf(out, "%s=%s\n", fields[i].key, m);
			break;
		case F_PID:
			ret = wd_buf_printf(out, "%s=%d\n", fields[i].key, *(const pid_t *)m);
			break;
		case F_UID:
			ret = wd_buf_printf(out, "%s=%u\n", fields[i].key,
					    (unsigned)*(const uid_t *)m);
			break;
		case F_ULL:
			ret = wd_buf_printf(out, "%s=%llu\n", fields[i].key,
					    *(const unsigned long long *)m);
			break;
		}
	}
	return ret;
}

/* @v (@vlen bytes, not terminated) into field @f of @r. Return: 0 or -EINVAL */
static int field_set(const struct field *f, const char *v, size_t vlen, struct run_record *r)
{
	char *m = (char *)r + f->off, num[32], *end;
	unsigned long long x;

	if (f->kind == F_STR) {
		if (vlen >= f->size)
			return -EINVAL;
		memcpy(m, v, vlen);
		m[vlen] = '\0';
		return 0;
	}
	if (vlen == 0 || vlen >= sizeof(num))
		return -EINVAL;
	memcpy(num, v, vlen);
	num[vlen] = '\0';
	errno = 0;
	x = strtoull(num, &end, 10);
	if (errno || *end || num[0] == '-')
		return -EINVAL;
	if (f->kind == F_PID) {
		if (x > INT_MAX)
			return -EINVAL;
		*(pid_t *)m = (pid_t)x;
	} else if (f->kind == F_UID) {
		if (x > UINT32_MAX)
			return -EINVAL;
		*(uid_t *)m = (uid_t)x;
	} else {
		*(unsigned long long *)m = x;
	}
	return 0;
}

int run_record_parse(const char *text, struct run_record *r)
{
	const char *p = text;

	memset(r, 0, sizeof(*r));
	while (*p) {
		const char *eq = strchr(p, '='), *nl = strchr(p, '\n');
		const struct field *f = NULL;
		size_t klen;

		if (!nl)
			nl = p + strlen(p);
		if (nl == p) { /* a blank line */
			p = *nl ? nl + 1 : nl;
			continue;
		}
		if (!eq || eq > nl)
			return -EINVAL;
		klen = (size_t)(eq - p);
		for (size_t i = 0; !f && i < WD_ARRAY_SIZE(fields); i++)
			if (strlen(fields[i].key) == klen && !strncmp(p, fields[i].key, klen))
				f = &fields[i];
		if (!f || field_set(f, eq + 1, (size_t)(nl - eq - 1), r))
			return -EINVAL;
		p = *nl ? nl + 1 : nl;
	}
	return r->id[0] && r->pid > 0 ? 0 : -EINVAL;
}

int run_record_save(const char *dir, const struct run_record *r)
{
	char d[PATH_MAX], final[PATH_MAX + 16];
	struct wd_buf b = WD_BUF_INIT;
	int ret;

	snprintf(d, sizeof(d), "%s/%s", dir, r->id);
	ret = wd_mkdir_p(d, 0700);
	if (ret)
		return ret;
	snprintf(final, sizeof(final), "%s/state", d);
	ret = run_record_format(r, &b);
	if (!ret)
		ret = wd_write_file_atomic(AT_FDCWD, final, b.data, b.len, 0);
	wd_buf_free(&b);
	return ret;
}

/* Remove @d and the few plain files a run keeps in it. */
static void remove_run_dir(const char *d)
{
	DIR *dir = opendir(d);
	struct dirent *de;

	if (dir) {
		while ((de = readdir(dir)))
			if (de->d_name[0] != '.')
				unlinkat(dirfd(dir), de->d_name, 0);
		closedir(dir);
	}
	rmdir(d);
}

/* Undo what @r says a dead run left. Return: 0 or the first negative errno. */
static int reclaim(const char *d, const struct run_record *r, struct wd_err *err)
{
	struct limits l;
	int ret = 0, x;

	if (r->gw_pid > 0 && r->gw_start && run_proc_start(r->gw_pid) == r->gw_start) {
		kill(r->gw_pid, SIGKILL);
	} else if (r->gw_socket[0] && !r->gw_pid) {
		char req[128], *ans = NULL;

		snprintf(req, sizeof(req), "{\"op\":\"unregister\",\"id\":\"%s\"}", r->id);
		if (!run_gw_request(r->gw_socket, req, 1000, &ans))
			free(ans);
	}
	memset(&l, 0, sizeof(l));
	l.kind = r->cg[1][0] ? LIMITS_CGROUP1 : LIMITS_CGROUP2;
	for (int i = 0; i < LIMITS_V1_COUNT; i++)
		memcpy(l.dir[i], r->cg[i], sizeof(l.dir[i]));
	if (l.dir[0][0] || l.dir[1][0]) {
		limits_probe(); /* mounts hierarchies missing in this mount namespace */
		x = limits_destroy(&l);
		if (x)
			ret =
			    wd_err_set(err, x, "run %s: cgroup %s is still busy", r->id, r->cg[0]);
	}
	if (r->ifname[0] && r->table[0]) {
		struct fw_config c;
		struct fw_run fr;

		memset(&fr, 0, sizeof(fr));
		fw_config_defaults(&c);
		snprintf(c.table, sizeof(c.table), "%s", r->table);
		snprintf(c.if_prefix, sizeof(c.if_prefix), "%s",
			 r->if_prefix[0] ? r->if_prefix : "wd-");
		snprintf(fr.ifname, sizeof(fr.ifname), "%s", r->ifname);
		fr.has_v4 = r->sbx4[0] && inet_pton(AF_INET, r->sbx4, &fr.sbx4) == 1;
		fr.has_v6 = r->sbx6[0] && inet_pton(AF_INET6, r->sbx6, &fr.sbx6) == 1;
		fr.has_gw4 = fr.has_v4 && r->host4[0] && inet_pton(AF_INET, r->host4, &fr.gw4) == 1;
		fr.has_gw6 =
		    fr.has_v6 && r->host6[0] && inet_pton(AF_INET6, r->host6, &fr.gw6) == 1;
		x = fw_run_del(&c, &fr, NULL);
		if (x && !ret)
			ret = wd_err_set(err, x, "run %s: removing its nft elements: %s", r->id,
					 strerror(-x));
	}
	if (!ret)
		remove_run_dir(d);
	return ret;
}

int run_gc(const char *dir, unsigned *ret_reclaimed, struct wd_err *err)
{
	struct netns_pool_config cfg;
	unsigned n = 0, nets = 0, slots = 0;
	DIR *dd = opendir(dir);
	struct dirent *de;
	int ret = 0, x;

	if (ret_reclaimed)
		*ret_reclaimed = 0;
	if (!dd)
		return errno == ENOENT ? 0
				       : wd_err_set(err, -errno, "%s: %s", dir, strerror(errno));
	while ((de = readdir(dd))) {
		char d[PATH_MAX], sp[PATH_MAX + 8], *text = NULL;
		struct run_record r;
		size_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(d, sizeof(d), "%s/%s", dir, de->d_name);
		snprintf(sp, sizeof(sp), "%s/state", d);
		if (wd_read_file(sp, 65536, &text, &len)) {
			struct stat st;

			/* a folder without a record: a launcher died before its first save,
			 * or is saving right now; leave young ones alone */
			if (!stat(d, &st) && st.st_mtime + 60 < time(NULL))
				remove_run_dir(d);
			continue;
		}
		x = run_record_parse(text, &r);
		free(text);
		if (x || strcmp(r.id, de->d_name))
			continue;
		if (run_proc_start(r.pid) == r.start)
			continue; /* its launcher is alive */
		x = reclaim(d, &r, err);
		if (x && !ret)
			ret = x;
		if (!x) {
			n++;
			nets += r.ifname[0] != '\0';
		}
	}
	closedir(dd);
	/* only when a reclaimed run had a network: its namespace may still be bind-mounted */
	if (nets) {
		netns_pool_config_defaults(&cfg);
		x = netns_gc(&cfg, &slots, err);
		if (x && !ret)
			ret = x;
	}
	if (ret_reclaimed)
		*ret_reclaimed = n;
	return ret;
}
