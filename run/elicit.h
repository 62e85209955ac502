/* elicit.h - network.ask through the MCP client (elicit.c, pure): when the client of a wrapped
 * MCP server declared the `elicitation` capability in its `initialize` request, the launcher
 * asks the person through it. It writes an `elicitation/create` request of its own (an id no
 * server uses: "warden-ask-RUN-N") into the server-to-client stream between whole lines, and
 * takes the client's answer off the client-to-server stream (never relayed). The request asks
 * one yes/no ("allow", a boolean); "accept" with allow true approves, anything else denies.
 * The relay's side (run_elicit_client_line(), run_elicit_queue()) works on struct run_stdio
 * alone: the relay (stdio_relay.c) and the ask turn (ask.c) both call it, neither the other.
 * `warden mcp`'s set_egress_allowlist asks through the same functions (run_elicit_caps(),
 * run_elicit_params(), run_elicit_verdict_of()), with its own message and field: one way to
 * recognise the capability, build the question and read the answer. */
#ifndef WARDEN_RUN_ELICIT_H
#define WARDEN_RUN_ELICIT_H

#include "common/common.h"
#include "run/stdio_relay.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The id prefix of the launcher's own requests. */
#define RUN_ELICIT_ID_PREFIX "warden-ask-"

/* run_elicit_answer()'s verdicts */
enum run_elicit_verdict {
	RUN_ELICIT_ALLOW, /* accept, allow: true */
	RUN_ELICIT_DENY,  /* accept with allow false or missing, decline, cancel, an error */
};

/**
 * run_elicit_caps() - @caps (an initialize request's params.capabilities, or NULL) declares
 * form elicitation: params.capabilities.elicitation is an object that is empty (form mode, the
 * older spec's shape) or has "form". Pure.
 */
bool run_elicit_caps(const json_t *caps);

/**
 * run_elicit_params() - the params of an `elicitation/create` request that asks one yes/no
 * @message:	what the person is shown (plain text the caller escaped)
 * @field:	the boolean's name in the requested schema (required, default false)
 * @title:	its title
 * @desc:	its description
 *
 * Pure. Return: a new object, or NULL (no memory).
 */
json_t *run_elicit_params(const char *message, const char *field, const char *title,
			  const char *desc);

/**
 * run_elicit_verdict_of() - the client's answer to a question run_elicit_params() made with
 * @field: its @result (or NULL) and @error (or NULL) read as a verdict
 *
 * Only "accept" with "content": {@field: true} allows; an error, "decline", "cancel", a
 * missing or false @field, anything else denies. Pure.
 */
enum run_elicit_verdict run_elicit_verdict_of(const json_t *result, const json_t *error,
					      const char *field);

/**
 * run_elicit_capable() - @s (@n bytes, one line from the client, no newline) is an
 * `initialize` request: does it declare form elicitation?
 *
 * The capability is params.capabilities.elicitation, an object that is empty (form mode, the
 * older spec's shape) or has "form". Pure.
 * Return: 1 (declared), 0 (an initialize request without it), -ENOENT (not an initialize
 * request, or not JSON).
 */
int run_elicit_capable(const char *s, size_t n);

/**
 * run_elicit_request() - append the `elicitation/create` request for one ask, with its newline
 * @out:	appended to
 * @run:	the run's id (part of the request id)
 * @seq:	the ask's number in the run (part of the request id)
 * @prog:	the program's name, as the message shows it (escaped: wd_esc_append())
 * @name:	the name asked for (escaped too)
 * @ports:	the ports the approval opens ("80, 443"), or "" (escaped too)
 *
 * Pure but for @out's allocation. Return: 0, or -ENOMEM (@out as it was).
 */
int run_elicit_request(struct wd_buf *out, const char *run, unsigned seq, const char *prog,
		       const char *name, const char *ports);

/**
 * run_elicit_cancel() - append the notifications/cancelled that withdraws the request
 * run_elicit_request() made for @run and @seq (decided by someone else, or its time passed),
 * with its newline; @reason is the notification's reason
 *
 * Pure but for @out's allocation. Return: 0, or -ENOMEM (@out as it was).
 */
int run_elicit_cancel(struct wd_buf *out, const char *run, unsigned seq, const char *reason);

/**
 * run_elicit_answer() - @s (@n bytes, one line from the client, no newline) is the client's
 * response to a request run_elicit_request() made for run @run?
 * @ret_seq:	the request's @seq, when it is
 * @ret_v:	the verdict, when it is
 *
 * Only a JSON object with "jsonrpc", our id and "result" or "error" (no "method") is ours;
 * an error, a result that is not "accept" with "content": {"allow": true} denies. Pure.
 * Return: 1 (ours: @ret_seq, @ret_v set), 0 (not ours).
 */
int run_elicit_answer(const char *s, size_t n, const char *run, unsigned *ret_seq,
		      enum run_elicit_verdict *ret_v);

/**
 * run_elicit_client_line() - a whole line from the client (@s, @n bytes, no newline), before
 * it is relayed: the answer to one of the launcher's requests is kept for the ask turn
 * (run_elicit_take()) and not relayed; an initialize request sets @io->elicit
 * @io:		the relay
 * @run:	the run's id
 * Return: true when the line was the client's answer (the caller drops it).
 */
bool run_elicit_client_line(struct run_stdio *io, const char *run, const char *s, size_t n);

/**
 * run_elicit_can() - the relay is on and reads lines whole for network.ask, the client declared
 * the capability and still reads the server's stream
 */
bool run_elicit_can(const struct run_stdio *io);

/**
 * run_elicit_queue() - queue @line (a whole line with its newline, @n bytes) for the client,
 * after the server's whole lines queued before it
 * Return: 0, -EPIPE (run_elicit_can() is false), -ENOMEM.
 */
int run_elicit_queue(struct run_stdio *io, const char *line, size_t n);

/**
 * run_elicit_take() - take the oldest of the client's answers the relay kept
 * @ret_seq:	the answered request's number (the gateway's ask number)
 * @ret_allow:	accept with allow true
 * Return: true when there was one.
 */
bool run_elicit_take(struct run_stdio *io, unsigned *ret_seq, bool *ret_allow);

#endif /* WARDEN_RUN_ELICIT_H */
