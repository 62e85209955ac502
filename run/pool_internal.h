/* pool_internal.h - internal to run/'s pool (pool.c, pool_entry.c): a pooled network's entry
 * file (its one line, its lock, its undoing), shared by the lease, the holder, the fill and the
 * gc in pool.c. pool.c's theory of operation says what the states and the files are.
 */
#ifndef WARDEN_RUN_POOL_INTERNAL_H
#define WARDEN_RUN_POOL_INTERNAL_H

#include "run/run.h"
#include "netns/netns.h"
#include "nft/nft.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <stdbool.h>
#include <sys/types.h>

/* An entry as stored (its fields: pool.c's theory of operation). */
struct run_pool_entry {
	char state[8];
	pid_t pid;
	unsigned long long start;
	char id[NETNS_ID_MAX];
	uint32_t slot;
	char ifname[IFNAMSIZ];
	char sbx4[INET_ADDRSTRLEN];
	char sbx6[INET6_ADDRSTRLEN];
	char table[32];
	char prefix[8];
	char cfg[256];
	unsigned long long ns;	    /* inode of the network namespace (0: unknown, never leased) */
	char gw4[INET_ADDRSTRLEN];  /* the host side of the veth: the run's own gateway */
	char gw6[INET6_ADDRSTRLEN]; /* ("" in an older entry: never leased) */
};

/* how run_pool_entry_undo() treats the parts of an entry that are not the caller's to undo */
enum run_pool_undo {
	RUN_POOL_UNDO_ALL,	 /* the holder is killed, the elements deleted here */
	RUN_POOL_UNDO_BY_HOLDER, /* the caller is the holder: it does not kill itself */
	RUN_POOL_UNDO_FOREIGN,	 /* another host namespace's, gone: its elements went with it */
};

/* What a pooled network depends on, as one word: the pools, names, table and the host
 * network namespace (its veth's host side lives there). */
void run_pool_fingerprint(const struct netns_pool_config *nc, const struct fw_config *fc, char *out,
			  size_t size);

/* The host namespace part of a run_pool_fingerprint ("net:<inode>"). */
bool run_pool_same_host(const char *a, const char *b);

/* Write @e to its file, replacing it atomically. */
int run_pool_entry_save(const char *dir, const struct run_pool_entry *e);

/* Take the pool's lock; with @nonblock, -EWOULDBLOCK when someone holds it. */
int run_pool_lock_how(const char *dir, int *ret_fd, bool nonblock);

/* Take the pool's lock, waiting for it. Return: 0 or a negative errno. */
int run_pool_lock(const char *dir, int *ret_fd);

/* The nft elements of @e. */
void run_pool_entry_fw(const struct run_pool_entry *e, struct fw_config *fc, struct fw_run *fr);

/* Is the process named by @e (maker or holder) alive? */
bool run_pool_holder_alive(const struct run_pool_entry *e);

/* Undo a pooled network: its nft elements, its holder (the kernel then removes the namespace
 * and the veth), its slot, its entry file. Return: 0 or a negative errno. */
int run_pool_entry_undo(const char *dir, const struct run_pool_entry *e, enum run_pool_undo how,
			struct wd_err *err);

/* Undo @e with RUN_POOL_UNDO_ALL (@nc unused). Return: 0 or a
 * negative errno. */
int run_pool_entry_reclaim(const char *dir, const struct netns_pool_config *nc,
			   const struct run_pool_entry *e, struct wd_err *err);

/* The host namespace inode an entry was made in ("net:<inode>,..." of its run_pool_fingerprint). */
unsigned long long run_pool_entry_host_ns(const struct run_pool_entry *e);

/* Is @e a ready entry of configuration @cfg whose holder lives and still owns the slot? */
bool run_pool_entry_usable(const struct netns_pool_config *nc, const struct run_pool_entry *e,
			   const char *cfg);

/* Call @fn for each entry file of @dir (the caller holds the lock); an unparsable file is
 * passed with @e NULL. Stops at the first non-zero return. */
int run_pool_for_each(const char *dir,
		      int (*fn)(const char *path, const struct run_pool_entry *e, void *arg),
		      void *arg);

#endif /* WARDEN_RUN_POOL_INTERNAL_H */
