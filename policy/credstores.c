/* credstores.c - the one table of credential stores: the files and folders that hold a user's
 * keys, tokens, cookies, passwords and shell histories. A grant that holds one gets it hidden
 * in the sandbox (validate.c), unless a `sensitive: true` grant holds it too; `warden trace`
 * hides every one and `warden init` never grants one silently. docs/files.md and
 * warden-policy(5) list the same table: change the three together. */
#include "policy/policy_internal.h"

/* Under the home folder ("~/...") or absolute; a folder is hidden whole (an empty tmpfs), a
 * file by an empty one. Grouped by what they hold. */
static const char *const cred_stores[] = {
    /* keys and cloud / cluster credentials */
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.config/gcloud",
    "~/.azure",
    "~/.kube",
    "~/.docker", /* config.json holds registry tokens */
    /* tokens of tools and package registries */
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/gh",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.vault-token",
    /* AI agents and their API keys */
    "~/.claude",
    "~/.claude.json",
    "~/.codex",
    "~/.config/anthropic",
    "~/.gemini",
    /* shell and REPL histories (typed secrets) */
    "~/.bash_history",
    "~/.zsh_history",
    "~/.local/share/fish/fish_history",
    "~/.python_history",
    "~/.node_repl_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.lesshst",
    /* password managers and keyrings */
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.gnome2/keyrings",
    "~/.config/Bitwarden",
    "~/.config/1Password",
    /* browser and mail profiles (cookies, saved passwords) */
    "~/.mozilla",
    "~/.thunderbird",
    "~/.config/google-chrome",
    "~/.config/chromium",
    "~/.config/BraveSoftware",
    "~/.config/microsoft-edge",
    "~/snap/chromium",
    "~/snap/firefox",
    /* the host's own: container engines (root on the host), password hashes, sudo rules */
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/podman/podman.sock",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
};

const char *const *policy_credential_stores(size_t *ret_n)
{
	*ret_n = WD_ARRAY_SIZE(cred_stores);
	return cred_stores;
}
