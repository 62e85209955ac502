/* compat/sys/queue.h - for the Windows build only (tests/cross/windows): mingw-w64 has no
 * <sys/queue.h>. The one kind of list the gateway uses (gateway/resolve.h: a lookup's waiters)
 * is a tail queue, and only these seven operations of it, written here for Warden: a head with
 * the first element and the address of the last element's next pointer, an entry with the next
 * element and the address of the pointer that points at this one. */
#ifndef WARDEN_COMPAT_SYS_QUEUE_H
#define WARDEN_COMPAT_SYS_QUEUE_H

#include <stddef.h>

#define TAILQ_HEAD(name, type)                                                                     \
	struct name {                                                                              \
		struct type *tqh_first;                                                            \
		struct type **tqh_last;                                                            \
	}

#define TAILQ_ENTRY(type)                                                                          \
	struct {                                                                                   \
		struct type *tqe_next;                                                             \
		struct type **tqe_prev;                                                            \
	}

#define TAILQ_FIRST(head) ((head)->tqh_first)
#define TAILQ_EMPTY(head) ((head)->tqh_first == NULL)

#define TAILQ_INIT(head)                                                                           \
	do {                                                                                       \
		(head)->tqh_first = NULL;                                                          \
		(head)->tqh_last = &(head)->tqh_first;                                             \
	} while (0)

#define TAILQ_INSERT_TAIL(head, elm, field)                                                        \
	do {                                                                                       \
		(elm)->field.tqe_next = NULL;                                                      \
		(elm)->field.tqe_prev = (head)->tqh_last;                                          \
		*(head)->tqh_last = (elm);                                                         \
		(head)->tqh_last = &(elm)->field.tqe_next;                                         \
	} while (0)

#define TAILQ_REMOVE(head, elm, field)                                                             \
	do {                                                                                       \
		if ((elm)->field.tqe_next)                                                         \
			(elm)->field.tqe_next->field.tqe_prev = (elm)->field.tqe_prev;             \
		else                                                                               \
			(head)->tqh_last = (elm)->field.tqe_prev;                                  \
		*(elm)->field.tqe_prev = (elm)->field.tqe_next;                                    \
	} while (0)

#endif
