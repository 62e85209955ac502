/* nft_nflog.c - test helper for nft_traffic.sh: listens on one NFLOG group (what the gateway
 * will read) and prints one line per logged packet, to prove the table's `log group N`.
 *
 * Usage: nft_nflog GROUP SECONDS COUNT
 *   prints "ready" once bound, then "family=4|6 proto=P dport=D" per packet (followed by
 *   " prefix=TEXT" when the log rule has a prefix); exits 0 after COUNT packets, 1 when
 *   SECONDS pass first, 2 on usage or netlink errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* one NFULNL_MSG_CONFIG request; @cmd or @mode (when cmd is 0) */
static int config(struct mnl_socket *nl, uint16_t group, uint8_t family, uint8_t cmd, bool mode)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *g;

	nlh->nlmsg_type = NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_CONFIG;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = (uint32_t)time(NULL);
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = family;
	g->version = NFNETLINK_V0;
	g->res_id = htons(group);
	if (mode) {
		struct nfulnl_msg_config_mode m = {.copy_range = htonl(256),
						   .copy_mode = NFULNL_COPY_PACKET};

		mnl_attr_put(nlh, NFULA_CFG_MODE, sizeof(m), &m);
	} else {
		struct nfulnl_msg_config_cmd c = {.command = cmd};

		mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof(c), &c);
	}
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	{
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));

		if (n < 0)
			return -errno;
		if (mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, mnl_socket_get_portid(nl), NULL,
			       NULL) < 0)
			return -errno;
	}
	return 0;
}

static int attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	uint16_t type = mnl_attr_get_type(a);

	if (type <= NFULA_MAX)
		tb[type] = a;
	return MNL_CB_OK;
}

static int packet_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[NFULA_MAX + 1] = {NULL};
	unsigned *seen = data;
	const uint8_t *p;
	uint16_t len, dport = 0;
	unsigned family = 0, proto = 0, off = 0;

	if ((nlh->nlmsg_type & 0xff) != NFULNL_MSG_PACKET)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(struct nfgenmsg), attr_cb, tb);
	if (!tb[NFULA_PAYLOAD])
		return MNL_CB_OK;
	p = mnl_attr_get_payload(tb[NFULA_PAYLOAD]);
	len = mnl_attr_get_payload_len(tb[NFULA_PAYLOAD]);
	if (len >= 20 && p[0] >> 4 == 4) {
		family = 4;
		proto = p[9];
		off = (p[0] & 0xfu) * 4;
	} else if (len >= 40 && p[0] >> 4 == 6) {
		family = 6;
		proto = p[6];
		off = 40;
	}
	if ((proto == 17 || proto == 6 || proto == 136) && len >= off + 4)
		dport = (uint16_t)(p[off + 2] << 8 | p[off + 3]);
	printf("family=%u proto=%u dport=%u", family, proto, dport);
	if (tb[NFULA_PREFIX] && *(const char *)mnl_attr_get_payload(tb[NFULA_PREFIX]))
		printf(" prefix=%.*s",
		       (int)strnlen(mnl_attr_get_payload(tb[NFULA_PREFIX]),
				    mnl_attr_get_payload_len(tb[NFULA_PREFIX])),
		       (const char *)mnl_attr_get_payload(tb[NFULA_PREFIX]));
	printf("\n");
	fflush(stdout);
	(*seen)++;
	return MNL_CB_OK;
}

int main(int argc, char **argv)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	unsigned seen = 0, want;
	long group, secs;
	time_t end;

	if (argc != 4) {
		fprintf(stderr, "usage: nft_nflog GROUP SECONDS COUNT\n");
		return 2;
	}
	group = strtol(argv[1], NULL, 10);
	secs = strtol(argv[2], NULL, 10);
	want = (unsigned)strtoul(argv[3], NULL, 10);
	nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("nft_nflog: netlink");
		return 2;
	}
	if (config(nl, (uint16_t)group, AF_UNSPEC, NFULNL_CFG_CMD_BIND, false) < 0 ||
	    config(nl, (uint16_t)group, AF_UNSPEC, 0, true) < 0) {
		perror("nft_nflog: binding the group");
		mnl_socket_close(nl);
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	end = time(NULL) + secs;
	while (seen < want && time(NULL) < end) {
		struct pollfd pfd = {.fd = mnl_socket_get_fd(nl), .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			break;
		mnl_cb_run(buf, (size_t)n, 0, 0, packet_cb, &seen);
	}
	mnl_socket_close(nl);
	return seen >= want ? 0 : 1;
}
