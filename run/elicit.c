/* elicit.c - network.ask's request to the person through the MCP client (elicit.h), pure: the
 * client's capability recognised in its `initialize` request, the `elicitation/create` request
 * built, and the client's response to it recognised and read as a verdict; and the relay's
 * part: the answers kept for the ask turn, the requests queued for the client. The relay
 * (stdio_relay.c) calls it on whole lines; ask.c decides what to do with the verdict.
 * `warden mcp` (mcp/proto.c, mcp/allowlist.c) uses the capability, question and verdict parts. */
#include "run/elicit.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* @s as JSON (duplicate keys refused: two readers could see two messages), or NULL */
static json_t *load(const char *s, size_t n)
{
	json_error_t err;

	return json_loadb(s, n, JSON_REJECT_DUPLICATES, &err);
}

bool run_elicit_caps(const json_t *caps)
{
	const json_t *e = json_object_get(caps, "elicitation");

	return json_is_object(e) && (!json_object_size(e) || json_object_get(e, "form"));
}

json_t *run_elicit_params(const char *message, const char *field, const char *title,
			  const char *desc)
{
	return json_pack("{s:s, s:{s:s, s:{s:{s:s, s:s, s:s, s:b}}, s:[s]}}", "message", message,
			 "requestedSchema", "type", "object", "properties", field, "type",
			 "boolean", "title", title, "description", desc, "default", 0, "required",
			 field);
}

enum run_elicit_verdict run_elicit_verdict_of(const json_t *result, const json_t *error,
					      const char *field)
{
	const char *action = json_string_value(json_object_get(result, "action"));

	if (error || !action || strcmp(action, "accept"))
		return RUN_ELICIT_DENY;
	return json_is_true(json_object_get(json_object_get(result, "content"), field))
		   ? RUN_ELICIT_ALLOW
		   : RUN_ELICIT_DENY;
}

int run_elicit_capable(const char *s, size_t n)
{
	json_t *j, *m;
	int ret = -ENOENT;

	/* most lines are not an initialize request: not parsed */
	if (!memmem(s, n, "\"initialize\"", 12))
		return -ENOENT;
	j = load(s, n);
	m = json_object_get(j, "method");
	if (json_is_string(m) && !strcmp(json_string_value(m), "initialize") &&
	    json_object_get(j, "id")) {
		ret =
		    run_elicit_caps(json_object_get(json_object_get(j, "params"), "capabilities"));
	}
	json_decref(j);
	return ret;
}

/* @s escaped (plain text a client shows a person), appended; -ENOMEM */
static int esc(struct wd_buf *b, const char *s)
{
	return wd_esc_append(b, s, 0) < 0 ? -ENOMEM : 0;
}

/* @msg (taken) as one line with its newline appended to @out; -ENOMEM (@out as it was) */
static int put_msg(struct wd_buf *out, json_t *msg)
{
	char *line = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
	size_t len = out->len;
	int ret = -ENOMEM;

	json_decref(msg);
	if (line && !wd_buf_puts(out, line) && !wd_buf_puts(out, "\n"))
		ret = 0;
	else if (out->data)
		out->data[out->len = len] = '\0';
	free(line);
	return ret;
}

/* the id of the request for @run's ask @seq, appended; -ENOMEM */
static int put_id(struct wd_buf *id, const char *run, unsigned seq)
{
	if (wd_buf_puts(id, RUN_ELICIT_ID_PREFIX) || esc(id, run) ||
	    wd_buf_printf(id, "-%u", seq) < 0)
		return -ENOMEM;
	return 0;
}

int run_elicit_cancel(struct wd_buf *out, const char *run, unsigned seq, const char *reason)
{
	struct wd_buf id = WD_BUF_INIT;
	int ret = put_id(&id, run, seq);

	if (!ret)
		ret = put_msg(out, json_pack("{s:s, s:s, s:{s:s, s:s}}", "jsonrpc", "2.0", "method",
					     "notifications/cancelled", "params", "requestId",
					     id.data, "reason", reason));
	wd_buf_free(&id);
	return ret;
}

int run_elicit_request(struct wd_buf *out, const char *run, unsigned seq, const char *prog,
		       const char *name, const char *ports)
{
	struct wd_buf msg = WD_BUF_INIT, id = WD_BUF_INIT;
	int ret = -ENOMEM;

	if (wd_buf_puts(&msg, "warden: the program ") || esc(&msg, prog) ||
	    wd_buf_puts(&msg, " wants to reach ") || esc(&msg, name) ||
	    (ports && *ports &&
	     (wd_buf_puts(&msg, " (ports ") || esc(&msg, ports) || wd_buf_puts(&msg, ")"))) ||
	    wd_buf_puts(&msg, ", which its policy does not allow (network.ask). Allow it for this "
			      "run?") ||
	    put_id(&id, run, seq))
		goto out;
	ret = put_msg(out, json_pack("{s:s, s:s, s:s, s:o}", "jsonrpc", "2.0", "id", id.data,
				     "method", "elicitation/create", "params",
				     run_elicit_params(msg.data, "allow", "Allow",
						       "Allow this name for this run (warden "
						       "network.ask)")));
out:
	wd_buf_free(&msg);
	wd_buf_free(&id);
	return ret;
}

/* @id is RUN_ELICIT_ID_PREFIX, @run, "-" and a decimal: its number in @ret_seq */
static bool our_id(const char *id, const char *run, unsigned *ret_seq)
{
	size_t pl = strlen(RUN_ELICIT_ID_PREFIX), rl = strlen(run);
	unsigned long v;
	char *end;

	if (strncmp(id, RUN_ELICIT_ID_PREFIX, pl) || strncmp(id + pl, run, rl) ||
	    id[pl + rl] != '-' || id[pl + rl + 1] < '0' || id[pl + rl + 1] > '9')
		return false;
	errno = 0;
	v = strtoul(id + pl + rl + 1, &end, 10);
	if (errno || *end || v > UINT_MAX)
		return false;
	*ret_seq = (unsigned)v;
	return true;
}

int run_elicit_answer(const char *s, size_t n, const char *run, unsigned *ret_seq,
		      enum run_elicit_verdict *ret_v)
{
	json_t *j, *res;
	int ret = 0;

	if (!memmem(s, n, RUN_ELICIT_ID_PREFIX, strlen(RUN_ELICIT_ID_PREFIX)))
		return 0;
	j = load(s, n);
	if (!json_is_object(j) || json_object_get(j, "method") ||
	    !json_is_string(json_object_get(j, "jsonrpc")) ||
	    !json_is_string(json_object_get(j, "id")) ||
	    !our_id(json_string_value(json_object_get(j, "id")), run, ret_seq))
		goto out;
	res = json_object_get(j, "result");
	if (!res && !json_object_get(j, "error"))
		goto out;
	ret = 1;
	*ret_v = run_elicit_verdict_of(res, json_object_get(j, "error"), "allow");
out:
	json_decref(j);
	return ret;
}

bool run_elicit_client_line(struct run_stdio *io, const char *run, const char *s, size_t n)
{
	enum run_elicit_verdict v;
	unsigned seq;
	int ret;

	if (run_elicit_answer(s, n, run, &seq, &v) == 1) {
		/* more than the asks a run has: dropped, their asks end at their deadline */
		if (io->nanswers < RUN_STDIO_ANSWERS) {
			io->answers[io->nanswers].seq = seq;
			io->answers[io->nanswers++].allow = v == RUN_ELICIT_ALLOW;
		}
		return true;
	}
	ret = run_elicit_capable(s, n);
	if (ret >= 0)
		io->elicit = ret == 1;
	return false;
}

bool run_elicit_can(const struct run_stdio *io)
{
	return io->on && io->filter && io->asks && io->elicit && io->dir[MCP_S2C].out >= 0;
}

int run_elicit_queue(struct run_stdio *io, const char *line, size_t n)
{
	if (!run_elicit_can(io))
		return -EPIPE;
	/* the queue holds whole lines only (filter mode): this one goes between two of them */
	return wd_buf_append(&io->dir[MCP_S2C].q, line, n);
}

bool run_elicit_take(struct run_stdio *io, unsigned *ret_seq, bool *ret_allow)
{
	if (!io->nanswers)
		return false;
	*ret_seq = io->answers[0].seq;
	*ret_allow = io->answers[0].allow;
	memmove(io->answers, io->answers + 1, --io->nanswers * sizeof(io->answers[0]));
	return true;
}
