/* compat/sys/random.h - for the Windows build only (tests/cross/windows): common/hash.c's key
 * comes from getentropy(), which common/win.h maps to BCryptGenRandom() (common/win.c). */
#ifndef WARDEN_COMPAT_SYS_RANDOM_H
#define WARDEN_COMPAT_SYS_RANDOM_H
#include "common/win.h"
#endif
