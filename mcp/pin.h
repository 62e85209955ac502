/* pin.h - `warden mcp pin`: a wrapped MCP server's tools shown against the policy's pin file,
 * and pinned with --accept (pin.c). */
#ifndef WARDEN_MCP_PIN_H
#define WARDEN_MCP_PIN_H

/**
 * mcp_pin_main() - the verb; @argv[0] is "pin"
 * Return: the exit status (0 pinned or nothing differs, 1 something differs, 2 usage, 125).
 */
int mcp_pin_main(int argc, char **argv);

#endif /* WARDEN_MCP_PIN_H */
