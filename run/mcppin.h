/* mcppin.h - pinned MCP tool definitions, the guard against a "rug pull" (mcppin.c): a server
 * whose tool quietly changes its description or schema after a person accepted it. A pin
 * file (`mcp.pin` in the policy, written by `warden mcp pin --accept`) holds, per tool name,
 * the SHA-256 of the tool's canonical definition and the definition itself; the stdio relay's
 * filter (mcpfilter.c) hides a listed tool that is new or changed and refuses calls of it. */
#ifndef WARDEN_RUN_MCPPIN_H
#define WARDEN_RUN_MCPPIN_H

#include <stdbool.h>
#include <stddef.h>

struct json_t;

/* The pin file's format version. */
#define RUN_MCPPIN_VERSION 1
/* Largest pin file read. */
#define RUN_MCPPIN_MAX (8u << 20)

/* A tool of a tools/list answer against the pins. */
enum run_mcppin_verdict {
	RUN_MCPPIN_SAME,    /* pinned, the same definition */
	RUN_MCPPIN_NEW,	    /* no pin of that name */
	RUN_MCPPIN_CHANGED, /* pinned with another definition */
};

/**
 * run_mcppin_def() - a tool's canonical definition: an object of its `name`, `description`,
 * `inputSchema` and `annotations` (those it has; nothing else: `title`, `_meta` and the like
 * are not pinned)
 * Return: a new reference, or NULL (out of memory, or @tool is not an object with a string
 * name).
 */
struct json_t *run_mcppin_def(const struct json_t *tool);

/**
 * run_mcppin_digest() - "sha256:<hex>" of run_mcppin_def() dumped compact with sorted keys
 * Return: 0, or -EINVAL / -ENOMEM as run_mcppin_def().
 */
int run_mcppin_digest(const struct json_t *tool, char out[72]);

/**
 * run_mcppin_compare() - @tool (of a tools/list answer) against @pins (the pin file's `tools`)
 * @what:	for RUN_MCPPIN_CHANGED, the fields that differ ("description, inputSchema")
 * @size:	its size
 */
enum run_mcppin_verdict run_mcppin_compare(const struct json_t *pins, const struct json_t *tool,
					   char *what, size_t size);

/**
 * run_mcppin_load() - read the pin file @path
 * @ret:	its `tools` object (name -> {"sha256", "def"}), a new reference
 * @err:	what is wrong, for a message
 *
 * Return: 0, -ENOENT (no such file), or another negative errno / -EINVAL (not a pin file).
 */
int run_mcppin_load(const char *path, struct json_t **ret, char *err, size_t size);

/**
 * run_mcppin_format() - the text of a pin file for @tools (an array of the tools of tools/list
 * answers, or of their canonical definitions), accepted now
 * @command:	the server's command line, recorded for a person (may be NULL)
 * @ret_text:	the text (JSON, ending in a newline), malloc'd, on success
 * Return: 0, -EINVAL (a tool without a name), or -ENOMEM.
 */
int run_mcppin_format(const struct json_t *tools, const struct json_t *command, char **ret_text);

/**
 * run_mcppin_save() - write the pin file @path whole (atomically, 0600) from @tools (an array of
 * the tools of tools/list answers)
 * @command:	the server's command line, recorded for a person (may be NULL)
 * Return: 0, or a negative errno (@err says what).
 */
int run_mcppin_save(const char *path, const struct json_t *tools, const struct json_t *command,
		    char *err, size_t size);

/**
 * run_mcppin_path() - where the pin file @pin (mcp.pin as the policy writes it) is: @pin when
 * absolute, else in the folder of the policy file @policy (its real path)
 * Return: 0, or -ENAMETOOLONG.
 */
int run_mcppin_path(const char *policy, const char *pin, char *out, size_t size);

#endif /* WARDEN_RUN_MCPPIN_H */
