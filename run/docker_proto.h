/* docker_proto.h - internal to run/: what the Docker backend's launcher side
 * (sandbox_docker.c) and its init in the container (docker_init.c, warden-docker-init) say to
 * each other over the unix socket bind-mounted into the container (SOCK_SEQPACKET, host byte
 * order: one kernel on both sides). docs/run.md "Backends: Docker" has the sequence:
 *
 *   launcher -> init   struct docker_init_plan
 *   init -> launcher   struct docker_init_reply, with its nfds descriptors when err is 0
 *                      (SCM_RIGHTS, in enum docker_init_fd's order): DOCKER_INIT_NFDS when
 *                      the plan's table redirects UDP to the relay (fc.port_udp), else
 *                      DOCKER_INIT_NBASE
 *   launcher -> init   the grants: struct docker_init_grants, then per grant a struct
 *                      docker_init_grant and its path (len bytes, no NUL), in one message
 *   init -> launcher   struct docker_init_reply: err 0 when what the container has at each
 *                      path is the file the launcher opened there without following a link
 *                      (st_dev and st_ino: one kernel), else EXDEV naming the path
 *   launcher -> init   one byte 'G': the program may start; anything else, or EOF, and it
 *                      never does (the init exits DOCKER_INIT_FAILED)
 *   ...                the connection stays open for the run: its EOF tells the init the
 *                      launcher is gone (it ends the program and exits 137)
 */
#ifndef WARDEN_RUN_DOCKER_PROTO_H
#define WARDEN_RUN_DOCKER_PROTO_H

#include "netns/netns.h"
#include "nft/nft.h"

#include <stdint.h>

#define DOCKER_INIT_MAGIC 0x57444933u /* "WDI3" */

/* Where the launcher's files appear in the container. */
#define DOCKER_INIT_DIR "/.warden"
#define DOCKER_INIT_SOCK DOCKER_INIT_DIR "/ctl.sock"
#define DOCKER_INIT_BIN DOCKER_INIT_DIR "/init"
#define DOCKER_INIT_LIB DOCKER_INIT_DIR "/lib"

/* The init's exit status when the program never started (as `docker run`'s own 125). */
#define DOCKER_INIT_FAILED 125

/**
 * struct docker_init_plan - what the init builds
 * @magic:	DOCKER_INIT_MAGIC
 * @uid:	the program's uid (never 0)
 * @gid:	its gid
 * @addr:	the run's addresses (slot 0 of the pools, as a rootless run's)
 * @fc:		the run's own table (FW_MODE_RUN: run_rootless_fw_config())
 */
struct docker_init_plan {
	uint32_t magic;
	uint32_t uid;
	uint32_t gid;
	struct netns_addrs addr;
	struct fw_config fc;
};

/* The descriptors of a reply, in order. */
enum docker_init_fd {
	DOCKER_INIT_LISTEN = 0, /* FW_RUN_NLISTEN listeners (fw_run_listeners()) */
	DOCKER_INIT_NFLOG = FW_RUN_NLISTEN,
	DOCKER_INIT_PROBE, /* the liveness probe's UDP socket, bound to the program's IPv4 */
	DOCKER_INIT_NBASE,
	/* the UDP relay's, when the plan's fc.port_udp is not 0: its listeners at the gateway's
	 * IPv4 and IPv6 addresses, and a NETLINK_NETFILTER socket of the container's namespace
	 * (the gateway asks conntrack for a redirected flow's original destination) */
	DOCKER_INIT_UDP4 = DOCKER_INIT_NBASE,
	DOCKER_INIT_UDP6,
	DOCKER_INIT_CT,
	DOCKER_INIT_NFDS,
};

/**
 * struct docker_init_reply - the init's answer
 * @err:	0, or a positive errno (then no descriptor comes)
 * @nfds:	when @err is 0: DOCKER_INIT_NFDS, or DOCKER_INIT_NBASE when the plan's table
 *		redirects no UDP
 * @msg:	why, when @err is not 0
 */
struct docker_init_reply {
	int32_t err;
	int32_t nfds;
	char msg[256];
};

#define DOCKER_INIT_GRANTS_MAGIC 0x57444747u /* "WDGG" */
/* The largest grants message. */
#define DOCKER_INIT_GRANTS_MAX (128u << 10)

/* The grants message's head: @n records follow. */
struct docker_init_grants {
	uint32_t magic;
	uint32_t n;
};

/* One grant: the file the launcher opened, and the length of its path, which follows. */
struct docker_init_grant {
	uint64_t dev;
	uint64_t ino;
	uint32_t len;
	uint32_t pad;
};

#endif /* WARDEN_RUN_DOCKER_PROTO_H */
