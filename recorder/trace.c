/* trace.c - one notification in trace mode (warden trace, docs/files.md "Trace mode"): the
 * recorder carries the call out (opens: open.c; the other path calls and connect: emul.c)
 * or lets the kernel run it (exec, what it cannot do exactly) and records only what the kernel
 * shows: an exec is read from /proc/PID/exe at the process's next call. */
#include "recorder/internal.h"
#include "trace/file.h"

#include <errno.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Remember that @pid (and its thread group: after an exec by another thread the process
 * continues as its leader) called exec; a full table forgets the oldest (unrecorded). */
static void exec_pending_add(struct recorder *rf, pid_t pid)
{
	unsigned long tgid = 0;
	pid_t add[2] = {pid, 0};

	if (!wd_proc_status_num(pid, "Tgid", 10, &tgid) && (pid_t)tgid != pid)
		add[1] = (pid_t)tgid;
	for (size_t k = 0; k < 2 && add[k]; k++) {
		bool have = false;

		for (size_t i = 0; i < rf->nexec && !have; i++)
			have = rf->exec_pending[i] == add[k];
		if (have)
			continue;
		if (rf->nexec == RECORDER_EXEC_PENDING_MAX) {
			memmove(rf->exec_pending, rf->exec_pending + 1,
				(RECORDER_EXEC_PENDING_MAX - 1) * sizeof(*rf->exec_pending));
			rf->nexec--;
		}
		rf->exec_pending[rf->nexec++] = add[k];
	}
}

static bool exec_pending_take(struct recorder *rf, pid_t pid)
{
	for (size_t i = 0; i < rf->nexec; i++)
		if (rf->exec_pending[i] == pid) {
			rf->exec_pending[i] = rf->exec_pending[--rf->nexec];
			return true;
		}
	return false;
}

/* exec, from the kernel's truth: the binary the process runs now (never the path bytes). */
static void record_exe(struct recorder *rf, pid_t pid)
{
	static const char deleted[] = " (deleted)";
	char p[48], exe[PATH_MAX];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/exe", pid);
	n = readlink(p, exe, sizeof(exe) - 1);
	if (n <= 0 || n >= (ssize_t)sizeof(exe) - 1)
		return;
	exe[n] = '\0';
	if ((size_t)n >= sizeof(deleted) - 1 && !strcmp(exe + n - (sizeof(deleted) - 1), deleted))
		return;
	recorder_trace_note(rf, TRACE_EXEC, exe, false, pid);
}

/* Any other call of the trace table: recorder_emulate() carries it out (emul.c). Return:
 * 1 answered in @resp (not sent yet), 0 answer CONTINUE. */
static int trace_emulate(struct recorder *rf, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp)
{
	struct recorder_emul_out *out = &rf->emul_out;
	/* mkdir, mkdirat: the caller's umask applies */
	bool creates = req->data.nr == 83 || req->data.nr == 258;
	struct recorder_call x;
	uint64_t args[6];
	int r;

	/* connect: its socket is taken from the caller by pidfd */
	if (recorder_call_open((pid_t)req->pid, creates, req->data.nr == 42, &x))
		return 0;
	if (ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0) {
		recorder_call_close(&x);
		return 0;
	}
	for (size_t i = 0; i < 6; i++)
		args[i] = req->data.args[i];
	x.c.sockets = rf->sockets;
	x.c.nsockets = rf->nsockets;
	r = recorder_emulate(&x.c, req->data.nr, args, out);
	recorder_call_close(&x);
	if (r < 0)
		rf->unreadable++; /* the recorder's own failure: missing from the trace */
	if (r != 1)
		return 0;
	resp->flags = 0;
	if (out->ret < 0)
		resp->error = (__s32)out->ret;
	else
		resp->val = out->ret;
	if (out->op >= 0)
		recorder_trace_note(rf, out->op, out->path, out->refused, (pid_t)req->pid);
	if (out->op2 >= 0)
		recorder_trace_note(rf, out->op2, out->path2, false, (pid_t)req->pid);
	return 1;
}

void recorder_handle_trace(struct recorder *rf, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp)
{
	pid_t pid = (pid_t)req->pid;

	rf->seen++;
	resp->id = req->id;
	resp->val = 0;
	resp->error = 0;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	if (!recorder_is_program(rf, pid))
		goto send;
	/* its exec went through (or failed): the binary it runs now is the kernel's truth */
	if (rf->nexec && exec_pending_take(rf, pid))
		record_exe(rf, pid);
	switch (req->data.nr) {
	case 59:  /* execve */
	case 322: /* execveat */
		exec_pending_add(rf, pid);
		goto send;
	case 2:	  /* open */
	case 85:  /* creat */
	case 257: /* openat */
	case 437: /* openat2 */
		if (recorder_trace_open(rf, req, resp))
			return; /* answered */
		goto send;
	default:
		if (trace_emulate(rf, req, resp))
			goto send;
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		resp->val = 0;
		resp->error = 0;
		/* a connect the recorder could not take on (its own failure): refused, never
		 * the kernel's, which would read the address anew (a host service's socket) */
		if (req->data.nr == 42) {
			resp->flags = 0;
			resp->error = -EACCES;
		}
		goto send;
	}
send:
	/* ENOENT: the caller was interrupted or died meanwhile; nothing to answer */
	(void)ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
}
