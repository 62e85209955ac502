/* gw.h - the gateway a run uses (gw.c): the control-socket client (one request, one answer) and the
 * embedded gateway's start, readiness and stop; `warden doctor`, status, kill, allowlist and
 * the stages use it. */
#ifndef WARDEN_RUN_GW_H
#define WARDEN_RUN_GW_H

#include "common/common.h"
#include "conf/conf.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/**
 * struct run_gw - the gateway a run uses
 * @socket:	control socket path
 * @embedded:	started by this launcher for this run
 * @pid:	the embedded gateway's pid (0 otherwise)
 * @log_path:	the embedded gateway's output
 */
struct run_gw {
	char socket[108];
	bool embedded;
	pid_t pid;
	char log_path[512];
	/* embedded: the datagram socket its readiness comes to ($NOTIFY_SOCKET), or -1 */
	int ready_fd;
	char ready_path[108];
};

/**
 * run_gw_request() - one control request, one answer line
 * @socket:	control socket path
 * @req:	the request (one JSON object, no newline)
 * @timeout_ms:	longest wait for connect + answer
 * @ret_answer:	on success, the answer line (malloc'd, NUL-terminated)
 *
 * Return: 0; -ECONNREFUSED / -ENOENT when nobody listens; -ETIMEDOUT; another negative errno.
 */
int run_gw_request(const char *socket, const char *req, int timeout_ms, char **ret_answer);

struct json_t;

/**
 * run_gw_call() - one JSON request, its answer checked: `"ok": true`
 * @socket:	control socket path
 * @req:	the request (a JSON object)
 * @timeout_ms:	longest wait for connect + answer
 * @ret_ans:	on success, the parsed answer (json_decref()); may be NULL
 * @why:	on failure, why (the socket and the cause, or the gateway's "error")
 * @wsize:	size of @why
 *
 * Return: 0; the errno of run_gw_request(); -EBADMSG the answer is not JSON; -EPERM the gateway
 * refused (@why has its reason); -ENOMEM.
 */
int run_gw_call(const char *socket, struct json_t *req, int timeout_ms, struct json_t **ret_ans,
		char *why, size_t wsize);

/**
 * run_gw_call_op() - run_gw_call() of `{"op": @op}`
 * Return: as run_gw_call().
 */
int run_gw_call_op(const char *socket, const char *op, int timeout_ms, struct json_t **ret_ans);

/**
 * run_gw_find_binary() - path of warden-gateway: $WARDEN_GATEWAY_BIN, next to this program,
 * ../gateway/ or ../sbin/ from it, else $PATH
 * Return: 0, or -ENOENT.
 */
int run_gw_find_binary(char *out, size_t outlen);

/**
 * run_gw_find_problem() - why run_gw_find_binary() found no warden-gateway, for a person
 * @why:	set to the cause: WARDEN_GATEWAY_BIN's value and what is wrong with it (not there,
 *		not an executable file), or that there is none next to warden nor in PATH
 * @size:	size of @why
 *
 * Return: the fix for that cause (a static string).
 */
const char *run_gw_find_problem(char *why, size_t size);

/**
 * run_gw_start() - start an embedded gateway for one run and wait until it answers
 * @gw:		filled in (socket, pid, log)
 * @dir:	the run's state folder (config, socket and log go there)
 * @conf:	the gateway configuration to start it with (listen addresses set by the caller)
 * @audit_path:	the audit log it writes to
 * @err:	what failed
 *
 * Return: 0, or a negative errno (the child is stopped again).
 */
int run_gw_start(struct run_gw *gw, const char *dir, const struct wd_gwconf *conf,
		 const char *audit_path, struct wd_err *err);

/**
 * run_gw_spawn() - the first half of run_gw_start(): write the config and start the child,
 * without waiting for it to answer (so the caller can do other setup meanwhile)
 * @gw, @dir, @conf, @audit_path, @err: as run_gw_start()
 * @listen:	listening sockets the child adopts (`--listen-fds`, at descriptors 3..) instead
 *		of binding its own, or NULL
 * @nlisten:	how many (at most 9)
 *
 * Return: 0, or a negative errno (nothing was started; -ENOENT: no warden-gateway to start,
 * run_gw_find_problem() says why).
 */
int run_gw_spawn(struct run_gw *gw, const char *dir, const struct wd_gwconf *conf,
		 const char *audit_path, const int *listen, int nlisten, struct wd_err *err);

/**
 * run_gw_wait() - the second half: wait (5 s at most) until the spawned gateway is ready:
 * its READY=1 datagram (sd_notify(3)'s protocol, from the gateway's pid) on the socket
 * run_gw_spawn() named in its $NOTIFY_SOCKET; where that socket could not be made, until its
 * control socket answers (polled)
 * Return: 0, or a negative errno (-ECHILD it exited, with its last output line in @err;
 * -ENODATA it exited without one; -ETIMEDOUT it was stopped again).
 */
int run_gw_wait(struct run_gw *gw, struct wd_err *err);

/** run_gw_stop() - SIGTERM the embedded gateway and reap it (SIGKILL after 2 s). */
void run_gw_stop(struct run_gw *gw);

#endif /* WARDEN_RUN_GW_H */
