/* proc.c - what /proc/<pid>/stat says of a process: its state and its start time (field 22,
 * clock ticks after boot), which together with the pid name one process for its whole life
 * (a pid is reused, a pid and start time are not). The parser is pure; wd_proc_stat()
 * reads the file. wd_parse_uint() reads the decimal ids such files and the environment hold. */
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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
