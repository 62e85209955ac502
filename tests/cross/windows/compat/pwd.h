/* compat/pwd.h - for the Windows build only (tests/cross/windows): Windows has no passwd
 * database. getpwuid() finds no one (NULL, ENOSYS), so policy/validate.c's fall-back for a
 * missing HOME finds no home folder and the policy check fails, as it says, closed. */
#ifndef WARDEN_COMPAT_PWD_H
#define WARDEN_COMPAT_PWD_H
#include "common/win.h"
#include <errno.h>
#include <stddef.h>

struct passwd {
	char *pw_name;
	char *pw_dir;
};

static inline struct passwd *getpwuid(uid_t uid)
{
	(void)uid;
	errno = ENOSYS;
	return NULL;
}
#endif
