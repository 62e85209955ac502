/* process.c - the recorder's process: forked by recorder_start(), it names itself
 * "warden-recorder" (PR_SET_NAME: what ps and the tests see), becomes the program's user whole
 * and drops every capability, then answers one notification at a time (judge.c, trace.c)
 * until recorder_stop()'s signal, and sends its entries to the launcher (wire.c). */
#include "recorder/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Linux 6.6: wake the waiting caller on this CPU when the answer is sent, and the recorder when
 * a call arrives (the uapi headers here are older) */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1UL
#endif

/* Set by RECORDER_WAKE's handler in the recorder's process: leave the loop. */
static volatile sig_atomic_t recorder_stopping;

/* RECORDER_WAKE's handler: its arrival also interrupts the blocking receive (EINTR). */
static void on_wake(int sig)
{
	(void)sig;
	recorder_stopping = 1;
}

/* Every capability set emptied, the bounding set too, and none to be had again. */
static int drop_caps(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0, 0, 0}, {0, 0, 0}};

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : 0;
}

/*
 * The recorder's process becomes the program's user, whole: in root mode the program's real,
 * effective, saved and file system uid and gid and its supplementary groups (the kernel's and
 * file systems' checks of any of them then see the user: a FUSE mount without allow_other,
 * a capability, a real uid); in every mode no capability, no_new_privs, not dumpable (a
 * process of the same user may not ptrace it: it holds the listener), no descriptor but
 * @keep (0, 1 and 2 are /dev/null). Return: 0 or a negative errno.
 */
static int become_user(const struct recorder *rf, const int *keep, size_t nkeep)
{
	int e = wd_close_all_except(keep, nkeep), nul;

	if (e)
		return e;
	/* not even the launcher's stdio (a root-owned file, a terminal): /dev/null */
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0)
		return -errno;
	for (int fd = 0; fd <= 2; fd++)
		if (dup2(nul, fd) < 0) {
			e = -errno;
			close(nul);
			return e;
		}
	if (nul > 2)
		close(nul);
	if (chdir("/") < 0)
		return -errno;
	/* while root may: an empty bounding set (EINVAL past the last one the kernel has) */
	for (int c = 0; rf->as_user && c <= 63; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	if (rf->as_user &&
	    (setgroups((size_t)rf->ngroups, rf->groups) < 0 ||
	     setresgid(rf->gid, rf->gid, rf->gid) < 0 || setresuid(rf->uid, rf->uid, rf->uid) < 0))
		return -errno;
	if (rf->as_user) {
		/* ask back: a partial change must not pass */
		uid_t ru, eu, su;
		gid_t rg, eg, sg;

		if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 || ru != rf->uid ||
		    eu != rf->uid || su != rf->uid || rg != rf->gid || eg != rf->gid ||
		    sg != rf->gid || (uid_t)syscall(SYS_setfsuid, (uid_t)-1) != rf->uid ||
		    (gid_t)syscall(SYS_setfsgid, (gid_t)-1) != rf->gid)
			return -EPERM;
	}
	e = drop_caps();
	if (e)
		return e;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

_Noreturn void recorder_process_main(struct recorder *rf, pid_t parent, int wfd)
{
	struct seccomp_notif_sizes sz = {0};
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	int keep[2] = {rf->listener, wfd};
	struct sigaction sa;
	sigset_t mask;
	size_t reqsz;

	/* a name of its own (ps, /proc/PID/comm; docs/files.md "Identity"): not the launcher's */
	if (prctl(PR_SET_NAME, (unsigned long)RECORDER_COMM, 0, 0, 0) < 0)
		_exit(RECORDER_EXIT_SETUP);
	/* the launcher's signals are its own: only the wake-up comes through */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_wake; /* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	sigfillset(&mask);
	sigdelset(&mask, RECORDER_WAKE);
	if (sigaction(RECORDER_WAKE, &sa, NULL) < 0 || sigprocmask(SIG_SETMASK, &mask, NULL) < 0)
		_exit(RECORDER_EXIT_SETUP);
	/* above 2, which become /dev/null */
	for (size_t i = 0; i < WD_ARRAY_SIZE(keep); i++)
		if (keep[i] <= 2 && (keep[i] = fcntl(keep[i], F_DUPFD_CLOEXEC, 3)) < 0)
			_exit(RECORDER_EXIT_SETUP);
	rf->listener = keep[0];
	wfd = keep[1];
	/* fail closed: a recorder that cannot be the user answers nothing (the listener
	 * closes, the program's watched calls get ENOSYS) */
	if (become_user(rf, keep, WD_ARRAY_SIZE(keep)))
		_exit(RECORDER_EXIT_SETUP);
	/* after the uid change, which clears it: the recorder dies with the launcher */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(RECORDER_EXIT_SETUP);
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		_exit(RECORDER_EXIT_SETUP);
	/* a caller waits for each answer: hand the CPU over directly (EINVAL before 6.6) */
	(void)ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
		    (__u64)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	reqsz = sz.seccomp_notif > sizeof(*req) ? sz.seccomp_notif : sizeof(*req);
	req = calloc(1, reqsz);
	resp = calloc(1, sz.seccomp_notif_resp > sizeof(*resp) ? sz.seccomp_notif_resp
							       : sizeof(*resp));
	if (!req || !resp)
		_exit(RECORDER_EXIT_SETUP);
	/* one blocking call per notification; recorder_stop() interrupts it with a signal */
	while (!recorder_stopping) {
		memset(req, 0, reqsz);
		if (ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			break;
		}
		if (rf->mode == POLICY_FILES_TRACE)
			recorder_handle_trace(rf, req, resp);
		else
			recorder_handle_files(rf, req, resp);
	}
	/* the kernel answers ENOSYS to whatever waits or comes later: fail closed */
	wd_closep(&rf->listener);
	sigfillset(&mask);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	_exit(recorder_wire_send(rf, wfd) ? RECORDER_EXIT_SEND : 0);
}
