/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger_id.c - the identity file beside a ledger (ledger_id.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "runtime/ledger/ledger_id.h"

#define LEDGER_ID_MAGIC "cordon-ledger-id 1\n"
/* The whole file: magic, "id " + hex, "schema " + at most 10 digits. */
#define LEDGER_ID_MAX 96

void ledger_errf(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || n == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
}

int ledger_id_ok(const char *s)
{
	size_t i;

	for (i = 0; i < LEDGER_ID_HEX; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[LEDGER_ID_HEX] == '\0';
}

int ledger_id_new(struct ledger_id *id, int schema, char *err, size_t n)
{
	unsigned char raw[LEDGER_ID_HEX / 2];

	/* Idempotent and thread-safe; main() has called it already, a unit
	 * test may not have. */
	if (sodium_init() < 0) {
		ledger_errf(err, n, "ledger: libsodium failed to initialise");
		return -1;
	}
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(id->hex, sizeof(id->hex), raw, sizeof(raw));
	id->schema = schema;
	return 0;
}

/* The file's text; the reader below takes exactly this. */
static int id_format(const struct ledger_id *id, char *buf, size_t n)
{
	int w = snprintf(buf, n, LEDGER_ID_MAGIC "id %s\nschema %d\n", id->hex, id->schema);

	return w > 0 && (size_t)w < n ? w : -1;
}

static int id_parse(const char *text, struct ledger_id *id)
{
	const char *p = text;
	char *end;
	long v;

	if (strncmp(p, LEDGER_ID_MAGIC, strlen(LEDGER_ID_MAGIC)) != 0)
		return -1;
	p += strlen(LEDGER_ID_MAGIC);
	if (strncmp(p, "id ", 3) != 0 || strlen(p) < 3 + LEDGER_ID_HEX + 1 || p[3 + LEDGER_ID_HEX] != '\n')
		return -1;
	memcpy(id->hex, p + 3, LEDGER_ID_HEX);
	id->hex[LEDGER_ID_HEX] = '\0';
	if (!ledger_id_ok(id->hex))
		return -1;
	p += 3 + LEDGER_ID_HEX + 1;
	if (strncmp(p, "schema ", 7) != 0 || p[7] < '1' || p[7] > '9')
		return -1;
	errno = 0;
	v = strtol(p + 7, &end, 10);
	if (errno != 0 || v > 1000000 || strcmp(end, "\n") != 0)
		return -1;
	id->schema = (int)v;
	return 0;
}

int ledger_id_write(int dfd, const char *dir, const struct ledger_id *id, char *err, size_t n)
{
	char text[LEDGER_ID_MAX + 1], tmp[64], sfx[17];
	unsigned char raw[8];
	const char *step = "create";
	ssize_t w;
	int fd = -1, rc = -1, len;

	len = id_format(id, text, sizeof(text));
	if (len < 0) {
		ledger_errf(err, n, "ledger: the identity does not fit its file");
		return -1;
	}
	/* A random name: threads of one supervisor (cordon serve) may open
	 * a fresh state directory at once, so the pid alone is not unique. */
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(sfx, sizeof(sfx), raw, sizeof(raw));
	snprintf(tmp, sizeof(tmp), "%s.%s.tmp", LEDGER_ID_FILE, sfx);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		goto fail;
	step = "write";
	do
		w = write(fd, text, (size_t)len);
	while (w < 0 && errno == EINTR);
	if (w != len) {
		if (w >= 0)
			errno = ENOSPC;
		goto fail;
	}
	step = "fsync";
	if (fsync(fd) != 0)
		goto fail;
	/* link() never replaces: the first writer's file stays. */
	step = "link";
	if (linkat(dfd, tmp, dfd, LEDGER_ID_FILE, 0) != 0) {
		if (errno != EEXIST)
			goto fail;
		rc = 1;
	} else {
		rc = 0;
	}
	/* The name must survive a power loss as surely as the database's
	 * commit of the same id did. */
	step = "fsync the directory";
	if (rc == 0 && fsync(dfd) != 0) {
		rc = -1;
		goto fail;
	}
	goto out;
fail:
	ledger_errf(err, n, "ledger: writing %s/%s (%s): %s", dir, LEDGER_ID_FILE, step, strerror(errno));
out:
	if (fd >= 0) {
		close(fd);
		unlinkat(dfd, tmp, 0);
	}
	return rc;
}

int ledger_id_read(int dfd, const char *dir, struct ledger_id *id, char *err, size_t n)
{
	char text[LEDGER_ID_MAX + 2];
	struct stat st;
	size_t len = 0;
	ssize_t got;
	int fd, rc = -1;

	fd = openat(dfd, LEDGER_ID_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ELOOP)
			ledger_errf(err, n, "ledger: %s/%s is a symbolic link; refusing it", dir, LEDGER_ID_FILE);
		else
			ledger_errf(err, n, "ledger: cannot open %s/%s: %s", dir, LEDGER_ID_FILE, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		ledger_errf(err, n, "ledger: cannot stat %s/%s: %s", dir, LEDGER_ID_FILE, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
		ledger_errf(err, n, "ledger: %s/%s must be a regular file of uid %u that nobody else may write", dir,
			LEDGER_ID_FILE, (unsigned)geteuid());
		goto out;
	}
	while (len < sizeof(text) - 1) {
		got = read(fd, text + len, sizeof(text) - 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ledger_errf(err, n, "ledger: cannot read %s/%s: %s", dir, LEDGER_ID_FILE, strerror(errno));
			goto out;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	text[len] = '\0';
	if (len > LEDGER_ID_MAX || strlen(text) != len || id_parse(text, id) != 0) {
		ledger_errf(err, n,
			"ledger: %s/%s is not a ledger identity (\"cordon-ledger-id 1\", \"id <32 hex digits>\", "
			"\"schema N\"); restore it from the backup of this state directory",
			dir, LEDGER_ID_FILE);
		goto out;
	}
	rc = 1;
out:
	close(fd);
	return rc;
}
