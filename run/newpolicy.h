/* newpolicy.h - `warden policy new --mcp`: a starting policy for an MCP server, made from its
 * command as it is installed on this machine (run/newpolicy.c). */
#ifndef WARDEN_RUN_NEWPOLICY_H
#define WARDEN_RUN_NEWPOLICY_H

#include "common/common.h"

/**
 * run_policy_new_mcp() - write a starting policy for the MCP server started by @argv
 * @argc:	number of words in @argv (at least 1)
 * @argv:	the server's command line; argv[0] a bare name (found through @path) or a path
 * @path:	the search path for a bare name ($PATH); NULL: "/usr/local/bin:/usr/bin:/bin"
 * @out:	the policy's YAML text is appended here
 * @err:	what went wrong, for a person
 *
 * The command is resolved to its real file. A script's interpreter is read from its `#!`
 * line (`/usr/bin/env node` is looked up through @path too). What the sandbox would not see
 * otherwise is granted read: for a node package, the outermost `node_modules` folder that
 * holds it (its dependencies may be hoisted beside it); for a Python virtual environment,
 * the environment's folder; for an interpreter or a program outside the runtime base, its
 * installation's folder. `npx` (or `npm exec`) gets npm's cache (write) and
 * registry.npmjs.org:443, with a comment on the cost. No other network, no timeout (a
 * server lives as long as its client), `command:` set to the resolved command and @argv's
 * other words. The text is not validated here: the caller checks it (policy_parse(),
 * policy_validate()) before writing it anywhere.
 *
 * Return: 0; -ENOENT (the command is not found), -EACCES (not an executable file), -EIO (its
 * first bytes could not be read), -ENAMETOOLONG, -ENOMEM; @err says which and why.
 */
int run_policy_new_mcp(int argc, char *const *argv, const char *path, struct wd_buf *out,
		       struct wd_err *err);

#endif /* WARDEN_RUN_NEWPOLICY_H */
