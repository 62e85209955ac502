/* winplan.h - what the Windows AppContainer backend will apply for a run, as plain data: the
 * DACL entries for the container's SID (one per grant and per mask) and the Windows Filtering
 * Platform filters (block everything for that SID but TCP to the loopback proxy port, in a
 * sublayer of its own); a check of its invariants and a text rendering. Pure and portable: no
 * Linux or Windows header (the constants below carry the Windows SDK's values, each with the
 * header it comes from), so it builds and is tested on Linux and with mingw-w64 unchanged.
 *
 * The plan is made from the policy's grants and masks after validation (the caller, in run/,
 * passes their real paths: sandbox/ does not use policy/); the backend that applies it with
 * SetNamedSecurityInfoW and Fwpm* does not exist yet (docs/run.md, "Windows (AppContainer): the
 * plan").
 *
 * Grants, nested like bubblewrap's mounts (a deeper grant covers its parent's mode):
 *   - read: GRANT GENERIC_READ|GENERIC_EXECUTE, inherited by files and folders below;
 *   - write: GRANT that plus GENERIC_WRITE|DELETE; a path both read and written is one write;
 *   - a read grant inside a write grant: the read GRANT plus a DENY of the write rights
 *     (SANDBOX_WIN_DENY_WRITE: the specific rights; GENERIC_WRITE would map to
 *     FILE_GENERIC_WRITE, whose SYNCHRONIZE and READ_CONTROL every read needs) — an explicit
 *     ACE comes before an inherited one, so a write grant deeper still is writable again;
 *   - a mask (a credential store inside a grant): DENY GENERIC_ALL.
 */
#ifndef WARDEN_SANDBOX_WINPLAN_H
#define WARDEN_SANDBOX_WINPLAN_H

#include "common/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* winnt.h: access rights */
#define SANDBOX_WIN_GENERIC_READ 0x80000000u
#define SANDBOX_WIN_GENERIC_WRITE 0x40000000u
#define SANDBOX_WIN_GENERIC_EXECUTE 0x20000000u
#define SANDBOX_WIN_GENERIC_ALL 0x10000000u
#define SANDBOX_WIN_DELETE 0x00010000u
#define SANDBOX_WIN_WRITE_DAC 0x00040000u
#define SANDBOX_WIN_WRITE_OWNER 0x00080000u
#define SANDBOX_WIN_FILE_WRITE_DATA 0x0002u  /* FILE_ADD_FILE on a folder */
#define SANDBOX_WIN_FILE_APPEND_DATA 0x0004u /* FILE_ADD_SUBDIRECTORY on a folder */
#define SANDBOX_WIN_FILE_WRITE_EA 0x0010u
#define SANDBOX_WIN_FILE_DELETE_CHILD 0x0040u
#define SANDBOX_WIN_FILE_WRITE_ATTRIBUTES 0x0100u
/* winnt.h: ACE inheritance flags */
#define SANDBOX_WIN_OBJECT_INHERIT_ACE 0x1u
#define SANDBOX_WIN_CONTAINER_INHERIT_ACE 0x2u
/* fwptypes.h: filter actions (FWP_ACTION_FLAG_TERMINATING is 0x1000) */
#define SANDBOX_WIN_FWP_ACTION_BLOCK 0x1001u
#define SANDBOX_WIN_FWP_ACTION_PERMIT 0x1002u
/* fwpmtypes.h: a filter no lower-priority sublayer may override */
#define SANDBOX_WIN_FWPM_FILTER_FLAG_CLEAR_ACTION_RIGHT 0x8u
/* fwpmtypes.h: the session's objects vanish when its engine handle closes */
#define SANDBOX_WIN_FWPM_SESSION_FLAG_DYNAMIC 0x1u
/* the IP protocol number of TCP (IPPROTO_TCP in ws2def.h) */
#define SANDBOX_WIN_IPPROTO_TCP 6u

/* What a read grant's path gets; a write grant's adds SANDBOX_WIN_WRITE_MASK. */
#define SANDBOX_WIN_READ_MASK (SANDBOX_WIN_GENERIC_READ | SANDBOX_WIN_GENERIC_EXECUTE)
#define SANDBOX_WIN_WRITE_MASK (SANDBOX_WIN_GENERIC_WRITE | SANDBOX_WIN_DELETE)
/* The write rights a read grant inside a write grant is denied (the specific rights). */
#define SANDBOX_WIN_DENY_WRITE                                                                     \
	(SANDBOX_WIN_FILE_WRITE_DATA | SANDBOX_WIN_FILE_APPEND_DATA | SANDBOX_WIN_FILE_WRITE_EA |  \
	 SANDBOX_WIN_FILE_DELETE_CHILD | SANDBOX_WIN_FILE_WRITE_ATTRIBUTES | SANDBOX_WIN_DELETE |  \
	 SANDBOX_WIN_WRITE_DAC | SANDBOX_WIN_WRITE_OWNER)
#define SANDBOX_WIN_INHERIT (SANDBOX_WIN_OBJECT_INHERIT_ACE | SANDBOX_WIN_CONTAINER_INHERIT_ACE)

/* Our sublayer's weight: the highest, so its hard blocks are weighed first. */
#define SANDBOX_WIN_SUBLAYER_WEIGHT 0xffffu
/* Filter weights (FWP_UINT8, 0..15) inside the sublayer: the permits before the blocks. */
#define SANDBOX_WIN_WEIGHT_PERMIT 15u
#define SANDBOX_WIN_WEIGHT_BLOCK 0u

/**
 * struct sandbox_win_guid - a GUID laid out as Windows' GUID (guiddef.h)
 * @d1:	Data1
 * @d2:	Data2
 * @d3:	Data3
 * @d4:	Data4
 */
struct sandbox_win_guid {
	uint32_t d1;
	uint16_t d2, d3;
	uint8_t d4[8];
};

/**
 * enum sandbox_win_access_mode - an EXPLICIT_ACCESS entry's mode (accctrl.h: ACCESS_MODE)
 * @SANDBOX_WIN_GRANT:	GRANT_ACCESS: an allow ACE added to what is there
 * @SANDBOX_WIN_DENY:	DENY_ACCESS: a deny ACE, ordered before the allow ones
 */
enum sandbox_win_access_mode {
	SANDBOX_WIN_GRANT = 1,
	SANDBOX_WIN_DENY = 3,
};

/**
 * enum sandbox_win_why - which part of the policy an ACE comes from
 * @SANDBOX_WIN_FOR_READ:	a read grant
 * @SANDBOX_WIN_FOR_WRITE:	a write grant
 * @SANDBOX_WIN_FOR_READ_IN_WRITE: the write rights a read grant inside a write grant is denied
 * @SANDBOX_WIN_FOR_MASK:	a mask (a credential store or protected folder inside a grant)
 */
enum sandbox_win_why {
	SANDBOX_WIN_FOR_READ,
	SANDBOX_WIN_FOR_WRITE,
	SANDBOX_WIN_FOR_READ_IN_WRITE,
	SANDBOX_WIN_FOR_MASK,
};

/**
 * struct sandbox_win_ace - one DACL entry for the AppContainer SID on one path
 * @path:	the path (owned by the plan)
 * @mode:	allow or deny
 * @access:	the access mask
 * @inherit:	ACE flags (SANDBOX_WIN_INHERIT: a file ignores them)
 * @why:	where it comes from
 */
struct sandbox_win_ace {
	char *path;
	enum sandbox_win_access_mode mode;
	uint32_t access;
	uint32_t inherit;
	enum sandbox_win_why why;
};

/**
 * enum sandbox_win_layer - the WFP layers the plan uses
 * @SANDBOX_WIN_CONNECT_V4:	FWPM_LAYER_ALE_AUTH_CONNECT_V4 (outbound connect, first UDP send)
 * @SANDBOX_WIN_CONNECT_V6:	FWPM_LAYER_ALE_AUTH_CONNECT_V6
 * @SANDBOX_WIN_ACCEPT_V4:	FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V4 (inbound accept)
 * @SANDBOX_WIN_ACCEPT_V6:	FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V6
 */
enum sandbox_win_layer {
	SANDBOX_WIN_CONNECT_V4,
	SANDBOX_WIN_CONNECT_V6,
	SANDBOX_WIN_ACCEPT_V4,
	SANDBOX_WIN_ACCEPT_V6,
	SANDBOX_WIN_NLAYERS,
};

/**
 * struct sandbox_win_filter - one WFP filter in the run's sublayer
 * @name:	its display name
 * @layer:	where it sits
 * @action:	SANDBOX_WIN_FWP_ACTION_PERMIT or _BLOCK
 * @flags:	FWPM_FILTER_FLAG_* bits
 * @weight:	its weight in the sublayer (FWP_UINT8)
 * @loopback:	besides FWPM_CONDITION_ALE_PACKAGE_ID == the container's SID (every filter has
 *		it), it matches only IP_PROTOCOL TCP, IP_REMOTE_ADDRESS the loopback address of
 *		its layer's family (127.0.0.1, ::1) and IP_REMOTE_PORT @port
 * @port:	with @loopback: the proxy's port
 */
struct sandbox_win_filter {
	const char *name;
	enum sandbox_win_layer layer;
	uint32_t action;
	uint32_t flags;
	uint8_t weight;
	bool loopback;
	uint16_t port;
};

#define SANDBOX_WIN_MAX_FILTERS 6

/**
 * struct sandbox_win_grants - what the plan is made from (a validated policy's real paths)
 * @read:	filesystem.read grants
 * @nread:	how many
 * @write:	filesystem.write grants
 * @nwrite:	how many
 * @mask:	the policy's masks (struct wd_policy.mask)
 * @nmask:	how many
 * @proxy_port:	the loopback port of the run's gateway in proxy mode
 *
 * Paths are absolute: "X:\...", "X:/...", "\\server\share\..." or "/..." (the tests use
 * this machine's). Windows compares them without case; so does the plan.
 */
struct sandbox_win_grants {
	const char *const *read;
	size_t nread;
	const char *const *write;
	size_t nwrite;
	const char *const *mask;
	size_t nmask;
	uint16_t proxy_port;
};

/**
 * struct sandbox_win_plan - what the backend applies, in this order
 * @aces:	the DACL entries, parents before children (deny entries of the same path last)
 * @naces:	how many
 * @filters:	the WFP filters: the two permits, then the blocks
 * @nfilters:	how many
 * @sublayer_weight: the run's sublayer's weight
 * @session_flags: the WFP session's flags (dynamic: nothing outlives the backend's handle)
 * @proxy_port:	the loopback proxy port
 */
struct sandbox_win_plan {
	struct sandbox_win_ace *aces;
	size_t naces;
	struct sandbox_win_filter filters[SANDBOX_WIN_MAX_FILTERS];
	size_t nfilters;
	uint16_t sublayer_weight;
	uint32_t session_flags;
	uint16_t proxy_port;
};

/* fwpmu.h: the layers' and the conditions' keys */
extern const struct sandbox_win_guid sandbox_win_layer_key[SANDBOX_WIN_NLAYERS];
extern const struct sandbox_win_guid
    sandbox_win_cond_package_id;				/* FWPM_CONDITION_ALE_PACKAGE_ID */
extern const struct sandbox_win_guid sandbox_win_cond_protocol; /* FWPM_CONDITION_IP_PROTOCOL */
extern const struct sandbox_win_guid sandbox_win_cond_remote_addr; /* ..._IP_REMOTE_ADDRESS */
extern const struct sandbox_win_guid sandbox_win_cond_remote_port; /* ..._IP_REMOTE_PORT */

/**
 * sandbox_win_plan_make() - the plan for @g
 * @g:		the grants, masks and proxy port
 * @ret:	on success the plan (free with sandbox_win_plan_free())
 * @err:	what was wrong
 *
 * Return: 0; -EINVAL for a path that is empty or not absolute, or a proxy port of 0; -ENOMEM.
 */
int sandbox_win_plan_make(const struct sandbox_win_grants *g, struct sandbox_win_plan *ret,
			  struct wd_err *err);

/** sandbox_win_plan_free() - free what @plan holds; @plan may be NULL. */
void sandbox_win_plan_free(struct sandbox_win_plan *plan);

/**
 * sandbox_win_plan_check() - the plan's invariants, checked against what it was made from
 * @plan:	the plan
 * @g:		what it was made from
 * @err:	the first invariant broken
 *
 * No filter permits but TCP to the loopback proxy port, every block is hard and weighs less
 * than every permit, both families are blocked both ways; every write grant is writable,
 * every read grant (not also written) readable and denied the write rights unless no write
 * grant holds it, every mask denied everything, no ACE but for a grant or a mask. The backend
 * runs it before applying anything (it fails closed); the tests run it on every plan.
 *
 * Return: 0, or -EINVAL with @err saying which invariant.
 */
int sandbox_win_plan_check(const struct sandbox_win_plan *plan, const struct sandbox_win_grants *g,
			   struct wd_err *err);

/**
 * sandbox_win_plan_render() - the plan as text, one line per ACE and per filter (the tests'
 * golden text, and `--print-bwrap` once the backend exists)
 * @plan:	the plan
 * @out:	where to append
 *
 * Return: 0, or -ENOMEM.
 */
int sandbox_win_plan_render(const struct sandbox_win_plan *plan, struct wd_buf *out);

/**
 * sandbox_win_path_within() - whether @path is @dir or lies inside it (no case, \ and / alike)
 * @path:	a path
 * @dir:	a folder
 */
bool sandbox_win_path_within(const char *path, const char *dir);

#endif
