/* approval.h - the approval store of `warden mcp`'s allowlist additions.
 *
 * A request to add a name (tool set_egress_allowlist) is a file REQUEST-ID.json in the user's
 * state folder, ${XDG_STATE_HOME:-~/.local/state}/warden/approvals (0700, the user's own; a
 * link or a folder others may enter is refused), each file 0600, opened without following
 * links. The id is 128 random bits in hex. The server writes it "pending"; `warden allowlist
 * approve|deny ID` (another process, a person at a terminal) rewrites it "approved" or
 * "denied" (a new file renamed over it); the server notices, applies it, audits it and removes
 * the file. docs/mcp.md describes the rule.
 */
#ifndef WARDEN_RUN_APPROVAL_H
#define WARDEN_RUN_APPROVAL_H

#include "common/common.h"

#include <stdio.h>

#include <stdbool.h>
#include <sys/types.h>

#define RUN_APPROVAL_ID_LEN 32

enum run_approval_state {
	RUN_APPROVAL_PENDING,
	RUN_APPROVAL_APPROVED,
	RUN_APPROVAL_DENIED,
};

/**
 * struct run_approval_req - one request
 * @id:		its id (RUN_APPROVAL_ID_LEN hex digits)
 * @name:	the name asked for (a network.allow entry: "host", "*.suffix", "host:443")
 * @run:	the live run it is for ("" for new runs)
 * @server_pid:	the `warden mcp` that asked
 * @created:	when (seconds since the epoch)
 * @state:	pending, approved or denied
 * @decided_by:	approved or denied: who ("terminal uid 1000", "elicitation")
 */
struct run_approval_req {
	char id[RUN_APPROVAL_ID_LEN + 1];
	char name[256];
	char run[32];
	pid_t server_pid;
	long long created;
	enum run_approval_state state;
	char decided_by[64];
};

/**
 * run_approval_dir() - the store's folder path
 * @out:	filled in
 * @size:	its size
 * Return: 0, or -ENOENT when no home folder is known, -ENAMETOOLONG.
 */
int run_approval_dir(char *out, size_t size);

/**
 * run_approval_open() - open (creating it 0700 when missing) the store folder
 * @dir:	run_approval_dir()'s path
 * @ret_fd:	a CLOEXEC descriptor of the folder
 * @err:	why not
 * A link, a folder of another user or one that others may enter is refused.
 * Return: 0, or a negative errno with @err set.
 */
int run_approval_open(const char *dir, int *ret_fd, struct wd_err *err);

/** run_approval_id_valid() - true when @id has the shape of a request id */
bool run_approval_id_valid(const char *id);

/**
 * run_approval_create() - write a new pending request
 * @dfd:	the store
 * @req:	name, run and server_pid set; id, created and state are filled in
 * Return: 0, or a negative errno.
 */
int run_approval_create(int dfd, struct run_approval_req *req);

/**
 * run_approval_read() - read request @id
 * Return: 0, -ENOENT (no such request), -EINVAL (malformed), or a negative errno.
 */
int run_approval_read(int dfd, const char *id, struct run_approval_req *ret_req);

/**
 * run_approval_decide() - approve or deny pending request @id
 * @dfd:	the store
 * @id:		the request
 * @approve:	approve (else deny)
 * @by:		who decided, for the audit event
 * Return: 0, -ENOENT (no such request), -EALREADY (decided before), or a negative errno.
 */
int run_approval_decide(int dfd, const char *id, bool approve, const char *by);

/* who decided, in the store and the audit log, when a person answered through the MCP
 * client's elicitation (`warden run`'s network.ask and `warden mcp`'s set_egress_allowlist) */
#define RUN_APPROVAL_BY_ELICIT "MCP client (elicitation)"

/**
 * run_approval_elicited() - a person's answer through the MCP client's elicitation decides
 * pending request @id of store @dfd: approved when @allow, else denied, by
 * RUN_APPROVAL_BY_ELICIT; the first answer wins (one decided before keeps its decision)
 * @ret_req:	the request as the store holds it afterwards, on 0 and -EALREADY
 * Return: 0 (decided now), -EALREADY (decided before: @ret_req says how and by whom),
 * -ENOENT (no such request), or a negative errno.
 */
int run_approval_elicited(int dfd, const char *id, bool allow, struct run_approval_req *ret_req);

/** run_approval_remove() - remove request @id (done with). Return: 0 or a negative errno. */
int run_approval_remove(int dfd, const char *id);

/**
 * run_approval_list() - call @fn for each readable request in the store
 * Return: 0, or a negative errno (from reading the folder, or the first non-zero of @fn).
 */
int run_approval_list(int dfd, int (*fn)(const struct run_approval_req *req, void *arg), void *arg);

/**
 * run_approval_open_mine() - the caller's own store (run_approval_dir()), opened
 * (run_approval_open())
 * @ret_fd:	its descriptor, on success (the caller closes it)
 * @why:	what failed, on failure (@size bytes)
 * Return: 0, -ENOENT (no state folder: HOME and XDG_STATE_HOME unset), or a negative errno.
 */
int run_approval_open_mine(int *ret_fd, char *why, size_t size);

/**
 * run_approval_announce() - say on @f (the server's stderr: the person running it, not the model)
 * that request @req waits for a person's approval, and the commands that decide it; the name
 * and run are escaped (wd_say())
 */
void run_approval_announce(FILE *f, const struct run_approval_req *req);

/**
 * run_approval_ask() - one pending request per name in the caller's store, for run @run (no
 * server: `warden allowlist RUN add` of a run `warden mcp` started)
 * @run:	the run's id
 * @by:		what started the run (its started_by), for @why
 * @names:	the names, @n of them
 * @why:	on -EINPROGRESS, the requests and how to approve them; else what failed
 * Return: -EINPROGRESS (the requests were made), or a negative errno.
 */
int run_approval_ask(const char *run, const char *by, char *const *names, int n, char *why,
		     size_t size);

/**
 * run_approval_check() - request @id of the caller's store approves adding @name to run @run
 * @why:	why not, on failure
 * Return: 0, -EINVAL (not one id and one name), -EPERM (not such an approved request), or a
 * negative errno of the store.
 */
int run_approval_check(const char *id, const char *run, const char *name, int n, char *why,
		       size_t size);

/** run_approval_state_name() - "pending", "approved", "denied" */
const char *run_approval_state_name(enum run_approval_state s);

#endif
