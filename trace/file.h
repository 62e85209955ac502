/* file.h - the trace file `warden trace` writes and `warden init --from` reads.
 *
 * A trace is JSON Lines, one object per line, each with a "type" (docs/trace.md has the
 * format with examples):
 *   trace   {"type":"trace","version":1,"command":[...],"cwd":"/abs","home":"/abs"} first line
 *   file    {"type":"file","op":"read","path":"/abs","count":N,"comm":"node"[,"refused":"why"]}
 *   net     {"type":"net","host":"name","port":443,"proto":"tls","count":N[,"refused":"why"]}
 *   env     {"type":"env","name":"PATH"}
 *   limits  {"type":"limits","peak_memory_kib":N,"peak_pids":N,"wall_ms":N[,"stdio_jsonrpc":true]}
 *   tool    {"type":"tool","def":{"name":"echo","description":...,"inputSchema":...}} an MCP tool
 *           the server listed (its canonical definition: run/mcppin.h), one line per name
 * The reader is strict (unknown types, unknown keys, wrong types, relative paths, a second
 * "trace" line are errors with FILE:LINE), because what it accepts becomes a policy. The
 * parser is pure: bytes in, a struct out; trace_load() adds the read of the file.
 */
#ifndef WARDEN_TRACE_FILE_H
#define WARDEN_TRACE_FILE_H

#include "common/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Most MCP tools a trace holds (the recorder keeps no more; the reader refuses more). */
#define TRACE_TOOLS_MAX 1024
/* Longest tool name a trace holds. */
#define TRACE_TOOL_NAME_MAX 200

struct json_t;

/* The largest trace read (a trace of a big build is a few MiB). */
#define TRACE_MAX_BYTES (64u << 20)

/* What a program did to a path. */
enum trace_op {
	TRACE_READ = 0, /* opened for reading, or listed */
	TRACE_EXEC,	/* executed */
	TRACE_STAT,	/* looked at (stat, access, readlink) and it was there */
	TRACE_MISSING,	/* looked for and not there */
	TRACE_WRITE,	/* opened for writing, truncated, chmod */
	TRACE_CREATE,	/* created (a file, a folder, a link) */
	TRACE_REMOVE,	/* unlinked or removed */
	TRACE_RENAME,	/* renamed (from or to) */
	TRACE_CONNECT,	/* a unix socket connected to */
	TRACE_OP_N,
};

/**
 * trace_op_name() - "read", "exec", ... for @op
 * Return: a static string, or "?" out of range.
 */
const char *trace_op_name(enum trace_op op);

/** trace_op_writes() - true for the operations that need a write grant */
bool trace_op_writes(enum trace_op op);

/**
 * struct trace_file_ev - one path and what was done to it
 * @path:	absolute, as the recorder saw it
 * @op:		the operation
 * @count:	how often (deduplicated by the recorder)
 * @comm:	the process name that did it most ("" when unknown)
 * @refused:	NULL, or why the learning sandbox refused it (only a `connect`: a unix socket
 *		the person did not name)
 */
struct trace_file_ev {
	char *path;
	enum trace_op op;
	uint64_t count;
	char comm[16];
	char *refused;
};

/* The protocol a connection's name was read from. */
enum trace_proto {
	TRACE_PROTO_TLS = 0, /* TLS SNI */
	TRACE_PROTO_HTTP,    /* HTTP Host or CONNECT */
	TRACE_PROTO_RAW,     /* raw TCP, by the name the gateway's DNS answered */
	TRACE_PROTO_DNS,     /* a name resolved but never connected to */
	TRACE_PROTO_N,
};

/**
 * struct trace_net_ev - one name and port the program reached (or tried)
 * @host:	the name (or an address literal)
 * @port:	TCP port (0 for TRACE_PROTO_DNS)
 * @proto:	how the name was known
 * @count:	connections (or queries)
 * @refused:	NULL, or why the learning gateway refused it anyway (the SSRF classes)
 */
struct trace_net_ev {
	char *host;
	uint16_t port;
	enum trace_proto proto;
	uint64_t count;
	char *refused;
};

/**
 * struct trace - a whole trace
 * @command:	the traced command (@ncommand strings)
 * @cwd:	the folder it ran in
 * @home:	the home folder of the user who traced it ("" when not recorded)
 * @files:	file events
 * @nets:	network events
 * @env:	names of the environment variables the program was given
 * @peak_memory_kib: the largest memory use seen (0: not measured)
 * @peak_pids:	the most processes and threads at once (0: not measured)
 * @wall_ms:	how long it ran (0: not measured)
 * @stdio_jsonrpc: its stdin and stdout carried newline-delimited JSON-RPC both ways (an MCP
 *		server over stdio: it lives as long as its client, so init gives it no timeout)
 * @tools:	the MCP tools it listed in answers to the client's tools/list (a JSON array of
 *		canonical definitions, each with a distinct string "name"), or NULL: none
 */
struct trace {
	char **command;
	size_t ncommand;
	char *cwd;
	char *home;
	struct trace_file_ev *files;
	size_t nfiles;
	struct trace_net_ev *nets;
	size_t nnets;
	char **env;
	size_t nenv;
	uint64_t peak_memory_kib;
	uint64_t peak_pids;
	uint64_t wall_ms;
	bool stdio_jsonrpc;
	struct json_t *tools;
};

/**
 * trace_parse() - read a trace from memory
 * @buf:	the bytes (need not end in NUL)
 * @len:	their number
 * @name:	file name for the errors
 * @t:		filled in (trace_free() it, also after a failure)
 * @err:	FILE:LINE and what was expected, on failure
 *
 * Return: 0, -EINVAL (bad input: @err says where and what), or -ENOMEM.
 */
int trace_parse(const char *buf, size_t len, const char *name, struct trace *t, struct wd_err *err);

/**
 * trace_load() - read and parse the trace file @path (at most TRACE_MAX_BYTES)
 * Return: as trace_parse(), or the negative errno of the read.
 */
int trace_load(const char *path, struct trace *t, struct wd_err *err);

/** trace_free() - release what @t holds; @t may be NULL or zeroed */
void trace_free(struct trace *t);

#endif
