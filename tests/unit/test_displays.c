/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_displays.c - the MIME bundles a program displayed
 * (runtime/supervise/displays.c).
 *
 * Parts:
 *   - the judge (displays_check): each accepted shape, and every kind of
 *     malformed bundle with the code it must get;
 *   - collect: a workspace built in a temporary directory holding what a
 *     hostile program plants in work/.cordon-display (a symlink, a fifo
 *     (alarm: a collect that opened it for reading would hang), a hard
 *     link, a file of another uid, a sparse file, a directory, odd names,
 *     bad JSON), the count,
 *     bundle and total bounds, more entries than are scanned, and the
 *     directory itself a link or a file;
 *   - a bundle replaced (rename) by a symlink, a fifo or a hard link while
 *     collect runs, 2000 times: never a hang, never a wrong acceptance.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "runtime/rmtree.h"
#include "runtime/supervise/displays.h"

/* "\x89PNG\r\n\x1a\n" + 4 bytes and "\xff\xd8\xff\xe0", base64. */
#define PNG_B64 "iVBORw0KGgoAAAAN"
#define JPEG_B64 "/9j/4A=="

/* ---- the judge ------------------------------------------------------------ */

/* The code displays_check gives text (parsed as JSON); NULL: accepted. */
static const char *judge(const char *text, char *msg, size_t n)
{
	cJSON *b = cJSON_Parse(text);
	const char *code;

	assert_non_null(b);
	displays_check(b, &code, msg, n);
	cJSON_Delete(b);
	return code;
}

static void test_check_accepts(void **state)
{
	static const char *const ok[] = {
		"{\"data\": {\"text/plain\": \"x\"}}",
		"{\"data\": {\"text/plain\": \"\"}, \"truncated\": true}",
		"{\"data\": {\"text/plain\": \"x\", \"text/html\": \"<b>\\u00e9</b>\", \"text/markdown\": \"*m*\","
		" \"text/latex\": \"$x$\", \"image/svg+xml\": \"<svg/>\", \"image/png\": \"" PNG_B64 "\","
		" \"image/jpeg\": \"" JPEG_B64 "\", \"application/json\": {\"k\": [1, null]}}, \"truncated\": false}",
		"{\"data\": {\"text/plain\": \"x\", \"application/json\": null}}",
	};
	char msg[512];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		const char *code = judge(ok[i], msg, sizeof(msg));

		if (code != NULL)
			fail_msg("refused %s: %s %s", ok[i], code, msg);
		assert_string_equal(msg, "");
	}
}

static void test_check_refuses_each_kind(void **state)
{
	static const struct {
		const char *text, *code, *says;
	} bad[] = {
		{ "[]", "bad_bundle", "JSON object" },
		{ "\"x\"", "bad_bundle", "JSON object" },
		{ "{\"data\": {\"text/plain\": \"x\"}, \"metadata\": {}}", "bad_bundle", "metadata" },
		{ "{\"data\": [\"text/plain\"]}", "bad_bundle", "an object" },
		{ "{\"data\": {\"text/plain\": \"x\"}, \"truncated\": 1}", "bad_bundle", "boolean" },
		{ "{\"truncated\": false}", "bad_bundle", "an object" },
		{ "{\"data\": {}}", "bad_bundle", "text/plain" },
		{ "{\"data\": {\"text/html\": \"<b/>\"}}", "bad_bundle", "text/plain" },
		{ "{\"data\": {\"text/plain\": 1}}", "bad_bundle", "text/plain" },
		{ "{\"data\": {\"text/plain\": \"x\", \"application/javascript\": \"alert(1)\"}}", "bad_mime",
		  "application/javascript" },
		{ "{\"data\": {\"text/plain\": \"x\", \"TEXT/HTML\": \"<b/>\"}}", "bad_mime", "TEXT/HTML" },
		{ "{\"data\": {\"text/plain\": \"x\", \"image/gif\": \"R0lGODlh\"}}", "bad_mime", "image/gif" },
		/* A name with control bytes is quoted without them. */
		{ "{\"data\": {\"text/plain\": \"x\", \"a\\u001b[31m\\n\": \"\"}}", "bad_mime", "a?[31m?" },
		{ "{\"data\": {\"text/plain\": \"x\", \"text/html\": 7}}", "bad_text", "text/html" },
		{ "{\"data\": {\"text/plain\": \"x\", \"image/png\": null}}", "bad_text", "image/png" },
		{ "{\"data\": {\"text/plain\": \"x\", \"image/png\": \"!!!!\"}}", "bad_base64", "base64" },
		{ "{\"data\": {\"text/plain\": \"x\", \"image/png\": \"iVBORw0KGgoAAAAN\\n\"}}", "bad_base64", "base64" },
		{ "{\"data\": {\"text/plain\": \"x\", \"image/jpeg\": \"_9j_4A==\"}}", "bad_base64", "base64" },
		{ "{\"data\": {\"text/plain\": \"x\", \"image/jpeg\": \"/9j/4A\"}}", "bad_base64", "padded" },
		{ "{\"data\": {\"text/plain\": \"x\", \"image/png\": \"\"}}", "bad_image", "signature" },
		/* Seven bytes of the signature right, the eighth not. */
		{ "{\"data\": {\"text/plain\": \"x\", \"image/png\": \"iVBORw0KGgs=\"}}", "bad_image", "signature" },
		/* Shorter than the signature. */
		{ "{\"data\": {\"text/plain\": \"x\", \"image/jpeg\": \"/9g=\"}}", "bad_image", "signature" },
		{ "{\"data\": {\"text/plain\": \"x\", \"image/png\": \"R0lGODlhAQABAA==\"}}", "bad_image", "signature" },
		{ "{\"data\": {\"text/plain\": \"x\", \"image/png\": \"" JPEG_B64 "\"}}", "bad_image", "image/png" },
		{ "{\"data\": {\"text/plain\": \"x\", \"image/jpeg\": \"" PNG_B64 "\"}}", "bad_image", "image/jpeg" },
	};
	char msg[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *code = judge(bad[i].text, msg, sizeof(msg));

		if (code == NULL || strcmp(code, bad[i].code) != 0 || strstr(msg, bad[i].says) == NULL)
			fail_msg("%s: got %s \"%s\", want %s saying \"%s\"", bad[i].text, code ? code : "accepted",
				 msg, bad[i].code, bad[i].says);
	}
}

/* ---- collect: a fresh workspace per test --------------------------------- */

struct fx {
	char ws[64];
	char dir[128]; /* ws/work/.cordon-display */
	int fd;        /* the workspace, as the supervisor holds it */
	cJSON *arr;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	snprintf(f->ws, sizeof(f->ws), "/tmp/cordon-displays-XXXXXX");
	if (mkdtemp(f->ws) == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/work", f->ws);
	if (mkdir(f->dir, 0755) != 0)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/work/.cordon-display", f->ws);
	f->fd = open(f->ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (f->fd < 0)
		return -1;
	*state = f;
	/* A collect that opened a fifo for reading would block; SIGALRM
	 * ends the test instead. */
	alarm(20);
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char err[256];

	alarm(0);
	cJSON_Delete(f->arr);
	/* The runtime's own remover: it follows no link, and this tree has
	 * a fifo and a 100 GiB file. */
	rmtree_contents(f->fd, err, sizeof(err));
	close(f->fd);
	rmdir(f->ws);
	free(f);
	return 0;
}

static void path_of(const struct fx *f, const char *name, char *out, size_t n)
{
	snprintf(out, n, "%s/%s", f->dir, name);
}

static void mkdir_displays(struct fx *f)
{
	assert_true(mkdir(f->dir, 0700) == 0 || errno == EEXIST);
}

static void put(struct fx *f, const char *name, const char *text)
{
	char p[256];
	FILE *fp;

	mkdir_displays(f);
	path_of(f, name, p, sizeof(p));
	fp = fopen(p, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, strlen(text), fp), strlen(text));
	assert_int_equal(fclose(fp), 0);
}

/* A valid bundle of exactly bytes bytes (its text/plain padded). */
static void put_sized(struct fx *f, const char *name, size_t bytes)
{
	static const char head[] = "{\"data\": {\"text/plain\": \"", tail[] = "\"}}";
	size_t fixed = sizeof(head) - 1 + sizeof(tail) - 1;
	char *buf = malloc(bytes + 1);

	assert_non_null(buf);
	assert_true(bytes > fixed);
	memcpy(buf, head, sizeof(head) - 1);
	memset(buf + sizeof(head) - 1, 'a', bytes - fixed);
	memcpy(buf + bytes - (sizeof(tail) - 1), tail, sizeof(tail));
	put(f, name, buf);
	free(buf);
}

static void collect(struct fx *f)
{
	cJSON_Delete(f->arr);
	f->arr = displays_collect(f->fd);
	assert_non_null(f->arr);
	assert_true(cJSON_IsArray(f->arr));
}

/* The element named name; its error code is code (NULL: accepted, with
 * its data's text/plain equal to plain when that is not NULL). */
static const cJSON *expect(const struct fx *f, const char *name, const char *code, const char *plain)
{
	const cJSON *e, *err, *data;

	cJSON_ArrayForEach(e, f->arr) {
		if (strcmp(cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring, name) != 0)
			continue;
		err = cJSON_GetObjectItemCaseSensitive(e, "error");
		data = cJSON_GetObjectItemCaseSensitive(e, "data");
		assert_true(cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(e, "truncated")));
		if (code == NULL) {
			if (!cJSON_IsNull(err))
				fail_msg("%s refused: %s", name, cJSON_PrintUnformatted(err));
			if (plain != NULL)
				assert_string_equal(
					cJSON_GetObjectItemCaseSensitive(data, "text/plain")->valuestring, plain);
		} else {
			if (!cJSON_IsObject(err))
				fail_msg("%s accepted, want %s", name, code);
			assert_string_equal(cJSON_GetObjectItemCaseSensitive(err, "code")->valuestring, code);
			assert_true(strlen(cJSON_GetObjectItemCaseSensitive(err, "message")->valuestring) > 0);
			/* A refused bundle passes nothing on. */
			assert_null(data->child);
		}
		return e;
	}
	fail_msg("no display named %s", name);
	return NULL;
}

static const char *message_of(const cJSON *e)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "error"), "message")
		->valuestring;
}

static void test_collect_nothing(void **state)
{
	struct fx *f = *state;

	collect(f); /* no directory */
	assert_int_equal(cJSON_GetArraySize(f->arr), 0);
	mkdir_displays(f);
	collect(f); /* an empty one */
	assert_int_equal(cJSON_GetArraySize(f->arr), 0);
}

static void test_collect_in_name_order(void **state)
{
	struct fx *f = *state;
	const cJSON *e;
	int i = 0;

	put(f, "000002.json", "{\"data\": {\"text/plain\": \"c\"}}");
	put(f, "000000.json", "{\"data\": {\"text/plain\": \"a\"}, \"truncated\": true}");
	put(f, "000001.json", "{\"data\": {\"text/plain\": \"b\", \"application/json\": [1]}}");
	collect(f);
	assert_int_equal(cJSON_GetArraySize(f->arr), 3);
	cJSON_ArrayForEach(e, f->arr) {
		char want[32];

		snprintf(want, sizeof(want), "%06d.json", i++);
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring, want);
	}
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(expect(f, "000000.json", NULL, "a"), "truncated")));
	expect(f, "000001.json", NULL, "b");
	expect(f, "000002.json", NULL, "c");
}

static void test_collect_planted(void **state)
{
	struct fx *f = *state;
	char p[256], q[256];
	int fd;

	mkdir_displays(f);
	path_of(f, "000000.json", p, sizeof(p));
	assert_int_equal(symlink("/etc/shadow", p), 0);
	path_of(f, "000001.json", p, sizeof(p));
	assert_int_equal(mkfifo(p, 0644), 0);
	/* A hard link to a valid bundle outside the directory. */
	snprintf(q, sizeof(q), "%s/work/victim.json", f->ws);
	fd = open(q, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\"data\": {\"text/plain\": \"v\"}}", 29), 29);
	close(fd);
	path_of(f, "000002.json", p, sizeof(p));
	assert_int_equal(link(q, p), 0);
	/* 100 GiB, sparse: judged by its size, never read. */
	path_of(f, "000003.json", p, sizeof(p));
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)100 << 30), 0);
	close(fd);
	path_of(f, "000004.json", p, sizeof(p));
	assert_int_equal(mkdir(p, 0700), 0);
	put(f, "000005.json", "{\"data\": {\"text/plain\": \"x\"}");
	put(f, "000006.json", "{\"data\": {\"text/plain\": \"x\", \"text/plain\": \"y\"}}");
	put(f, "000007.json", "{\"data\": {\"text/plain\": \"\xff\"}}");
	put(f, "000008.json", "");
	put(f, "000009.json", "{\"data\": {\"text/plain\": \"a\\u0000b\"}}");
	put(f, "000010.json", "{\"data\": {\"text/plain\": \"x\", \"image/png\": \"" JPEG_B64 "\"}}");
	put(f, "000011.json", "{\"data\": {\"text/plain\": \"kept\"}}");
	/* A valid bundle of another uid (as root: a test user cannot give
	 * one away, which is the point). */
	put(f, "000012.json", "{\"data\": {\"text/plain\": \"foreign\"}}");
	path_of(f, "000012.json", p, sizeof(p));
	assert_int_equal(geteuid() != 0 || chown(p, 12345, 12345) == 0, 1);
	put(f, "bundle.json", "{\"data\": {\"text/plain\": \"x\"}}");
	put(f, "0000001.json", "{\"data\": {\"text/plain\": \"x\"}}");
	put(f, "odd\n\xff.json", "{\"data\": {\"text/plain\": \"x\"}}");
	collect(f);
	expect(f, "000000.json", "symlink", NULL);
	expect(f, "000001.json", "not_regular", NULL);
	assert_non_null(strstr(message_of(expect(f, "000002.json", "hard_link", NULL)), "2 links"));
	assert_non_null(strstr(message_of(expect(f, "000003.json", "too_large", NULL)), "107374182400"));
	expect(f, "000004.json", "not_regular", NULL);
	expect(f, "000005.json", "bad_json", NULL);
	assert_non_null(strstr(message_of(expect(f, "000006.json", "bad_json", NULL)), "twice"));
	assert_non_null(strstr(message_of(expect(f, "000007.json", "bad_json", NULL)), "UTF-8"));
	assert_non_null(strstr(message_of(expect(f, "000008.json", "bad_json", NULL)), "empty"));
	assert_non_null(strstr(message_of(expect(f, "000009.json", "bad_json", NULL)), "\\u0000"));
	expect(f, "000010.json", "bad_image", NULL);
	expect(f, "000011.json", NULL, "kept");
	if (geteuid() == 0)
		assert_non_null(strstr(message_of(expect(f, "000012.json", "foreign_owner", NULL)), "uid 12345"));
	else
		expect(f, "000012.json", NULL, "foreign");
	expect(f, "bundle.json", "bad_name", NULL);
	expect(f, "0000001.json", "bad_name", NULL);
	/* The odd name is shown as UTF-8, its bad byte replaced. */
	expect(f, "odd\n\xef\xbf\xbd.json", "bad_name", NULL);
	assert_int_equal(cJSON_GetArraySize(f->arr), 16);
}

static void test_collect_bundle_bound(void **state)
{
	struct fx *f = *state;

	put_sized(f, "000000.json", DISPLAYS_MAX_BUNDLE_BYTES);
	put_sized(f, "000001.json", DISPLAYS_MAX_BUNDLE_BYTES + 1);
	collect(f);
	expect(f, "000000.json", NULL, NULL);
	expect(f, "000001.json", "too_large", NULL);
}

static void test_collect_total_bound(void **state)
{
	struct fx *f = *state;
	char name[32];
	size_t each = DISPLAYS_MAX_TOTAL_BYTES / 8;

	/* Eight fill the total exactly; a ninth of one byte less is over,
	 * and a refused bundle does not count, so the tenth is over too. */
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "%06d.json", i);
		put_sized(f, name, i < 8 ? each : each - 1);
	}
	collect(f);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "%06d.json", i);
		if (i < 8)
			expect(f, name, NULL, NULL);
		else
			assert_non_null(strstr(message_of(expect(f, name, "too_large", NULL)), "in all"));
	}
}

static void test_collect_count_bound(void **state)
{
	struct fx *f = *state;
	char name[32], plain[32];
	const cJSON *last;

	for (unsigned i = 0; i < DISPLAYS_MAX_COUNT + 5; i++) {
		char text[64];

		snprintf(name, sizeof(name), "%06u.json", i);
		snprintf(text, sizeof(text), "{\"data\": {\"text/plain\": \"%u\"}}", i);
		put(f, name, text);
	}
	collect(f);
	assert_int_equal(cJSON_GetArraySize(f->arr), DISPLAYS_MAX_COUNT + 1);
	for (unsigned i = 0; i < DISPLAYS_MAX_COUNT; i++) {
		snprintf(name, sizeof(name), "%06u.json", i);
		snprintf(plain, sizeof(plain), "%u", i);
		expect(f, name, NULL, plain);
	}
	last = cJSON_GetArrayItem(f->arr, DISPLAYS_MAX_COUNT);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(last, "name")->valuestring, ".");
	assert_non_null(strstr(message_of(expect(f, ".", "too_many", NULL)), "5 more"));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(last, "truncated")));
}

/* More entries than are ever looked at: the scan stops, says "over". */
static void test_collect_scan_bound(void **state)
{
	struct fx *f = *state;
	char p[256], name[32];
	int fd;

	mkdir_displays(f);
	for (unsigned i = 0; i <= DISPLAYS_MAX_SCAN; i++) {
		snprintf(name, sizeof(name), "%06u.json", i);
		path_of(f, name, p, sizeof(p));
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		close(fd);
	}
	collect(f);
	assert_int_equal(cJSON_GetArraySize(f->arr), DISPLAYS_MAX_COUNT + 1);
	assert_non_null(strstr(message_of(expect(f, ".", "too_many", NULL)), "over "));
}

static void test_collect_directory_itself(void **state)
{
	struct fx *f = *state;
	char elsewhere[128];

	/* A link to a directory of valid bundles is not followed. */
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", f->ws);
	assert_int_equal(mkdir(elsewhere, 0700), 0);
	assert_int_equal(symlink(elsewhere, f->dir), 0);
	put(f, "000000.json", "{\"data\": {\"text/plain\": \"through a link\"}}");
	collect(f);
	assert_int_equal(cJSON_GetArraySize(f->arr), 1);
	expect(f, ".", "symlink", NULL);
	/* A file in its place. */
	assert_int_equal(unlink(f->dir), 0);
	assert_int_equal(close(open(f->dir, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)), 0);
	collect(f);
	assert_int_equal(cJSON_GetArraySize(f->arr), 1);
	expect(f, ".", "not_regular", NULL);
	/* A fifo in its place: never opened for reading. */
	assert_int_equal(unlink(f->dir), 0);
	assert_int_equal(mkfifo(f->dir, 0600), 0);
	collect(f);
	expect(f, ".", "not_regular", NULL);
}

/* ---- a bundle replaced while it is read ------------------------------- */

struct swapper {
	const struct fx *f;
	atomic_int stop;
	bool links; /* the victim belongs to another uid: link it in too */
};

/* Put path at 000000.json by rename(2), which is atomic: the name always
 * exists, and is in turn a valid bundle, a symlink, a fifo and (as root)
 * a second link of another uid's valid bundle. */
static void *swap_loop(void *arg)
{
	struct swapper *s = arg;
	char dst[256], src[256], victim[256];
	int fd;

	path_of(s->f, "000000.json", dst, sizeof(dst));
	snprintf(src, sizeof(src), "%s/work/next", s->f->ws);
	snprintf(victim, sizeof(victim), "%s/work/victim", s->f->ws);
	for (unsigned i = 0; !atomic_load(&s->stop); i++) {
		unlink(src);
		switch (i % 4) {
		case 0:
			fd = open(src, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			if (fd >= 0) {
				if (write(fd, "{\"data\": {\"text/plain\": \"ok\"}}", 30) != 30)
					abort();
				close(fd);
			}
			break;
		case 1:
			if (symlink("/etc/passwd", src) != 0)
				abort();
			break;
		case 2:
			if (mkfifo(src, 0600) != 0)
				abort();
			break;
		default:
			if (s->links && link(victim, src) != 0)
				abort();
			if (!s->links && symlink("/etc/passwd", src) != 0)
				abort();
			break;
		}
		if (rename(src, dst) != 0)
			abort();
	}
	return NULL;
}

static void test_collect_replaced_while_read(void **state)
{
	static const char *const refused[] = { "symlink", "not_regular", "foreign_owner", "hard_link", "changed" };
	struct fx *f = *state;
	struct swapper s = { .f = f, .links = geteuid() == 0 };
	char victim[256], *bad = NULL;
	pthread_t t;
	int fd;

	mkdir_displays(f);
	snprintf(victim, sizeof(victim), "%s/work/victim", f->ws);
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	/* Its own text and owner: were the link accepted, "victim" would
	 * show.  Its link count alone could be raced (2 at the stat, 1 again
	 * at the open); its owner cannot. */
	assert_int_equal(write(fd, "{\"data\": {\"text/plain\": \"victim\"}}", 34), 34);
	close(fd);
	assert_int_equal(!s.links || chown(victim, 12345, 12345) == 0, 1);
	put(f, "000000.json", "{\"data\": {\"text/plain\": \"ok\"}}");
	assert_int_equal(pthread_create(&t, NULL, swap_loop, &s), 0);
	/* Whatever the interleaving: one element, accepted only with the
	 * valid bundle's bytes, else refused with one of these codes; no
	 * hang (alarm) on the fifo.  The first wrong answer stops the loop;
	 * the thread is joined before any assert (a failed assert leaves
	 * the test at once, and the thread must not outlive its directory). */
	for (int i = 0; i < 2000 && bad == NULL; i++) {
		const cJSON *e, *err, *plain;
		size_t k = 0;

		cJSON_Delete(f->arr);
		if ((f->arr = displays_collect(f->fd)) == NULL || cJSON_GetArraySize(f->arr) != 1) {
			bad = f->arr == NULL ? strdup("out of memory") : cJSON_PrintUnformatted(f->arr);
			break;
		}
		e = cJSON_GetArrayItem(f->arr, 0);
		err = cJSON_GetObjectItemCaseSensitive(e, "error");
		plain = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "data"), "text/plain");
		if (cJSON_IsNull(err) ? !cJSON_IsString(plain) || strcmp(plain->valuestring, "ok") != 0
				      : !cJSON_IsObject(err))
			k = sizeof(refused) / sizeof(refused[0]);
		else if (!cJSON_IsNull(err))
			for (; k < sizeof(refused) / sizeof(refused[0]); k++)
				if (strcmp(cJSON_GetObjectItemCaseSensitive(err, "code")->valuestring, refused[k]) == 0)
					break;
		if (k == sizeof(refused) / sizeof(refused[0]))
			bad = cJSON_PrintUnformatted(e);
	}
	atomic_store(&s.stop, 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (bad != NULL)
		fail_msg("unexpected: %s", bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_accepts),
		cmocka_unit_test(test_check_refuses_each_kind),
		cmocka_unit_test_setup_teardown(test_collect_nothing, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_collect_in_name_order, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_collect_planted, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_collect_bundle_bound, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_collect_total_bound, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_collect_count_bound, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_collect_scan_bound, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_collect_directory_itself, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_collect_replaced_while_read, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
