/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mounts.c - what of the host the executor sees.
 *
 * Paths are judged after canonicalisation: repeated slashes, "." and ".."
 * resolved textually, /var/run read as /run (a symlink to it on every
 * current distribution), and, when the path exists on the linting host,
 * its realpath() too, since a bind mount follows a symlink in its source.
 * The compiler already refuses non-normalised paths; canonicalising again
 * keeps these rules right if that ever loosens.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint/rules/rules.h"

#define CANON_MAX 4096

/* Textual canonical form of an absolute path into out; 0, or -1 when it is
 * not absolute or too long. */
static int canon_text(const char *in, char *out, size_t cap)
{
	size_t o = 0;
	const char *p = in;

	if (in[0] != '/' || strlen(in) >= cap)
		return -1;
	out[o++] = '/';
	while (*p != '\0') {
		const char *s;
		size_t len;

		while (*p == '/')
			p++;
		s = p;
		while (*p != '\0' && *p != '/')
			p++;
		len = (size_t)(p - s);
		if (len == 0 || (len == 1 && s[0] == '.'))
			continue;
		if (len == 2 && s[0] == '.' && s[1] == '.') {
			while (o > 1 && out[o - 1] != '/')
				o--;
			if (o > 1)
				o--; /* the slash before the dropped component */
			continue;
		}
		if (o > 1)
			out[o++] = '/';
		memcpy(out + o, s, len);
		o += len;
	}
	out[o] = '\0';
	if (strcmp(out, "/var/run") == 0 || strncmp(out, "/var/run/", 9) == 0)
		memmove(out, out + 4, strlen(out + 4) + 1);
	return 0;
}

/* 1 when a equals b or is a directory above it. */
static int at_or_above(const char *a, const char *b)
{
	size_t la = strlen(a);

	if (strcmp(a, "/") == 0)
		return 1;
	return strncmp(a, b, la) == 0 && (b[la] == '\0' || b[la] == '/');
}

/* Host paths that no executor should see.  below: also a path inside it
 * (all of /proc is sensitive; only /etc itself, not /etc/alternatives). */
static const struct {
	const char *path;
	int below;
	const char *what;
} sensitive[] = {
	{ "/", 0, "the host's whole file system" },
	{ "/boot", 1, "kernels and boot configuration" },
	{ "/dev", 1, "host devices" },
	{ "/etc", 0, "host accounts and configuration" },
	{ "/etc/docker", 1, "Docker daemon configuration and TLS keys" },
	{ "/etc/gshadow", 1, "group password hashes" },
	{ "/etc/kubernetes", 1, "Kubernetes admin credentials and keys" },
	{ "/etc/shadow", 1, "password hashes" },
	{ "/etc/ssh", 1, "SSH host keys" },
	{ "/etc/ssl/private", 1, "TLS private keys" },
	{ "/etc/sudoers", 1, "sudo rules" },
	{ "/etc/sudoers.d", 1, "sudo rules" },
	{ "/home", 1, "users' home directories" },
	{ "/proc", 1, "the host's processes and kernel settings" },
	{ "/root", 1, "root's home directory" },
	{ "/run/secrets", 1, "mounted secrets" },
	{ "/sys", 1, "kernel and device settings" },
	{ "/var/lib/containerd", 1, "containerd's state" },
	{ "/var/lib/containers", 1, "podman and CRI-O images and container state" },
	{ "/var/lib/docker", 1, "Docker's images, volumes and container state" },
	{ "/var/lib/kubelet", 1, "kubelet state and pod secrets" },
};

/* What canon exposes, in words, or NULL.  A parent of a sensitive path
 * exposes it (/var holds /var/lib/docker): the answer then names it.  The
 * text lives in buf. */
static const char *sensitive_words(const char *canon, char *buf, size_t cap)
{
	size_t i;

	for (i = 0; i < sizeof(sensitive) / sizeof(sensitive[0]); i++)
		if (strcmp(canon, sensitive[i].path) == 0 ||
		    (sensitive[i].below && at_or_above(sensitive[i].path, canon))) {
			snprintf(buf, cap, "%s", sensitive[i].what);
			return buf;
		}
	for (i = 0; i < sizeof(sensitive) / sizeof(sensitive[0]); i++)
		if (strcmp(canon, "/") != 0 && at_or_above(canon, sensitive[i].path)) {
			snprintf(buf, cap, "it holds %s (%s)", sensitive[i].path, sensitive[i].what);
			return buf;
		}
	return NULL;
}

static const char *sensitive_match(const char *canon)
{
	char buf[256];

	return sensitive_words(canon, buf, sizeof(buf)) != NULL ? canon : NULL;
}

/* Container runtime API sockets (canonical, so under /run), and socket
 * file names that give one away wherever it sits. */
static const char *const runtime_sockets[] = {
	"/run/docker.sock",
	"/run/docker",
	"/run/containerd/containerd.sock",
	"/run/crio/crio.sock",
	"/run/podman/podman.sock",
	"/run/cri-dockerd.sock",
	"/run/k3s/containerd/containerd.sock",
	"/run/buildkit/buildkitd.sock",
	"/run/user", /* rootless docker and podman: /run/user/UID/{docker,podman/podman}.sock */
};
/* Directories of runtimes: everything in them (the API socket, its ttrpc
 * twin, shim sockets) is control of the runtime, so a path inside counts
 * as well as one above. */
static const char *const runtime_dirs[] = { "/run/containerd", "/run/docker", "/run/crio", "/run/podman",
					    "/run/buildkit", "/run/k3s/containerd" };
static const char *const socket_names[] = { "docker.sock",  "containerd.sock",    "crio.sock",
					    "podman.sock",  "cri-dockerd.sock",   "buildkitd.sock",
					    "dockershim.sock" };

static const char *socket_match(const char *canon)
{
	const char *base = strrchr(canon, '/');
	size_t i;

	if (strcmp(canon, "/") == 0)
		return NULL; /* the sensitive-mount rule says it */
	base = base ? base + 1 : canon;
	for (i = 0; i < sizeof(socket_names) / sizeof(socket_names[0]); i++)
		if (strcmp(base, socket_names[i]) == 0)
			return canon;
	for (i = 0; i < sizeof(runtime_sockets) / sizeof(runtime_sockets[0]); i++)
		if (at_or_above(canon, runtime_sockets[i]))
			return runtime_sockets[i];
	for (i = 0; i < sizeof(runtime_dirs) / sizeof(runtime_dirs[0]); i++)
		if (at_or_above(runtime_dirs[i], canon))
			return canon;
	/* /run/user/UID holds a rootless docker.sock and podman/podman.sock. */
	if (strncmp(canon, "/run/user/", 10) == 0 && canon[10] != '\0' && strchr(canon + 10, '/') == NULL)
		return "/run/user/UID/docker.sock";
	return NULL;
}

/* Each mount of the descriptor's list, by its YAML node.  Mounts that are
 * not listed (the default root) are safe by construction. */
struct mount_view {
	const struct ynode *node, *source, *target, *rw;
	int tmpfs;
};

static size_t mounts_list(struct lint_ctx *c, struct mount_view *out, size_t cap)
{
	const struct ynode *seq = lint_get(c->app_doc.root, "execution.executor.mounts");
	size_t i, n = 0;

	if (seq == NULL || seq->kind != YN_SEQ)
		return 0;
	for (i = 0; i < seq->n && n < cap; i++) {
		const struct ynode *m = seq->vals[i], *t;

		if (m->kind != YN_MAP)
			continue;
		out[n].node = m;
		out[n].source = ymap_get(m, "source");
		out[n].target = ymap_get(m, "target");
		out[n].rw = ymap_get(m, "rw");
		t = ymap_get(m, "type");
		out[n].tmpfs = t != NULL && t->kind == YN_SCALAR && strcmp(t->str, "tmpfs") == 0;
		n++;
	}
	return n;
}

#define MAX_VIEW (COMPILE_MAX_LIST + 1)

static const char *target_of(const struct mount_view *m)
{
	return m->target != NULL && m->target->kind == YN_SCALAR ? m->target->str : "?";
}

void rule_mount_writable(struct lint_ctx *c, const struct lint_rule *r)
{
	struct mount_view v[MAX_VIEW];
	size_t i, n = mounts_list(c, v, MAX_VIEW);
	char subject[CANON_MAX + 16];

	for (i = 0; i < n; i++) {
		if (v[i].tmpfs || v[i].rw == NULL || v[i].rw->kind != YN_SCALAR || strcmp(v[i].rw->str, "true") != 0)
			continue;
		snprintf(subject, sizeof(subject), "mount:%s", target_of(&v[i]));
		lint_report(c, r, c->app, v[i].rw, subject, "host path %s is mounted writable at %s",
			    v[i].source && v[i].source->kind == YN_SCALAR ? v[i].source->str : "?", target_of(&v[i]));
	}
}

/* Judge one source path in both canonical forms; match() names what it
 * found, *which the form it was found in. */
static const char *judge(const char *src, const char *(*match)(const char *), char *canon, char *real,
			 const char **which)
{
	char buf[PATH_MAX];
	const char *what;

	real[0] = '\0';
	if (canon_text(src, canon, CANON_MAX) != 0)
		return NULL;
	*which = canon;
	if ((what = match(canon)) != NULL)
		return what;
	if (realpath(src, buf) != NULL && canon_text(buf, real, CANON_MAX) == 0 && strcmp(real, canon) != 0) {
		*which = real;
		return match(real);
	}
	return NULL;
}

void rule_mount_sensitive(struct lint_ctx *c, const struct lint_rule *r)
{
	struct mount_view v[MAX_VIEW];
	size_t i, n = mounts_list(c, v, MAX_VIEW);
	char canon[CANON_MAX], real[CANON_MAX], subject[CANON_MAX + 16], words[256];
	const char *what, *which = NULL;

	for (i = 0; i < n; i++) {
		if (v[i].tmpfs || v[i].source == NULL || v[i].source->kind != YN_SCALAR)
			continue;
		if (judge(v[i].source->str, sensitive_match, canon, real, &which) == NULL ||
		    (what = sensitive_words(which, words, sizeof(words))) == NULL)
			continue;
		snprintf(subject, sizeof(subject), "mount:%s", canon);
		if (which == real)
			lint_report(c, r, c->app, v[i].source, subject,
				    "the executor sees host path %s (%s on this host): %s", v[i].source->str, real, what);
		else
			lint_report(c, r, c->app, v[i].source, subject, "the executor sees host path %s: %s",
				    v[i].source->str, what);
	}
}

void rule_mount_runtime_socket(struct lint_ctx *c, const struct lint_rule *r)
{
	struct mount_view v[MAX_VIEW];
	size_t i, n = mounts_list(c, v, MAX_VIEW);
	char canon[CANON_MAX], real[CANON_MAX], subject[CANON_MAX + 16];
	const char *what, *which = NULL;

	for (i = 0; i < n; i++) {
		if (v[i].tmpfs || v[i].source == NULL || v[i].source->kind != YN_SCALAR)
			continue;
		what = judge(v[i].source->str, socket_match, canon, real, &which);
		if (what == NULL)
			continue;
		snprintf(subject, sizeof(subject), "socket:%s", canon);
		if (strcmp(what, which) == 0)
			lint_report(c, r, c->app, v[i].source, subject,
				    "host path %s%s%s%s is a container runtime socket: root on the host", v[i].source->str,
				    which == real ? " (" : "", which == real ? real : "", which == real ? " on this host)" : "");
		else
			lint_report(c, r, c->app, v[i].source, subject,
				    "host path %s%s%s%s exposes the container runtime socket %s: root on the host",
				    v[i].source->str, which == real ? " (" : "", which == real ? real : "",
				    which == real ? " on this host)" : "", what);
	}
}
