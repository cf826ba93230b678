/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_params_check.c - runtime/supervise/params_check.c: a call's params
 * against the signature of a tool compiled from YAML, emitted and loaded
 * back, so the check runs on the policy the runtime sees.
 *
 * Parts:
 *   - each verdict, with the exact path (top level, nested object, array
 *     element, array of objects, array of arrays);
 *   - OK at the exact bounds (min_length, max_length, min, max, max_items,
 *     +-2^53) and the verdict one step beyond each;
 *   - which violation wins: document order, MISSING after the members;
 *   - caller text in messages and paths: escaped, at most ~40 bytes;
 *     a path longer than 256 bytes is cut with "...";
 *   - a broken in-memory signature (a spec cycle, an index out of range)
 *     is refused, not followed;
 *   - results against a tool's `returns:` (params_check_result): an
 *     object, an array and a plain string result, each verdict with its
 *     path under "result"; a tool without returns passes anything; a
 *     reference outside the table is refused;
 *   - random mutations of a good call (fixed seed): no crash, and OK
 *     exactly when an independent oracle written for this signature says
 *     so.
 *
 * Environment:
 *   CORDON_PARAMS_FUZZ=n   mutated calls in the random test (default 20000)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "compiler/compile.h"
#include "cordon/blob.h"
#include "runtime/supervise/params_check.h"

/* ---- the policy ---------------------------------------------------------- */

static const char app_yaml[] = "version: 1\n"
			       "app: params\n"
			       "execution:\n"
			       "  executor:\n"
			       "    env: { LANG: C.UTF-8 }\n"
			       "agents:\n"
			       "  a: { tools: [t.all, t.deep, t.none, t.ret, t.ret_list, t.ret_word] }\n";

/* Every type and bound.  The oracle below restates it by hand. */
static const char tools_head[] =
	"version: 1\n"
	"tools:\n"
	"  - id: t.all\n"
	"    description: every type and bound\n"
	"    exec: [/bin/true]\n"
	"    params:\n"
	"      s: { type: string, min_length: 2, max_length: 5, required: true }\n"
	"      e: { type: string, enum: [low, normal, high] }\n"
	"      free: { type: string }\n"
	"      i: { type: integer, min: -10, max: 10 }\n"
	"      big: { type: integer }\n"
	"      n: { type: number, min: -1.5, max: 2.5 }\n"
	"      b: { type: boolean }\n"
	"      a: { type: array, max_items: 3, items: { type: integer, min: 0 } }\n"
	"      grid: { type: array, items: { type: array, max_items: 2, items: { type: integer } } }\n"
	"      rows:\n"
	"        type: array\n"
	"        max_items: 4\n"
	"        items:\n"
	"          type: object\n"
	"          properties:\n"
	"            k: { type: string, required: true }\n"
	"            v: { type: array, items: { type: number } }\n"
	"      o:\n"
	"        type: object\n"
	"        properties:\n"
	"          x: { type: integer, required: true }\n"
	"          inner: { type: object, properties: { deep: { type: boolean } } }\n"
	"  - id: t.none\n"
	"    description: no parameters\n"
	"    exec: [/bin/true]\n"
	"  - id: t.ret\n"
	"    description: an object result\n"
	"    exec: [/bin/true]\n"
	"    returns:\n"
	"      type: object\n"
	"      properties:\n"
	"        id: { type: string, min_length: 1, required: true }\n"
	"        total: { type: number, min: 0 }\n"
	"        rows: { type: array, items: { type: object, properties: { k: { type: integer, required: true } } } }\n"
	"  - id: t.ret_list\n"
	"    description: an array result\n"
	"    exec: [/bin/true]\n"
	"    returns: { type: array, max_items: 3, items: { type: integer, min: 0 } }\n"
	"  - id: t.ret_word\n"
	"    description: a string result\n"
	"    exec: [/bin/true]\n"
	"    returns: { type: string, enum: [up, down] }\n";

/* Five levels of 60-byte names: a path of 304 bytes, over the 256 the
 * result holds. */
#define DEEP_LEVELS 5
#define DEEP_NAME 60

struct fixture {
	struct cpol_policy q; /* as loaded from the blob */
	uint32_t all, deep, none, ret, ret_list, ret_word;
};

static void deep_name(char *out, int level)
{
	memset(out, 'a' + level, DEEP_NAME);
	out[DEEP_NAME] = '\0';
}

static void deep_yaml(char *out, size_t cap)
{
	char name[DEEP_NAME + 1];
	size_t len = 0;

	len += (size_t)snprintf(out + len, cap - len,
				"  - id: t.deep\n    description: deep\n    exec: [/bin/true]\n    params:\n      ");
	for (int l = 0; l < DEEP_LEVELS; l++) {
		deep_name(name, l);
		if (l < DEEP_LEVELS - 1)
			len += (size_t)snprintf(out + len, cap - len, "%s: { type: object, properties: { ", name);
		else
			len += (size_t)snprintf(out + len, cap - len, "%s: { type: integer, max: 0 ", name);
	}
	for (int l = 0; l < DEEP_LEVELS; l++)
		len += (size_t)snprintf(out + len, cap - len, l < DEEP_LEVELS - 1 ? "} } " : "}\n");
	assert_true(len < cap);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char tools_yaml[4096], deep[1024];
	struct src_file app, tools;
	const struct src_file *refs[1] = { &tools };
	struct cpol_policy p;
	struct blob_error be;
	struct diags d;
	uint8_t *blob = NULL;
	size_t blen = 0;

	assert_non_null(fx);
	deep_yaml(deep, sizeof(deep));
	snprintf(tools_yaml, sizeof(tools_yaml), "%s%s", tools_head, deep);
	memset(&app, 0, sizeof(app));
	memset(&tools, 0, sizeof(tools));
	diags_init(&d);
	policy_init(&fx->q);
	assert_int_equal(src_from_mem("app.yaml", app_yaml, strlen(app_yaml), YDOC_MAX_BYTES, &app, &d), 0);
	assert_int_equal(src_from_mem("tools.yaml", tools_yaml, strlen(tools_yaml), YDOC_MAX_BYTES, &tools, &d), 0);
	if (compile_sources(&app, refs, 1, &p, &d) != 0) {
		diags_print(&d, stderr);
		fail_msg("the test policy does not compile");
	}
	assert_int_equal(blob_emit(&p, &blob, &blen, &be), 0);
	if (blob_load(blob, blen, CPOL_ARCH_X86_64, &fx->q, &be) != 0)
		fail_msg("the test policy does not load");
	fx->all = policy_find_tool(&fx->q, "t.all");
	fx->deep = policy_find_tool(&fx->q, "t.deep");
	fx->none = policy_find_tool(&fx->q, "t.none");
	fx->ret = policy_find_tool(&fx->q, "t.ret");
	fx->ret_list = policy_find_tool(&fx->q, "t.ret_list");
	fx->ret_word = policy_find_tool(&fx->q, "t.ret_word");
	assert_int_not_equal(fx->ret, CPOL_NONE);
	assert_int_not_equal(fx->ret_list, CPOL_NONE);
	assert_int_not_equal(fx->ret_word, CPOL_NONE);
	assert_int_not_equal(fx->all, CPOL_NONE);
	assert_int_not_equal(fx->deep, CPOL_NONE);
	assert_int_not_equal(fx->none, CPOL_NONE);
	free(blob);
	policy_free(&p);
	diags_free(&d);
	src_free(&app);
	src_free(&tools);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	policy_free(&fx->q);
	free(fx);
	return 0;
}

/* ---- one call ------------------------------------------------------------ */

/* Nothing in a result may break a log line or a JSON string: no control
 * byte, terminated within its buffer. */
static void check_clean(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	assert_true(n < cap);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7F)
			fail_msg("control byte 0x%02X at %zu in \"%s\"", (unsigned char)s[i], i, s);
}

static void check_value(const struct fixture *fx, uint32_t tool, const cJSON *j, enum params_verdict want,
			const char *path, struct params_result *r, const char *text)
{
	int ok = params_check(&fx->q, tool, j, r);

	check_clean(r->path, sizeof(r->path));
	check_clean(r->msg, sizeof(r->msg));
	if (r->verdict != want || ok != (want == PARAMS_OK) || (path != NULL && strcmp(r->path, path) != 0))
		fail_msg("%s: got %s at \"%s\" (%s), want %s at \"%s\"", text, params_verdict_name(r->verdict),
			 r->path, r->msg, params_verdict_name(want), path != NULL ? path : "");
	if (want != PARAMS_OK && r->msg[0] == '\0')
		fail_msg("%s: no message", text);
}

/* params as JSON text; path NULL: any.  r, when given, gets the result. */
static void expect_in(const struct fixture *fx, uint32_t tool, const char *text, enum params_verdict want,
		      const char *path, struct params_result *r)
{
	struct params_result mine;
	cJSON *j = cJSON_Parse(text);

	if (j == NULL)
		fail_msg("test JSON does not parse: %s", text);
	check_value(fx, tool, j, want, path, r != NULL ? r : &mine, text);
	cJSON_Delete(j);
}

#define EXPECT(text, want, path) expect_in(fx, fx->all, (text), (want), (path), NULL)

/* ---- the verdicts -------------------------------------------------------- */

static void test_ok(void **state)
{
	const struct fixture *fx = *state;

	EXPECT("{\"s\":\"abc\"}", PARAMS_OK, "");
	EXPECT("{\"s\":\"abc\",\"e\":\"normal\",\"free\":\"\",\"i\":0,\"big\":-3,\"n\":0.25,\"b\":false,"
	       "\"a\":[0,1],\"grid\":[[1,2],[],[3]],\"rows\":[{\"k\":\"x\"},{\"k\":\"y\",\"v\":[1.5,-2]}],"
	       "\"o\":{\"x\":1,\"inner\":{\"deep\":true}}}",
	       PARAMS_OK, "");
	/* An integral number written with a fraction or exponent is an integer. */
	EXPECT("{\"s\":\"ab\",\"i\":2.0,\"big\":1e3}", PARAMS_OK, "");
	EXPECT("{\"s\":\"ab\",\"i\":-0}", PARAMS_OK, "");
	/* An integer is a number too. */
	EXPECT("{\"s\":\"ab\",\"n\":2}", PARAMS_OK, "");
	expect_in(fx, fx->none, "{}", PARAMS_OK, "", NULL);
}

static void test_not_object(void **state)
{
	const struct fixture *fx = *state;
	struct params_result r;

	EXPECT("[]", PARAMS_NOT_OBJECT, "");
	EXPECT("\"s\"", PARAMS_NOT_OBJECT, "");
	EXPECT("null", PARAMS_NOT_OBJECT, "");
	EXPECT("3", PARAMS_NOT_OBJECT, "");
	expect_in(fx, fx->none, "[{}]", PARAMS_NOT_OBJECT, "", &r);
	assert_non_null(strstr(r.msg, "an array"));
	assert_int_equal(params_check(&fx->q, fx->all, NULL, &r), 0);
	assert_int_equal(r.verdict, PARAMS_NOT_OBJECT);
}

static void test_unknown(void **state)
{
	const struct fixture *fx = *state;
	struct params_result r;

	EXPECT("{\"s\":\"abc\",\"zz\":1}", PARAMS_UNKNOWN, "zz");
	/* Names are case-sensitive. */
	EXPECT("{\"S\":\"abc\"}", PARAMS_UNKNOWN, "S");
	EXPECT("{\"s\":\"abc\",\"o\":{\"x\":1,\"y\":2}}", PARAMS_UNKNOWN, "o.y");
	EXPECT("{\"s\":\"abc\",\"o\":{\"x\":1,\"inner\":{\"deeper\":2}}}", PARAMS_UNKNOWN, "o.inner.deeper");
	EXPECT("{\"s\":\"abc\",\"rows\":[{\"k\":\"a\"},{\"k\":\"b\",\"kk\":1}]}", PARAMS_UNKNOWN, "rows[1].kk");
	expect_in(fx, fx->none, "{\"x\":1}", PARAMS_UNKNOWN, "x", &r);
	assert_string_equal(r.msg, "\"x\" is not a parameter of t.none");
	/* The empty name is a name like any other. */
	EXPECT("{\"\":1}", PARAMS_UNKNOWN, "");
}

/* The request parser refuses duplicate keys; this module does not rely on
 * it.  cJSON keeps both members, and a lookup would see only the first. */
static void test_duplicate(void **state)
{
	const struct fixture *fx = *state;
	struct params_result r;

	expect_in(fx, fx->all, "{\"s\":\"abc\",\"s\":\"abcdefgh\"}", PARAMS_UNKNOWN, "s", &r);
	assert_non_null(strstr(r.msg, "twice"));
	EXPECT("{\"s\":\"abc\",\"o\":{\"x\":1,\"inner\":{},\"x\":2}}", PARAMS_UNKNOWN, "o.x");
	/* The second one is refused even when both values are good. */
	EXPECT("{\"i\":1,\"s\":\"abc\",\"i\":1}", PARAMS_UNKNOWN, "i");
}

static void test_missing(void **state)
{
	const struct fixture *fx = *state;
	struct params_result r;

	expect_in(fx, fx->all, "{}", PARAMS_MISSING, "s", &r);
	assert_string_equal(r.msg, "the required parameter \"s\" is missing");
	EXPECT("{\"s\":\"abc\",\"o\":{}}", PARAMS_MISSING, "o.x");
	EXPECT("{\"s\":\"abc\",\"o\":{\"inner\":{}}}", PARAMS_MISSING, "o.x");
	EXPECT("{\"s\":\"abc\",\"rows\":[{\"k\":\"a\"},{\"v\":[]}]}", PARAMS_MISSING, "rows[1].k");
}

static void test_mistyped(void **state)
{
	const struct fixture *fx = *state;
	static const struct {
		const char *json, *path;
	} cases[] = {
		{ "{\"s\":1}", "s" },
		{ "{\"s\":[\"ab\"]}", "s" },
		{ "{\"s\":\"ab\",\"i\":\"1\"}", "i" },
		{ "{\"s\":\"ab\",\"i\":1.5}", "i" },
		{ "{\"s\":\"ab\",\"i\":true}", "i" },
		{ "{\"s\":\"ab\",\"big\":0.5}", "big" },
		{ "{\"s\":\"ab\",\"n\":\"1\"}", "n" },
		{ "{\"s\":\"ab\",\"b\":1}", "b" },
		{ "{\"s\":\"ab\",\"b\":\"true\"}", "b" },
		{ "{\"s\":\"ab\",\"a\":{}}", "a" },
		{ "{\"s\":\"ab\",\"a\":[1,\"2\"]}", "a[1]" },
		{ "{\"s\":\"ab\",\"a\":[1,2.5]}", "a[1]" },
		{ "{\"s\":\"ab\",\"o\":[]}", "o" },
		{ "{\"s\":\"ab\",\"o\":{\"x\":1,\"inner\":{\"deep\":0}}}", "o.inner.deep" },
		{ "{\"s\":\"ab\",\"grid\":[[1],[2,\"x\"]]}", "grid[1][1]" },
		{ "{\"s\":\"ab\",\"grid\":[[1],3]}", "grid[1]" },
		{ "{\"s\":\"ab\",\"rows\":[{\"k\":\"a\",\"v\":[1,null]}]}", "rows[0].v[1]" },
		{ "{\"s\":\"ab\",\"rows\":[7]}", "rows[0]" },
		/* null is no value of any type, required or not. */
		{ "{\"s\":null}", "s" },
		{ "{\"s\":\"ab\",\"e\":null}", "e" },
		{ "{\"s\":\"ab\",\"i\":null}", "i" },
		{ "{\"s\":\"ab\",\"n\":null}", "n" },
		{ "{\"s\":\"ab\",\"b\":null}", "b" },
		{ "{\"s\":\"ab\",\"a\":null}", "a" },
		{ "{\"s\":\"ab\",\"o\":null}", "o" },
	};
	struct params_result r;

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		EXPECT(cases[k].json, PARAMS_MISTYPED, cases[k].path);
	expect_in(fx, fx->all, "{\"s\":\"ab\",\"i\":1.5}", PARAMS_MISTYPED, "i", &r);
	assert_string_equal(r.msg, "expected an integer, got 1.5");
	expect_in(fx, fx->all, "{\"s\":\"ab\",\"o\":null}", PARAMS_MISTYPED, "o", &r);
	assert_string_equal(r.msg, "expected type object, got null");
}

static void test_utf8(void **state)
{
	const struct fixture *fx = *state;
	static const char *const bad[] = {
		"\xff",		    /* never in UTF-8 */
		"a\x80",	    /* a continuation byte alone */
		"\xc0\xaf",	    /* overlong '/' */
		"\xe0\x80\xaf",	    /* overlong, three bytes */
		"\xed\xa0\x80",	    /* a surrogate */
		"\xf4\x90\x80\x80", /* above U+10FFFF */
		"ok\xe2\x82",	    /* cut short */
	};
	static const char *const good[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\x9f\xbf",
					    "\xf4\x8f\xbf\xbf" };
	struct params_result r;
	char json[128];

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		snprintf(json, sizeof(json), "{\"s\":\"ab\",\"free\":\"%s\"}", bad[k]);
		expect_in(fx, fx->all, json, PARAMS_MISTYPED, "free", &r);
		assert_non_null(strstr(r.msg, "not valid UTF-8"));
	}
	for (size_t k = 0; k < sizeof(good) / sizeof(good[0]); k++) {
		snprintf(json, sizeof(json), "{\"s\":\"ab\",\"free\":\"%s\"}", good[k]);
		EXPECT(json, PARAMS_OK, "");
	}
	/* Bad UTF-8 is refused before the length is judged. */
	EXPECT("{\"s\":\"\xff\"}", PARAMS_MISTYPED, "s");
	expect_in(fx, fx->all, "{\"s\":\"ab\",\"free\":\"abc\xc0\xaf\"}", PARAMS_MISTYPED, "free", &r);
	assert_string_equal(r.msg, "not valid UTF-8 (byte 0xC0 at offset 3)");
}

static void test_out_of_range(void **state)
{
	const struct fixture *fx = *state;
	struct params_result r;

	EXPECT("{\"s\":\"ab\",\"i\":11}", PARAMS_OUT_OF_RANGE, "i");
	EXPECT("{\"s\":\"ab\",\"i\":-11}", PARAMS_OUT_OF_RANGE, "i");
	EXPECT("{\"s\":\"ab\",\"n\":2.5000001}", PARAMS_OUT_OF_RANGE, "n");
	EXPECT("{\"s\":\"ab\",\"n\":-1.5000001}", PARAMS_OUT_OF_RANGE, "n");
	EXPECT("{\"s\":\"ab\",\"a\":[0,-1]}", PARAMS_OUT_OF_RANGE, "a[1]");
	expect_in(fx, fx->all, "{\"s\":\"ab\",\"i\":11}", PARAMS_OUT_OF_RANGE, "i", &r);
	assert_string_equal(r.msg, "11 is above the maximum 10");
	expect_in(fx, fx->all, "{\"s\":\"ab\",\"n\":-2}", PARAMS_OUT_OF_RANGE, "n", &r);
	assert_string_equal(r.msg, "-2 is below the minimum -1.5");
	expect_in(fx, fx->all, "{\"s\":\"ab\",\"e\":\"urgent\"}", PARAMS_OUT_OF_RANGE, "e", &r);
	assert_string_equal(r.msg, "\"urgent\" is not one of the 3 allowed values: \"high\", \"low\", \"normal\"");
	/* Enum members match exactly: no case folding, no prefix. */
	EXPECT("{\"s\":\"ab\",\"e\":\"Low\"}", PARAMS_OUT_OF_RANGE, "e");
	EXPECT("{\"s\":\"ab\",\"e\":\"lo\"}", PARAMS_OUT_OF_RANGE, "e");
	EXPECT("{\"s\":\"ab\",\"e\":\"\"}", PARAMS_OUT_OF_RANGE, "e");
	/* Beyond +-2^53 an integer is out of range whatever its bounds, with
	 * the reason in the message.  2^53 + 2 is the next double. */
	expect_in(fx, fx->all, "{\"s\":\"ab\",\"big\":9007199254740994}", PARAMS_OUT_OF_RANGE, "big", &r);
	assert_non_null(strstr(r.msg, "2^53"));
	EXPECT("{\"s\":\"ab\",\"big\":-9007199254740994}", PARAMS_OUT_OF_RANGE, "big");
	EXPECT("{\"s\":\"ab\",\"big\":1e300}", PARAMS_OUT_OF_RANGE, "big");
	/* cJSON reads 1e400 as infinity. */
	EXPECT("{\"s\":\"ab\",\"big\":1e400}", PARAMS_OUT_OF_RANGE, "big");
	EXPECT("{\"s\":\"ab\",\"n\":-1e400}", PARAMS_OUT_OF_RANGE, "n");
	EXPECT("{\"s\":\"ab\",\"grid\":[[1e20]]}", PARAMS_OUT_OF_RANGE, "grid[0][0]");
}

static void test_length(void **state)
{
	const struct fixture *fx = *state;
	struct params_result r;

	expect_in(fx, fx->all, "{\"s\":\"a\"}", PARAMS_TOO_SHORT, "s", &r);
	assert_string_equal(r.msg, "1 byte long, shorter than the minimum length 2");
	EXPECT("{\"s\":\"\"}", PARAMS_TOO_SHORT, "s");
	expect_in(fx, fx->all, "{\"s\":\"abcdef\"}", PARAMS_TOO_LONG, "s", &r);
	assert_string_equal(r.msg, "6 bytes long, longer than the maximum length 5");
	/* Bytes, not characters: two e-acute are four bytes, three are six. */
	EXPECT("{\"s\":\"\xc3\xa9\xc3\xa9\"}", PARAMS_OK, "");
	EXPECT("{\"s\":\"\xc3\xa9\xc3\xa9\xc3\xa9\"}", PARAMS_TOO_LONG, "s");
	expect_in(fx, fx->all, "{\"s\":\"ab\",\"a\":[1,2,3,4]}", PARAMS_TOO_LONG, "a", &r);
	assert_string_equal(r.msg, "4 items, more than the maximum 3");
	EXPECT("{\"s\":\"ab\",\"grid\":[[],[1,2,3]]}", PARAMS_TOO_LONG, "grid[1]");
	EXPECT("{\"s\":\"ab\",\"rows\":[{\"k\":\"a\"},{\"k\":\"a\"},{\"k\":\"a\"},{\"k\":\"a\"},{\"k\":\"a\"}]}",
	       PARAMS_TOO_LONG, "rows");
	/* Too many items is judged before any item. */
	EXPECT("{\"s\":\"ab\",\"a\":[-1,2,3,4]}", PARAMS_TOO_LONG, "a");
}

static void test_bounds_ok(void **state)
{
	const struct fixture *fx = *state;

	EXPECT("{\"s\":\"ab\"}", PARAMS_OK, "");	  /* min_length */
	EXPECT("{\"s\":\"abcde\"}", PARAMS_OK, "");	  /* max_length */
	EXPECT("{\"s\":\"ab\",\"i\":-10}", PARAMS_OK, ""); /* min */
	EXPECT("{\"s\":\"ab\",\"i\":10}", PARAMS_OK, "");  /* max */
	EXPECT("{\"s\":\"ab\",\"n\":-1.5}", PARAMS_OK, "");
	EXPECT("{\"s\":\"ab\",\"n\":2.5}", PARAMS_OK, "");
	EXPECT("{\"s\":\"ab\",\"a\":[0,0,0]}", PARAMS_OK, ""); /* max_items, items' min */
	EXPECT("{\"s\":\"ab\",\"a\":[]}", PARAMS_OK, "");
	EXPECT("{\"s\":\"ab\",\"grid\":[[1,2],[3,4]]}", PARAMS_OK, "");
	EXPECT("{\"s\":\"ab\",\"rows\":[{\"k\":\"\"},{\"k\":\"\"},{\"k\":\"\"},{\"k\":\"\"}]}", PARAMS_OK, "");
	EXPECT("{\"s\":\"ab\",\"big\":9007199254740992}", PARAMS_OK, ""); /* 2^53 */
	EXPECT("{\"s\":\"ab\",\"big\":-9007199254740992}", PARAMS_OK, "");
	EXPECT("{\"s\":\"ab\",\"big\":9007199254740991}", PARAMS_OK, "");
	EXPECT("{\"s\":\"ab\",\"e\":\"low\"}", PARAMS_OK, "");
	EXPECT("{\"s\":\"ab\",\"e\":\"normal\"}", PARAMS_OK, "");
	EXPECT("{\"s\":\"ab\",\"e\":\"high\"}", PARAMS_OK, "");
}

/* The first violation in document order wins; the required names of an
 * object are looked at after all its members. */
static void test_order(void **state)
{
	const struct fixture *fx = *state;

	EXPECT("{\"i\":100,\"s\":1}", PARAMS_OUT_OF_RANGE, "i");
	EXPECT("{\"s\":1,\"i\":100}", PARAMS_MISTYPED, "s");
	EXPECT("{\"i\":100}", PARAMS_OUT_OF_RANGE, "i");
	EXPECT("{\"zz\":1,\"i\":100}", PARAMS_UNKNOWN, "zz");
	EXPECT("{\"i\":100,\"zz\":1}", PARAMS_OUT_OF_RANGE, "i");
	EXPECT("{\"o\":{\"inner\":{\"q\":1}}}", PARAMS_UNKNOWN, "o.inner.q");
	EXPECT("{\"o\":{\"inner\":{}},\"i\":100}", PARAMS_MISSING, "o.x");
	EXPECT("{\"rows\":[{},{\"k\":1}],\"s\":\"ab\"}", PARAMS_MISSING, "rows[0].k");
}

/* Caller bytes in a path or a message are escaped and cut to about 40. */
static void test_escaping(void **state)
{
	const struct fixture *fx = *state;
	struct params_result r;
	char json[512], want[256];
	cJSON *j;

	j = cJSON_CreateObject();
	assert_non_null(j);
	assert_non_null(cJSON_AddNumberToObject(j, "a\nb\"c\\\x01\xff\xc2\x85", 1));
	check_value(fx, fx->all, j, PARAMS_UNKNOWN, "a\\x0Ab\\\"c\\\\\\x01\\xFF\\xC2\\x85", &r, "control name");
	assert_string_equal(r.msg, "\"a\\x0Ab\\\"c\\\\\\x01\\xFF\\xC2\\x85\" is not a parameter of t.all");
	cJSON_Delete(j);

	/* A long unknown name: 40 bytes of it, then "...". */
	memset(want, 'x', 40);
	memcpy(want + 40, "...", 4);
	snprintf(json, sizeof(json), "{\"%0200d\":1}", 0);
	memset(json + 2, 'x', 200);
	expect_in(fx, fx->all, json, PARAMS_UNKNOWN, want, &r);
	assert_true(strlen(r.msg) < 80);

	/* A long value is not echoed whole either, and a multi-byte
	 * character is never cut. */
	snprintf(json, sizeof(json), "{\"s\":\"ab\",\"e\":\"y%s\"}",
		 "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
		 "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac");
	expect_in(fx, fx->all, json, PARAMS_OUT_OF_RANGE, "e", &r);
	/* 'y' and 13 euro signs are 40 bytes; the 14th would be 43. */
	assert_memory_equal(r.msg, "\"", 1);
	assert_memory_equal(r.msg + 1, json + 15, 40);
	assert_memory_equal(r.msg + 41, "...\" is not one of", 18);
}

/* A path longer than the result holds ends in "..." and is cut between
 * characters. */
static void test_long_path(void **state)
{
	const struct fixture *fx = *state;
	char name[DEEP_NAME + 1], json[1024], full[1024], want[256];
	size_t jl = 0, fl = 0;
	struct params_result r;

	for (int l = 0; l < DEEP_LEVELS; l++) {
		deep_name(name, l);
		jl += (size_t)snprintf(json + jl, sizeof(json) - jl, "{\"%s\":", name);
		fl += (size_t)snprintf(full + fl, sizeof(full) - fl, "%s%s", l > 0 ? "." : "", name);
	}
	jl += (size_t)snprintf(json + jl, sizeof(json) - jl, "1");
	for (int l = 0; l < DEEP_LEVELS; l++)
		jl += (size_t)snprintf(json + jl, sizeof(json) - jl, "}");
	assert_true(fl > sizeof(r.path));
	snprintf(want, sizeof(want), "%.*s...", (int)sizeof(r.path) - 4, full);
	expect_in(fx, fx->deep, json, PARAMS_OUT_OF_RANGE, want, &r);
	assert_int_equal(strlen(r.path), sizeof(r.path) - 1);
	/* The same walk, one level short of the violation, is fine. */
	json[jl - DEEP_LEVELS - 1] = '0';
	expect_in(fx, fx->deep, json, PARAMS_OK, "", NULL);
}

/* A signature the loader would refuse, built in memory: the walk must
 * neither loop nor read outside the table. */
static void test_broken_signature(void **state)
{
	const struct fixture *fx = *state;
	struct cpol_policy p;
	struct params_result r;
	cJSON *j = NULL, *arr;
	char json[256];

	policy_init(&p);
	p.nparams = 2;
	p.params = arena_calloc(&p.arena, 2, sizeof(*p.params));
	p.ntools = 1;
	p.tools = arena_calloc(&p.arena, 1, sizeof(*p.tools));
	assert_non_null(p.params);
	assert_non_null(p.tools);
	p.tools[0].id = "t.bad";
	p.tools[0].params = (struct cpol_range){ 0, 2 };
	/* "a" is an array of itself; "o" is an object whose properties run
	 * past the table. */
	p.params[0] = (struct cpol_param){ .name = "a", .type = CPOL_T_ARRAY, .items = 0 };
	p.params[1] = (struct cpol_param){ .name = "o", .type = CPOL_T_OBJECT, .items = CPOL_NONE,
					   .props = { 1, 5 } };

	/* 40 levels of arrays: the walk stops at CPOL_MAX_PARAM_DEPTH. */
	j = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(j, "a");
	for (int k = 0; k < 40; k++) {
		cJSON *in = cJSON_CreateArray();

		cJSON_AddItemToArray(arr, in);
		arr = in;
	}
	assert_int_equal(params_check(&p, 0, j, &r), 0);
	assert_int_equal(r.verdict, PARAMS_MISTYPED);
	assert_non_null(strstr(r.msg, "broken"));
	cJSON_Delete(j);

	snprintf(json, sizeof(json), "{\"o\":{\"x\":1}}");
	j = cJSON_Parse(json);
	assert_int_equal(params_check(&p, 0, j, &r), 0);
	assert_int_equal(r.verdict, PARAMS_MISTYPED);
	assert_string_equal(r.path, "o");
	cJSON_Delete(j);

	/* A tool index outside the policy. */
	j = cJSON_CreateObject();
	assert_int_equal(params_check(&p, 1, j, &r), 0);
	assert_int_equal(r.verdict, PARAMS_UNKNOWN);
	assert_int_equal(params_check(&fx->q, fx->q.ntools, j, &r), 0);
	assert_int_equal(r.verdict, PARAMS_UNKNOWN);
	/* A NULL result is allowed: only the return value is wanted. */
	assert_int_equal(params_check(&fx->q, fx->none, j, NULL), 1);
	cJSON_Delete(j);
	policy_free(&p);
}

/* ---- results (returns:) -------------------------------------------------- */

/* A tool's answer as JSON text against its returns; path NULL: any. */
static void expect_result(const struct fixture *fx, uint32_t tool, const char *text, enum params_verdict want,
			  const char *path, struct params_result *r)
{
	struct params_result mine;
	cJSON *j = cJSON_Parse(text);
	int ok;

	if (j == NULL)
		fail_msg("test JSON does not parse: %s", text);
	if (r == NULL)
		r = &mine;
	ok = params_check_result(&fx->q, tool, j, r);
	check_clean(r->path, sizeof(r->path));
	check_clean(r->msg, sizeof(r->msg));
	if (r->verdict != want || ok != (want == PARAMS_OK) || (path != NULL && strcmp(r->path, path) != 0))
		fail_msg("result %s: got %s at \"%s\" (%s), want %s at \"%s\"", text,
			 params_verdict_name(r->verdict), r->path, r->msg, params_verdict_name(want),
			 path != NULL ? path : "");
	if (want != PARAMS_OK && r->msg[0] == '\0')
		fail_msg("result %s: no message", text);
	cJSON_Delete(j);
}

static void test_result_object(void **state)
{
	const struct fixture *fx = *state;
	struct params_result r;

	expect_result(fx, fx->ret, "{\"id\":\"a\"}", PARAMS_OK, "", NULL);
	expect_result(fx, fx->ret, "{\"id\":\"a\",\"total\":2.5,\"rows\":[{\"k\":1},{\"k\":-4}]}", PARAMS_OK, "",
		      NULL);
	/* The result itself: its path is "result". */
	expect_result(fx, fx->ret, "[]", PARAMS_MISTYPED, "result", &r);
	assert_non_null(strstr(r.msg, "expected type object, got an array"));
	expect_result(fx, fx->ret, "null", PARAMS_MISTYPED, "result", NULL);
	expect_result(fx, fx->ret, "{\"id\":7}", PARAMS_MISTYPED, "result.id", NULL);
	expect_result(fx, fx->ret, "{\"id\":\"\"}", PARAMS_TOO_SHORT, "result.id", NULL);
	expect_result(fx, fx->ret, "{\"id\":\"a\",\"total\":-1}", PARAMS_OUT_OF_RANGE, "result.total", NULL);
	expect_result(fx, fx->ret, "{\"total\":1}", PARAMS_MISSING, "result.id", &r);
	assert_non_null(strstr(r.msg, "required property"));
	expect_result(fx, fx->ret, "{\"id\":\"a\",\"extra\":1}", PARAMS_UNKNOWN, "result.extra", &r);
	assert_non_null(strstr(r.msg, "not a property"));
	expect_result(fx, fx->ret, "{\"id\":\"a\",\"rows\":[{\"k\":1},{\"k\":\"2\"}]}", PARAMS_MISTYPED,
		      "result.rows[1].k", NULL);
	expect_result(fx, fx->ret, "{\"id\":\"a\",\"rows\":[{}]}", PARAMS_MISSING, "result.rows[0].k", NULL);
	/* Document order, as for params: the first violation met wins. */
	expect_result(fx, fx->ret, "{\"total\":-1,\"id\":7}", PARAMS_OUT_OF_RANGE, "result.total", NULL);
}

static void test_result_plain(void **state)
{
	const struct fixture *fx = *state;

	expect_result(fx, fx->ret_list, "[]", PARAMS_OK, "", NULL);
	expect_result(fx, fx->ret_list, "[0,1,2]", PARAMS_OK, "", NULL);
	expect_result(fx, fx->ret_list, "[0,1,2,3]", PARAMS_TOO_LONG, "result", NULL);
	expect_result(fx, fx->ret_list, "[0,-1]", PARAMS_OUT_OF_RANGE, "result[1]", NULL);
	expect_result(fx, fx->ret_list, "[0.5]", PARAMS_MISTYPED, "result[0]", NULL);
	expect_result(fx, fx->ret_list, "{}", PARAMS_MISTYPED, "result", NULL);
	expect_result(fx, fx->ret_word, "\"up\"", PARAMS_OK, "", NULL);
	expect_result(fx, fx->ret_word, "\"sideways\"", PARAMS_OUT_OF_RANGE, "result", NULL);
	expect_result(fx, fx->ret_word, "true", PARAMS_MISTYPED, "result", NULL);
}

static void test_result_none(void **state)
{
	const struct fixture *fx = *state;
	struct params_result r;

	/* No returns: any answer passes, as before there were schemas. */
	expect_result(fx, fx->all, "{\"whatever\":[1,\"x\"]}", PARAMS_OK, "", NULL);
	expect_result(fx, fx->none, "3", PARAMS_OK, "", NULL);
	assert_int_equal(fx->q.tools[fx->all].returns, 0);
	assert_int_not_equal(fx->q.tools[fx->ret].returns, 0);
	/* No such tool: refused, not passed. */
	assert_int_equal(params_check_result(&fx->q, fx->q.ntools, NULL, &r), 0);
	assert_int_equal(r.verdict, PARAMS_UNKNOWN);
}

static void test_result_broken(void **state)
{
	struct cpol_policy p;
	struct params_result r;
	cJSON *j = cJSON_CreateObject();

	(void)state;
	policy_init(&p);
	p.nparams = 1;
	p.params = arena_calloc(&p.arena, 1, sizeof(*p.params));
	p.ntools = 1;
	p.tools = arena_calloc(&p.arena, 1, sizeof(*p.tools));
	assert_non_null(p.params);
	assert_non_null(p.tools);
	assert_non_null(j);
	p.tools[0].id = "t.bad";
	p.params[0] = (struct cpol_param){ .name = "", .type = CPOL_T_OBJECT, .items = CPOL_NONE };
	/* One past the table: refused, never read. */
	p.tools[0].returns = 2;
	assert_int_equal(params_check_result(&p, 0, j, &r), 0);
	assert_int_equal(r.verdict, PARAMS_MISTYPED);
	assert_non_null(strstr(r.msg, "broken"));
	/* In the table: an empty object fits an object without properties. */
	p.tools[0].returns = 1;
	assert_int_equal(params_check_result(&p, 0, j, &r), 1);
	cJSON_Delete(j);
	policy_free(&p);
}

static void test_verdict_names(void **state)
{
	static const char *const want[] = { "ok",	"not_object",	"unknown",  "missing",
					    "mistyped", "out_of_range", "too_long", "too_short" };

	(void)state;
	for (int v = PARAMS_OK; v <= PARAMS_TOO_SHORT; v++)
		assert_string_equal(params_verdict_name((enum params_verdict)v), want[v]);
	assert_string_equal(params_verdict_name((enum params_verdict)99), "?");
}

/* ---- random mutations against an oracle --------------------------------- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	/* xorshift64*: fixed seed, the same run every time. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 2685821657736338717ull) >> 33) % n;
}

static const double numbers[] = {
	0,   1,	   -1,	 2,   3,    -10, 10, 11, -11, 1.5, -1.5, 2.5, 2.6, -1.6, 0.5, -0.0, 1e3,
	9007199254740992.0, -9007199254740992.0, 9007199254740994.0, -9007199254740994.0, 1e300, -1e300,
};

/* String pieces.  The invalid ones are the only source of the bytes FF,
 * C0 and ED, and of an E2 82 not followed by a continuation byte; the
 * oracle's UTF-8 rule relies on that, not on the code under test. */
static const char *const pieces[] = { "a", "xyz", "low", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\"",
				      "\\", "\n", "\xff", "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82" };

static const char *const names[] = { "s", "e", "free", "i", "big", "n", "b", "a", "grid", "rows", "o",
				     "x", "inner", "deep", "k", "v", "zz", "S" };

static cJSON *rnd_value(int depth)
{
	uint32_t kind = rnd(depth > 2 ? 5 : 7);
	cJSON *v = NULL;
	char s[64];

	switch (kind) {
	case 0:
		return cJSON_CreateNull();
	case 1:
		return cJSON_CreateBool(rnd(2));
	case 2:
		if (rnd(10) == 0)
			return cJSON_CreateNumber(rnd(2) ? INFINITY : -INFINITY);
		return cJSON_CreateNumber(numbers[rnd(sizeof(numbers) / sizeof(numbers[0]))]);
	case 3:
		if (rnd(3) == 0) {
			static const char *const en[] = { "low", "normal", "high" };

			return cJSON_CreateString(en[rnd(3)]);
		}
		/* fallthrough */
	case 4:
		s[0] = '\0';
		for (uint32_t k = rnd(6); k > 0; k--)
			strcat(s, pieces[rnd(sizeof(pieces) / sizeof(pieces[0]))]);
		return cJSON_CreateString(s);
	case 5:
		v = cJSON_CreateArray();
		for (uint32_t k = rnd(5); k > 0; k--)
			cJSON_AddItemToArray(v, rnd_value(depth + 1));
		return v;
	default:
		v = cJSON_CreateObject();
		for (uint32_t k = rnd(4); k > 0; k--)
			cJSON_AddItemToObject(v, names[rnd(sizeof(names) / sizeof(names[0]))], rnd_value(depth + 1));
		return v;
	}
}

struct node_ref {
	cJSON *parent; /* NULL for the root */
	cJSON *node;
};

static size_t collect(cJSON *parent, cJSON *node, struct node_ref *out, size_t n, size_t cap)
{
	if (n < cap)
		out[n++] = (struct node_ref){ parent, node };
	for (cJSON *c = node->child; c != NULL && n < cap; c = c->next)
		n = collect(node, c, out, n, cap);
	return n;
}

/* A new value in place of node, under node's name when it has one
 * (cJSON_ReplaceItemViaPointer leaves the name to the caller). */
static void replace(cJSON *parent, cJSON *node, cJSON *with)
{
	if (node->string != NULL) {
		with->string = strdup(node->string);
		assert_non_null(with->string);
	}
	cJSON_ReplaceItemViaPointer(parent, node, with);
}

static void mutate(cJSON *root)
{
	struct node_ref refs[256];
	size_t n = collect(NULL, root, refs, 0, 256);
	struct node_ref r = refs[rnd((uint32_t)n)];
	uint32_t op = rnd(4);

	if (r.parent == NULL || (op == 2 && (cJSON_IsArray(r.node) || cJSON_IsObject(r.node))))
		op = 2;
	switch (op) {
	case 0:
		replace(r.parent, r.node, rnd_value(1));
		return;
	case 1:
		cJSON_Delete(cJSON_DetachItemViaPointer(r.parent, r.node));
		return;
	case 2:
		if (cJSON_IsObject(r.node))
			cJSON_AddItemToObject(r.node, names[rnd(sizeof(names) / sizeof(names[0]))], rnd_value(2));
		else if (cJSON_IsArray(r.node))
			cJSON_AddItemToArray(r.node, rnd_value(2));
		return;
	default:
		if (cJSON_IsNumber(r.node))
			cJSON_SetNumberValue(r.node, numbers[rnd(sizeof(numbers) / sizeof(numbers[0]))]);
		else
			replace(r.parent, r.node, rnd_value(1));
		return;
	}
}

/* The oracle: t.all's signature restated by hand, one function a rule. */
static int o_utf8(const char *s)
{
	for (const unsigned char *u = (const unsigned char *)s; *u != '\0'; u++) {
		if (*u == 0xFF || *u == 0xC0 || *u == 0xED)
			return 0;
		if (u[0] == 0xE2 && u[1] == 0x82 && (u[2] < 0x80 || u[2] > 0xBF))
			return 0;
	}
	return 1;
}

static int o_str(const cJSON *v, size_t minl, size_t maxl)
{
	return cJSON_IsString(v) && o_utf8(v->valuestring) && strlen(v->valuestring) >= minl &&
	       strlen(v->valuestring) <= maxl;
}

static int o_int(const cJSON *v, double lo, double hi)
{
	double d = v->valuedouble;

	return cJSON_IsNumber(v) && isfinite(d) && d >= -9007199254740992.0 && d <= 9007199254740992.0 &&
	       d == trunc(d) && d >= lo && d <= hi;
}

static int o_num(const cJSON *v, double lo, double hi)
{
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= lo && v->valuedouble <= hi;
}

/* Members of obj all among the names, none twice, the required ones there. */
static int o_members(const cJSON *obj, const char *const *allowed, size_t n, const char *required)
{
	int have_required = required == NULL;

	if (!cJSON_IsObject(obj))
		return 0;
	for (const cJSON *m = obj->child; m != NULL; m = m->next) {
		size_t k = 0;

		while (k < n && strcmp(allowed[k], m->string) != 0)
			k++;
		if (k == n)
			return 0;
		for (const cJSON *o = m->next; o != NULL; o = o->next)
			if (strcmp(o->string, m->string) == 0)
				return 0;
		if (required != NULL && strcmp(m->string, required) == 0)
			have_required = 1;
	}
	return have_required;
}

static int o_each(const cJSON *arr, size_t max, int (*item)(const cJSON *))
{
	size_t n = 0;

	if (!cJSON_IsArray(arr))
		return 0;
	for (const cJSON *e = arr->child; e != NULL; e = e->next, n++)
		if (!item(e))
			return 0;
	return n <= max;
}

static int o_a_item(const cJSON *v)
{
	return o_int(v, 0, INFINITY);
}

static int o_any_int(const cJSON *v)
{
	return o_int(v, -INFINITY, INFINITY);
}

static int o_any_num(const cJSON *v)
{
	return o_num(v, -INFINITY, INFINITY);
}

static int o_grid_row(const cJSON *v)
{
	return o_each(v, 2, o_any_int);
}

static int o_row(const cJSON *v)
{
	static const char *const rn[] = { "k", "v" };
	const cJSON *vv;

	if (!o_members(v, rn, 2, "k") || !o_str(cJSON_GetObjectItemCaseSensitive(v, "k"), 0, SIZE_MAX))
		return 0;
	vv = cJSON_GetObjectItemCaseSensitive(v, "v");
	return vv == NULL || o_each(vv, SIZE_MAX, o_any_num);
}

static int o_o(const cJSON *v)
{
	static const char *const on[] = { "x", "inner" };
	static const char *const in[] = { "deep" };
	const cJSON *inner, *deep;

	if (!o_members(v, on, 2, "x") || !o_any_int(cJSON_GetObjectItemCaseSensitive(v, "x")))
		return 0;
	inner = cJSON_GetObjectItemCaseSensitive(v, "inner");
	if (inner == NULL)
		return 1;
	if (!o_members(inner, in, 1, NULL))
		return 0;
	deep = cJSON_GetObjectItemCaseSensitive(inner, "deep");
	return deep == NULL || cJSON_IsBool(deep);
}

static int oracle(const cJSON *j)
{
	static const char *const top[] = { "s", "e", "free", "i", "big", "n", "b", "a", "grid", "rows", "o" };

	if (!o_members(j, top, sizeof(top) / sizeof(top[0]), "s"))
		return 0;
	for (const cJSON *m = j->child; m != NULL; m = m->next) {
		const char *k = m->string;
		int ok;

		if (strcmp(k, "s") == 0)
			ok = o_str(m, 2, 5);
		else if (strcmp(k, "e") == 0)
			ok = cJSON_IsString(m) && (strcmp(m->valuestring, "low") == 0 ||
						   strcmp(m->valuestring, "normal") == 0 ||
						   strcmp(m->valuestring, "high") == 0);
		else if (strcmp(k, "free") == 0)
			ok = o_str(m, 0, SIZE_MAX);
		else if (strcmp(k, "i") == 0)
			ok = o_int(m, -10, 10);
		else if (strcmp(k, "big") == 0)
			ok = o_any_int(m);
		else if (strcmp(k, "n") == 0)
			ok = o_num(m, -1.5, 2.5);
		else if (strcmp(k, "b") == 0)
			ok = cJSON_IsBool(m);
		else if (strcmp(k, "a") == 0)
			ok = o_each(m, 3, o_a_item);
		else if (strcmp(k, "grid") == 0)
			ok = o_each(m, SIZE_MAX, o_grid_row);
		else if (strcmp(k, "rows") == 0)
			ok = o_each(m, 4, o_row);
		else
			ok = o_o(m);
		if (!ok)
			return 0;
	}
	return 1;
}

static void test_random(void **state)
{
	const struct fixture *fx = *state;
	static const char good[] = "{\"s\":\"abc\",\"e\":\"low\",\"free\":\"q\",\"i\":3,\"big\":7,\"n\":1.5,\"b\":true,"
				   "\"a\":[1,2],\"grid\":[[1,2],[3]],\"rows\":[{\"k\":\"x\",\"v\":[1,2.5]},{\"k\":\"y\"}],"
				   "\"o\":{\"x\":1,\"inner\":{\"deep\":false}}}";
	const char *env = getenv("CORDON_PARAMS_FUZZ");
	uint32_t iters = env != NULL ? (uint32_t)strtoul(env, NULL, 10) : 20000;
	uint32_t count[PARAMS_TOO_SHORT + 1] = { 0 };
	cJSON *base = cJSON_Parse(good);
	struct params_result r;

	assert_non_null(base);
	assert_true(oracle(base));
	rng_state = 0x9E3779B97F4A7C15ull;
	for (uint32_t it = 0; it < iters; it++) {
		cJSON *j = cJSON_Duplicate(base, 1);
		int want, got;

		for (uint32_t k = 1 + rnd(3); k > 0; k--)
			mutate(j);
		want = oracle(j);
		got = params_check(&fx->q, fx->all, j, &r);
		check_clean(r.path, sizeof(r.path));
		check_clean(r.msg, sizeof(r.msg));
		if (got != want || (got == 1) != (r.verdict == PARAMS_OK)) {
			char *text = cJSON_PrintUnformatted(j);

			fail_msg("iteration %u: oracle says %d, params_check %d (%s at \"%s\": %s) for %s", it, want, got,
				 params_verdict_name(r.verdict), r.path, r.msg, text != NULL ? text : "?");
		}
		count[r.verdict]++;
		cJSON_Delete(j);
	}
	cJSON_Delete(base);
	fprintf(stderr, "random: %u calls: ok %u, unknown %u, missing %u, mistyped %u, out_of_range %u, too_long %u, "
			"too_short %u\n",
		iters, count[PARAMS_OK], count[PARAMS_UNKNOWN], count[PARAMS_MISSING], count[PARAMS_MISTYPED],
		count[PARAMS_OUT_OF_RANGE], count[PARAMS_TOO_LONG], count[PARAMS_TOO_SHORT]);
	/* The mutations must reach both answers and every verdict a call
	 * object can get, or the agreement says little. */
	if (iters >= 10000) {
		assert_true(count[PARAMS_OK] > iters / 20);
		for (int v = PARAMS_UNKNOWN; v <= PARAMS_TOO_SHORT; v++)
			assert_true(count[v] > iters / 1000);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ok),
		cmocka_unit_test(test_not_object),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_duplicate),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_mistyped),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_length),
		cmocka_unit_test(test_bounds_ok),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_long_path),
		cmocka_unit_test(test_broken_signature),
		cmocka_unit_test(test_result_object),
		cmocka_unit_test(test_result_plain),
		cmocka_unit_test(test_result_none),
		cmocka_unit_test(test_result_broken),
		cmocka_unit_test(test_verdict_names),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
