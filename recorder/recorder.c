/* recorder.c - the file-access recorder as the launcher sees it (recorder.h): made, given its
 * user and sockets, started as a process of its own (process.c) on the sandbox's listener,
 * stopped, its entries taken over the pipe (wire.c) and read. */
#include "recorder/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The hash table's size: a power of two, at least twice the entries it may hold. */
#define TABLE_SLOTS(max) ((max)*2)

int recorder_new(enum policy_audit_files mode, char *const *mask, size_t nmask,
		 struct recorder **ret)
{
	struct recorder *rf;

	if (mode != POLICY_FILES_DENIED && mode != POLICY_FILES_ALL && mode != POLICY_FILES_TRACE)
		return -EINVAL;
	rf = calloc(1, sizeof(*rf));
	if (!rf)
		return -ENOMEM;
	rf->listener = rf->root_fd = rf->res_fd = -1;
	rf->mode = mode;
	rf->max = mode == POLICY_FILES_DENIED ? RECORDER_MAX_DENIED : RECORDER_MAX_ALL;
	rf->nslot = TABLE_SLOTS(rf->max);
	rf->slot = calloc(rf->nslot, sizeof(*rf->slot));
	rf->dir_path = calloc(RECORDER_DIR_CACHE_MAX * 2, sizeof(*rf->dir_path));
	rf->dir_same = calloc(RECORDER_DIR_CACHE_MAX * 2, sizeof(*rf->dir_same));
	rf->mask = calloc(nmask + 1, sizeof(*rf->mask));
	if (!rf->slot || !rf->dir_path || !rf->dir_same || !rf->mask) {
		recorder_free(rf);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nmask; i++) {
		rf->mask[i] = strdup(mask[i]);
		if (!rf->mask[i]) {
			recorder_free(rf);
			return -ENOMEM;
		}
		rf->nmask++;
	}
	*ret = rf;
	return 0;
}

int recorder_set_user(struct recorder *rf, uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	if (ngroups < 0 || ngroups > RECORDER_MAX_GROUPS)
		return -EINVAL;
	rf->as_user = true;
	rf->uid = uid;
	rf->gid = gid;
	if (ngroups)
		memcpy(rf->groups, groups, (size_t)ngroups * sizeof(*groups));
	rf->ngroups = ngroups;
	return 0;
}

int recorder_allow_sockets(struct recorder *rf, char *const *paths, size_t n)
{
	char **v = calloc(n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i] = strdup(paths[i]);
		if (!v[i]) {
			while (i--)
				free(v[i]);
			free(v);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < rf->nsockets; i++)
		free(rf->sockets[i]);
	free(rf->sockets);
	rf->sockets = v;
	rf->nsockets = n;
	return 0;
}

int recorder_start(struct recorder *rf, int listener, pid_t outer)
{
	int p[2];
	pid_t self = getpid(), pid;

	rf->listener = listener;
	rf->outer = outer;
	if (pipe2(p, O_CLOEXEC) < 0) {
		int e = -errno;

		wd_closep(&rf->listener);
		return e;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(p[0]);
		close(p[1]);
		wd_closep(&rf->listener);
		return e;
	}
	if (pid == 0) {
		close(p[0]);
		recorder_process_main(rf, self, p[1]);
	}
	close(p[1]);
	/* the listener is the recorder's alone: when it ends, the kernel answers ENOSYS */
	wd_closep(&rf->listener);
	rf->res_fd = p[0];
	rf->pid = pid;
	rf->running = true;
	return 0;
}

void recorder_stop(struct recorder *rf)
{
	int st;

	if (!rf)
		return;
	if (rf->running) {
		struct pollfd pfd = {rf->res_fd, POLLIN, 0};

		/* a signal sent just before the recorder blocks would be lost: again until it
		 * answers (its results, or its end) */
		for (;;) {
			if (kill(rf->pid, RECORDER_WAKE) < 0 && errno == ESRCH)
				break;
			if (poll(&pfd, 1, 2) > 0)
				break;
		}
		if (recorder_wire_recv(rf, rf->res_fd)) {
			/* malformed, or it died: nothing it said counts */
			(void)kill(rf->pid, SIGKILL);
			recorder_forget(rf);
			rf->lost = true;
		}
		while (waitpid(rf->pid, &st, 0) < 0 && errno == EINTR)
			;
		rf->running = false;
		rf->pid = 0;
	}
	wd_closep(&rf->res_fd);
	wd_closep(&rf->listener);
	wd_closep(&rf->root_fd);
}

bool recorder_lost(const struct recorder *rf)
{
	return rf && rf->lost;
}

void recorder_free(struct recorder *rf)
{
	if (!rf)
		return;
	recorder_stop(rf);
	for (size_t i = 0; i < rf->nent; i++)
		free(rf->ent[i].path);
	for (size_t i = 0; rf->dir_path && i < RECORDER_DIR_CACHE_MAX * 2; i++)
		free(rf->dir_path[i]);
	for (size_t i = 0; i < rf->nmask; i++)
		free(rf->mask[i]);
	free(rf->mask);
	for (size_t i = 0; i < rf->nsockets; i++)
		free(rf->sockets[i]);
	free(rf->sockets);
	free(rf->dir_path);
	free(rf->dir_same);
	free(rf->ent);
	free(rf->slot);
	free(rf);
}
