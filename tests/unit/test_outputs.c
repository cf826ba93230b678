/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_outputs.c - reduce (runtime/supervise/outputs.c): out/ trees built
 * in a temporary directory, judged against declared outputs; result.json
 * read under its rules.
 *
 * Parts:
 *   - hashing: a known SHA-256 vector, and libsodium's one-shot hash over
 *     content larger than the read buffer;
 *   - attacks from inside out/: a symlink to /etc/passwd, a symlinked
 *     directory, a fifo (alarm: a test that opens it hangs and dies),
 *     names with control bytes, too many files, a deep tree;
 *   - contract: sizes at and over the bound, required, undeclared, glob
 *     rules (FNM_PATHNAME, FNM_PERIOD), one file matching two outputs;
 *   - the O_NOFOLLOW fallback gives the same report as openat2;
 *   - result.json: ok, missing, size bound, JSON rules, duplicate keys at
 *     any depth, a symlink to a file outside.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "runtime/supervise/outputs.h"

/* ---- fixture: a fresh out/ per test -------------------------------------- */

struct fx {
	char dir[64];
	int fd; /* out/, opened as the supervisor opens it */
	struct outputs_report rep;
	char err[512];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/cordon-outputs-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	f->fd = open(f->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (f->fd < 0)
		return -1;
	*state = f;
	/* A test that opens a fifo blocks forever; SIGALRM ends it instead. */
	alarm(5);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	alarm(0);
	outputs_report_free(&f->rep);
	close(f->fd);
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* Write path (relative to out/), making its directories. */
static void put(struct fx *f, const char *path, const void *data, size_t len)
{
	char full[512], *slash;
	int fd;

	snprintf(full, sizeof(full), "%s/%s", f->dir, path);
	for (slash = strchr(full + strlen(f->dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		assert_true(mkdir(full, 0755) == 0 || errno == EEXIST);
		*slash = '/';
	}
	fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void puts_(struct fx *f, const char *path, const char *text)
{
	put(f, path, text, strlen(text));
}

static void link_(struct fx *f, const char *target, const char *path)
{
	char full[512];

	snprintf(full, sizeof(full), "%s/%s", f->dir, path);
	assert_int_equal(symlink(target, full), 0);
}

static void mkdir_(struct fx *f, const char *path)
{
	char full[512];

	snprintf(full, sizeof(full), "%s/%s", f->dir, path);
	assert_int_equal(mkdir(full, 0755), 0);
}

static int collect(struct fx *f, const struct cpol_output *decl, uint32_t n, const struct outputs_limits *lim)
{
	outputs_report_free(&f->rep);
	return outputs_collect(f->fd, decl, n, lim, &f->rep, f->err, sizeof(f->err));
}

static void hex_of(const void *data, size_t len, char hex[65])
{
	unsigned char d[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(d, data, len);
	sodium_bin2hex(hex, 65, d, sizeof(d));
}

static const struct outputs_violation *find_violation(const struct outputs_report *r, const char *path,
						      enum outputs_code code)
{
	for (size_t i = 0; i < r->nviolations; i++)
		if (strcmp(r->violations[i].path, path) == 0 && r->violations[i].code == code)
			return &r->violations[i];
	return NULL;
}

static const char *find_undeclared(const struct outputs_report *r, const char *path)
{
	for (size_t i = 0; i < r->nundeclared; i++)
		if (strcmp(r->undeclared[i].path, path) == 0)
			return r->undeclared[i].type;
	return NULL;
}

static char *json_text(cJSON *j)
{
	char *s;

	assert_non_null(j);
	s = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	assert_non_null(s);
	return s;
}

#define OUT(p, max, req) { (p), (max), (req) ? CPOL_OUT_F_REQUIRED : 0u }

/* ---- hashing ------------------------------------------------------------- */

static void test_sha256_known_vector(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("summary.txt", 100, 1) };

	puts_(f, "summary.txt", "abc");
	assert_int_equal(collect(f, decl, 1, NULL), 0);
	assert_int_equal(f->rep.nviolations, 0);
	assert_int_equal(f->rep.nartifacts, 1);
	assert_string_equal(f->rep.artifacts[0].path, "summary.txt");
	assert_int_equal(f->rep.artifacts[0].bytes, 3);
	assert_string_equal(f->rep.artifacts[0].sha256,
			    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* Larger than the 64 KiB read buffer, nested, an empty file too. */
static void test_sha256_nested_multichunk(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("files/*.csv", 1 << 20, 0) };
	size_t big = 200000 + 7;
	unsigned char *data = malloc(big);
	char want[65], empty[65];

	assert_non_null(data);
	for (size_t i = 0; i < big; i++)
		data[i] = (unsigned char)(i * 131 + (i >> 9));
	put(f, "files/x.csv", data, big);
	put(f, "files/e.csv", "", 0);
	hex_of(data, big, want);
	hex_of("", 0, empty);
	assert_int_equal(collect(f, decl, 1, NULL), 0);
	assert_int_equal(f->rep.nviolations, 0);
	assert_int_equal(f->rep.nartifacts, 2);
	assert_string_equal(f->rep.artifacts[0].path, "files/e.csv");
	assert_string_equal(f->rep.artifacts[0].sha256, empty);
	assert_string_equal(f->rep.artifacts[1].path, "files/x.csv");
	assert_int_equal(f->rep.artifacts[1].bytes, big);
	assert_string_equal(f->rep.artifacts[1].sha256, want);
	free(data);
}

/* ---- attacks from inside out/ -------------------------------------------- */

/* out/summary.txt -> /etc/passwd: reported, never hashed. */
static void test_symlink_file_refused(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("summary.txt", 1 << 20, 1) };
	const struct outputs_violation *v;

	link_(f, "/etc/passwd", "summary.txt");
	assert_int_equal(collect(f, decl, 1, NULL), 0);
	assert_int_equal(f->rep.nartifacts, 0);
	assert_int_equal(f->rep.nviolations, 2);
	v = find_violation(&f->rep, "summary.txt", OUTPUTS_SYMLINK);
	assert_non_null(v);
	assert_non_null(strstr(v->message, "/etc/passwd"));
	/* The link is not a regular file, so the required output is missing. */
	assert_non_null(find_violation(&f->rep, "summary.txt", OUTPUTS_MISSING_REQUIRED));
}

/* out/files -> /etc: the walk does not enter it; /etc's files never show. */
static void test_symlinked_directory_not_followed(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("files/*", 1 << 20, 1), OUT("*", 1 << 20, 0) };

	link_(f, "/etc", "files");
	assert_int_equal(collect(f, decl, 2, NULL), 0);
	assert_int_equal(f->rep.nartifacts, 0);
	assert_int_equal(f->rep.nundeclared, 0);
	/* "*" matches the link itself: a symlink, refused. */
	assert_non_null(find_violation(&f->rep, "files", OUTPUTS_SYMLINK));
	assert_non_null(find_violation(&f->rep, "files/*", OUTPUTS_MISSING_REQUIRED));
	assert_int_equal(f->rep.nviolations, 2);
}

/* A symlink that no output matches is listed, not judged. */
static void test_undeclared_symlink_listed(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("files/*.csv", 1 << 20, 0) };

	link_(f, "/etc", "files");
	assert_int_equal(collect(f, decl, 1, NULL), 0);
	assert_int_equal(f->rep.nviolations, 0);
	assert_int_equal(f->rep.nartifacts, 0);
	assert_int_equal(f->rep.nundeclared, 1);
	assert_string_equal(find_undeclared(&f->rep, "files"), "symlink");
}

/* A fifo is never opened: with alarm(5) set, an open would end the test. */
static void test_fifo_not_opened(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("*.csv", 1 << 20, 0) };
	char full[512];

	snprintf(full, sizeof(full), "%s/data.csv", f->dir);
	assert_int_equal(mkfifo(full, 0644), 0);
	snprintf(full, sizeof(full), "%s/other", f->dir);
	assert_int_equal(mkfifo(full, 0644), 0);
	assert_int_equal(collect(f, decl, 1, NULL), 0);
	assert_int_equal(f->rep.nartifacts, 0);
	assert_int_equal(f->rep.nviolations, 1);
	assert_non_null(find_violation(&f->rep, "data.csv", OUTPUTS_NOT_REGULAR));
	assert_non_null(strstr(f->rep.violations[0].message, "fifo"));
	assert_string_equal(find_undeclared(&f->rep, "other"), "fifo");
}

/* Names with a newline or bytes that are not UTF-8: escaped, never
 * reported raw. */
static void test_bad_names(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("*.csv", 1 << 20, 0) };
	char *s;

	puts_(f, "evil\nname.csv", "x");
	puts_(f, "caf\xe9.txt", "x");
	mkdir_(f, "d\x1b[31m");
	puts_(f, "d\x1b[31m/in.csv", "x");
	assert_int_equal(collect(f, decl, 1, NULL), 0);
	assert_int_equal(f->rep.nartifacts, 0);
	assert_non_null(find_violation(&f->rep, "evil\\x0Aname.csv", OUTPUTS_BAD_NAME));
	/* A directory with a bad name may hold a match: refused, not walked. */
	assert_non_null(find_violation(&f->rep, "d\\x1B[31m", OUTPUTS_BAD_NAME));
	assert_int_equal(f->rep.nviolations, 2);
	assert_string_equal(find_undeclared(&f->rep, "caf\\xE9.txt"), "file");
	assert_int_equal(f->rep.nundeclared, 1);
	/* What goes out is valid JSON that parses back. */
	s = json_text(outputs_violations_json(&f->rep));
	cJSON *back = cJSON_Parse(s);
	assert_non_null(back);
	cJSON_Delete(back);
	free(s);
}

/* A million files must not make reduce slow: the bound stops the walk and
 * the report holds only that (what came first is readdir's order). */
static void test_too_many_files(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("*.txt", 100, 1) };
	struct outputs_limits lim = { 100, 0, false };
	char name[32];

	mkdir_(f, "sub");
	for (int i = 0; i < 99; i++) {
		snprintf(name, sizeof(name), "sub/f%03d.txt", i);
		puts_(f, name, "x");
	}
	/* Exactly at the bound: 100 entries (sub and its 99 files). */
	assert_int_equal(collect(f, decl, 1, &lim), 0);
	assert_null(find_violation(&f->rep, ".", OUTPUTS_TOO_MANY_FILES));
	assert_int_equal(f->rep.nundeclared, 99);
	puts_(f, "a.txt", "x");
	assert_int_equal(collect(f, decl, 1, &lim), 0);
	assert_int_equal(f->rep.nviolations, 1);
	assert_int_equal(f->rep.violations[0].code, OUTPUTS_TOO_MANY_FILES);
	assert_string_equal(f->rep.violations[0].path, ".");
	assert_int_equal(f->rep.nartifacts, 0);
	assert_int_equal(f->rep.nundeclared, 0);
}

static void test_too_deep(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("*/*/*", 100, 0), OUT("*/*/*/*", 100, 0) };
	struct outputs_limits lim = { 0, 2, false };

	puts_(f, "a/b/ok", "x");
	puts_(f, "a/b/c/deep", "x");
	assert_int_equal(collect(f, decl, 2, &lim), 0);
	assert_int_equal(f->rep.nartifacts, 1);
	assert_string_equal(f->rep.artifacts[0].path, "a/b/ok");
	assert_int_equal(f->rep.nviolations, 1);
	assert_non_null(find_violation(&f->rep, "a/b/c", OUTPUTS_TOO_DEEP));
	/* The default depth walks it. */
	assert_int_equal(collect(f, decl, 2, NULL), 0);
	assert_int_equal(f->rep.nviolations, 0);
	assert_int_equal(f->rep.nartifacts, 2);
}

/* ---- the contract -------------------------------------------------------- */

static void test_too_large(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("*.bin", 10, 0) };
	const struct outputs_violation *v;

	puts_(f, "at.bin", "0123456789");
	puts_(f, "over.bin", "0123456789A");
	assert_int_equal(collect(f, decl, 1, NULL), 0);
	assert_int_equal(f->rep.nartifacts, 1);
	assert_string_equal(f->rep.artifacts[0].path, "at.bin");
	assert_int_equal(f->rep.nviolations, 1);
	v = find_violation(&f->rep, "over.bin", OUTPUTS_TOO_LARGE);
	assert_non_null(v);
	assert_string_equal(v->message, "over.bin is 11 bytes, over max_bytes 10 of output *.bin");
}

/* A file matching two outputs meets both: the smaller bound holds, and it
 * satisfies each required one. */
static void test_two_outputs_one_file(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("*.txt", 100, 1), OUT("r*", 4, 1) };

	puts_(f, "report.txt", "12345");
	assert_int_equal(collect(f, decl, 2, NULL), 0);
	assert_int_equal(f->rep.nviolations, 1);
	assert_non_null(find_violation(&f->rep, "report.txt", OUTPUTS_TOO_LARGE));
	puts_(f, "report.txt", "1234");
	assert_int_equal(collect(f, decl, 2, NULL), 0);
	assert_int_equal(f->rep.nviolations, 0);
	assert_int_equal(f->rep.nartifacts, 1);
}

static void test_missing_required(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("files/*.csv", 100, 1), OUT("summary.txt", 100, 1),
					    OUT("optional.txt", 100, 0) };
	const struct outputs_violation *v;

	puts_(f, "summary.txt", "s");
	/* A directory is walked, never matched: it does not count. */
	mkdir_(f, "files");
	mkdir_(f, "files/dir.csv");
	assert_int_equal(collect(f, decl, 3, NULL), 0);
	assert_int_equal(f->rep.nviolations, 1);
	v = find_violation(&f->rep, "files/*.csv", OUTPUTS_MISSING_REQUIRED);
	assert_non_null(v);
	assert_string_equal(v->message, "no regular file matches the required output files/*.csv");
	assert_int_equal(f->rep.nartifacts, 1);
}

/* result.json at the top is result_read()'s: not listed as undeclared,
 * unless it is something else than a regular file, or declared. */
static void test_result_json_not_undeclared(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("*.txt", 100, 0) }, decl2[] = { OUT("*.json", 100, 0) };

	puts_(f, "result.json", "{}");
	puts_(f, "sub/result.json", "{}");
	assert_int_equal(collect(f, decl, 1, NULL), 0);
	assert_int_equal(f->rep.nundeclared, 1);
	assert_string_equal(f->rep.undeclared[0].path, "sub/result.json");
	assert_int_equal(collect(f, decl2, 1, NULL), 0);
	assert_int_equal(f->rep.nartifacts, 1);
	assert_string_equal(f->rep.artifacts[0].path, "result.json");
}

/* A file the supervisor may not read is the program's doing: a violation,
 * not a harness error.  Root reads it anyway, so only an unprivileged run
 * can test this. */
static void test_unreadable(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("*.txt", 100, 0) };
	char full[512];

	if (geteuid() == 0)
		skip();
	puts_(f, "locked.txt", "x");
	snprintf(full, sizeof(full), "%s/locked.txt", f->dir);
	assert_int_equal(chmod(full, 0), 0);
	assert_int_equal(collect(f, decl, 1, NULL), 0);
	assert_int_equal(f->rep.nartifacts, 0);
	assert_non_null(find_violation(&f->rep, "locked.txt", OUTPUTS_UNREADABLE));
}

/* Globs: '*' stops at '/', and does not match a leading '.'. */
static void test_undeclared_and_glob_rules(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("*.csv", 100, 0), OUT("files/?.txt", 100, 0) };

	puts_(f, "a.csv", "a");
	puts_(f, ".hidden.csv", "h");
	puts_(f, "sub/b.csv", "b");
	puts_(f, "notes.md", "n");
	puts_(f, "files/x.txt", "x");
	puts_(f, "files/xy.txt", "xy");
	assert_int_equal(collect(f, decl, 2, NULL), 0);
	assert_int_equal(f->rep.nviolations, 0);
	assert_int_equal(f->rep.nartifacts, 2);
	assert_string_equal(f->rep.artifacts[0].path, "a.csv");
	assert_string_equal(f->rep.artifacts[1].path, "files/x.txt");
	assert_int_equal(f->rep.nundeclared, 4);
	assert_string_equal(f->rep.undeclared[0].path, ".hidden.csv");
	assert_string_equal(f->rep.undeclared[1].path, "files/xy.txt");
	assert_string_equal(f->rep.undeclared[2].path, "notes.md");
	assert_string_equal(f->rep.undeclared[3].path, "sub/b.csv");
}

/* The same tree made in another order gives the same JSON, byte for byte,
 * with each array sorted by path. */
static void test_deterministic_json(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("*.txt", 100, 0), OUT("req", 100, 1) };
	static const char *const order1[] = { "b.txt", "a.txt", "z.bin", "c.txt", "m.bin" };
	static const char *const order2[] = { "m.bin", "c.txt", "z.bin", "a.txt", "b.txt" };
	char *a1, *v1, *u1, *a2, *v2, *u2, ha[65], hb[65], hc[65], want[512];

	for (size_t i = 0; i < 5; i++)
		puts_(f, order1[i], order1[i]);
	link_(f, "/etc/hosts", "l.txt");
	assert_int_equal(collect(f, decl, 2, NULL), 0);
	a1 = json_text(outputs_artifacts_json(&f->rep));
	v1 = json_text(outputs_violations_json(&f->rep));
	u1 = json_text(outputs_undeclared_json(&f->rep));
	for (size_t i = 0; i < 5; i++) {
		char full[512];

		snprintf(full, sizeof(full), "%s/%s", f->dir, order2[i]);
		assert_int_equal(unlink(full), 0);
		puts_(f, order2[i], order2[i]);
	}
	assert_int_equal(collect(f, decl, 2, NULL), 0);
	a2 = json_text(outputs_artifacts_json(&f->rep));
	v2 = json_text(outputs_violations_json(&f->rep));
	u2 = json_text(outputs_undeclared_json(&f->rep));
	assert_string_equal(a1, a2);
	assert_string_equal(v1, v2);
	assert_string_equal(u1, u2);
	/* Each file holds its own name. */
	hex_of("a.txt", 5, ha);
	hex_of("b.txt", 5, hb);
	hex_of("c.txt", 5, hc);
	snprintf(want, sizeof(want),
		 "[{\"path\":\"a.txt\",\"bytes\":5,\"sha256\":\"%s\"},"
		 "{\"path\":\"b.txt\",\"bytes\":5,\"sha256\":\"%s\"},"
		 "{\"path\":\"c.txt\",\"bytes\":5,\"sha256\":\"%s\"}]",
		 ha, hb, hc);
	assert_string_equal(a1, want);
	assert_string_equal(u1, "[{\"path\":\"m.bin\",\"type\":\"file\"},{\"path\":\"z.bin\",\"type\":\"file\"}]");
	assert_non_null(strstr(v1, "\"path\":\"l.txt\",\"code\":\"symlink\""));
	assert_non_null(strstr(v1, "\"path\":\"req\",\"code\":\"missing_required\""));
	assert_true(strstr(v1, "l.txt") < strstr(v1, "\"req\""));
	free(a1);
	free(v1);
	free(u1);
	free(a2);
	free(v2);
	free(u2);
}

/* ---- opening without openat2 ---------------------------------------------- */

static void test_open_entry_both_ways(void **state)
{
	struct fx *f = *state;
	bool modes[2] = { true, false };

	puts_(f, "file", "x");
	link_(f, "file", "link");
	mkdir_(f, "dir");
	for (int m = 0; m < 2; m++) {
		bool use = modes[m];
		int fd;

		errno = 0;
		assert_int_equal(outputs_open_entry(f->fd, "link", O_RDONLY, &use), -1);
		assert_int_equal(errno, ELOOP);
		errno = 0;
		assert_int_equal(outputs_open_entry(f->fd, "dir/../file", O_RDONLY, &use), -1);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(outputs_open_entry(f->fd, "..", O_RDONLY | O_DIRECTORY, &use), -1);
		assert_int_equal(outputs_open_entry(f->fd, "", O_RDONLY, &use), -1);
		assert_int_equal(outputs_open_entry(f->fd, "new", O_WRONLY | O_CREAT, &use), -1);
		assert_int_equal(outputs_open_entry(f->fd, ".", O_RDWR | O_TMPFILE, &use), -1);
		assert_int_equal(errno, EINVAL);
		fd = outputs_open_entry(f->fd, "file", O_RDONLY, &use);
		assert_true(fd >= 0);
		assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
		close(fd);
		fd = outputs_open_entry(f->fd, ".", O_RDONLY | O_DIRECTORY, &use);
		assert_true(fd >= 0);
		close(fd);
		/* The fallback never turns itself back on. */
		if (!modes[m])
			assert_false(use);
	}
}

/* The same tree gives the same report through either way of opening. */
static void test_fallback_same_report(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("*", 100, 0), OUT("d/*", 100, 1) };
	struct outputs_limits lim = { 0, 0, true };
	char *v1, *a1, *v2, *a2;

	puts_(f, "plain", "p");
	link_(f, "/etc/passwd", "pw");
	link_(f, "/etc", "d");
	assert_int_equal(collect(f, decl, 2, NULL), 0);
	a1 = json_text(outputs_artifacts_json(&f->rep));
	v1 = json_text(outputs_violations_json(&f->rep));
	assert_int_equal(collect(f, decl, 2, &lim), 0);
	a2 = json_text(outputs_artifacts_json(&f->rep));
	v2 = json_text(outputs_violations_json(&f->rep));
	assert_string_equal(a1, a2);
	assert_string_equal(v1, v2);
	assert_int_equal(f->rep.nartifacts, 1);
	assert_int_equal(f->rep.nviolations, 3); /* pw and d are symlinks; "d/ *" is missing */
	free(a1);
	free(v1);
	free(a2);
	free(v2);
}

/* The caller's fd is not closed and its offset is not moved. */
static void test_caller_fd_untouched(void **state)
{
	struct fx *f = *state;
	const struct cpol_output decl[] = { OUT("x", 100, 0) };

	puts_(f, "x", "x");
	assert_int_equal(collect(f, decl, 1, NULL), 0);
	assert_int_equal(collect(f, decl, 1, NULL), 0);
	assert_int_equal(f->rep.nartifacts, 1);
	assert_true(fcntl(f->fd, F_GETFD) >= 0);
	assert_int_equal(lseek(f->fd, 0, SEEK_CUR), 0);
}

/* ---- result.json ---------------------------------------------------------- */

static int rread(struct fx *f, uint64_t max, cJSON **v)
{
	f->err[0] = '\0';
	return result_read(f->fd, max, v, f->err, sizeof(f->err));
}

static void test_result_ok(void **state)
{
	struct fx *f = *state;
	cJSON *v = NULL;
	char *s;

	puts_(f, "result.json", "  {\"solution\":{\"coffee\":3},\"k\":[1,{\"a\":1},{\"a\":2}],\"x\":\"\\\\u0000\"}\n");
	assert_int_equal(rread(f, 65536, &v), 0);
	s = json_text(v);
	assert_string_equal(s, "{\"solution\":{\"coffee\":3},\"k\":[1,{\"a\":1},{\"a\":2}],\"x\":\"\\\\u0000\"}");
	free(s);
	/* Not an object is fine too: any one JSON value. */
	puts_(f, "result.json", "42");
	assert_int_equal(rread(f, 2, &v), 0);
	assert_true(cJSON_IsNumber(v));
	cJSON_Delete(v);
}

static void test_result_missing(void **state)
{
	struct fx *f = *state;
	cJSON *v = (cJSON *)1;

	assert_int_equal(rread(f, 100, &v), 1);
	assert_null(v);
}

static void test_result_too_large(void **state)
{
	struct fx *f = *state;
	cJSON *v = NULL;

	puts_(f, "result.json", "[1,2,3,4,5]");
	assert_int_equal(rread(f, 10, &v), -1);
	assert_null(v);
	assert_string_equal(f->err, "result.json is 11 bytes, over max_result_bytes 10");
	assert_int_equal(rread(f, 11, &v), 0);
	cJSON_Delete(v);
}

struct bad_result {
	const char *text;
	size_t len; /* 0: strlen */
	const char *message;
};

static void test_result_refused(void **state)
{
	struct fx *f = *state;
	static const struct bad_result cases[] = {
		{ "", 0, "result.json is empty" },
		/* cJSON names the last byte when the text ends early. */
		{ "{", 0, "result.json is not valid JSON (near offset 0)" },
		{ "[1,2,x]", 0, "result.json is not valid JSON (near offset 5)" },
		{ "{\"a\":1,,}", 0, "result.json is not valid JSON (near offset 8)" },
		{ "{\"a\":1} x", 0, "result.json has more after its JSON value (at offset 8)" },
		{ "{} {}", 0, "result.json has more after its JSON value (at offset 3)" },
		{ "not json", 0, "result.json is not valid JSON (near offset 0)" },
		{ "{\"a\":1}\0", 8, "result.json has a NUL byte at offset 7" },
		{ "[\"\xff\"]", 0, "result.json is not valid UTF-8 (byte 0xFF at offset 2)" },
		{ "[\"\xed\xa0\x80\"]", 0, "result.json is not valid UTF-8 (byte 0xED at offset 2)" },
		{ "\xef\xbb\xbf{}", 0, "result.json starts with a byte order mark" },
		{ "{\"a\\u0000b\":1}", 0,
		  "result.json has a \\u0000 escape at offset 3; a NUL in a string is refused" },
		{ "{\"a\":1,\"a\":2}", 0, "result.json has the key \"a\" twice in the object at the top level" },
		{ "{\"a\":{\"b\":[0,{\"c\":1,\"d\":2,\"c\":3}]}}", 0,
		  "result.json has the key \"c\" twice in the object at /a/b/1" },
		{ "{\"x/y\":{\"k~\":{\"z\":1,\"\\u007a\":2}}}", 0,
		  "result.json has the key \"z\" twice in the object at /x~1y/k~0" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *v = NULL;

		put(f, "result.json", cases[i].text, cases[i].len ? cases[i].len : strlen(cases[i].text));
		if (rread(f, 1024, &v) != -1 || strcmp(f->err, cases[i].message) != 0) {
			print_error("case %zu: got \"%s\"\n", i, f->err);
			fail();
		}
		assert_null(v);
	}
}

/* Thousands of keys: the duplicate check stays fast and still finds one. */
static void test_result_many_keys(void **state)
{
	struct fx *f = *state;
	size_t n = 50000, cap = n * 16 + 64, len = 0;
	char *text = malloc(cap);
	cJSON *v = NULL;

	assert_non_null(text);
	text[len++] = '{';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "%s\"k%zu\":%zu", i ? "," : "", i, i);
	text[len++] = '}';
	put(f, "result.json", text, len);
	assert_int_equal(rread(f, cap, &v), 0);
	cJSON_Delete(v);
	/* Replace the closing brace with a repeat of a key from the middle. */
	len--;
	len += (size_t)snprintf(text + len, cap - len, ",\"k%zu\":0}", n / 2);
	put(f, "result.json", text, len);
	assert_int_equal(rread(f, cap, &v), -1);
	assert_non_null(strstr(f->err, "\"k25000\" twice"));
	free(text);
}

/* cJSON's nesting limit is the depth bound: 1000 levels, not 1001. */
static void test_result_depth(void **state)
{
	struct fx *f = *state;
	char text[2 * 1001];
	cJSON *v = NULL;

	for (size_t depth = 1000; depth <= 1001; depth++) {
		memset(text, '[', depth);
		memset(text + depth, ']', depth);
		put(f, "result.json", text, 2 * depth);
		assert_int_equal(rread(f, sizeof(text), &v), depth == 1000 ? 0 : -1);
		cJSON_Delete(v);
		v = NULL;
	}
	assert_non_null(strstr(f->err, "not valid JSON"));
}

/* result.json -> a JSON file outside out/: refused, not read. */
static void test_result_symlink_outside(void **state)
{
	struct fx *f = *state;
	char outside[] = "/tmp/cordon-outside-XXXXXX", path[128];
	cJSON *v = NULL;
	int fd;

	fd = mkstemp(outside);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\"secret\":1}", 12), 12);
	close(fd);
	snprintf(path, sizeof(path), "%s", outside);
	link_(f, path, "result.json");
	assert_int_equal(rread(f, 1024, &v), -1);
	assert_null(v);
	assert_string_equal(f->err, "result.json is a symbolic link; links are never followed");
	unlink(outside);
}

static void test_result_not_regular(void **state)
{
	struct fx *f = *state;
	char full[512];
	cJSON *v = NULL;

	snprintf(full, sizeof(full), "%s/result.json", f->dir);
	assert_int_equal(mkfifo(full, 0644), 0);
	assert_int_equal(rread(f, 1024, &v), -1);
	assert_string_equal(f->err, "result.json is a fifo, not a regular file");
	assert_int_equal(unlink(full), 0);
	mkdir_(f, "result.json");
	assert_int_equal(rread(f, 1024, &v), -1);
	assert_string_equal(f->err, "result.json is a directory, not a regular file");
	assert_null(v);
}

/* An error message cut to the caller's buffer stays whole UTF-8. */
static void test_result_error_cut_utf8(void **state)
{
	struct fx *f = *state;
	cJSON *v = NULL;
	char err[48];

	puts_(f, "result.json", "{\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\":1,"
				"\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\":2}");
	for (size_t cut = 30; cut < sizeof(err); cut++) {
		assert_int_equal(result_read(f->fd, 1024, &v, err, cut), -1);
		for (size_t i = 0; err[i]; i++) {
			size_t left = strlen(err + i);
			unsigned char c = (unsigned char)err[i];

			if (c >= 0xC0) {
				assert_true(left >= 2);
				assert_int_equal((unsigned char)err[i + 1] & 0xC0, 0x80);
				i++;
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sha256_known_vector, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_sha256_nested_multichunk, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_symlink_file_refused, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_symlinked_directory_not_followed, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_undeclared_symlink_listed, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fifo_not_opened, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_bad_names, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_too_many_files, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_too_deep, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_too_large, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_two_outputs_one_file, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_missing_required, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_undeclared_and_glob_rules, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_result_json_not_undeclared, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_unreadable, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_deterministic_json, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_open_entry_both_ways, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_fallback_same_report, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_caller_fd_untouched, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_result_ok, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_result_missing, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_result_too_large, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_result_refused, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_result_many_keys, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_result_depth, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_result_symlink_outside, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_result_not_regular, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_result_error_cut_utf8, fx_setup, fx_teardown),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
