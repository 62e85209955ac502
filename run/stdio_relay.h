/* run_stdio.h - `warden run`'s stdio relay (run_stdio.c; internal to `warden run`): when
 * neither stdin nor stdout is a terminal (an MCP client's pipes), the program gets pipes and
 * the launcher relays both directions byte for byte, while the MCP tracker (toolcalls.h) reads
 * along and the run's gateway is told which tool calls are in flight (the `mcp` op). A
 * terminal keeps the direct inheritance of stdin/stdout (no relay, no attribution). */
#ifndef WARDEN_LAUNCHER_RUN_STDIO_H
#define WARDEN_LAUNCHER_RUN_STDIO_H

#include "run/mcpfilter.h"
#include "run/toolcalls.h"

#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

/* Bytes a direction buffers between reading and writing. */
#define RUN_STDIO_BUF (256u << 10)
/* The pollfds the relay adds to the wait loop. */
#define RUN_STDIO_NPOLL 4
/* The client's elicitation answers the relay keeps until the ask turn takes them (more are
 * dropped: their asks are denied at their deadline). */
#define RUN_STDIO_ANSWERS 16

/**
 * struct run_stdio_dir - one direction: from @in to @out through @buf
 * @in:		where bytes come from (-1: closed, at EOF)
 * @out:	where they go (-1: closed)
 * @in_sock:	@in is a socket (recv with MSG_DONTWAIT; else read after poll)
 * @out_sock:	@out is a socket (send with MSG_DONTWAIT; else writes of at most PIPE_BUF
 *		after poll, which a blocking pipe takes without blocking)
 * @out_nb:	@out is ours and non-blocking (the program's pipe)
 * @buf:	RUN_STDIO_BUF bytes: @len read, of which @off written already
 * @len:	see @buf
 * @off:	see @buf
 * @bytes:	relayed in all
 * @line:	filter mode: the line being read (whole lines go to the filter)
 * @skip:	filter mode: a line too long to filter is being dropped up to its newline
 * @q:		filter mode: what goes out (whole lines), @qoff of it written already; @buf
 *		only takes what is read
 * @qoff:	see @q
 */
struct run_stdio_dir {
	int in, out;
	bool in_sock, out_sock, out_nb;
	char *buf;
	size_t len, off;
	uint64_t bytes;
	struct wd_buf line;
	bool skip;
	struct wd_buf q;
	size_t qoff;
};

/**
 * struct run_stdio - the relay
 * @want:	relay (stdin and stdout open and not terminals, WARDEN_STDIO_RELAY not 0)
 * @why:	when not, why (run.start's `mcp`)
 * @on:		the program's stdio are the relay's pipes
 * @dir:	client to server (enum mcp_dir MCP_C2S), server to client (MCP_S2C)
 * @track:	the tool calls in flight
 * @told_off:	the event that attribution went off was written
 * @exit_mcp:	run.exit's `mcp` (run_stdio_finish()), or NULL
 * @updates:	`mcp` ops sent to the gateway
 * @update_ns:	their round trips, summed (WARDEN_TIMING prints the mean)
 * @filter:	the policy has mcp.tools rules: lines go through @mf (mcpfilter.h)
 * @mf:		the tool filter
 * @pins:	mcp.pin's tools (mcppin.h), or NULL
 * @pin_learn:	WARDEN_MCP_PIN_LEARN=1 (`warden mcp pin` reading the tools): pins not enforced
 * @accept_hint: the command that accepts the server's tools, for the filter's reasons
 * @explain:	mcp.explain_denials: a result whose call had denials says so
 * @ended:	the gateway's calls that ended with denials, not explained yet (or NULL)
 * @asks:	network.ask: lines are read whole (@filter) for elicitation (elicit.h)
 * @elicit:	the client's initialize request declared the elicitation capability
 * @answers:	the client's answers to elicitation requests, taken off its stream, for the ask
 *		turn (elicit.h); @nanswers of them
 */
struct run_stdio {
	bool want;
	char why[128];
	bool on;
	struct run_stdio_dir dir[2];
	struct run_toolcalls track;
	bool told_off;
	char *exit_mcp;
	uint64_t updates, update_ns;
	bool filter;
	struct run_mcpfilter mf;
	struct json_t *pins;
	bool pin_learn;
	char accept_hint[PATH_MAX + 64];
	bool explain;
	struct json_t *ended;
	bool asks;
	bool elicit;
	struct {
		unsigned seq;
		bool allow;
	} answers[RUN_STDIO_ANSWERS];
	unsigned nanswers;
};

#endif /* WARDEN_LAUNCHER_RUN_STDIO_H */
