/* proc.c - what /proc/<pid>/stat says of a process: its state and its start time (field 22,
 * clock ticks after boot), which together with the pid name one process for its whole life
 * (a pid is reused, a pid and start time are not); and the one reader of /proc/<pid>/status
 * (a field's value, a number, the four ids). The parsers are pure; wd_proc_stat() and
 * wd_proc_status_*() read the files. wd_parse_uint() reads the decimal ids such files and the
 * environment hold. */
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int wd_proc_stat_parse(const char *buf, size_t len, unsigned long long *ret_start, char *ret_state)
{
	const char *p = NULL, *end = buf + len;
	unsigned long long start = 0;
	char state;
	int field;

	/* "pid (comm) S ppid ...": comm may hold spaces and ')', so fields start after the
	 * last ')' */
	for (const char *c = buf; c < end; c++)
		if (*c == ')')
			p = c;
	if (!p || end - p < 3 || p[1] != ' ')
		return -EIO;
	p += 2;
	state = *p;
	/* p is at field 3 (state); the start time is field 22 */
	for (field = 3; field < 22; field++) {
		while (p < end && *p != ' ')
			p++;
		if (p == end)
			return -EIO;
		p++;
	}
	if (p == end || *p < '0' || *p > '9')
		return -EIO;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (start > (~0ULL - d) / 10)
			return -EIO;
		start = start * 10 + d;
	}
	if (p < end && *p != ' ' && *p != '\n')
		return -EIO;
	*ret_start = start;
	if (ret_state)
		*ret_state = state;
	return 0;
}

int wd_proc_stat(pid_t pid, unsigned long long *ret_start, char *ret_state)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd, ret;

	if (pid < 0)
		return -EINVAL;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (ret)
		return ret == -ESRCH ? -ENOENT : ret;
	return wd_proc_stat_parse(buf, (size_t)n, ret_start, ret_state);
}

int wd_parse_uint(const char *s, unsigned long long max, unsigned long long *ret)
{
	unsigned long long v = 0;
	size_t i;

	if (!s || !s[0] || (s[0] == '0' && s[1]))
		return -EINVAL;
	for (i = 0; s[i]; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9)
			return -EINVAL;
		if (d > max || v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

int wd_proc_status_parse(const char *text, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key), n;
	const char *line, *next, *v;

	if (!klen || !size)
		return -ERANGE;
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			next++;
		if (strncmp(line, key, klen))
			continue;
		if (line[klen] != ':') {
			/* "Uidx:" is another line; "Uid 1000" is this one, malformed */
			if (!strchr(" \t\n", line[klen]))
				continue;
			return -EIO;
		}
		v = line + klen + 1;
		v += strspn(v, " \t");
		n = strcspn(v, "\n");
		if (n >= size)
			return -ERANGE;
		memcpy(out, v, n);
		out[n] = '\0';
		return 0;
	}
	return -ENOENT;
}

int wd_proc_status_num_parse(const char *value, int base, unsigned long *ret)
{
	unsigned long v;
	char *end;

	if (!value[0] || value[0] == '-' || value[0] == '+' || value[0] == ' ' || value[0] == '\t')
		return -EIO;
	errno = 0;
	v = strtoul(value, &end, base);
	if (errno || end == value || *end)
		return -EIO;
	*ret = v;
	return 0;
}

int wd_proc_status_ids_parse(const char *value, unsigned long ret[4])
{
	unsigned long ids[4];
	const char *s = value;

	for (int i = 0; i < 4; i++) {
		char word[16];
		size_t n = strcspn(s, "\t");
		unsigned long long v;

		if (!n || n >= sizeof(word))
			return -EIO;
		memcpy(word, s, n);
		word[n] = '\0';
		if (wd_parse_uint(word, UINT32_MAX, &v))
			return -EIO;
		ids[i] = (unsigned long)v;
		s += n;
		if (i < 3 && *s++ != '\t')
			return -EIO;
	}
	if (*s)
		return -EIO;
	memcpy(ret, ids, sizeof(ids));
	return 0;
}

/* The field @key of the status file open at @fd (closed here). */
static int status_read(int fd, const char *key, char *out, size_t size)
{
	char buf[8192];
	size_t got = 0;
	ssize_t n;
	int ret;

	if (fd < 0)
		return errno == ESRCH ? -ENOENT : -errno;
	/* a seq_file: read to its end, a page at a time */
	while (got < sizeof(buf) - 1) {
		n = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = errno == ESRCH ? -ENOENT : -errno;
			close(fd);
			return ret;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	ret = wd_proc_status_parse(buf, key, out, size);
	/* cut short: the line may lie past what was read */
	return ret == -ENOENT && got == sizeof(buf) - 1 ? -EIO : ret;
}

int wd_proc_status_field(pid_t pid, const char *key, char *out, size_t size)
{
	char path[64];

	if (pid < 0)
		return -EINVAL;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	return status_read(open(path, O_RDONLY | O_CLOEXEC), key, out, size);
}

int wd_proc_status_field_at(int procfd, const char *key, char *out, size_t size)
{
#ifdef _WIN32
	(void)procfd, (void)key, (void)out, (void)size;
	return -ENOSYS; /* no /proc */
#else
	return status_read(openat(procfd, "status", O_RDONLY | O_CLOEXEC), key, out, size);
#endif
}

int wd_proc_status_num(pid_t pid, const char *key, int base, unsigned long *ret)
{
	char v[64];
	int r = wd_proc_status_field(pid, key, v, sizeof(v));

	return r ? r : wd_proc_status_num_parse(v, base, ret);
}

int wd_proc_status_ids(pid_t pid, const char *key, unsigned long ret[4])
{
	char v[96];
	int r = wd_proc_status_field(pid, key, v, sizeof(v));

	return r ? r : wd_proc_status_ids_parse(v, ret);
}
