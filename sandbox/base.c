/* base.c - what a sandbox's file system is made of before any grant: the host folders of the
 * runtime base every sandbox sees read-only (run/bwrap.c binds them; the recorder does not
 * count reads there as attempts past the grants; warden init leaves them out of a policy). */
#include "sandbox/sandbox.h"

#include <stddef.h>

const char *const sandbox_base_dirs[] = {
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/alternatives",
    "/etc/ld.so.conf.d",
    NULL,
};
