/* sdnotify.h - telling a service manager that warden-gateway is ready (the sd_notify(3)
 * protocol: one datagram of KEY=VALUE lines to the socket $NOTIFY_SOCKET names), without
 * libsystemd. */
#ifndef WARDEN_GATEWAY_SDNOTIFY_H
#define WARDEN_GATEWAY_SDNOTIFY_H

#include <stddef.h>

/** Longest $NOTIFY_SOCKET accepted (an AF_UNIX path, or '@' + an abstract name). */
#define GW_NOTIFY_MAX 108

/**
 * gw_notify_take() - read $NOTIFY_SOCKET and remove it from the environment
 * @out:	the socket's address, as the variable gave it ("/run/...", "@name");
 *		"" when the variable is not set
 * @size:	size of @out (GW_NOTIFY_MAX is enough)
 *
 * The variable is unset in every case, so the worker and anything it starts do not
 * inherit it: only the service's main process speaks to the manager.
 *
 * Return: 1 when a usable address is in @out, 0 when the variable is not set, or
 * -EAFNOSUPPORT (neither an absolute path nor '@'), -ENAMETOOLONG (longer than an
 * AF_UNIX address holds); then @out is "".
 */
int gw_notify_take(char *out, size_t size);

/**
 * gw_notify_send() - send one state datagram ("READY=1\nSTATUS=...") to @sock
 * @sock:	an address from gw_notify_take(); "" sends nothing
 * @state:	the newline-separated assignments
 *
 * Return: 0 (also when @sock is ""), or a negative errno of socket(2)/sendto(2), or
 * -EMSGSIZE when the datagram was cut.
 */
int gw_notify_send(const char *sock, const char *state);

#endif
