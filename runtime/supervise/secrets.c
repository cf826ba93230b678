/* SPDX-License-Identifier: Apache-2.0 */
/*
 * secrets.c - the values of a tool's env_from names (docs/tool-exec.md).
 *
 * The secrets file is read once, whole, into one buffer; names and values
 * are cut in place, so wiping that buffer wipes every value.  No message
 * ever quotes a line of the file or a value: a malformed line may be half
 * of a secret.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/supervise/secrets.h"

/* A secrets file holds tokens and passwords, not data: anything larger is
 * the wrong file. */
#define SECRETS_MAX_BYTES (1u << 20)
#define SECRETS_MAX_NAME 255

static const char tool_env_fixed[][40] = {
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"LANG=C.UTF-8",
};

struct secret {
	const char *name; /* into secrets.buf */
	const char *value;
	unsigned line;
};

struct secrets {
	char *buf; /* the file, size + 1 bytes; wiped before it is freed */
	size_t size;
	struct secret *v; /* sorted by name */
	size_t n;
};

/* An environment name as the shell takes it: [A-Za-z_][A-Za-z0-9_]*. */
static int secrets_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > SECRETS_MAX_NAME || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return 0;
	}
	return 1;
}

static int secret_cmp(const void *a, const void *b)
{
	const struct secret *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c != 0 ? c : (x->line > y->line) - (x->line < y->line);
}

/* The file's owner and mode, before a byte is read: a file others can
 * read has leaked already, and one others can write could swap a token
 * for theirs. */
static int secrets_check_file(const char *path, const struct stat *st, char *err, size_t n)
{
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, n, "secrets file %s is not a regular file", path);
		return -1;
	}
	if (st->st_uid != geteuid()) {
		snprintf(err, n, "secrets file %s is owned by uid %u, not by the user running cordon (uid %u)", path,
			 (unsigned)st->st_uid, (unsigned)geteuid());
		return -1;
	}
	if (st->st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH)) {
		snprintf(err, n, "secrets file %s is readable or writable by group or others (mode %04o); chmod 600 it",
			 path, (unsigned)(st->st_mode & 07777));
		return -1;
	}
	if (st->st_size > (off_t)SECRETS_MAX_BYTES) {
		snprintf(err, n, "secrets file %s is %jd bytes, over the %u-byte limit", path, (intmax_t)st->st_size,
			 SECRETS_MAX_BYTES);
		return -1;
	}
	return 0;
}

/* Reads the whole file into s->buf, NUL-terminated. */
static int secrets_read(int fd, const char *path, size_t size, struct secrets *s, char *err, size_t n)
{
	size_t got = 0, cap = size + 1; /* one more to see a file that grew */

	if ((s->buf = malloc(cap + 1)) == NULL) {
		snprintf(err, n, "out of memory reading secrets file %s", path);
		return -1;
	}
	while (got < cap) {
		ssize_t r = read(fd, s->buf + got, cap - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, n, "reading secrets file %s: %s", path, strerror(errno));
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	s->size = got;
	s->buf[got] = '\0';
	if (got != size) {
		snprintf(err, n, "secrets file %s changed while it was read", path);
		return -1;
	}
	return 0;
}

/* One line, [p, end).  Returns 1 for an entry (cut in place into e),
 * 0 for a blank or comment line, -1 with err. */
static int secrets_parse_line(char *p, char *end, const char *path, unsigned line, struct secret *e, char *err,
			      size_t n)
{
	char *q = p, *eq;

	if (memchr(p, '\0', (size_t)(end - p)) != NULL) {
		snprintf(err, n, "%s:%u: a NUL byte in the line", path, line);
		return -1;
	}
	if (memchr(p, '\r', (size_t)(end - p)) != NULL) {
		snprintf(err, n, "%s:%u: a carriage return in the line (CRLF line endings?); values are taken verbatim",
			 path, line);
		return -1;
	}
	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	if (q == end || *q == '#')
		return 0;
	eq = memchr(p, '=', (size_t)(end - p));
	if (eq == NULL || !secrets_name_ok(p, (size_t)(eq - p))) {
		snprintf(err, n,
			 "%s:%u: expected NAME=value (NAME of letters, digits and '_', not starting with a digit, "
			 "at most %u, '=' right after it)",
			 path, line, SECRETS_MAX_NAME);
		return -1;
	}
	*eq = '\0';
	*end = '\0';
	e->name = p;
	e->value = eq + 1;
	e->line = line;
	return 1;
}

static int secrets_parse(struct secrets *s, const char *path, char *err, size_t n)
{
	char *p = s->buf, *end = s->buf + s->size;
	size_t lines = 1, dup = 0;
	unsigned line = 1;

	for (size_t i = 0; i < s->size; i++)
		lines += s->buf[i] == '\n';
	if ((s->v = calloc(lines, sizeof(*s->v))) == NULL) {
		snprintf(err, n, "out of memory reading secrets file %s", path);
		return -1;
	}
	for (; p < end; line++) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl != NULL ? nl : end;
		int rc = secrets_parse_line(p, le, path, line, &s->v[s->n], err, n);

		if (rc < 0)
			return -1;
		s->n += (size_t)rc;
		p = le + 1;
	}
	/* Sorted, a repeat sits next to its first; of all repeats the one
	 * nearest the top of the file is named. */
	qsort(s->v, s->n, sizeof(*s->v), secret_cmp);
	for (size_t i = 1; i < s->n; i++)
		if (strcmp(s->v[i - 1].name, s->v[i].name) == 0 && (dup == 0 || s->v[i].line < s->v[dup].line))
			dup = i;
	if (dup != 0) {
		snprintf(err, n, "%s:%u: %s is set again (first on line %u)", path, s->v[dup].line, s->v[dup].name,
			 s->v[dup - 1].line);
		return -1;
	}
	return 0;
}

int secrets_parse_text(const char *text, size_t len, const char *name, struct secrets **out, char *err, size_t n)
{
	struct secrets *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (len > SECRETS_MAX_BYTES) {
		snprintf(err, n, "%s: over %u bytes", name, SECRETS_MAX_BYTES);
		secrets_free(s);
		return -1;
	}
	if (s == NULL || (s->buf = malloc(len + 1)) == NULL) {
		snprintf(err, n, "out of memory");
		secrets_free(s);
		return -1;
	}
	memcpy(s->buf, text, len);
	s->buf[len] = '\0';
	s->size = len;
	if (secrets_parse(s, name, err, n) != 0) {
		secrets_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

int secrets_load(const char *path, struct secrets **out, char *err, size_t n)
{
	struct secrets *s = NULL;
	struct stat st;
	int fd = -1, rc = -1;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, n, "out of memory");
		goto out;
	}
	if (path == NULL) {
		rc = 0;
		goto out;
	}
	/* O_NONBLOCK: a fifo in its place must not hang the supervisor
	 * before fstat says it is not a regular file. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ELOOP)
			snprintf(err, n, "secrets file %s is a symbolic link; links are never followed", path);
		else
			snprintf(err, n, "cannot open secrets file %s: %s", path, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(err, n, "fstat secrets file %s: %s", path, strerror(errno));
		goto out;
	}
	if (secrets_check_file(path, &st, err, n) != 0 || secrets_read(fd, path, (size_t)st.st_size, s, err, n) != 0 ||
	    secrets_parse(s, path, err, n) != 0)
		goto out;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc == 0) {
		*out = s;
		s = NULL;
	}
	secrets_free(s);
	return rc;
}

void secrets_free(struct secrets *s)
{
	if (s == NULL)
		return;
	if (s->buf != NULL)
		explicit_bzero(s->buf, s->size + 1);
	free(s->buf);
	free(s->v);
	free(s);
}

const char *secrets_get(const struct secrets *s, const char *name)
{
	struct secret key = { .name = name, .line = 0 };
	const struct secret *hit = NULL;
	size_t lo = 0, hi;

	if (name == NULL)
		return NULL;
	/* A lower bound, not bsearch: the comparison also orders by line,
	 * and any entry of the name will do (there is at most one). */
	for (hi = s != NULL ? s->n : 0; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (secret_cmp(&s->v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (s != NULL && lo < s->n && strcmp(s->v[lo].name, name) == 0)
		hit = &s->v[lo];
	return hit != NULL ? hit->value : getenv(name);
}

int secrets_check_tools(const struct cpol_policy *p, const uint32_t *sel, uint32_t nsel, const struct secrets *s,
			char *err, size_t n)
{
	for (uint32_t i = 0; i < nsel; i++) {
		const struct cpol_tool *t = &p->tools[sel[i]];

		for (uint32_t k = 0; k < t->env_from.n; k++)
			if (secrets_get(s, t->env_from.v[k]) == NULL) {
				snprintf(err, n,
					 "tool %s needs the secret %s, which neither --secrets FILE nor the "
					 "environment sets",
					 t->id, t->env_from.v[k]);
				return -1;
			}
	}
	return 0;
}

/* Whether the name of "NAME=..." is taken by one of env[0..k). */
static int tool_env_has(char *const *env, size_t k, const char *name, size_t len)
{
	for (size_t i = 0; i < k; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return 1;
	return 0;
}

/* "NAME=value" in one allocation. */
static char *tool_env_entry(const char *name, size_t nlen, const char *value)
{
	size_t vlen = strlen(value);
	char *e = malloc(nlen + vlen + 2);

	if (e == NULL)
		return NULL;
	memcpy(e, name, nlen);
	e[nlen] = '=';
	memcpy(e + nlen + 1, value, vlen + 1);
	return e;
}

int tool_env_build(const struct cpol_tool *t, const struct secrets *s, const char *const *extra, char ***envp,
		   char *err, size_t n)
{
	const size_t nfixed = sizeof(tool_env_fixed) / sizeof(tool_env_fixed[0]);
	size_t next = 0, k = 0;
	char **env = NULL;
	int rc = -1;

	*envp = NULL;
	while (extra != NULL && extra[next] != NULL)
		next++;
	if ((env = calloc(nfixed + next + t->env_from.n + 1, sizeof(*env))) == NULL)
		goto oom;
	for (size_t i = 0; i < nfixed; i++)
		if ((env[k++] = strdup(tool_env_fixed[i])) == NULL)
			goto oom;
	/* Each name once: with two entries of one name, which one a program
	 * sees depends on how it reads its environment. */
	for (size_t i = 0; i < next; i++) {
		const char *eq = strchr(extra[i], '=');
		size_t len = eq != NULL ? (size_t)(eq - extra[i]) : 0;

		if (eq == NULL || !secrets_name_ok(extra[i], len)) {
			snprintf(err, n, "extra environment entry %zu is not NAME=value", i);
			goto out;
		}
		if (tool_env_has(env, k, extra[i], len)) {
			snprintf(err, n, "environment name %.*s is given twice", (int)len, extra[i]);
			goto out;
		}
		if ((env[k++] = strdup(extra[i])) == NULL)
			goto oom;
	}
	for (uint32_t i = 0; i < t->env_from.n; i++) {
		const char *name = t->env_from.v[i], *value;
		size_t len = strlen(name);

		if (!secrets_name_ok(name, len)) {
			snprintf(err, n, "tool %s: env_from entry %u is not a valid environment name", t->id, i);
			goto out;
		}
		if (tool_env_has(env, k, name, len)) {
			snprintf(err, n, "tool %s: env_from name %s is already set in the tool's environment", t->id,
				 name);
			goto out;
		}
		if ((value = secrets_get(s, name)) == NULL) {
			snprintf(err, n, "secret %s is not set", name);
			goto out;
		}
		if ((env[k++] = tool_env_entry(name, len, value)) == NULL)
			goto oom;
	}
	*envp = env;
	env = NULL;
	rc = 0;
	goto out;
oom:
	snprintf(err, n, "out of memory building the environment of tool %s", t->id);
out:
	tool_env_free(env);
	return rc;
}

void tool_env_free(char **envp)
{
	if (envp == NULL)
		return;
	for (char **e = envp; *e != NULL; e++) {
		explicit_bzero(*e, strlen(*e));
		free(*e);
	}
	free(envp);
}

/* A growing output of secrets_scrub(). */
struct scrub_buf {
	char *p;
	size_t len, cap;
};

static int scrub_put(struct scrub_buf *b, const char *s, size_t k)
{
	if (k > SIZE_MAX - b->len - 1)
		return -1;
	if (b->len + k + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *q;

		while (cap < b->len + k + 1)
			cap = cap > SIZE_MAX / 2 ? b->len + k + 1 : cap * 2;
		if ((q = realloc(b->p, cap)) == NULL)
			return -1;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, k);
	b->len += k;
	b->p[b->len] = '\0';
	return 0;
}

/* One value to look for: the name it is shown by. */
struct scrub_value {
	const char *name, *value;
	size_t len;
};

int secrets_scrub(const struct cpol_tool *t, const struct secrets *s, const char *in, size_t len, int head_cut,
		  size_t limit, char **out, size_t *out_len, size_t *cut)
{
	struct scrub_buf b = { NULL, 0, 0 };
	struct scrub_value *v = NULL;
	size_t nv = 0, longest = 0, i = 0;
	int rc = -1;

	*out = NULL;
	*out_len = 0;
	if (cut != NULL)
		*cut = 0;
	if (t->env_from.n != 0 && (v = calloc(t->env_from.n, sizeof(*v))) == NULL)
		goto out;
	for (uint32_t k = 0; k < t->env_from.n; k++) {
		const char *val = secrets_get(s, t->env_from.v[k]);

		if (val == NULL || val[0] == '\0')
			continue;
		v[nv] = (struct scrub_value){ t->env_from.v[k], val, strlen(val) };
		if (v[nv].len > longest)
			longest = v[nv].len;
		nv++;
	}
	/* Whatever began before in and ends within its first longest - 1
	 * bytes may be the end of a value: it goes, unread. */
	if (head_cut && longest > 1) {
		i = longest - 1 < len ? longest - 1 : len;
		if (cut != NULL)
			*cut = i;
	}
	if (scrub_put(&b, "", 0) != 0)
		goto out;
	while (i < len && b.len < limit) {
		const struct scrub_value *hit = NULL;
		size_t run;

		for (size_t k = 0; k < nv; k++)
			if ((hit == NULL || v[k].len > hit->len) && v[k].len <= len - i &&
			    memcmp(in + i, v[k].value, v[k].len) == 0)
				hit = &v[k];
		if (hit != NULL) {
			if (scrub_put(&b, "[secret ", 8) != 0 || scrub_put(&b, hit->name, strlen(hit->name)) != 0 ||
			    scrub_put(&b, "]", 1) != 0)
				goto out;
			i += hit->len;
			continue;
		}
		/* The bytes up to the next place a value could start go in one
		 * copy. */
		for (run = 1; i + run < len && b.len + run < limit; run++) {
			size_t k = 0;

			while (k < nv && v[k].value[0] != in[i + run])
				k++;
			if (k < nv)
				break;
		}
		if (scrub_put(&b, in + i, run) != 0)
			goto out;
		i += run;
	}
	*out = b.p;
	*out_len = b.len;
	b.p = NULL;
	rc = 0;
out:
	free(v);
	free(b.p);
	return rc;
}
