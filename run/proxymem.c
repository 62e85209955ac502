/* proxymem.c - the memory of a proxy run's program, for limits.memory_mb where no cgroup holds
 * it (macOS): the sum of what every process of the program's process group uses, read by the
 * wait (proxyproc.c) every RUN_PROXY_MEM_SAMPLE_MS. On macOS each process's physical
 * footprint (proc_pid_rusage's ri_phys_footprint: what Activity Monitor calls its memory) of
 * the group's pids (proc_listpgrppids); on Linux, where the lab runs this path as
 * warden-seatbelt, each process's VmRSS from /proc of those whose group it is. A process that
 * left the group (setsid, setpgid) is not counted, as the watchdog's kill(-pgid) does not
 * reach it either (warden-policy(5) says so). */
#include "run/proxyrun.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __APPLE__
#include <libproc.h>
#include <sys/resource.h>

/* the most processes of one group counted */
#define GROUP_MAX 4096

int run_proxy_group_mem_kb(pid_t pgid, uint64_t *ret_kb)
{
	pid_t *pids = calloc(GROUP_MAX, sizeof(*pids));
	uint64_t sum = 0;
	int n;

	if (!pids)
		return -ENOMEM;
	n = proc_listpgrppids(pgid, pids, GROUP_MAX * (int)sizeof(*pids));
	if (n < 0) {
		free(pids);
		return -errno;
	}
	n /= (int)sizeof(*pids);
	for (int i = 0; i < n && i < GROUP_MAX; i++) {
		struct rusage_info_v2 ri;

		if (pids[i] > 0 && !proc_pid_rusage(pids[i], RUSAGE_INFO_V2, (rusage_info_t *)&ri))
			sum += ri.ri_phys_footprint;
	}
	free(pids);
	*ret_kb = sum / 1024;
	return 0;
}
#elif defined(__linux__)
#include <dirent.h>

/* @pid's process group (the fifth field of /proc/PID/stat, after the command in parentheses),
 * or -1 */
static pid_t group_of(const char *pid)
{
	char path[64], buf[512], *p, *end;
	FILE *f;
	long pgrp = -1;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	/* ") S PPID PGRP ...": the state, the parent, then the group */
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	for (int field = 0; p && field < 3; field++) {
		p = strchr(p + 1, ' ');
		if (p && field == 2) {
			errno = 0;
			pgrp = strtol(p + 1, &end, 10);
			if (errno || end == p + 1)
				pgrp = -1;
		}
	}
	fclose(f);
	return (pid_t)pgrp;
}

/* @pid's VmRSS in KiB, 0 when it has none (a zombie) or is gone */
static uint64_t rss_of(const char *pid)
{
	char path[64], line[256];
	unsigned long long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6)) {
			kb = strtoull(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

int run_proxy_group_mem_kb(pid_t pgid, uint64_t *ret_kb)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	uint64_t sum = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && group_of(e->d_name) == pgid)
			sum += rss_of(e->d_name);
	closedir(d);
	*ret_kb = sum;
	return 0;
}
#else
int run_proxy_group_mem_kb(pid_t pgid, uint64_t *ret_kb)
{
	(void)pgid;
	*ret_kb = 0;
	return -ENOSYS;
}
#endif
