/* state.h - a run's state record (state.c): /run/warden/runs/<id>/state (or the caller's own
 * folder), written by the stages, read by `warden gc`, status and the live runs. */
#ifndef WARDEN_RUN_STATE_H
#define WARDEN_RUN_STATE_H

#include "common/common.h"
#include "conf/conf.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <limits.h>
#include <netinet/in.h>

/**
 * struct run_record - what /run/warden/runs/<id>/state says about a run
 * @id:		run id
 * @pid:	launcher pid
 * @start:	launcher start time (field 22 of /proc/<pid>/stat)
 * @ifname:	host-side veth ("" before the network exists)
 * @sbx4:	sandbox IPv4 ("" when none)
 * @sbx6:	sandbox IPv6 ("" when none)
 * @host4:	the run's own gateway IPv4, the veth's host side ("" when none, or an older
 *		record)
 * @host6:	the same for IPv6
 * @table:	nft table name
 * @if_prefix:	nft interface prefix
 * @gw_socket:	control socket the run is registered with ("" when not registered)
 * @gw_pid:	embedded gateway pid (0 when none)
 * @gw_start:	its start time
 * @cg:		cgroup folders ("" when none)
 * @mode:	"root", "rootless" or "daemon"
 * @uid:	the person whose run it is (the audit events' uid)
 * @created:	when the run started (seconds since the epoch)
 * @ending:	1 once the program ended and the teardown child owns the record
 * @exit_logged: 1 once a later `warden` wrote the run.exit its dead launcher did not
 *		(crashed.c)
 * @policy:	the policy file's absolute path ("" for the empty policy)
 * @policy_name: the name the gateway knows the policy by
 * @audit:	the run's audit log
 * @started_by:	"" for `warden run`; "mcp" for a run `warden mcp` started (additions to its
 *		allowlist need a person's approval)
 * @command:	the command line as a JSON array of strings (cut to fit, then "...")
 */
struct run_record {
	char id[32];
	pid_t pid;
	unsigned long long start;
	char ifname[16];
	char sbx4[INET_ADDRSTRLEN];
	char sbx6[INET6_ADDRSTRLEN];
	char host4[INET_ADDRSTRLEN];
	char host6[INET6_ADDRSTRLEN];
	char table[32];
	char if_prefix[8];
	char gw_socket[108];
	pid_t gw_pid;
	unsigned long long gw_start;
	char cg[LIMITS_V1_COUNT][512];
	char mode[12];
	uid_t uid;
	unsigned long long created;
	unsigned long long ending;
	unsigned long long exit_logged;
	char policy[PATH_MAX];
	char policy_name[256];
	char audit[PATH_MAX];
	char started_by[16];
	char command[1024];
};

/* The run's policy text as its gateway has it now, beside its state record (0600): what
 * `warden allowlist` composes a live change from. */
#define RUN_POLICY_FILE "policy.yaml"

/**
 * run_proc_start() - start time of @pid (field 22 of /proc/<pid>/stat)
 * Return: the start time, or 0 when the process does not exist (or is a zombie).
 */
unsigned long long run_proc_start(pid_t pid);

/**
 * run_record_format() - @r as "key=value" lines
 * Return: 0, or -ENOMEM.
 */
int run_record_format(const struct run_record *r, struct wd_buf *out);

/**
 * run_record_parse() - the inverse of run_record_format()
 * Return: 0, or -EINVAL (unknown key, bad number, missing id or pid).
 */
int run_record_parse(const char *text, struct run_record *r);

/**
 * run_record_save() - write @r atomically to @dir/<id>/state (creating the folder 0700)
 * Return: 0, or a negative errno.
 */
int run_record_save(const char *dir, const struct run_record *r);

/**
 * run_gc() - tear down the leftovers of runs whose launcher is gone
 * @dir:		the state folder (RUN_STATE_DIR)
 * @ret_reclaimed:	number of runs cleaned up; may be NULL
 * @err:		the first failure
 *
 * For each dead run: stops its embedded gateway, kills and removes its cgroups, unregisters it
 * from a daemon, deletes its nft elements, removes its folder. Then netns_gc() reclaims the
 * namespaces and address slots of dead launchers.
 *
 * Call run_crashed_log() first: it writes what the records say before they go.
 *
 * Return: 0, or the first negative errno (the other runs are still cleaned up).
 */
int run_gc(const char *dir, unsigned *ret_reclaimed, struct wd_err *err);

/**
 * run_crashed_log() - write the missing run.exit ("crashed": true) of each run in @dir whose
 * launcher died without writing it (SIGKILL, a crash), once per run: under a lock on the
 * run's folder, then marked in its record (crashed.c)
 * @dir:	the state folder
 * @ret_n:	how many were written; may be NULL
 * @err:	the first failure
 * Return: 0, or the first negative errno (the other runs are still done).
 */
int run_crashed_log(const char *dir, unsigned *ret_n, struct wd_err *err);

#endif /* WARDEN_RUN_STATE_H */
