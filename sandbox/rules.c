/* rules.c - the table of system calls the seccomp filter refuses: one row per call and
 * condition, with what it returns and why. docs/seccomp.md is the long form of each `why`;
 * the anchors were Docker's default profile (moby profiles/seccomp/default.json) and
 * Flatpak's filter (common/flatpak-run.c, setup_seccomp()).
 *
 * Everything not listed here is allowed: the filter's default action is ALLOW. The
 * rows loosened by SANDBOX_ALLOW_USERNS are the namespace and mount calls, nothing else.
 */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <stddef.h>

/* namespace flags of clone(2) (its low byte is the exit signal, so no CLONE_NEWTIME there) */
#define NS_CLONE_FLAGS 0x7e020000ULL /* NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET */
/* ... and of unshare(2), which takes CLONE_NEWTIME (0x80) too */
#define NS_UNSHARE_FLAGS (NS_CLONE_FLAGS | 0x80ULL)
#define NS_NAMES "CLONE_NEW: NS CGROUP UTS IPC USER PID NET"
#define SETID_BITS 06000ULL /* S_ISUID | S_ISGID */
#define TIOCSTI_REQ 0x5412ULL
#define TIOCLINUX_REQ 0x541cULL
/* PER_LINUX32 | UNAME26: with PER_LINUX (0) and the query (0xffffffff), Docker's set */
#define PERSONA_BITS 0x20008ULL

static const uint64_t socket_families[] = {1 /* AF_UNIX */, 2 /* AF_INET */, 10 /* AF_INET6 */,
					   16 /* AF_NETLINK */};

static const char why_keys[] =
    "the kernel keyrings hold the caller's secrets (session and user keyrings: Kerberos "
    "tickets, ecryptfs and NFS keys); a run neither reads nor adds keys";
static const char why_bpf[] = "loads programs into the kernel: a large attack surface that "
			      "no program in a sandbox needs";
static const char why_uffd[] =
    "lets a program stall the kernel in the middle of a copy from user memory, a staple of "
    "kernel exploits";
static const char why_uring[] =
    "a second system call interface whose operations this filter cannot see; programs (libuv, "
    "glib) fall back to threads";
static const char why_perf[] = "performance counters leak kernel addresses and timings; only "
			       "profilers use them";
static const char why_handle[] =
    "file handles open any file of a mounted filesystem past the sandbox's mounts (the "
    "`shocker` escape)";
static const char why_fanotify[] = "watches the accesses of a whole filesystem, beyond the grants";
static const char why_kexec[] = "loads a new kernel";
static const char why_module[] = "loads or removes kernel code";
static const char why_mount[] =
    "changes the sandbox's mount table, to uncover what bubblewrap hid (loosened only with "
    "nested namespaces, where it acts on the program's own mounts)";
static const char why_setns[] = "joins another namespace";
static const char why_ns[] =
    "a new user namespace hands back every capability inside it, and with them mounts and the "
    "kernel's namespace code; the other flags follow it";
static const char why_clone3[] =
    "its flags lie in memory a filter cannot read; ENOSYS makes glibc fall back to clone(2), "
    "whose flags are checked";
static const char why_persona[] =
    "READ_IMPLIES_EXEC makes every mapping executable, ADDR_NO_RANDOMIZE turns ASLR off for "
    "what the program starts, MMAP_PAGE_ZERO maps page 0; only the harmless ones pass";
static const char why_tiocsti[] =
    "pushes keystrokes into the terminal's input: the program types commands into the "
    "caller's shell (CVE-2017-5226); compared on the 32 bits the kernel reads (CVE-2019-10063)";
static const char why_tioclinux[] =
    "on a virtual console it pastes the selection into the input: the same injection "
    "(CVE-2023-28100)";
static const char why_setid[] =
    "no run leaves a setuid or setgid file behind (writing to a file strips the bits, so "
    "open and mknod need no rule)";
static const char why_socket[] =
    "other families (vsock to the hypervisor, packet, Bluetooth, crypto, TIPC...) are kernel "
    "surface no network policy covers; EAFNOSUPPORT is what programs expect";

/* clang-format off */
#define ALWAYS {.kind = SANDBOX_ALWAYS}
#define ANY_BIT(a, name, bits, text) \
	{.kind = SANDBOX_ANY_BIT, .arg = (a), .arg_name = (name), .value = (bits), .names = (text)}
#define LOW32_EQ(a, name, v, text) \
	{.kind = SANDBOX_LOW32_EQ, .arg = (a), .arg_name = (name), .value = (v), .names = (text)}
/* clang-format on */

const struct sandbox_rule sandbox_rules[] = {
    /* the keyrings (issue 10, item 4) */
    {"keyctl", 250, ALWAYS, EPERM, 0, why_keys},
    {"add_key", 248, ALWAYS, EPERM, 0, why_keys},
    {"request_key", 249, ALWAYS, EPERM, 0, why_keys},
    /* kernel attack surface nothing in a sandbox needs */
    {"bpf", 321, ALWAYS, EPERM, 0, why_bpf},
    {"userfaultfd", 323, ALWAYS, EPERM, 0, why_uffd},
    {"io_uring_setup", 425, ALWAYS, EPERM, 0, why_uring},
    {"io_uring_enter", 426, ALWAYS, EPERM, 0, why_uring},
    {"io_uring_register", 427, ALWAYS, EPERM, 0, why_uring},
    {"perf_event_open", 298, ALWAYS, EPERM, 0, why_perf},
    {"open_by_handle_at", 304, ALWAYS, EPERM, 0, why_handle},
    {"name_to_handle_at", 303, ALWAYS, EPERM, 0, why_handle},
    {"fanotify_init", 300, ALWAYS, EPERM, 0, why_fanotify},
    {"kexec_load", 246, ALWAYS, EPERM, 0, why_kexec},
    {"kexec_file_load", 320, ALWAYS, EPERM, 0, why_kexec},
    {"init_module", 175, ALWAYS, EPERM, 0, why_module},
    {"finit_module", 313, ALWAYS, EPERM, 0, why_module},
    {"delete_module", 176, ALWAYS, EPERM, 0, why_module},
    /* mounts, old and new API */
    {"mount", 165, ALWAYS, EPERM, SANDBOX_ALLOW_USERNS, why_mount},
    {"umount2", 166, ALWAYS, EPERM, SANDBOX_ALLOW_USERNS, why_mount},
    {"pivot_root", 155, ALWAYS, EPERM, SANDBOX_ALLOW_USERNS, why_mount},
    {"fsopen", 430, ALWAYS, EPERM, SANDBOX_ALLOW_USERNS, why_mount},
    {"fsconfig", 431, ALWAYS, EPERM, SANDBOX_ALLOW_USERNS, why_mount},
    {"fsmount", 432, ALWAYS, EPERM, SANDBOX_ALLOW_USERNS, why_mount},
    {"fspick", 433, ALWAYS, EPERM, SANDBOX_ALLOW_USERNS, why_mount},
    {"move_mount", 429, ALWAYS, EPERM, SANDBOX_ALLOW_USERNS, why_mount},
    {"open_tree", 428, ALWAYS, EPERM, SANDBOX_ALLOW_USERNS, why_mount},
    {"mount_setattr", 442, ALWAYS, EPERM, SANDBOX_ALLOW_USERNS, why_mount},
    {"open_tree_attr", 467, ALWAYS, EPERM, SANDBOX_ALLOW_USERNS, why_mount},
    /* namespaces */
    {"setns", 308, ALWAYS, EPERM, SANDBOX_ALLOW_USERNS, why_setns},
    {"unshare", 272, ANY_BIT(0, "flags", NS_UNSHARE_FLAGS, NS_NAMES " TIME"), EPERM,
     SANDBOX_ALLOW_USERNS, why_ns},
    {"clone", 56, ANY_BIT(0, "flags", NS_CLONE_FLAGS, NS_NAMES), EPERM, SANDBOX_ALLOW_USERNS,
     why_ns},
    {"clone3", 435, ALWAYS, ENOSYS, 0, why_clone3},
    /* personalities */
    {"personality",
     135,
     {.kind = SANDBOX_PERSONA,
      .arg = 0,
      .arg_name = "persona",
      .value = PERSONA_BITS,
      .names = "PER_LINUX, PER_LINUX32, UNAME26, both, the query"},
     EPERM,
     0,
     why_persona},
    /* the terminal (issue 10, item 1) */
    {"ioctl", 16, LOW32_EQ(1, "request", TIOCSTI_REQ, "TIOCSTI"), EPERM, 0, why_tiocsti},
    {"ioctl", 16, LOW32_EQ(1, "request", TIOCLINUX_REQ, "TIOCLINUX"), EPERM, 0, why_tioclinux},
    /* setuid and setgid bits */
    {"chmod", 90, ANY_BIT(1, "mode", SETID_BITS, "S_ISUID|S_ISGID"), EPERM, 0, why_setid},
    {"fchmod", 91, ANY_BIT(1, "mode", SETID_BITS, "S_ISUID|S_ISGID"), EPERM, 0, why_setid},
    {"fchmodat", 268, ANY_BIT(2, "mode", SETID_BITS, "S_ISUID|S_ISGID"), EPERM, 0, why_setid},
    {"fchmodat2", 452, ANY_BIT(2, "mode", SETID_BITS, "S_ISUID|S_ISGID"), EPERM, 0, why_setid},
    /* socket families */
    {"socket",
     41,
     {.kind = SANDBOX_NOT_IN,
      .arg = 0,
      .arg_name = "domain",
      .set = socket_families,
      .nset = WD_ARRAY_SIZE(socket_families),
      .names = "AF_UNIX, AF_INET, AF_INET6, AF_NETLINK"},
     EAFNOSUPPORT,
     0,
     why_socket},
};

const size_t sandbox_nrules = WD_ARRAY_SIZE(sandbox_rules);

static const struct {
	unsigned bit;
	const char *name;
} allow_names[] = {
    {SANDBOX_ALLOW_USERNS, "userns"},
};

const char *sandbox_allow_name(unsigned bit)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(allow_names); i++)
		if (allow_names[i].bit == bit)
			return allow_names[i].name;
	return NULL;
}
