/* nl.c - netlink plumbing for nft/: building one nfnetlink batch, sending it, and reading
 * every ack back to the message that caused it.
 *
 * Each message inside BATCH_BEGIN/END carries NLM_F_ACK and sequence number seq0 + 1 + i, so
 * the ack (or error) for message i can be matched to its label ("add set element wd-x to ...").
 * The kernel applies a batch all-or-nothing; on failure it still answers every message, so we
 * read until each one is answered (bounded by a receive timeout, in case it never is).
 */
#include "nft/nft_internal.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#define FW_BATCH_CAP (256 * 1024)

int fw_batch_init(struct fw_batch *b, uint32_t seq0)
{
	memset(b, 0, sizeof(*b));
	b->cap = FW_BATCH_CAP;
	/* libmnl wants room for one message past the batch limit */
	b->buf = calloc(1, b->cap * 2);
	if (!b->buf)
		return -ENOMEM;
	b->mb = mnl_nlmsg_batch_start(b->buf, b->cap);
	if (!b->mb) {
		free(b->buf);
		b->buf = NULL;
		return -ENOMEM;
	}
	b->seq0 = seq0;
	nftnl_batch_begin(mnl_nlmsg_batch_current(b->mb), seq0);
	mnl_nlmsg_batch_next(b->mb);
	return 0;
}

struct nlmsghdr *fw_batch_add(struct fw_batch *b, uint16_t type, uint16_t family, uint16_t flags,
			      const char *fmt, ...)
{
	struct nlmsghdr *nlh;
	va_list ap;

	if (!b->mb || b->closed)
		return NULL;
	if (b->n == b->lcap) {
		unsigned ncap = b->lcap ? b->lcap * 2 : 32;
		char(*nl)[128] = realloc(b->labels, ncap * sizeof(*nl));

		if (!nl)
			return NULL;
		b->labels = nl;
		b->lcap = ncap;
	}
	/* The previous message was finished by its builder; account for it now. */
	if (b->n && !mnl_nlmsg_batch_next(b->mb))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(b->labels[b->n], sizeof(b->labels[b->n]), fmt, ap);
	va_end(ap);
	nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(b->mb), type, family, flags | NLM_F_ACK,
				    b->seq0 + 1 + b->n);
	b->n++;
	return nlh;
}

int fw_batch_close(struct fw_batch *b)
{
	if (b->closed)
		return 0;
	if (!b->mb || (b->n && !mnl_nlmsg_batch_next(b->mb)))
		return -ENOSPC;
	nftnl_batch_end(mnl_nlmsg_batch_current(b->mb), b->seq0 + 1 + b->n);
	if (!mnl_nlmsg_batch_next(b->mb))
		return -ENOSPC;
	b->closed = true;
	return 0;
}

size_t fw_batch_len(const struct fw_batch *b)
{
	if (!b->mb)
		return 0;
	/* while open, the last message is built but not yet counted by libmnl */
	if (!b->closed && b->n) {
		const struct nlmsghdr *last = mnl_nlmsg_batch_current(b->mb);

		return mnl_nlmsg_batch_size(b->mb) + last->nlmsg_len;
	}
	return mnl_nlmsg_batch_size(b->mb);
}

void fw_batch_free(struct fw_batch *b)
{
	if (!b)
		return;
	if (b->mb)
		mnl_nlmsg_batch_stop(b->mb);
	free(b->buf);
	free(b->labels);
	memset(b, 0, sizeof(*b));
}

static int open_socket(struct mnl_socket **ret_nl, struct wd_err *err)
{
	struct timeval tv = {.tv_sec = 10};
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	int one = 1;

	if (!nl)
		return wd_err_set(err, -errno, "opening a netfilter netlink socket: %s",
				  strerror(errno));
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = -errno;

		mnl_socket_close(nl);
		return wd_err_set(err, e, "binding the netfilter netlink socket: %s", strerror(-e));
	}
	/* acks without the echoed request keep many error replies small */
	setsockopt(mnl_socket_get_fd(nl), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	*ret_nl = nl;
	return 0;
}

int fw_nl_open(struct mnl_socket **ret_nl, struct wd_err *err)
{
	return open_socket(ret_nl, err);
}

int fw_batch_send_on(struct mnl_socket *nl, struct fw_batch *b, int *errs, struct wd_err *err)
{
	char *rbuf = NULL;
	unsigned answered = 0, first_bad = UINT32_MAX;
	int ret, first_err = 0;
	bool *seen = NULL;

	ret = fw_batch_close(b);
	if (ret < 0)
		return wd_err_set(err, ret, "nft batch too large (%u messages)", b->n);
	if (errs)
		memset(errs, 0, b->n * sizeof(*errs));
	if (!b->n)
		return 0;
	seen = calloc(b->n, sizeof(*seen));
	rbuf = malloc(MNL_SOCKET_BUFFER_SIZE);
	if (!seen || !rbuf) {
		ret = wd_err_set(err, -ENOMEM, "out of memory sending the nft batch");
		goto out;
	}
	if (mnl_socket_sendto(nl, mnl_nlmsg_batch_head(b->mb), mnl_nlmsg_batch_size(b->mb)) < 0) {
		ret = wd_err_set(err, -errno, "sending the nft batch (%s ...): %s", b->labels[0],
				 strerror(errno));
		goto out;
	}
	while (answered < b->n) {
		ssize_t len = mnl_socket_recvfrom(nl, rbuf, MNL_SOCKET_BUFFER_SIZE);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)rbuf;
		int left;

		if (len < 0) {
			ret = wd_err_set(err, errno == EAGAIN ? -ETIMEDOUT : -errno,
					 "reading nft acks (%u of %u answered): %s", answered, b->n,
					 strerror(errno));
			goto out;
		}
		left = (int)len;
		for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
			const struct nlmsgerr *e;
			uint32_t idx;

			if (nlh->nlmsg_type != NLMSG_ERROR)
				continue;
			e = mnl_nlmsg_get_payload(nlh);
			/* acks of an earlier batch on a reused socket fall outside the range */
			idx = nlh->nlmsg_seq - b->seq0 - 1;
			if (idx >= b->n || seen[idx])
				continue;
			seen[idx] = true;
			answered++;
			if (errs)
				errs[idx] = e->error;
			if (e->error && idx < first_bad) {
				first_bad = idx;
				first_err = e->error;
			}
		}
	}
	ret = 0;
	if (first_err)
		ret = wd_err_set(err, first_err < 0 ? first_err : -EPROTO, "%s: %s",
				 b->labels[first_bad], strerror(-first_err));
out:
	free(rbuf);
	free(seen);
	return ret;
}

int fw_batch_send(struct fw_batch *b, int *errs, struct wd_err *err)
{
	struct mnl_socket *nl = NULL;
	int ret = open_socket(&nl, err);

	if (ret < 0)
		return ret;
	ret = fw_batch_send_on(nl, b, errs, err);
	mnl_socket_close(nl);
	return ret;
}

uint32_t fw_seq(void)
{
	static uint32_t bump;

	/* distinct per call, even within one second */
	return (uint32_t)(wd_mono_ns() / 1000) + (bump += 4096);
}

int fw_nl_dump(struct mnl_socket *nl, struct nlmsghdr *nlh,
	       int (*cb)(const struct nlmsghdr *nlh, void *data), void *data)
{
	size_t cap = 32768;
	char *buf = malloc(cap);
	uint32_t portid = mnl_socket_get_portid(nl);
	int ret;

	if (!buf)
		return -ENOMEM;
	nlh->nlmsg_seq = fw_seq();
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		ssize_t len = mnl_socket_recvfrom(nl, buf, cap);

		if (len < 0) {
			ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
			goto out;
		}
		ret = mnl_cb_run(buf, (size_t)len, nlh->nlmsg_seq, portid, cb, data);
		if (ret < 0) {
			ret = errno ? -errno : -EPROTO;
			goto out;
		}
		if (ret == MNL_CB_STOP)
			break;
	}
	ret = 0;
out:
	free(buf);
	return ret;
}
