/* ship_none.c - ship.c's entry points for the Windows build, which does not build ship.c (its
 * sockets are POSIX descriptors, closed with close() and waited on with poll()): a sink other
 * than the local file is refused when the log is opened, so the rest is never reached. Compiled
 * empty on every other system, where ship.c ships (tests/cross/windows/CMakeLists.txt). */
#include "audit/ship_internal.h"

#ifdef _WIN32
#include <errno.h>

int ship_open(const struct audit_sink *sink, const char *app, struct audit_shipper **ret,
	      struct wd_err *err)
{
	(void)sink, (void)app;
	*ret = NULL;
	return wd_err_set(err, -ENOTSUP,
			  "shipping the audit log to syslog or journald is not built for Windows; "
			  "the local log alone is written");
}

ssize_t ship_queue(struct audit_shipper *sh, const struct audit_event *ev, const char *line,
		   size_t len, bool chained)
{
	(void)sh, (void)ev, (void)line, (void)len, (void)chained;
	return -1;
}

void ship_fill(struct audit_shipper *sh, ssize_t hole, const char *hex)
{
	(void)sh, (void)hole, (void)hex;
}

void ship_commit(struct audit_shipper *sh, bool written)
{
	(void)sh, (void)written;
}

int ship_notice(struct audit_shipper *sh, struct audit_event *ev, char *reason, size_t size,
		bool *ret_ship)
{
	(void)sh, (void)ev, (void)reason, (void)size;
	*ret_ship = false;
	return 0;
}

void ship_stats(const struct audit_shipper *sh, uint64_t *ret_sent, uint64_t *ret_dropped)
{
	(void)sh;
	*ret_sent = 0;
	*ret_dropped = 0;
}

void ship_close(struct audit_shipper *sh)
{
	(void)sh;
}
#endif
