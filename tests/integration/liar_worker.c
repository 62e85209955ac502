/* liar_worker.c - a compromised worker for gateway_liar.sh: warden-gateway execs it with
 * `--worker` in place of warden-gateway-worker (descriptor 4: the privileged channel), and it
 * asks the parent to plumb a network namespace (GW_PRIV_NETNS_ADD) the way LIAR_MODE says,
 * then writes the parent's answer to LIAR_OUT.
 *
 * Environment (the parent passes its own on):
 *   LIAR_MODE   claim       the namespace alone, the uid claimed in the message (the worker's
 *                           word is all the parent gets)
 *               selfpair    the namespace and one end of a socketpair the worker made itself
 *               selfconnect the namespace and a socket the worker connected to LIAR_SOCK itself
 *               accepted    the namespace and the first connection accepted on the control
 *                           socket the parent handed over (a real client's: the honest case)
 *   LIAR_NETNS  the namespace to send (e.g. /proc/PID/ns/net)
 *   LIAR_UID    the uid (and gid) the message claims
 *   LIAR_ID     the run id the message names (default liarPID)
 *   LIAR_SOCK   the control socket's path (selfconnect)
 *   LIAR_OUT    where the answer goes: "status N IFNAME MSG", or "closed" when the parent ended
 *               the channel instead (a malformed request is fatal to it)
 *   LIAR_STOP   after an answer, the helper waits (at most 30 s) for this file, so that the
 *               script can look at what was plumbed; the parent undoes it when the helper exits
 * Exit 0 when an answer or the channel's end was written, 1 otherwise.
 */
#include "gateway/privsep.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define CHANNEL 4

static int die(const char *what)
{
	fprintf(stderr, "liar_worker: %s: %s\n", what, strerror(errno));
	return 1;
}

/* the handoff, received and checked as the real worker does: the control socket kept, every
 * other descriptor closed; Return: it, or -1 */
static int take_handoff(void)
{
	struct gw_fds fds;
	struct wd_err err;
	int ctl;

	wd_err_clear(&err);
	if (gw_priv_recv_fds(CHANNEL, &fds, &err))
		return -1;
	ctl = fds.ctl;
	fds.ctl = -1;
	gw_fds_close(&fds);
	return ctl;
}

static int send_fds(const struct gw_priv_netns *m, const int *fds, int nfds)
{
	return wd_send_fds(CHANNEL, m, sizeof(*m), fds, (size_t)nfds, 0) == (ssize_t)sizeof(*m)
		   ? 0
		   : -1;
}

/* the client descriptor LIAR_MODE says to attach (-1: none); Return: 0, or -1 */
static int client_for(const char *mode, int ctl, int *client)
{
	*client = -1;
	if (!strcmp(mode, "claim"))
		return 0;
	if (!strcmp(mode, "selfpair")) {
		int sp[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
			return -1;
		*client = sp[0];
		return 0;
	}
	if (!strcmp(mode, "selfconnect")) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		const char *path = getenv("LIAR_SOCK");

		*client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (!path || strlen(path) >= sizeof(sa.sun_path) || *client < 0)
			return -1;
		strcpy(sa.sun_path, path);
		return connect(*client, (struct sockaddr *)&sa, sizeof(sa));
	}
	if (!strcmp(mode, "accepted")) {
		struct pollfd pf = {.fd = ctl, .events = POLLIN};

		if (ctl < 0 || poll(&pf, 1, 15000) != 1)
			return -1;
		*client = accept4(ctl, NULL, NULL, SOCK_CLOEXEC);
		return *client < 0 ? -1 : 0;
	}
	errno = EINVAL;
	return -1;
}

int main(void)
{
	const char *mode = getenv("LIAR_MODE"), *ns = getenv("LIAR_NETNS"),
		   *uid = getenv("LIAR_UID"), *out = getenv("LIAR_OUT"),
		   *stop = getenv("LIAR_STOP"), *id = getenv("LIAR_ID");
	struct gw_priv_netns m;
	struct gw_priv_netns_reply rep;
	struct pollfd pf = {.fd = CHANNEL, .events = POLLIN};
	int fds[2], nfds = 1, ctl, client;
	ssize_t n;
	FILE *f;

	if (!mode || !ns || !uid || !out)
		return errno = EINVAL, die("LIAR_MODE, LIAR_NETNS, LIAR_UID and LIAR_OUT");
	ctl = take_handoff();
	fds[0] = open(ns, O_RDONLY | O_CLOEXEC);
	if (fds[0] < 0)
		return die(ns);
	if (client_for(mode, ctl, &client))
		return die(mode);
	if (client >= 0)
		fds[nfds++] = client;
	memset(&m, 0, sizeof(m));
	m.magic = GW_PRIV_MAGIC;
	m.version = GW_PRIV_VERSION;
	m.type = GW_PRIV_NETNS_ADD;
	m.seq = 1;
	m.uid = (uint32_t)strtoul(uid, NULL, 10);
	m.gid = m.uid;
	if (id)
		snprintf(m.id, sizeof(m.id), "%s", id);
	else
		snprintf(m.id, sizeof(m.id), "liar%d", (int)getpid());
	if (send_fds(&m, fds, nfds))
		return die("sendmsg");
	f = fopen(out, "w");
	if (!f)
		return die(out);
	memset(&rep, 0, sizeof(rep));
	n = poll(&pf, 1, 20000) == 1 ? recv(CHANNEL, &rep, sizeof(rep), 0) : -1;
	if (n == (ssize_t)sizeof(rep) && rep.type == GW_PRIV_NETNS_REPLY)
		fprintf(f, "status %d %s %s\n", rep.status, rep.ifname[0] ? rep.ifname : "-",
			rep.msg);
	else
		fprintf(f, "closed\n");
	fclose(f);
	for (int i = 0; stop && i < 300 && access(stop, F_OK); i++)
		usleep(100000);
	return 0;
}
