/* compat/grp.h - for the Windows build only (tests/cross/windows): Windows has no group
 * database of numeric ids. getgrgid_r() and getgrouplist() are refused (ENOSYS), so a lookup of
 * a run's groups fails and what depends on it is refused, closed (gateway/runpolicy.c). */
#ifndef WARDEN_COMPAT_GRP_H
#define WARDEN_COMPAT_GRP_H
#include "common/win.h"

#include <errno.h>
#include <stddef.h>

struct group {
	char *gr_name;
	gid_t gr_gid;
};

/* getgrgid_r(3), refused: Return: ENOSYS, *@res NULL */
static inline int getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t len, struct group **res)
{
	(void)gid, (void)gr, (void)buf, (void)len;
	*res = NULL;
	return ENOSYS;
}

/* getgrnam(3), refused: NULL with ENOSYS */
static inline struct group *getgrnam(const char *name)
{
	(void)name;
	errno = ENOSYS;
	return NULL;
}

/* getgrouplist(3), refused: -1 with ENOSYS (its callers read -1 as a failure) */
static inline int getgrouplist(const char *user, gid_t group, gid_t *groups, int *n)
{
	(void)user, (void)group, (void)groups, (void)n;
	errno = ENOSYS;
	return -1;
}
#endif
