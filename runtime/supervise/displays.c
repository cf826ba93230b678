/* SPDX-License-Identifier: Apache-2.0 */
/*
 * displays.c - reduce: read and judge the program's MIME bundles.
 *
 * The directory is the program's: every open goes through
 * outputs_open_entry() (no link followed, one component at a time), the
 * type comes from fstatat(AT_SYMLINK_NOFOLLOW) before any open, and the
 * file is read by the same strict JSON reader as result.json.  Names are
 * sorted so the same directory gives the same array whatever the file
 * system's order.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "common/utf8.h"
#include "runtime/supervise/displays.h"
#include "runtime/supervise/outputs.h"

/* How a value of a known MIME type is judged. */
enum dsp_kind { DSP_TEXT, DSP_BASE64, DSP_JSON };

static const struct {
	const char *mime;
	enum dsp_kind kind;
	const char *magic; /* DSP_BASE64: the decoded bytes' first bytes */
	size_t magic_len;
} DSP_TYPES[] = {
	{ "text/plain", DSP_TEXT, NULL, 0 },
	{ "text/html", DSP_TEXT, NULL, 0 },
	{ "text/markdown", DSP_TEXT, NULL, 0 },
	{ "text/latex", DSP_TEXT, NULL, 0 },
	{ "image/svg+xml", DSP_TEXT, NULL, 0 },
	{ "image/png", DSP_BASE64, "\x89PNG\r\n\x1a\n", 8 },
	{ "image/jpeg", DSP_BASE64, "\xff\xd8\xff", 3 },
	{ "application/json", DSP_JSON, NULL, 0 },
};

struct dsp_verdict {
	const char *code; /* NULL: accepted */
	char message[512];
};

__attribute__((format(printf, 3, 4))) static void dsp_refuse(struct dsp_verdict *v, const char *code,
							     const char *fmt, ...)
{
	va_list ap;

	v->code = code;
	va_start(ap, fmt);
	vsnprintf(v->message, sizeof(v->message), fmt, ap);
	va_end(ap);
	/* A cut message must stay UTF-8: it goes into the result JSON. */
	v->message[utf8_prefix(v->message, strlen(v->message))] = '\0';
}

/* A MIME name as it can be quoted: printable ASCII only, at most 64. */
static void dsp_quote(const char *s, char *q, size_t n)
{
	size_t j = 0;

	for (; *s != '\0' && j + 1 < n && j < 64; s++)
		q[j++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
	q[j] = '\0';
}

static void dsp_check_base64(const char *mime, const char *b64, size_t magic_len, const char *magic,
			     struct dsp_verdict *v)
{
	size_t len = strlen(b64), got = 0;
	const char *end = NULL;
	unsigned char *bin = malloc(len / 4 * 3 + 3);

	if (bin == NULL) {
		dsp_refuse(v, "unreadable", "out of memory decoding %s", mime);
		return;
	}
	if (sodium_base642bin(bin, len / 4 * 3 + 3, b64, len, NULL, &got, &end, sodium_base64_VARIANT_ORIGINAL) !=
		    0 ||
	    end != b64 + len)
		dsp_refuse(v, "bad_base64", "%s is not base64 (standard alphabet, padded)", mime);
	else if (got < magic_len || memcmp(bin, magic, magic_len) != 0)
		dsp_refuse(v, "bad_image", "%s does not start with the format's signature", mime);
	free(bin);
}

/* Judge one parsed bundle; v->code stays NULL when it is accepted. */
static void dsp_check(const cJSON *b, struct dsp_verdict *v)
{
	const cJSON *data, *e, *tr;
	char q[80];
	size_t t;

	v->code = NULL;
	if (!cJSON_IsObject(b)) {
		dsp_refuse(v, "bad_bundle", "a bundle must be a JSON object");
		return;
	}
	cJSON_ArrayForEach(e, b) {
		if (strcmp(e->string, "data") != 0 && strcmp(e->string, "truncated") != 0) {
			dsp_quote(e->string, q, sizeof(q));
			dsp_refuse(v, "bad_bundle", "a bundle has only \"data\" and \"truncated\", not \"%s\"", q);
			return;
		}
	}
	data = cJSON_GetObjectItemCaseSensitive(b, "data");
	tr = cJSON_GetObjectItemCaseSensitive(b, "truncated");
	if (!cJSON_IsObject(data) || (tr != NULL && !cJSON_IsBool(tr))) {
		dsp_refuse(v, "bad_bundle", "a bundle's data must be an object and truncated a boolean");
		return;
	}
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(data, "text/plain"))) {
		dsp_refuse(v, "bad_bundle", "a bundle must have text/plain, a string");
		return;
	}
	cJSON_ArrayForEach(e, data) {
		for (t = 0; t < sizeof(DSP_TYPES) / sizeof(DSP_TYPES[0]); t++)
			if (strcmp(e->string, DSP_TYPES[t].mime) == 0)
				break;
		dsp_quote(e->string, q, sizeof(q));
		if (t == sizeof(DSP_TYPES) / sizeof(DSP_TYPES[0])) {
			dsp_refuse(v, "bad_mime", "%s is not a MIME type cordon passes on", q);
			return;
		}
		if (DSP_TYPES[t].kind == DSP_JSON)
			continue;
		/* The file was checked UTF-8 as a whole; cJSON decodes \u
		 * escapes, so the string is checked again as it will be
		 * written. */
		if (!cJSON_IsString(e) || utf8_prefix(e->valuestring, strlen(e->valuestring)) !=
						  strlen(e->valuestring)) {
			dsp_refuse(v, "bad_text", "%s must be a UTF-8 string", q);
			return;
		}
		if (DSP_TYPES[t].kind == DSP_BASE64) {
			dsp_check_base64(q, e->valuestring, DSP_TYPES[t].magic_len, DSP_TYPES[t].magic, v);
			if (v->code != NULL)
				return;
		}
	}
}

void displays_check(const cJSON *bundle, const char **code, char *msg, size_t n)
{
	struct dsp_verdict v = { NULL, "" };

	dsp_check(bundle, &v);
	*code = v.code;
	if (n > 0)
		snprintf(msg, n, "%s", v.code != NULL ? v.message : "");
}

/* One array element.  data is taken (NULL: an empty object); name is
 * shown as text (a name that is not UTF-8 gets U+FFFD). */
static int dsp_add(cJSON *arr, const char *name, cJSON *data, bool truncated, const struct dsp_verdict *v)
{
	size_t rep;
	char *shown = utf8_sanitize(name, strlen(name), &rep);
	cJSON *o = cJSON_CreateObject(), *err;
	int rc = -1;

	if (data == NULL)
		data = cJSON_CreateObject();
	if (shown == NULL || o == NULL || data == NULL || !cJSON_AddStringToObject(o, "name", shown) ||
	    !cJSON_AddItemToObject(o, "data", data))
		goto out;
	data = NULL;
	if (!cJSON_AddBoolToObject(o, "truncated", truncated))
		goto out;
	if (v == NULL || v->code == NULL)
		err = cJSON_AddNullToObject(o, "error");
	else if ((err = cJSON_AddObjectToObject(o, "error")) != NULL &&
		 (!cJSON_AddStringToObject(err, "code", v->code) ||
		  !cJSON_AddStringToObject(err, "message", v->message)))
		err = NULL;
	if (err == NULL || !cJSON_AddItemToArray(arr, o))
		goto out;
	o = NULL;
	rc = 0;
out:
	cJSON_Delete(data);
	cJSON_Delete(o);
	free(shown);
	return rc;
}

/* A bundle's name: six digits and .json, nothing else (so no odd byte
 * of a name ever reaches an open). */
static bool dsp_name_ok(const char *name)
{
	return strlen(name) == 11 && strspn(name, "0123456789") == 6 && strcmp(name + 6, ".json") == 0;
}

/*
 * Judge the file name of dirfd as a bundle file and open it: the type from
 * fstatat(AT_SYMLINK_NOFOLLOW) before any open (a fifo, socket or device is
 * never opened), then an open that follows no link, O_NONBLOCK in case the
 * name became a fifo since, and the open file must be the one judged.  The
 * program's own: a hard link would let it name a file it could not read
 * itself, and the owner of the open file is what holds against that (the
 * program cannot give a file away); one link only is a second line that a
 * race can pass (the other link removed after the open).  Returns the fd
 * (*size: the file's), or -1 with v set.
 */
static int dsp_open_bundle(int dirfd, const char *name, uid_t owner, size_t total, size_t *size,
			   struct dsp_verdict *v)
{
	bool use_openat2 = true;
	struct stat st, st2;
	int fd = -1;

	if (!dsp_name_ok(name)) {
		dsp_refuse(v, "bad_name", "a bundle's name is six digits and .json");
		return -1;
	}
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		dsp_refuse(v, "unreadable", "stat: %s", strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		dsp_refuse(v, "symlink", "a bundle is a symbolic link; links are never followed");
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		dsp_refuse(v, "not_regular", "a bundle must be a regular file");
		return -1;
	}
	fd = outputs_open_entry(dirfd, name, O_RDONLY | O_NONBLOCK, &use_openat2);
	if (fd < 0) {
		if (errno == ELOOP)
			dsp_refuse(v, "symlink", "a bundle is a symbolic link; links are never followed");
		else
			dsp_refuse(v, "unreadable", "open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st2) < 0)
		dsp_refuse(v, "unreadable", "fstat: %s", strerror(errno));
	else if (st2.st_dev != st.st_dev || st2.st_ino != st.st_ino || !S_ISREG(st2.st_mode))
		dsp_refuse(v, "changed", "a bundle was replaced while it was read");
	else if (st2.st_uid != owner)
		dsp_refuse(v, "foreign_owner", "a bundle belongs to uid %ju, not to the program's uid %ju",
			   (uintmax_t)st2.st_uid, (uintmax_t)owner);
	else if (st2.st_nlink != 1)
		dsp_refuse(v, "hard_link", "a bundle has %ju links; it must have one", (uintmax_t)st2.st_nlink);
	else if ((uint64_t)st2.st_size > DISPLAYS_MAX_BUNDLE_BYTES)
		dsp_refuse(v, "too_large", "%jd bytes, over the bound of %u bytes a bundle", (intmax_t)st2.st_size,
			   DISPLAYS_MAX_BUNDLE_BYTES);
	else if ((uint64_t)total + (uint64_t)st2.st_size > DISPLAYS_MAX_TOTAL_BYTES)
		dsp_refuse(v, "too_large", "the bundles before it reached the bound of %u bytes in all",
			   DISPLAYS_MAX_TOTAL_BYTES);
	if (v->code != NULL) {
		close(fd);
		return -1;
	}
	*size = (size_t)st2.st_size;
	return fd;
}

/* Read and judge the bundle name of dirfd; *total counts the bytes of the
 * bundles read. */
static int dsp_one(cJSON *arr, int dirfd, const char *name, uid_t owner, size_t *total)
{
	struct dsp_verdict v = { NULL, "" };
	cJSON *b = NULL, *data;
	char err[400];
	size_t size = 0;
	int fd, rc;

	fd = dsp_open_bundle(dirfd, name, owner, *total, &size, &v);
	if (fd >= 0) {
		*total += size;
		/* The reader takes fd and checks the size again against
		 * what it read (a file that grew or shrank is refused). */
		if (outputs_read_json_fd(fd, name, DISPLAYS_MAX_BUNDLE_BYTES, "the bound of a bundle", &b, err,
					 sizeof(err)) != 0)
			dsp_refuse(&v, "bad_json", "%s", err);
		else
			dsp_check(b, &v);
	}
	if (v.code == NULL) {
		data = cJSON_DetachItemFromObjectCaseSensitive(b, "data");
		rc = dsp_add(arr, name, data, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "truncated")), NULL);
	} else {
		rc = dsp_add(arr, name, NULL, false, &v);
	}
	cJSON_Delete(b);
	return rc;
}

static int dsp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in the directory open on fd (taken), at most
 * DISPLAYS_MAX_SCAN; *more says there were more.  -1: out of memory or a
 * read error (v says which). */
static int dsp_names(int fd, char ***names, size_t *n, bool *more, struct dsp_verdict *v)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	char **list = NULL, *s;
	int rc = -1;

	*n = 0;
	*more = false;
	if (d == NULL) {
		close(fd);
		dsp_refuse(v, "unreadable", "fdopendir: %s", strerror(errno));
		return -1;
	}
	if ((list = calloc(DISPLAYS_MAX_SCAN, sizeof(*list))) == NULL)
		goto out;
	for (;;) {
		errno = 0;
		if ((e = readdir(d)) == NULL) {
			if (errno != 0) {
				dsp_refuse(v, "unreadable", "reading the directory: %s", strerror(errno));
				goto out;
			}
			break;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (*n == DISPLAYS_MAX_SCAN) {
			*more = true;
			break;
		}
		if ((s = strdup(e->d_name)) == NULL)
			goto out;
		list[(*n)++] = s;
	}
	qsort(list, *n, sizeof(*list), dsp_cmp);
	*names = list;
	list = NULL;
	rc = 0;
out:
	if (list != NULL) {
		for (size_t i = 0; i < *n; i++)
			free(list[i]);
		free(list);
		*n = 0;
	}
	closedir(d);
	return rc;
}

/* Open work/.cordon-display; -1 with errno.  *owner: work/'s owner, the
 * executor's host uid (the supervisor made work/ as the executor), which
 * every file the program made has too. */
static int dsp_open(int ws_fd, uid_t *owner)
{
	bool use_openat2 = true;
	struct stat st;
	int work, fd, saved;

	work = outputs_open_entry(ws_fd, DISPLAYS_PARENT, O_RDONLY | O_DIRECTORY, &use_openat2);
	if (work < 0)
		return -1;
	if (fstat(work, &st) < 0) {
		saved = errno;
		close(work);
		errno = saved;
		return -1;
	}
	*owner = st.st_uid;
	fd = outputs_open_entry(work, DISPLAYS_DIR, O_RDONLY | O_DIRECTORY, &use_openat2);
	saved = errno;
	/* O_DIRECTORY|O_NOFOLLOW on a link says ENOTDIR: name it as a link. */
	if (fd < 0 && saved == ENOTDIR && fstatat(work, DISPLAYS_DIR, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		saved = ELOOP;
	close(work);
	errno = saved;
	return fd;
}

cJSON *displays_collect(int ws_fd)
{
	struct dsp_verdict v = { NULL, "" };
	cJSON *arr = cJSON_CreateArray();
	char **names = NULL;
	size_t n = 0, total = 0;
	bool more = false, use_openat2 = true;
	uid_t owner = 0;
	int fd = -1, scan = -1, rc = 0;

	if (arr == NULL)
		return NULL;
	fd = dsp_open(ws_fd, &owner);
	if (fd < 0) {
		if (errno == ENOENT)
			goto out;
		if (errno == ELOOP)
			dsp_refuse(&v, "symlink", "the bundles' directory is a symbolic link; links are never followed");
		else if (errno == ENOTDIR)
			dsp_refuse(&v, "not_regular", "the bundles' directory is not a directory");
		else
			dsp_refuse(&v, "unreadable", "opening the bundles' directory: %s", strerror(errno));
		rc = dsp_add(arr, ".", NULL, false, &v);
		goto out;
	}
	/* Its own fd for readdir, which the reads below must not share. */
	scan = outputs_open_entry(fd, ".", O_RDONLY | O_DIRECTORY, &use_openat2);
	if (scan < 0)
		dsp_refuse(&v, "unreadable", "opening the bundles' directory: %s", strerror(errno));
	if (scan < 0 || dsp_names(scan, &names, &n, &more, &v) != 0) {
		rc = v.code != NULL ? dsp_add(arr, ".", NULL, false, &v) : -1;
		goto out;
	}
	for (size_t i = 0; i < n && i < DISPLAYS_MAX_COUNT && rc == 0; i++)
		rc = dsp_one(arr, fd, names[i], owner, &total);
	if (rc == 0 && (n > DISPLAYS_MAX_COUNT || more)) {
		dsp_refuse(&v, "too_many", "%s%zu more entries were not read: at most %u bundles are", more ? "over " : "",
			   n - (n > DISPLAYS_MAX_COUNT ? DISPLAYS_MAX_COUNT : n), DISPLAYS_MAX_COUNT);
		rc = dsp_add(arr, ".", NULL, true, &v);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (fd >= 0)
		close(fd);
	if (rc != 0) {
		cJSON_Delete(arr);
		arr = NULL;
	}
	return arr;
}
