/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tokens.c - the TCP listener's bearer tokens (tokens.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "runtime/serve/engine.h"
#include "runtime/serve/tokens.h"

#define TOKENS_MAX_LINE 4096
#define TOKENS_APP_MAX 128

struct token {
	unsigned char digest[crypto_hash_sha256_BYTES];
	int all;
	const char **apps; /* each malloc'd */
	unsigned napps;
	unsigned line;
};

struct tokens {
	struct token *v;
	unsigned n;
};

static void token_clear(struct token *tk)
{
	for (unsigned i = 0; i < tk->napps; i++)
		free((void *)tk->apps[i]);
	free(tk->apps);
	sodium_memzero(tk, sizeof(*tk));
}

void tokens_free(struct tokens *t)
{
	if (t == NULL)
		return;
	for (unsigned i = 0; i < t->n; i++)
		token_clear(&t->v[i]);
	free(t->v);
	free(t);
}

unsigned tokens_count(const struct tokens *t)
{
	return t ? t->n : 0;
}

/* RFC 6750 b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" */
static int token_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
	       c == '_' || c == '~' || c == '+' || c == '/';
}

static int token_syntax_ok(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && token_char(s[i]))
		i++;
	if (i == 0)
		return 0;
	while (i < len && s[i] == '=')
		i++;
	return i == len;
}

static int app_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
	       c == '_';
}

/* The app list "a,b,c" of one line into tk; 0, or -1 with why. */
static int tokens_parse_apps(struct token *tk, const char *s, size_t len, char *why, size_t n)
{
	size_t start = 0;

	tk->apps = calloc(TOKENS_MAX_APPS, sizeof(*tk->apps));
	if (tk->apps == NULL) {
		snprintf(why, n, "out of memory");
		return -1;
	}
	while (start <= len) {
		size_t end = start;
		char *name;

		while (end < len && s[end] != ',')
			end++;
		if (end == start) {
			snprintf(why, n, "empty app name in the app list");
			return -1;
		}
		if (end - start > TOKENS_APP_MAX) {
			snprintf(why, n, "app name over %d characters", TOKENS_APP_MAX);
			return -1;
		}
		for (size_t i = start; i < end; i++)
			if (!app_char(s[i])) {
				snprintf(why, n, "app name '%.*s' has a character outside [A-Za-z0-9._-]",
					 (int)(end - start), s + start);
				return -1;
			}
		for (unsigned i = 0; i < tk->napps; i++)
			if (strlen(tk->apps[i]) == end - start && memcmp(tk->apps[i], s + start, end - start) == 0) {
				snprintf(why, n, "app '%s' listed twice", tk->apps[i]);
				return -1;
			}
		if (tk->napps == TOKENS_MAX_APPS) {
			snprintf(why, n, "more than %d apps", TOKENS_MAX_APPS);
			return -1;
		}
		name = strndup(s + start, end - start);
		if (name == NULL) {
			snprintf(why, n, "out of memory");
			return -1;
		}
		tk->apps[tk->napps++] = name;
		start = end + 1;
	}
	return 0;
}

/* One line, comment and blank already known not to be all of it:
 * "TOKEN" or "TOKEN apps". */
static int tokens_parse_line(struct tokens *t, const char *s, size_t len, unsigned line, char *why, size_t n)
{
	struct token tk = { .line = line };
	size_t tlen = 0, a = 0, alen = 0;
	int rc = -1;

	while (tlen < len && s[tlen] != ' ' && s[tlen] != '\t')
		tlen++;
	a = tlen;
	while (a < len && (s[a] == ' ' || s[a] == '\t'))
		a++;
	while (a + alen < len && s[a + alen] != ' ' && s[a + alen] != '\t')
		alen++;
	if (a + alen != len) {
		snprintf(why, n, "unexpected text after the app list (write apps as app1,app2 without spaces)");
		goto out;
	}
	if (!token_syntax_ok(s, tlen)) {
		snprintf(why, n, "the token has a character outside RFC 6750's b64token (A-Z a-z 0-9 - . _ ~ + / and trailing =)");
		goto out;
	}
	if (tlen < TOKENS_MIN_LEN || tlen > TOKENS_MAX_LEN) {
		snprintf(why, n, "the token is %zu characters; it must have %d to %d", tlen, TOKENS_MIN_LEN,
			 TOKENS_MAX_LEN);
		goto out;
	}
	if (t->n == TOKENS_MAX) {
		snprintf(why, n, "more than %d tokens", TOKENS_MAX);
		goto out;
	}
	crypto_hash_sha256(tk.digest, (const unsigned char *)s, tlen);
	for (unsigned i = 0; i < t->n; i++)
		if (sodium_memcmp(t->v[i].digest, tk.digest, sizeof(tk.digest)) == 0) {
			snprintf(why, n, "the same token as line %u", t->v[i].line);
			goto out;
		}
	if (alen == 0)
		tk.all = 1;
	else if (tokens_parse_apps(&tk, s + a, alen, why, n) != 0)
		goto out;
	t->v[t->n++] = tk;
	memset(&tk, 0, sizeof(tk)); /* t owns the apps now */
	rc = 0;
out:
	token_clear(&tk);
	return rc;
}

struct tokens *tokens_parse(const char *text, size_t len, const char *name, char *err, size_t n)
{
	struct tokens *t = NULL;
	char why[256] = "";
	unsigned line = 0;
	size_t pos = 0;

	if (sodium_init() < 0) {
		snprintf(err, n, "%s: libsodium failed to initialise", name);
		return NULL;
	}
	if (len > TOKENS_MAX_FILE) {
		snprintf(err, n, "%s: over %u bytes", name, TOKENS_MAX_FILE);
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL || (t->v = calloc(TOKENS_MAX, sizeof(*t->v))) == NULL) {
		snprintf(err, n, "%s: out of memory", name);
		goto fail;
	}
	while (pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - s) : len - pos, b = 0, e;

		pos += l + (nl != NULL);
		line++;
		if (l > TOKENS_MAX_LINE) {
			snprintf(err, n, "%s:%u: line over %d bytes", name, line, TOKENS_MAX_LINE);
			goto fail;
		}
		if (memchr(s, '\0', l) != NULL) {
			snprintf(err, n, "%s:%u: NUL byte", name, line);
			goto fail;
		}
		/* '#' is outside the token and app alphabets, so it starts a
		 * comment wherever it stands. */
		e = l;
		if (memchr(s, '#', l) != NULL)
			e = (size_t)((const char *)memchr(s, '#', l) - s);
		while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r'))
			e--;
		while (b < e && (s[b] == ' ' || s[b] == '\t'))
			b++;
		if (b == e)
			continue;
		if (tokens_parse_line(t, s + b, e - b, line, why, sizeof(why)) != 0) {
			snprintf(err, n, "%s:%u: %s", name, line, why);
			goto fail;
		}
	}
	if (t->n == 0) {
		snprintf(err, n, "%s: no token (a TCP listener needs at least one)", name);
		goto fail;
	}
	return t;
fail:
	tokens_free(t);
	return NULL;
}

struct tokens *tokens_load(const char *path, char *err, size_t n)
{
	struct tokens *t = NULL;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd = -1;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, n, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(err, n, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, n, "%s: not a regular file", path);
		goto out;
	}
	/* The tokens are the TCP listener's only access control: a file
	 * others may read (or rewrite) gives the service away. */
	if (st.st_mode & 0006) {
		snprintf(err, n, "%s: mode %04o lets others %s it; chmod o-rw %s", path, (unsigned)(st.st_mode & 07777),
			 st.st_mode & 0004 ? "read" : "write", path);
		goto out;
	}
	if ((uint64_t)st.st_size > TOKENS_MAX_FILE) {
		snprintf(err, n, "%s: over %u bytes", path, TOKENS_MAX_FILE);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		snprintf(err, n, "%s: out of memory", path);
		goto out;
	}
	while (len < (size_t)st.st_size + 1) {
		ssize_t r = read(fd, buf + len, (size_t)st.st_size + 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, n, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len > (size_t)st.st_size) {
		snprintf(err, n, "%s: grew while read", path);
		goto out;
	}
	t = tokens_parse(buf, len, path, err, n);
out:
	if (buf != NULL) {
		sodium_memzero(buf, (size_t)st.st_size + 1);
		free(buf);
	}
	if (fd >= 0)
		close(fd);
	return t;
}

int tokens_check(const struct tokens *t, const char *header, struct serve_scope *out)
{
	unsigned char digest[crypto_hash_sha256_BYTES];
	const char *tok;
	size_t len;
	long found = -1;

	if (t == NULL || header == NULL)
		return 0;
	while (*header == ' ' || *header == '\t')
		header++;
	if (strncasecmp(header, "Bearer", 6) != 0 || (header[6] != ' ' && header[6] != '\t'))
		return 0;
	tok = header + 6;
	while (*tok == ' ' || *tok == '\t')
		tok++;
	len = strlen(tok);
	while (len > 0 && (tok[len - 1] == ' ' || tok[len - 1] == '\t'))
		len--;
	if (len == 0 || len > TOKENS_MAX_LEN)
		return 0;
	crypto_hash_sha256(digest, (const unsigned char *)tok, len);
	/* Every digest is compared, whichever matches. */
	for (unsigned i = 0; i < t->n; i++)
		if (sodium_memcmp(t->v[i].digest, digest, sizeof(digest)) == 0 && found < 0)
			found = (long)i;
	sodium_memzero(digest, sizeof(digest));
	if (found < 0)
		return 0;
	out->all = t->v[found].all;
	out->apps = t->v[found].apps;
	out->napps = t->v[found].napps;
	out->token_index = (unsigned)found + 1;
	return 1;
}
