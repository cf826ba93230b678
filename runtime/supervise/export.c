/* SPDX-License-Identifier: Apache-2.0 */
/*
 * export.c - `cordon run --out DIR`: copy the declared artifacts out of
 * out/ (export.h).
 *
 * An artifact's path comes from the outputs walk (outputs.c), which only
 * reports names it walked itself, UTF-8 without control characters; it is
 * still taken apart here and each component refused if empty, "." or
 * "..", because this code must not depend on that.  Both trees are walked
 * one component at a time from a directory fd, so no path string is ever
 * resolved by the kernel in one go.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "runtime/supervise/export.h"
#include "runtime/supervise/outputs.h"

#define EXPORT_CHUNK 65536

int export_open(const char *dir, struct export_dest *d, char *err, size_t n)
{
	bool made = false;

	d->fd = -1;
	d->path[0] = '\0';
	if (mkdir(dir, 0700) == 0)
		made = true;
	else if (errno != EEXIST) {
		snprintf(err, n, "--out %s: %s", dir, strerror(errno));
		return -1;
	}
	d->fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->fd < 0) {
		snprintf(err, n, "--out %s: %s", dir,
			 errno == ELOOP || errno == ENOTDIR ? "not a directory (a link to one is refused too)"
							    : strerror(errno));
		return -1;
	}
	/* The umask may have taken bits from 0700; a directory we made is
	 * exactly 0700, one that existed keeps the caller's mode. */
	if ((made && fchmod(d->fd, 0700) != 0) || realpath(dir, d->path) == NULL) {
		snprintf(err, n, "--out %s: %s", dir, strerror(errno));
		close(d->fd);
		d->fd = -1;
		return -1;
	}
	return 0;
}

static bool exp_component_ok(const char *c)
{
	return c[0] != '\0' && strcmp(c, ".") != 0 && strcmp(c, "..") != 0;
}

/* Step *src and *dst (owned, replaced) into the directory name on each
 * side; DIR's is made 0700 when missing.  0, or -1 with why. */
static int exp_step(int *src, int *dst, const char *name, bool *use_openat2, char *why, size_t n)
{
	int s = -1, d = -1;

	s = outputs_open_entry(*src, name, O_RDONLY | O_DIRECTORY, use_openat2);
	if (s < 0) {
		snprintf(why, n, "out/ %s: %s", name, strerror(errno));
		return -1;
	}
	if (mkdirat(*dst, name, 0700) != 0 && errno != EEXIST) {
		snprintf(why, n, "cannot make directory %s: %s", name, strerror(errno));
		close(s);
		return -1;
	}
	d = openat(*dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0) {
		snprintf(why, n, "%s exists and is not a directory (a link is never followed)", name);
		close(s);
		return -1;
	}
	close(*src);
	close(*dst);
	*src = s;
	*dst = d;
	return 0;
}

/* Copy src to dst, hashing what was read; at most want + 1 bytes are read,
 * so a file that grew is seen without reading all of it.  0 when the
 * bytes and the hash are the result's, -1 with why. */
static int exp_stream(int src, int dst, uint64_t want, const char *hex_want, char *why, size_t n)
{
	crypto_hash_sha256_state h;
	unsigned char buf[EXPORT_CHUNK], digest[crypto_hash_sha256_BYTES];
	char hex[sizeof(digest) * 2 + 1];
	uint64_t total = 0;

	crypto_hash_sha256_init(&h);
	while (total <= want) {
		size_t ask = want + 1 - total < sizeof(buf) ? (size_t)(want + 1 - total) : sizeof(buf);
		ssize_t r = read(src, buf, ask), w = 0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(why, n, "reading it: %s", strerror(errno));
			return -1;
		}
		if (r == 0)
			break;
		crypto_hash_sha256_update(&h, buf, (unsigned long long)r);
		total += (uint64_t)r;
		for (ssize_t k; w < r; w += k) {
			k = write(dst, buf + w, (size_t)(r - w));
			if (k < 0 && errno == EINTR)
				k = 0;
			else if (k <= 0) {
				snprintf(why, n, "writing the copy: %s", k < 0 ? strerror(errno) : "no progress");
				return -1;
			}
		}
	}
	crypto_hash_sha256_final(&h, digest);
	sodium_bin2hex(hex, sizeof(hex), digest, sizeof(digest));
	if (total != want || strcmp(hex, hex_want) != 0) {
		snprintf(why, n, "its bytes are not the ones the result reports (%llu bytes, sha256 %s)",
			 (unsigned long long)total, hex);
		return -1;
	}
	return 0;
}

/* One artifact: rel is a writable copy of its path.  0, or -1 with why. */
static int exp_one(int out_dirfd, const struct export_dest *d, char *rel, uint64_t bytes, const char *sha,
		   char *why, size_t n)
{
	bool use_openat2 = true, created = false;
	char *base = rel, *slash;
	struct stat st;
	int src = -1, dst = -1, in = -1, out = -1, rc = -1;

	src = outputs_open_entry(out_dirfd, ".", O_RDONLY | O_DIRECTORY, &use_openat2);
	dst = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (src < 0 || dst < 0) {
		snprintf(why, n, "opening out/ or the destination: %s", strerror(errno));
		goto out;
	}
	for (; (slash = strchr(base, '/')) != NULL; base = slash + 1) {
		*slash = '\0';
		if (!exp_component_ok(base)) {
			snprintf(why, n, "a path component is empty, . or ..");
			goto out;
		}
		if (exp_step(&src, &dst, base, &use_openat2, why, n) != 0)
			goto out;
	}
	if (!exp_component_ok(base)) {
		snprintf(why, n, "a path component is empty, . or ..");
		goto out;
	}
	/* O_NONBLOCK: a name that became a fifo opens at once and is
	 * refused by its type below. */
	in = outputs_open_entry(src, base, O_RDONLY | O_NONBLOCK, &use_openat2);
	if (in < 0 || fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, n, "it is no longer a regular file in out/%s%s", in < 0 ? ": " : "",
			 in < 0 ? strerror(errno) : "");
		goto out;
	}
	out = openat(dst, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	if (out < 0) {
		snprintf(why, n, "%s", errno == EEXIST ? "a file of that name exists in the destination; it was not replaced"
						      : strerror(errno));
		goto out;
	}
	created = true;
	if (exp_stream(in, out, bytes, sha, why, n) != 0)
		goto out;
	if (close(out) != 0) {
		out = -1;
		snprintf(why, n, "writing the copy: %s", strerror(errno));
		goto out;
	}
	out = -1;
	rc = 0;
out:
	if (out >= 0)
		close(out);
	/* No half copy, and no copy of other bytes than the result's. */
	if (rc != 0 && created)
		unlinkat(dst, base, 0);
	for (int *fd = (int[]){ src, dst, in, -2 }; *fd != -2; fd++)
		if (*fd >= 0)
			close(*fd);
	return rc;
}

int export_copy(int out_dirfd, cJSON *arts, const struct export_dest *d, char *err, size_t n)
{
	cJSON *a;
	int rc = 0;

	cJSON_ArrayForEach(a, arts) {
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(a, "path");
		const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(a, "bytes");
		const cJSON *sha = cJSON_GetObjectItemCaseSensitive(a, "sha256");
		char why[512] = "", *rel = NULL, *to = NULL;
		int ok = -1;

		if (!cJSON_IsString(path) || !cJSON_IsNumber(bytes) || bytes->valuedouble < 0 || !cJSON_IsString(sha))
			snprintf(why, sizeof(why), "the result's entry is incomplete");
		else if ((rel = strdup(path->valuestring)) == NULL ||
			 asprintf(&to, "%s/%s", d->path, path->valuestring) < 0) {
			to = NULL;
			snprintf(why, sizeof(why), "out of memory");
		} else
			ok = exp_one(out_dirfd, d, rel, (uint64_t)bytes->valuedouble, sha->valuestring, why,
				     sizeof(why));
		if (ok == 0 ? cJSON_AddStringToObject(a, "copiedTo", to) == NULL
			    : cJSON_AddStringToObject(a, "copyError", why) == NULL)
			snprintf(why, sizeof(why), "out of memory"), ok = -1;
		if (ok != 0 && rc == 0) {
			snprintf(err, n, "artifact %.300s was not copied to %.300s: %s",
				 cJSON_IsString(path) ? path->valuestring : "?", d->path, why);
			rc = -1;
		}
		free(rel);
		free(to);
	}
	return rc;
}
