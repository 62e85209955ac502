/* runrec.h - the privileged parent's crash record of one daemon-mode run (internal header;
 * runrec.c): what a later parent needs to undo the run when this one died.
 *
 * Format (one file a run, GW_PARENT_RUNS_DIR/<ifname>, mode 0600, written whole through a
 * temporary file and rename(2), so a reader never sees half of one). Exactly
 * 1 + GW_CGROUP_MAX lines, each ended by '\n', nothing after:
 *
 *   PID START IFNAME SBX4 GW4 SBX6 GW6
 *   CGROUP0
 *   CGROUP1
 *   CGROUP2
 *
 * PID is the writing parent's pid and START its start time (field 22 of /proc/PID/stat, both
 * decimal, PID > 0): a record whose writer still lives (same pid, same start) is not ours to
 * reclaim. IFNAME is the run's host-side veth (1..15 bytes of [A-Za-z0-9_.-]) and the record's
 * file name; SBX4/GW4 are the sandbox's and the gateway's IPv4 addresses, SBX6/GW6 the IPv6
 * ones (inet_ntop text, all four present). The fields are separated by one space. Each CGROUP
 * line is an absolute cgroup folder of the run (v2: the first only; v1: memory, pids, cpu), or
 * "-" for none; no ".." component.
 *
 * gw_runrec_parse() takes the whole file or nothing: any line, field or byte out of place and
 * the record is refused (the parent then leaves it alone), never applied in part. */
#ifndef WARDEN_GATEWAY_RUNREC_H
#define WARDEN_GATEWAY_RUNREC_H

#include "common/common.h"
#include "gateway/cgroup.h"

#include <netinet/in.h>
#include <stddef.h>
#include <sys/types.h>

/**
 * struct gw_runrec - one record
 * @pid:	the parent that wrote it
 * @start:	its start time (/proc/PID/stat field 22)
 * @ifname:	the run's host-side interface (the record's file name)
 * @sbx4:	the sandbox's IPv4 address
 * @gw4:	the gateway's IPv4 address on the veth
 * @sbx6:	the sandbox's IPv6 address
 * @gw6:	the gateway's IPv6 address on the veth
 * @cg:		the run's cgroup folders ("" for none)
 */
struct gw_runrec {
	pid_t pid;
	unsigned long long start;
	char ifname[16];
	struct in_addr sbx4, gw4;
	struct in6_addr sbx6, gw6;
	char cg[GW_CGROUP_MAX][GW_CGROUP_PATH];
};

/**
 * gw_runrec_format() - @r as the text of its file (appended to @out)
 * Return: 0; -EINVAL when @r could not be read back (an interface name or a cgroup folder
 * gw_runrec_parse() would refuse); -ENOMEM.
 */
int gw_runrec_format(const struct gw_runrec *r, struct wd_buf *out);

/**
 * gw_runrec_parse() - a record's text (pure)
 * @text:	the file's bytes
 * @len:	how many
 * @out:	filled in on success only
 * Return: 0, or -EINVAL (not a whole, well-formed record).
 */
int gw_runrec_parse(const char *text, size_t len, struct gw_runrec *out);

/**
 * gw_runrec_save() - write @r to @dir/<ifname>, replacing what was there in one rename
 * Return: 0, or a negative errno.
 */
int gw_runrec_save(const char *dir, const struct gw_runrec *r);

/**
 * gw_runrec_load() - read and parse @dir/@name; a record whose interface is not @name is refused
 * Return: 0, -EINVAL (not a record), or the negative errno of reading it.
 */
int gw_runrec_load(const char *dir, const char *name, struct gw_runrec *out);

#endif /* WARDEN_GATEWAY_RUNREC_H */
